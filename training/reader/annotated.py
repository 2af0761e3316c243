"""Annotated questions on real handbook pages (`training/reader/data/*.jsonl`): loading, re-finding each
question's answering statements among the page's current statements, and its negatives.

Each line is one question on one page of `../shared/reader-data/handbooks/` (schema in `data/README.md`). An
answerable question names the statements of the document model that answer it (`Statement.text`, with the
chunk's heading path) and, for each, a short verbatim span of the page (`answer_span`). The reading form may
change; so a question is re-found by the statement's exact text first, and by its span when the text no longer
matches. A near miss (`answerable: false`) names the statements that look like an answer and are not one
(`decoys`); nothing on its page answers it.

Negatives follow the order of issue 33: the other statements of the question's section, then of its page. The
statements are the ones Sourced reads: the page converted like an evaluation set's page (its own front matter
replaced, MDX import/export lines dropped), chunked by `chunk_document`, split by `split_statements`.

    python -m training.reader.annotated [--spans-alone]   # how many questions re-find their statements, per page
"""

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, Final, Literal

from core.application.language.statements import split_statements
from core.domain import Passage, RetrievedChunk
from core.retrieval.chunking import chunk_document
from core.retrieval.knowledge_base import SourceDocument
from training.reader.pairs import Pair

ROOT: Final = Path(__file__).resolve().parents[2]
HANDBOOKS: Final = ROOT.parent / "shared" / "reader-data" / "handbooks"
DATA: Final = Path(__file__).resolve().parent / "data"
SPLIT: Final = ROOT / "benchmarks" / "sets" / "dev3" / "page_split.txt"
"""The fixed split of the staged PostHog pages: `dev3` (evaluation only) or `train` (these questions)."""
SOURCE: Final = "annotated"

_FENCE: Final = re.compile(r"^\s*(```|~~~)")
_MDX_LINE: Final = re.compile(r"^(import|export)\s")
_QUOTES: Final = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_RECORD_KEYS: Final = frozenset({"id", "page", "question", "answerable", "answers", "decoys", "tags", "note"})
_EVIDENCE_KEYS: Final = {"answers": frozenset({"heading", "statement", "answer_span"}),
                         "decoys": frozenset({"heading", "statement", "span"})}


class AnnotationError(ValueError):
    """A data line that does not follow the schema; the message names the file, the line and the key."""


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """A statement of the page as annotated: its chunk heading path, its text, and a verbatim span of it."""

    heading: str
    statement: str
    span: str


@dataclass(frozen=True, kw_only=True)
class AnnotatedQuestion:
    id: str
    page: str
    """Path under the handbooks folder, e.g. `posthog/contents/handbook/company/1-1s.md`."""
    question: str
    answerable: bool
    answers: tuple[Evidence, ...] = ()
    decoys: tuple[Evidence, ...] = ()
    """Near misses only: the statements that look like the answer and are not."""
    tags: tuple[str, ...] = ()
    note: str = ""

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        return self.answers if self.answerable else self.decoys


@dataclass(frozen=True, kw_only=True)
class PageStatement:
    """A statement as the reader reads it: text, chunk heading path, and the statement before it."""

    heading: str
    text: str
    before: str
    own: str = ""
    """Its own words, without the lead-ins of a list item (`Statement.own`): where a span is looked for first."""


@dataclass(frozen=True, kw_only=True)
class Resolved:
    """The statements a question's evidence names, as they read now, and how they were found."""

    question: AnnotatedQuestion
    found: tuple[PageStatement, ...]
    by: Literal["text", "span", "missing"]

    @property
    def refound(self) -> bool:
        return self.by != "missing"


# -- the page as Sourced reads it ---------------------------------------------------------------------------


def page_document(page: str, *, handbooks: Path = HANDBOOKS) -> SourceDocument:
    """The page as a knowledge-base document: its front matter replaced by a title, MDX lines dropped."""
    path = handbooks / page
    if not path.is_file():
        raise AnnotationError(f"{page} is not under {handbooks}: the staged pages (../shared/reader-data/handbooks "
                              f"beside the checkout) are needed to read the questions' statements")
    raw = path.read_bytes().decode("utf-8")
    title, body = _title_and_body(raw)
    return SourceDocument(doc_id=Path(page).stem, path=Path(page), title=title or Path(page).stem, owner=None,
                          audience=frozenset({"everyone"}), updated=None, url=None, body=body, file_sha256="")


