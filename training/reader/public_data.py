"""Loaders for the public question-answering sets in `../shared/reader-data/` (sources and licenses in its
README and in the model card). Each yields `Pair`s; the data stays where it is."""

import ast
import csv
import io
import json
import zipfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from training.reader.pairs import Pair, span_pairs

EXCLUDED_ARTICLES: Final = frozenset({"Normans", "Rhine"})
"""SQuAD articles an evaluation set is made of: never trained on."""
NEGATIVES: Final = 2
"""Negatives per question, the hardest of its paragraph: enough to teach 'near but not it'."""


def squad2(folder: Path) -> Iterator[Pair]:
    """SQuAD 2.0 slice: answer spans, and adversarial unanswerable questions with a plausible decoy."""
    data = json.loads((folder / "squad2-slice" / "train-v2.0.json").read_text(encoding="utf-8"))["data"]
    for article in data:
        if article["title"] in EXCLUDED_ARTICLES:
            continue
        title = article["title"].replace("_", " ")
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                answers = qa.get("answers") or []
                plausible = qa.get("plausible_answers") or []
                yield from span_pairs(
                    question=qa["question"], paragraph=paragraph["context"], heading=title, source="squad2",
                    group=f"squad2:{qa['id']}", negatives=NEGATIVES,
                    answer_start=None if qa.get("is_impossible") else _start(answers),
                    plausible_start=_start(plausible) if qa.get("is_impossible") else None)


def policyqa(folder: Path) -> Iterator[Pair]:
    """PolicyQA: questions on privacy policies, answer spans (all answerable)."""
    for split in ("dev", "test"):
        data = json.loads((folder / "policyqa" / f"{split}.json").read_text(encoding="utf-8"))["data"]
        for policy in data:
            for paragraph in policy["paragraphs"]:
                for qa in paragraph["qas"]:
                    yield from span_pairs(
                        question=qa["question"], paragraph=paragraph["context"], heading=policy["title"],
                        source="policyqa", group=f"policyqa:{qa['id']}", negatives=NEGATIVES,
                        answer_start=_start(qa["answers"]))


def trecqa(folder: Path) -> Iterator[Pair]:
    """TrecQA answer-sentence selection: labelled (question, sentence) rows, no context."""
    for split in ("train", "dev", "test"):
        with (folder / "trecqa-wang" / f"{split}.csv").open(encoding="utf-8", newline="") as rows:
            for row in csv.DictReader(rows):
                yield Pair(question=_detokenised(row["qtext"]), text=_detokenised(row["atext"]), heading="",
                           before="", label=int(row["label"]), source="trecqa",
                           group=f"trecqa:{split}:{row['qtext']}")


def doc2dial(folder: Path) -> Iterator[Pair]:
    """doc2dial reading comprehension: the user's current turn as the question, its span in a long document."""
    csv.field_size_limit(1 << 30)
    with zipfile.ZipFile(folder / "doc2dial-rc" / "doc2dial_rc_val.csv.zip") as archive:
        member = archive.namelist()[0]
        with archive.open(member) as raw:
            for row in csv.DictReader(io.TextIOWrapper(raw, encoding="utf-8", newline="")):
                answers: dict[str, Any] = ast.literal_eval(row["answers"])
                question = row["question"].split("\t")[0].split(":", 1)[-1].strip()
                yield from span_pairs(
                    question=question, paragraph=row["context"], heading=row["title"].split("#")[0],
                    source="doc2dial", group=f"doc2dial:{row['id']}", negatives=NEGATIVES,
                    answer_start=int(answers["answer_start"][0]) if answers.get("answer_start") else None)


def _start(answers: list[dict[str, Any]]) -> int | None:
    return int(answers[0]["answer_start"]) if answers else None


def _detokenised(text: str) -> str:
    """TrecQA is tokenised Penn-Treebank style; the reader sees ordinary text at run time."""
    for token, plain in (("-LRB-", "("), ("-RRB-", ")"), ("``", '"'), ("''", '"'), (" ,", ","), (" .", "."),
                         (" ?", "?"), (" 's", "'s"), (" n't", "n't"), ("( ", "("), (" )", ")")):
        text = text.replace(token, plain)
    return " ".join(text.split())


LOADERS: Final = {"squad2": squad2, "policyqa": policyqa, "trecqa": trecqa, "doc2dial": doc2dial}


def by_source(folder: Path) -> dict[str, list[Pair]]:
    found: dict[str, list[Pair]] = defaultdict(list)
    for name, loader in LOADERS.items():
        found[name].extend(loader(folder))
    return dict(found)
