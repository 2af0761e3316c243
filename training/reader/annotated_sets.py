"""The annotated questions (`training/reader/data/`) as two evaluation sets that the pipeline can run: a
knowledge base of their pages and a case file each.

Run through the pipeline, the questions give what a page alone cannot: the statements retrieval really finds for
them on *other* pages (the third tier of a question's negatives), and labelled real-text cases for the
answerability fit (`training/fit_answerability.py`). The training pages are split by page in two halves of
about the same size, `annotated-a` and `annotated-b`, so each half is read by a reader fold that never trained
on it (`training/reader/folds.py`), as every other set is.

A case is written from each question: an answerable one expects an answer from the sections of its statements,
with each answer span as a `must_include` item when the question combines statements, else any one of them; a
near miss expects `not_in_corpus`. The pages are converted like `dev3`'s (their own front matter replaced, MDX
`import`/`export` lines dropped) into a build folder, never committed: they are the staged copies beside the
checkout.
"""

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import yaml

from training.reader.annotated import HANDBOOKS, AnnotatedQuestion, load_questions, page_document

ROOT: Final = Path(__file__).resolve().parents[2]
BUILT: Final = ROOT / "build" / "annotated"
HALVES: Final = ("annotated-a", "annotated-b")
OWNER: Final = "#help-desk"


@dataclass(frozen=True, kw_only=True)
class AnnotatedSet:
    """One half's folder: `kb/`, `cases.yaml`."""

    name: str
    folder: Path

    @property
    def kb(self) -> Path:
        return self.folder / "kb"

    @property
    def cases(self) -> Path:
        return self.folder / "cases.yaml"


def doc_id(page: str) -> str:
    """`posthog/contents/handbook/people/offboarding.md` is `people-offboarding`, as its data file is named."""
    stem = page.removeprefix("posthog/contents/handbook/").rsplit(".", 1)[0]  # the handbook's root adds nothing
    return stem.replace("/", "-")


def halves(questions: Sequence[AnnotatedQuestion]) -> dict[str, str]:
    """Each page's half: the pages with most questions first, each to the half with fewer questions so far
    (ties by path), so the halves are about the same size."""
    count = Counter(q.page for q in questions)
    sizes = dict.fromkeys(HALVES, 0)
    chosen = {}
    for page in sorted(count, key=lambda p: (-count[p], p)):
        half = min(HALVES, key=lambda h: sizes[h])
        chosen[page] = half
        sizes[half] += count[page]
    return chosen


def case_of(question: AnnotatedQuestion) -> dict[str, object]:
    case: dict[str, object] = {"id": question.id, "question": question.question, "asker": {"roles": ["everyone"]}}
    if not question.answerable:
        return case | {"expect": "not_in_corpus", "tags": ["near_miss", *question.tags]}
    sections = list(dict.fromkeys(f"{doc_id(question.page)}#{a.heading.split(' > ')[-1]}"
                                  for a in question.answers))
    spans = [a.span for a in question.answers]
    must_include: list[object] = list(spans) if "combine" in question.tags else [spans]
    return case | {"expect": "answer", "support": sections, "must_include": must_include,
                   "tags": list(question.tags)}


def write_sets(folder: Path = BUILT, *, questions: Sequence[AnnotatedQuestion] | None = None,
               handbooks: Path = HANDBOOKS) -> list[AnnotatedSet]:
    """Both halves, written afresh (a few hundred milliseconds): the same data always gives the same files."""
    questions = load_questions() if questions is None else questions
    half = halves(questions)
    written = []
    for name in HALVES:
        mine = sorted(page for page, chosen in half.items() if chosen == name)
        target = AnnotatedSet(name=name, folder=folder / name)
        target.kb.mkdir(parents=True, exist_ok=True)
        for stale in target.kb.glob("*.md"):
            if stale.stem not in {doc_id(p) for p in mine}:
                stale.unlink()
        for page in mine:
            _write_if_changed(target.kb / f"{doc_id(page)}.md", _kb_file(page, handbooks))
        cases = [case_of(q) for q in questions if q.page in mine]
        _write_if_changed(target.cases, yaml.safe_dump(cases, sort_keys=False, allow_unicode=True, width=1000))
        written.append(target)
    return written


def _kb_file(page: str, handbooks: Path) -> str:
    document = page_document(page, handbooks=handbooks)
    front = {"id": doc_id(page), "title": document.title, "owner": OWNER, "audience": ["everyone"]}
    return "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n" + document.body


def _write_if_changed(path: Path, text: str) -> None:
    """Unchanged files keep their modification time, so an ingest of the folder finds nothing new."""
    if path.exists() and hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256(text.encode()).digest():
        return
    path.write_text(text, encoding="utf-8")