def _title_and_body(raw: str) -> tuple[str | None, str]:
    title = None
    body = raw
    if raw.startswith("---\n"):
        end = raw.index("\n---\n", 4)
        for line in raw[4:end].split("\n"):
            key, _, value = line.partition(":")
            if key.strip() == "title":
                title = value.strip().strip("\"'")
        body = raw[end + 5:]
    kept, fenced = [], False
    for line in body.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and _MDX_LINE.match(line):
            continue
        kept.append(line)
    body = "\n".join(kept)
    if title is None:
        heading = re.search(r"^# (.+)$", body, re.M)
        title = heading.group(1).strip() if heading else None
    return title, body


@cache
def page_statements(page: str, *, handbooks: Path = HANDBOOKS) -> tuple[PageStatement, ...]:
    """Every statement of the page in reading order, once (overlapping windows repeat statements)."""
    document = page_document(page, handbooks=handbooks)
    seen: set[tuple[str, str]] = set()
    found: list[PageStatement] = []
    for draft in chunk_document(document):
        passage = Passage(chunk_id=draft.chunk_id, doc_id=document.doc_id, title=document.title,
                          heading=draft.heading, text=draft.text, links=draft.links)
        statements = split_statements(RetrievedChunk(passage=passage, score=1.0, content_hash=draft.content_hash))
        text_at = {s.position: s.text for s in statements}
        for statement in statements:
            if (draft.heading, statement.text) in seen:
                continue
            seen.add((draft.heading, statement.text))
            found.append(PageStatement(heading=draft.heading, text=statement.text, own=statement.own,
                                       before=text_at.get(statement.position - 1, "")))
    return tuple(found)


def normalised(text: str) -> str:
    """For matching a span: case, curly quotes, emphasis and code marks, and runs of spaces do not count."""
    plain = re.sub(r"[*_`]", "", text.translate(_QUOTES))
    return " ".join(plain.casefold().split())


# -- loading ------------------------------------------------------------------------------------------------


