"""Chunking: a document becomes one chunk per heading section, long sections become overlapping windows.

Chunks are what the model reads and what a citation points at, so they follow the author's structure
(headings) and carry their heading path ("Title > Section > Sub"). Ids are derived from that path, not
from positions, so re-ingesting an unchanged file yields the same ids and editing one section leaves the
other sections' ids alone. A Markdown table is never cut inside a row, and a window that starts inside a
table repeats the table's header so its rows still say what their columns mean.
"""

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from core.retrieval.knowledge_base import SourceDocument

MAX_CHARS: Final = 1200
OVERLAP_CHARS: Final = 200
SLUG_LIMIT: Final = 48
PATH_SEPARATOR: Final = " > "

_HEADING: Final = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE: Final = re.compile(r"^ {0,3}(```|~~~)")
_TABLE_DELIMITER: Final = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[*_]*[A-Z0-9])")
_BLANK_LINES: Final = re.compile(r"\n[ \t]*\n")
_INLINE_MARKUP: Final = re.compile(r"\*\*|__|`")
_LINK: Final = re.compile(r"\[([^\]]+)\]\([^)]*\)")


@dataclass(frozen=True, kw_only=True)
class ChunkDraft:
    """A chunk before storage: its stable id, its place in the document, what it says and its hash."""

    chunk_id: str
    ordinal: int
    heading: str
    text: str
    content_hash: str


@dataclass(frozen=True, kw_only=True)
class _Section:
    path: tuple[str, ...]
    text: str


@dataclass(frozen=True, kw_only=True)
class _Unit:
    """The smallest piece a window boundary may fall between: a sentence, a line or a table row."""

    text: str
    joiner: str
    table_header: str | None = None


def chunk_document(doc: SourceDocument, *, max_chars: int = MAX_CHARS,
                   overlap: int = OVERLAP_CHARS) -> list[ChunkDraft]:
    """The chunks of one document, in reading order."""
    drafts: list[ChunkDraft] = []
    ids = _ChunkIds(doc.doc_id)
    for section in _sections(doc):
        section_id = ids.section(section.path)
        heading = PATH_SEPARATOR.join(section.path)
        for number, window in enumerate(split_text(section.text, max_chars=max_chars, overlap=overlap), 1):
            drafts.append(ChunkDraft(chunk_id=ids.window(section_id, number), ordinal=len(drafts),
                                     heading=heading, text=window, content_hash=content_hash(window)))
    return drafts


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- sections ----------------------------------------------------------------------------------------------


def _sections(doc: SourceDocument) -> Iterator[_Section]:
    """Non-empty heading sections; the text before the first sub-heading is the title's own section."""
    stack: list[tuple[int, str]] = []
    lines: list[str] = []
    fenced = False
    for line in doc.body.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        if heading is None:
            lines.append(line)
            continue
        yield from _section(doc.title, stack, lines)
        level, text = len(heading.group(1)), clean_heading(heading.group(2))
        stack = [(lvl, txt) for lvl, txt in stack if lvl < level] + [(level, text)]
        lines = []
    yield from _section(doc.title, stack, lines)


def _section(title: str, stack: list[tuple[int, str]], lines: list[str]) -> Iterator[_Section]:
    text = "\n".join(lines).strip("\n").rstrip()
    if not text.strip():
        return
    headings = [heading for _, heading in stack]
    if headings and stack[0][0] == 1 and _same(headings[0], title):
        headings = headings[1:]
    yield _Section(path=(title, *headings), text=text)


def clean_heading(raw: str) -> str:
    """Heading text without inline markup: `**Hotels**` and `[Hotels](url)` are both "Hotels"."""
    return " ".join(_INLINE_MARKUP.sub("", _LINK.sub(r"\1", raw)).split())


