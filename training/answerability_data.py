"""Labelled (question, statement) pairs for fitting the answerability score, built from evaluation sets.

For every case, the question is retrieved exactly as the pipeline retrieves it (as its asker, scoped to the
asker's audience), and every candidate statement gets its features (`core.application.answerability.model`).
Labels:
- answer cases: a statement of a `support` section that contains one of the `must_include` items is a
  positive; a statement outside every support section is a negative; other statements of a support section
  (context around the answer) are left out, being neither;
- refusal cases (`not_in_corpus`, `not_permitted`, `not_answerable`): every candidate is a negative;
- `ambiguous` cases are left out: their readings may well be answered by a statement.
"""

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from core.application.answerability.model import (
    QuestionProfile,
    as_meant,
    candidate_statements,
    featurise,
    shipped_model,
)
from core.application.language.statements import Statement
from core.application.orchestrator import Question
from core.application.routing import KnownGap
from core.config import SourcedConfig, load_config, load_known_gaps
from core.domain import Audience
from core.eval.cases import Case, load_cases
from core.eval.fabrication_bench import Trial, run_fabrications
from core.eval.runner import EvalSession, case_principal, eval_session
from core.eval.scoring import ChunkRef, includes
from training.reader.annotated import HANDBOOKS
from training.reader.annotated_sets import write_sets

ROOT: Final = Path(__file__).resolve().parents[1]
SHARED: Final = ROOT.parent / "shared" / "eval"


@dataclass(frozen=True, kw_only=True)
class EvalSet:
    name: str
    kb: Path
    cases: Path
    known_gaps: Path | None = None
    config: Path | None = None

    def version(self) -> str:
        """A hash of the case file and every knowledge-base file: the data a fit was made from."""
        digest = hashlib.sha256(self.cases.read_bytes())
        for path in sorted(self.kb.rglob("*")):
            if path.is_file():
                digest.update(path.relative_to(self.kb).as_posix().encode() + path.read_bytes())
        return digest.hexdigest()[:16]


def known_sets() -> list[EvalSet]:
    """The sets fits learn from: the project's examples, the shared sets beside the checkout (`../shared/eval`),
    and the annotated questions on real handbook pages (`training/reader/annotated_sets.py`) when their pages
    are staged there."""
    sets = [EvalSet(name="examples", kb=ROOT / "examples" / "handbook", cases=ROOT / "examples" / "cases.yaml",
                    config=ROOT / "examples" / "sourced.yml")]
    sets.extend(_shared(name) for name in ("dev", "dev2", "squad2") if (SHARED / name / "cases.yaml").exists())
    if HANDBOOKS.is_dir():
        sets.extend(EvalSet(name=built.name, kb=built.kb, cases=built.cases) for built in write_sets())
    return sets


def held_out_sets() -> list[EvalSet]:
    """Sets no fit, threshold or reader ever learns from: measured only. `dev3` (the project's real-text set)
    and the shared `real` set."""
    dev3 = ROOT / "benchmarks" / "sets" / "dev3"
    sets = [EvalSet(name="dev3", kb=dev3 / "kb", cases=dev3 / "cases.yaml", known_gaps=dev3 / "owners.yml")]
    if (SHARED / "real" / "cases.yaml").exists():
        sets.append(_shared("real"))
    return sets


def _shared(name: str) -> EvalSet:
    folder = SHARED / name
    gaps = folder / "owners.yml"
    return EvalSet(name=name, kb=folder / "kb", cases=folder / "cases.yaml", known_gaps=gaps if gaps.exists() else None)


@dataclass(frozen=True, kw_only=True)
class Row:
    """One candidate statement of one case."""

    set_name: str
    case_id: str
    expect: str
    features: dict[str, float]
    label: int | None
    in_support: bool
    reaches_decision: bool
    """The pipeline got as far as the answerability decision (no shape, known gap or clarification first)."""
    text: str
    where: str


def label(case: Case, ref: ChunkRef, text: str) -> int | None:
    if case.expect == "ambiguous":
        return None
    if case.expect != "answer":
        return 0
    if not ref.within(case.support):
        return 0
    return 1 if any(includes(text, item) for item in case.must_include) else None