def load_questions(folder: Path = DATA, *, split: Path = SPLIT) -> list[AnnotatedQuestion]:
    """Every question of every `*.jsonl` file in the folder, in file and line order; ids are unique, and no
    question is on a page the split keeps for evaluation."""
    held_out = evaluation_pages(split)
    questions: list[AnnotatedQuestion] = []
    seen: set[str] = set()
    for path in sorted(folder.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            question = _parse(line, where=f"{path.name}:{number}")
            if question.id in seen:
                raise AnnotationError(f"{path.name}:{number}: duplicate id {question.id!r}")
            if question.page in held_out:
                raise AnnotationError(f"{path.name}:{number}: {question.page} is a dev3 page, never trained on")
            seen.add(question.id)
            questions.append(question)
    return questions


def evaluation_pages(split: Path = SPLIT) -> frozenset[str]:
    """The pages `page_split.txt` marks `dev3` (lines `dev3: <page>`): measured on, never trained on."""
    if not split.exists():
        return frozenset()
    marked = (line.partition(": ") for line in split.read_text(encoding="utf-8").splitlines())
    return frozenset(page.strip() for mark, _, page in marked if mark == "dev3")


def _parse(line: str, *, where: str) -> AnnotatedQuestion:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise AnnotationError(f"{where}: not JSON ({error.msg})") from None
    if not isinstance(record, dict):
        raise AnnotationError(f"{where}: expected an object")
    unknown = set(record) - _RECORD_KEYS
    if unknown:
        raise AnnotationError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    for key in ("id", "page", "question"):
        if not isinstance(record.get(key), str) or not record[key].strip():
            raise AnnotationError(f"{where}: {key!r} must be a non-empty string")
    answerable = record.get("answerable")
    if not isinstance(answerable, bool):
        raise AnnotationError(f"{where}: 'answerable' must be true or false")
    answers = _evidence(record, "answers", where)
    decoys = _evidence(record, "decoys", where)
    if answerable and (not answers or decoys):
        raise AnnotationError(f"{where}: an answerable question needs 'answers' and no 'decoys'")
    if not answerable and answers:
        raise AnnotationError(f"{where}: a near miss has no 'answers'")
    return AnnotatedQuestion(id=record["id"], page=record["page"], question=record["question"],
                             answerable=answerable, answers=answers, decoys=decoys,
                             tags=tuple(record.get("tags", ())), note=str(record.get("note", "")))


def _evidence(record: dict[str, Any], key: str, where: str) -> tuple[Evidence, ...]:
    items = record.get(key, [])
    if not isinstance(items, list):
        raise AnnotationError(f"{where}: {key!r} must be a list")
    span_key = "answer_span" if key == "answers" else "span"
    found = []
    for item in items:
        if not isinstance(item, dict) or set(item) != _EVIDENCE_KEYS[key]:
            raise AnnotationError(f"{where}: each of {key!r} has exactly {sorted(_EVIDENCE_KEYS[key])}")
        if not all(isinstance(value, str) and value.strip() for value in item.values()):
            raise AnnotationError(f"{where}: {key!r} values must be non-empty strings")
        found.append(Evidence(heading=item["heading"], statement=item["statement"], span=item[span_key]))
    return tuple(found)


# -- re-finding and negatives -------------------------------------------------------------------------------

SPAN_TIERS: Final = (
    lambda span, s: span == normalised(s.own),
    lambda span, s: span in normalised(s.own),
    lambda span, s: span in normalised(s.text),
)
"""How a span finds its statement, best first: it is the statement's own words, it is in them, it is in its
text (a list item's lead-ins are in the text of every item they lead)."""



def resolve(question: AnnotatedQuestion, statements: Sequence[PageStatement]) -> Resolved:
    """The page's statements the question's evidence names: each by its exact text (its own section first),
    else by its span (its own section first); missing if any one cannot be found."""
    found: list[PageStatement] = []
    by: Literal["text", "span", "missing"] = "text"
    for evidence in question.evidence:
        match = _by_text(evidence, statements)
        if match is None:
            match = _by_span(evidence, statements)
            by = "span"
        if match is None:
            return Resolved(question=question, found=(), by="missing")
        if match not in found:
            found.append(match)
    return Resolved(question=question, found=tuple(found), by=by)


def _by_text(evidence: Evidence, statements: Sequence[PageStatement]) -> PageStatement | None:
    same = [s for s in statements if s.text == evidence.statement]
    return _preferring_section(same, evidence.heading)


def _by_span(evidence: Evidence, statements: Sequence[PageStatement]) -> PageStatement | None:
    """The statement whose own words are the span, else hold it (a lead-in repeats in every item it leads),
    else whose text holds it; each time preferring the recorded section."""
    span = normalised(evidence.span)
    for holds in SPAN_TIERS:
        match = _preferring_section([s for s in statements if holds(span, s)], evidence.heading)
        if match is not None:
            return match
    return None



def _preferring_section(candidates: Sequence[PageStatement], heading: str) -> PageStatement | None:
    """The one candidate of the recorded section, else the one candidate of the page; None when ambiguous."""
    own = [s for s in candidates if s.heading == heading]
    if len(own) == 1:
        return own[0]
    return candidates[0] if len(candidates) == 1 else None


def negatives(resolved: Resolved, statements: Sequence[PageStatement]) -> list[PageStatement]:
    """Statements that do not answer: for a near miss its decoys first; then the other statements of its
    section (the section of its first evidence), then the rest of the page, in reading order."""
    if not resolved.refound:
        return []
    question = resolved.question
    answering = {s.text for s in resolved.found} if question.answerable else set()
    section = resolved.found[0].heading
    decoys = [] if question.answerable else list(resolved.found)
    rest = [s for s in statements if s.text not in answering and s not in decoys]
    return decoys + [s for s in rest if s.heading == section] + [s for s in rest if s.heading != section]


def pairs(questions: Iterable[AnnotatedQuestion], *, handbooks: Path = HANDBOOKS,
          negatives_per_question: int | None = None,
          elsewhere: Mapping[str, Sequence[PageStatement]] | None = None) -> Iterator[Pair]:
    """Training pairs: each answering statement labelled 1, then up to `negatives_per_question` negatives
    (all when None) in the order of `negatives`, then the question's statements found `elsewhere` (by its id:
    what retrieval finds on other pages, the third tier). A question that cannot be re-found gives no pairs."""
    for question in questions:
        statements = page_statements(question.page, handbooks=handbooks)
        resolved = resolve(question, statements)
        if not resolved.refound:
            continue
        group = f"{SOURCE}:{question.id}"
        positives = resolved.found if question.answerable else ()
        chosen = [*negatives(resolved, statements)[:negatives_per_question],
                  *elsewhere_negatives(question, (elsewhere or {}).get(question.id, ()))]
        for statement, label in [*((s, 1) for s in positives), *((s, 0) for s in chosen)]:
            yield Pair(question=question.question, text=statement.text, heading=statement.heading,
                       before=statement.before, label=label, source=SOURCE, group=group)


def elsewhere_negatives(question: AnnotatedQuestion, found: Sequence[PageStatement]) -> list[PageStatement]:
    """Statements of other pages retrieval found for the question, except any that holds one of its answer
    spans: some training pages repeat each other (see data/README.md, "Caveats")."""
    spans = [normalised(e.span) for e in question.answers]
    return [s for s in found if not any(span in normalised(s.text) for span in spans)]


# -- report -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RefindReport:
    per_page: dict[str, Counter[str]]
    missing: tuple[str, ...]

    @property
    def total(self) -> Counter[str]:
        return sum(self.per_page.values(), Counter())


def refind_report(questions: Sequence[AnnotatedQuestion], *, handbooks: Path = HANDBOOKS) -> RefindReport:
    """Per page: answerable and near-miss questions, and how their statements were re-found."""
    per_page: dict[str, Counter[str]] = {}
    missing = []
    for question in questions:
        resolved = resolve(question, page_statements(question.page, handbooks=handbooks))
        counts = per_page.setdefault(question.page, Counter())
        counts["answerable" if question.answerable else "near_miss"] += 1
        counts[f"by_{resolved.by}"] += 1
        if not resolved.refound:
            missing.append(question.id)
    return RefindReport(per_page=per_page, missing=tuple(missing))


def spans_alone(questions: Sequence[AnnotatedQuestion], *, handbooks: Path = HANDBOOKS) -> tuple[int, int]:
    """How many questions their spans alone re-find, to the same statements their texts find: what the data
    would keep if every statement's reading changed. Returns (same statements, questions)."""
    same = 0
    for question in questions:
        statements = page_statements(question.page, handbooks=handbooks)
        blanked = replace(question, answers=tuple(replace(e, statement="") for e in question.answers),
                          decoys=tuple(replace(e, statement="") for e in question.decoys))
        by_span = resolve(blanked, statements)
        same += by_span.refound and by_span.found == resolve(question, statements).found
    return same, len(questions)


def main() -> int:
    parser = argparse.ArgumentParser(description="Re-find every annotated question's statements on its page.")
    parser.add_argument("--data", type=Path, default=DATA, help="folder of *.jsonl files")
    parser.add_argument("--pages", type=Path, default=HANDBOOKS, help="the staged handbooks folder")
    parser.add_argument("--spans-alone", action="store_true",
                        help="also report how many questions the answer spans alone re-find (statement texts ignored)")
    args = parser.parse_args()
    try:
        questions = load_questions(args.data)
        report = refind_report(questions, handbooks=args.pages)
    except AnnotationError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{'page':60} {'answerable':>10} {'near miss':>9} {'by text':>8} {'by span':>8} {'missing':>8}")
    for page, counts in sorted(report.per_page.items()):
        print(f"{page.removeprefix('posthog/contents/handbook/'):60} {counts['answerable']:10} "
              f"{counts['near_miss']:9} {counts['by_text']:8} {counts['by_span']:8} {counts['by_missing']:8}")
    total = report.total
    print(f"{'total':60} {total['answerable']:10} {total['near_miss']:9} {total['by_text']:8} "
          f"{total['by_span']:8} {total['by_missing']:8}")
    for question_id in report.missing:
        print(f"not re-found: {question_id}")
    if args.spans_alone:
        same, total_questions = spans_alone(questions, handbooks=args.pages)
        print(f"spans alone re-find the same statements for {same} of {total_questions} questions")
    return 1 if report.missing else 0


if __name__ == "__main__":
    sys.exit(main())