def _same(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


# -- stable ids --------------------------------------------------------------------------------------------


class _ChunkIds:
    """Ids `doc-id#section/sub` from the heading path below the title; duplicates get `-2`, windows `.2`.

    The two suffixes differ so a long section growing a window never renames a later duplicate section.
    """

    def __init__(self, doc_id: str) -> None:
        self._doc_id = doc_id
        self._used: set[str] = set()
        self._tried: dict[str, int] = {}
        """Per base, the suffix number last taken: a taken id stays taken, so the search resumes there (found by
        fuzzing: thousands of sections with one heading made each id scan all the earlier ones)."""

    def section(self, path: tuple[str, ...]) -> str:
        below_title = path[1:] or path
        base = f"{self._doc_id}#{'/'.join(slug(part) for part in below_title)}"
        return self._claim(base, "-")

    def window(self, section_id: str, number: int) -> str:
        if number == 1:
            return section_id
        return self._claim(f"{section_id}.{number}", ".")

    def _claim(self, base: str, separator: str) -> str:
        n = self._tried.get(base, 1)
        candidate = base if n == 1 else f"{base}{separator}{n}"
        while candidate in self._used:
            n += 1
            candidate = f"{base}{separator}{n}"
        self._tried[base] = n
        self._used.add(candidate)
        return candidate


def slug(text: str) -> str:
    """Lower-case ASCII words joined by "-", cut at a word boundary: safe in Slack ids and readable."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    kept: list[str] = []
    for word in words:
        if kept and len("-".join([*kept, word])) > SLUG_LIMIT:
            break
        kept.append(word[:SLUG_LIMIT])
    return "-".join(kept) or "section"


# -- windows -----------------------------------------------------------------------------------------------


def split_text(text: str, *, max_chars: int = MAX_CHARS, overlap: int = OVERLAP_CHARS) -> list[str]:
    """`text` itself if short enough, else windows of at most about `max_chars` that overlap by up to
    `overlap` characters, cut between sentences, lines or table rows."""
    if len(text) <= max_chars:
        return [text]
    windows: list[list[_Unit]] = []
    current: list[_Unit] = []
    for unit in _units(text, max_chars):
        if current and len(_render([*current, unit])) > max_chars:
            windows.append(current)
            current = _tail(current, overlap)
            if len(_render([*current, unit])) > max_chars:
                current = []
        current.append(unit)
    if current:
        windows.append(current)
    return [_render(window) for window in windows]


def _tail(units: list[_Unit], overlap: int) -> list[_Unit]:
    """The last units of a window, at most `overlap` characters of them, to open the next window with."""
    taken: list[_Unit] = []
    for unit in reversed(units[1:]):
        if len(_render([unit, *taken])) > overlap:
            break
        taken.insert(0, unit)
    return taken


def _render(units: list[_Unit]) -> str:
    parts = [units[0].text] if units else []
    header = units[0].table_header if units else None
    if header is not None:
        parts.insert(0, header + "\n")
    for unit in units[1:]:
        parts.append(unit.joiner + unit.text)
    return "".join(parts)


def _units(text: str, max_chars: int) -> Iterator[_Unit]:
    for raw_block in _BLANK_LINES.split(text):
        block = raw_block.strip("\n")
        if not block.strip():
            continue
        lines = block.split("\n")
        if _is_table(lines):
            pieces = _table_units(lines)
        elif len(lines) > 1:
            pieces = [piece for line in lines for piece in _sentence_units(line, "\n", max_chars)]
        else:
            pieces = list(_sentence_units(block, " ", max_chars))
        first, *rest = pieces
        yield _Unit(text=first.text, joiner="\n\n", table_header=first.table_header)
        yield from rest


def _is_table(lines: list[str]) -> bool:
    return len(lines) >= 2 and lines[0].lstrip().startswith("|") and bool(_TABLE_DELIMITER.match(lines[1]))


def _table_units(lines: list[str]) -> list[_Unit]:
    """The header (with its delimiter row) as one unit, then one unit per row that repeats the header."""
    header = "\n".join(lines[:2])
    return [_Unit(text=header, joiner="\n")] + [
        _Unit(text=row, joiner="\n", table_header=header) for row in lines[2:]
    ]


def _sentence_units(line: str, joiner: str, max_chars: int) -> Iterator[_Unit]:
    """A line as sentences (joined by spaces), a sentence longer than a window as word runs."""
    for index, sentence in enumerate(_SENTENCE_END.split(line)):
        for part_index, part in enumerate(_word_runs(sentence, max_chars)):
            yield _Unit(text=part, joiner=joiner if index == part_index == 0 else " ")


def _word_runs(sentence: str, max_chars: int) -> Iterator[str]:
    run = ""
    for word in sentence.split(" "):
        if run and len(run) + 1 + len(word) > max_chars:
            yield run
            run = word
        else:
            run = f"{run} {word}" if run else word
    if run:
        yield run
