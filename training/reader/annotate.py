"""The annotator's tool for `training/reader/data/`: print a page's statements, and turn a draft of questions
into the page's JSONL file with the exact statements filled in.

    python -m training.reader.annotate statements PAGE          # numbered statements with their headings
    python -m training.reader.annotate write PAGE DRAFT.yaml     # DRAFT -> data/<page>.jsonl (replaced)

A draft is a YAML list, one item per question:

    - q: "do i need a ticket to change a dns record?"
      a: ["every DNS change needs a ticket"]  # answer spans: each in one statement of the page
      in: "Changes"                           # optional: only statements whose heading path holds this
      tags: [paraphrase]
    - q: "how long does a dns change take to go live?"
      near: ["every DNS change needs a ticket"]  # a near miss: spans of the statements that look like the answer
      tags: [missing_number]
      note: "the page says a change needs a ticket, not how long it takes"

Every span must occur verbatim (case, curly quotes, emphasis marks, link targets, tags and runs of spaces aside)
in the page's source, and pick exactly one statement (within `in:`): the one whose own words are the span, else
the one whose own words hold it (a list item's lead-ins are not its own words), else the one whose text holds it.
The tool stops at the first span that does not, naming it. It warns when an answering statement shares an 8-word
run with the dev3 pages, so the dev3 evaluation never measures a memorised sentence.
"""

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Final

import yaml

from training.reader.annotated import (
    DATA,
    HANDBOOKS,
    ROOT,
    SPAN_TIERS,
    AnnotationError,
    PageStatement,
    load_questions,
    normalised,
    page_statements,
)

DEV3_KB: Final = ROOT / "benchmarks" / "sets" / "dev3" / "kb"
RUN_WORDS: Final = 8
LINK: Final = re.compile(r"\[([^\]]*)\]\([^)]*\)")
"""A Markdown link: its words are the page's, its target is not (a span may run across a link's words)."""
TAG: Final = re.compile(r"<[^<>\n]+>")
"""An HTML or site-component tag (`<PrivateLink url="...">`): markup around the page's words, not words."""


def data_file(page: str) -> Path:
    """`posthog/contents/handbook/company/1-1s.md` -> `data/company-1-1s.jsonl`."""
    inner = page.removeprefix("posthog/contents/handbook/")
    return DATA / (re.sub(r"\.mdx?$", "", inner).replace("/", "-") + ".jsonl")


def print_statements(page: str) -> None:
    heading = None
    for number, statement in enumerate(page_statements(page)):
        if statement.heading != heading:
            heading = statement.heading
            print(f"## {heading}")
        print(f"{number:4}  {statement.text}")


def find(span: str, within: str | None, statements: tuple[PageStatement, ...], source: str) -> PageStatement:
    if normalised(span) not in source:
        raise AnnotationError(f"span {span!r} is not verbatim in the page")
    inside = [s for s in statements if within is None or within.casefold() in s.heading.casefold()]
    holding: list[PageStatement] = []
    for holds in SPAN_TIERS:
        holding = [s for s in inside if holds(normalised(span), s)]
        if len(holding) == 1:
            break
    if len(holding) != 1:
        where = "".join(f"\n    {s.heading}: {s.text}" for s in holding)
        raise AnnotationError(f"span {span!r} (in {within!r}) is in {len(holding)} statements{where}")
    return holding[0]


def record(page: str, number: int, item: dict[str, Any], statements: tuple[PageStatement, ...],
           source: str) -> dict[str, Any]:
    unknown = set(item) - {"q", "a", "near", "in", "tags", "note"}
    if unknown or ("a" in item) == ("near" in item):
        raise AnnotationError(f"draft item {number} ({item.get('q')!r}): needs 'q' and one of 'a'/'near' "
                              f"(unknown: {sorted(unknown)})")
    answerable = "a" in item
    span_key = "answer_span" if answerable else "span"
    evidence = []
    for span in item["a" if answerable else "near"]:
        statement = find(span, item.get("in"), statements, source)
        evidence.append({"heading": statement.heading, "statement": statement.text, span_key: span})
    stem = data_file(page).stem
    line: dict[str, Any] = {"id": f"{stem}-{number:03d}", "page": page, "question": item["q"],
                            "answerable": answerable, ("answers" if answerable else "decoys"): evidence}
    if item.get("tags"):
        line["tags"] = list(item["tags"])
    if item.get("note"):
        line["note"] = item["note"]
    return line


def word_runs(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9']+", text.casefold())
    return {tuple(words[i:i + RUN_WORDS]) for i in range(len(words) - RUN_WORDS + 1)}


def write(page: str, draft: Path) -> None:
    items = yaml.safe_load(draft.read_text(encoding="utf-8")) or []
    statements = page_statements(page)
    source = normalised(TAG.sub("", LINK.sub(r"\1", (HANDBOOKS / page).read_text(encoding="utf-8"))))
    lines = [record(page, number, item, statements, source) for number, item in enumerate(items, start=1)]
    avoid: set[tuple[str, ...]] = set()
    for path in sorted(DEV3_KB.glob("*.md")):
        avoid |= word_runs(path.read_text(encoding="utf-8"))
    for line in lines:
        for answer in line.get("answers", []):
            if word_runs(answer["statement"]) & avoid:
                print(f"warning: {line['id']} is answered by a sentence shared with dev3: {answer['statement']!r}")
    target = data_file(page)
    target.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    load_questions(target.parent)  # the schema check of the loader, on everything written so far
    near = sum(1 for line in lines if not line["answerable"])
    print(f"{target.relative_to(ROOT)}: {len(lines) - near} answerable, {near} near misses")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("statements", help="print a page's statements with their headings")
    show.add_argument("page")
    make = commands.add_parser("write", help="write a page's JSONL file from a draft")
    make.add_argument("page")
    make.add_argument("draft", type=Path)
    args = parser.parse_args()
    try:
        if args.command == "statements":
            print_statements(args.page)
        else:
            write(args.page, args.draft)
    except AnnotationError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