@contextmanager
def opened(eval_set: EvalSet, *, embedder: str, reader: Path | None = None, matching: bool = False,
           matcher: Path | None = None) -> Iterator[EvalSession]:
    """The set's knowledge base ingested into a temporary database, as `sourced eval` does it, with the given
    reader (an ONNX file; none without it) and, `matching`, the question matcher (`matcher`, else the bundled)."""
    os.environ["SOURCED_EMBEDDER"] = embedder
    os.environ["SOURCED_READER"] = "none"
    os.environ["SOURCED_MATCHER"] = "bundled" if matching else "none"
    for setting, path in (("SOURCED_READER_PATH", reader), ("SOURCED_MATCHER_PATH", matcher)):
        os.environ.pop(setting, None)
        if path is not None:
            os.environ[setting] = str(path)
    config, gaps = _config(eval_set)
    # Until a fit is measured (`with_answerability`), the session decides with the fit without a reader, which
    # always exists: the fit with one may be the very thing being made.
    placeholder = shipped_model(semantic=embedder != "none", matching=matching)
    with eval_session(kb=eval_set.kb, config=config, known_gaps=gaps, answerability=placeholder) as session:
        yield session


def fabrication_trials(eval_set: EvalSet) -> list[Trial]:
    """The set's fabrication benchmark (`sourced eval --fabrications`), run with this process's profile."""
    config, gaps = _config(eval_set)
    return run_fabrications(kb=eval_set.kb, cases=load_cases(eval_set.cases), config=config, known_gaps=gaps).trials


def _config(eval_set: EvalSet) -> tuple[SourcedConfig, tuple[KnownGap, ...]]:
    """The set's configuration and its known gaps, as `sourced eval` reads them."""
    config = load_config(eval_set.config) if eval_set.config else SourcedConfig()
    return config, config.gaps() + (load_known_gaps(eval_set.known_gaps) if eval_set.known_gaps else ())


@dataclass(frozen=True, kw_only=True)
class AskedCase:
    """A case asked through the pipeline: the candidate statements of what it retrieved."""

    case: Case
    question: str
    """The case's question as the pipeline reads it (`as_meant`)."""
    profile: QuestionProfile
    statements: list[Statement]
    reaches_decision: bool
    ranked: tuple[Statement, ...] = ()
    """The candidates in the order the pipeline's ranker put them; () when it stopped before deciding."""


def asked_cases(session: EvalSession, eval_set: EvalSet) -> Iterator[AskedCase]:
    """Every case asked as its asker, scoped to the asker's audience; cases with no candidate statement or no
    word to look for are left out."""
    for case in load_cases(eval_set.cases):
        principal = case_principal(case)
        _, evidence = session.sourced.orchestrator.ask_with_evidence(
            Question(text=case.question, principal=principal, audience=Audience.only(principal)))
        statements = candidate_statements(evidence.retrieved)
        question = as_meant(case.question, statements)
        profile = QuestionProfile.of(question)
        if statements and profile.stems:
            assessment = evidence.assessment
            yield AskedCase(case=case, question=question, profile=profile, statements=statements,
                            reaches_decision=assessment is not None,
                            ranked=tuple(c.statement for c in assessment.candidates) if assessment else ())


def collect(session: EvalSession, eval_set: EvalSet) -> Iterator[Row]:
    """Every candidate statement of every case, with its features and label, read off the pipeline's own run
    of the case (so the candidates are exactly those it retrieved)."""
    # The session decides with the fit without a reader (`opened`): what it retrieves, and whether it gets as
    # far as deciding, is the same with any fit.
    for asked in asked_cases(session, eval_set):
        case = asked.case
        features = featurise(asked.question, asked.profile, asked.statements, embedder=session.sourced.matcher,
                             reader=session.sourced.reader)
        for statement, values in zip(asked.statements, features, strict=True):
            ref = ChunkRef.of(statement.chunk.passage)
            yield Row(set_name=eval_set.name, case_id=case.id, expect=case.expect, features=values,
                      label=label(case, ref, statement.text), in_support=ref.within(case.support),
                      reaches_decision=asked.reaches_decision, text=statement.text, where=str(ref))
