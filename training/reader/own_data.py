"""Pairs from our own kind of text: the evaluation sets' knowledge bases and the project's examples, with the
candidates the pipeline really retrieves and reads (the same statements, in the same order, as at run time).

Labels follow `training/answerability_data.py`: in an answerable case, a statement of a support section that
holds a `must_include` item answers (1), a statement outside every support section does not (0), other
statements of a support section are left unlabelled; in a refusal case nothing answers. The questions are the
sets' cases, so a set's pairs are only ever trained on by a reader that is not measured on that set.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from core.application.answerability.model import by_words_and_retrieval, featurise, read_passages
from core.eval.scoring import ChunkRef
from training.answerability_data import EvalSet, asked_cases, held_out_sets, known_sets, label, opened

CANDIDATES_PER_CASE: Final = 24
"""Statements kept per case, in the pipeline's reading order: more than the product reads
(`READ_STATEMENTS`), so training sees more hard negatives and the held-out report covers the whole read set."""


@dataclass(frozen=True, kw_only=True)
class ReadCandidate:
    """One statement the reader reads for one case, labelled where the case says."""

    set_name: str
    case_id: str
    expect: str
    question: str
    doc_id: str
    text: str
    heading: str
    before: str
    label: int | None


def candidates(eval_set: EvalSet) -> Iterator[ReadCandidate]:
    """The statements the reader reads for every case of the set, in the pipeline's reading order."""
    with opened(eval_set, embedder="none") as session:
        for asked in asked_cases(session, eval_set):
            case, statements = asked.case, asked.statements
            features = featurise(asked.question, asked.profile, statements, embedder=None)
            passages = read_passages(statements)
            for i in by_words_and_retrieval(features)[:CANDIDATES_PER_CASE]:
                statement = statements[i]
                yield ReadCandidate(set_name=eval_set.name, case_id=case.id, expect=case.expect,
                                    question=asked.question, doc_id=statement.chunk.passage.doc_id,
                                    text=passages[i].text, heading=passages[i].heading,
                                    before=passages[i].before,
                                    label=label(case, ChunkRef.of(statement.chunk.passage), statement.text))


def write_all(path: Path) -> None:
    """Every set's read candidates as JSON lines (a build artefact, not committed); the held-out sets' too, which
    the folds are measured on and never train on."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for eval_set in [*known_sets(), *held_out_sets()]:
            for candidate in candidates(eval_set):
                out.write(json.dumps(candidate.__dict__) + "\n")
