"""Where a claim's quote stands in its chunk: markup-blind matching with offsets, and the chunk's statements.

A quote must be the chunk's own words. Matching ignores what a reader does not see as words: whitespace runs,
emphasis and code marks, list and quote markers, link targets, table pipes and delimiter rows, typographic
quote marks and dashes. Everything else must match exactly; only the quote's first letter may differ in case
(a quote that starts mid-sentence is often capitalised) and its final stop may be missing. The same
normalisation reads claims (`plain`), so a claim and its quote are compared as the same kind of text.

A statement is what a quote may span at most two of: a sentence, a list item or a table row, as the reading
form defines them (`core.documents.reading`, the one sentence splitter). Its context is read with it: a table
row's header row ("| Physicians | $3,000 |" states a yearly allowance only under its header), a list item's
lead-ins ("Request three weeks in advance for:" above "- Conferences over $2,500").
"""

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from core.documents import reading

_TYPOGRAPHIC: Final = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                                     "\u2013": "-", "\u2014": "-", "\u00a0": " ", "\u2026": "..."})
_LINE_MARKER: Final = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]*|[-*+][ \t]+|\d{1,3}[.)][ \t]+)")
_TABLE_DELIMITER: Final = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_LINK: Final = re.compile(r"\[([^\]\n]+)\]\([^)\n]*\)")
_EMPHASIS: Final = re.compile(r"\*+|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])|`+")
_QUOTE_EDGES: Final = " \t\n\"'`\u201c\u201d\u2018\u2019"
_ELLIPSIS: Final = re.compile(r"^(?:\.\.\.|\u2026)\s*|\s*(?:\.\.\.|\u2026)$")
MAX_STATEMENTS: Final = 2
"""A quote states one fact, two at most: a longer one would let a claim take a number from one sentence and
the subject from another."""


@dataclass(frozen=True, kw_only=True)
class Normalised:
    """Text as matching sees it, and for each of its characters the offset of the original one."""

    text: str
    origin: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class Span:
    start: int
    end: int


Statement = reading.StatementSpan
"""A sentence, list item or table row of a chunk, by offsets, with the context it is read with."""


def normalise(text: str, *, fold: bool = True) -> Normalised:
    """Drop the markup, fold typographic characters (unless `fold` is False), collapse whitespace; keep where
    each character came from."""
    chars: list[str] = []
    origin: list[int] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        if not _TABLE_DELIMITER.match(line):
            for char, at in _visible(line, offset, fold=fold):
                if char.isspace():
                    if chars and chars[-1] != " ":
                        chars.append(" ")
                        origin.append(at)
                else:
                    chars.append(char)
                    origin.append(at)
        if chars and chars[-1] != " ":
            chars.append(" ")
            origin.append(offset + len(line) - 1)
        offset += len(line)
    while chars and chars[-1] == " ":
        chars.pop()
        origin.pop()
    return Normalised(text="".join(chars), origin=tuple(origin))


def _visible(line: str, offset: int, *, fold: bool) -> Iterator[tuple[str, int]]:
    """The characters of one line a reader sees as text, with their offsets; a table pipe reads as a space."""
    hidden = [False] * len(line)
    marker = _LINE_MARKER.match(line)
    for index in range(marker.end() if marker else 0):
        hidden[index] = True
    for link in _LINK.finditer(line):
        hidden[link.start()] = True
        for index in range(link.end(1), link.end()):
            hidden[index] = True
    for mark in _EMPHASIS.finditer(line):
        for index in range(mark.start(), mark.end()):
            hidden[index] = True
    for index, char in enumerate(line):
        if not hidden[index]:
            yield (" " if char == "|" else char.translate(_TYPOGRAPHIC) if fold else char), offset + index


def locate(quote: str, text: str) -> Span | None:
    """Where the quote first stands in `text` (offsets into `text`), markup aside; None when it does not."""
    found = occurrences(quote, text)
    return found[0] if found else None


def occurrences(quote: str, text: str) -> list[Span]:
    """Every place the quote stands in `text`, markup aside, in order ("Yes." may answer two questions)."""
    wanted = normalise(_ELLIPSIS.sub("", quote.strip(_QUOTE_EDGES))).text
    if not wanted:
        return []
    haystack = normalise(text)
    for candidate in dict.fromkeys((wanted, wanted.rstrip(".;,:"))):
        spans = []
        found = _find(candidate, haystack.text, 0)
        while found >= 0:
            spans.append(Span(start=haystack.origin[found], end=haystack.origin[found + len(candidate) - 1] + 1))
            found = _find(candidate, haystack.text, found + 1)
        if spans:
            return spans
    return []


def _find(wanted: str, haystack: str, start: int) -> int:
    found = haystack.find(wanted, start)
    if found < 0 and wanted[0].isalpha():
        for first in (wanted[0].lower(), wanted[0].upper()):
            found = haystack.find(first + wanted[1:], start)
            if found >= 0:
                break
    return found


def statements(text: str) -> list[Statement]:
    """The chunk's sentences, list items and table rows, in order, by offsets into `text`."""
    return reading.statements(text)


def plain(text: str) -> str:
    """Text as a reader takes it: no markup, link words without their targets, whitespace collapsed."""
    return normalise(text, fold=False).text


def quoted_text(text: str, statement: Statement, span: Span) -> str:
    """What the span quotes of one statement, as a reader takes it: a table row's cells each under its header
    ("Fee: $50; Situation: No-show"), a sentence's words without markup."""
    start, end = max(statement.start, span.start), min(statement.end, span.end)
    if statement.kind != "row":
        return reading.stated(plain(reading.read_with([statement.context, statement.asked])), plain(text[start:end]))
    headers = [normalise(cell, fold=False).text for cell in statement.context.strip().strip("|").split("|")]
    pairs = []
    for index, (cell_start, cell_end) in enumerate(cell_spans(text, statement)):
        if cell_start < end and start < cell_end:
            cell = normalise(text[cell_start:cell_end], fold=False).text
            header = headers[index] if index < len(headers) else ""
            pairs.append(f"{header}: {cell}" if header and cell else cell)
    return "; ".join(pair for pair in pairs if pair)


def cell_spans(text: str, statement: Statement) -> list[tuple[int, int]]:
    """Offsets of a table row's cells, pipes excluded."""
    row = text[statement.start:statement.end]
    bounds = [index for index, char in enumerate(row) if char == "|"]
    if not row.startswith("|"):
        bounds.insert(0, -1)
    if not row.rstrip().endswith("|"):
        bounds.append(len(row))
    return [(statement.start + a + 1, statement.start + b) for a, b in pairwise(bounds)]


def spanned(all_statements: Sequence[Statement], span: Span) -> list[Statement]:
    """The statements a span overlaps."""
    return [s for s in all_statements if s.start < span.end and span.start < s.end]


def windows(all_statements: Sequence[Statement]) -> list[tuple[Statement, ...]]:
    """Every single statement and every pair of adjacent ones: the spans a missing quote is looked for in."""
    singles = [(statement,) for statement in all_statements]
    return singles + [(a, b) for a, b in pairwise(all_statements)]
