"""Chunking: a document's sections (from its document model) become chunks, long sections overlapping windows.

Chunks are what the model reads and what a citation points at, so they follow the author's structure
(headings) and carry their heading path ("Title > Section > Sub"). Their text is the reading form
(`core.documents.reading`): what a reader reads, so the window counts words, not link targets or markup, and a
link's target travels beside its words. Windows break between statements, never inside a sentence, a list
item or a table row; a window that starts inside a table repeats its header, and one that starts inside a list
repeats the item's lead-ins, so every statement still says what it means. A list (or table) that fits in one
window is not cut: the window ends before its lead-in (or header), so it can be quoted whole. Ids are derived
from the heading path, not from positions, so re-ingesting an unchanged file yields the same ids and editing one
section leaves the other sections' ids alone.
"""

import hashlib
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Final
from urllib.parse import urljoin

from core.documents.model import Link
from core.documents.reading import Piece, pieces, render, rendered_length
from core.retrieval.knowledge_base import SourceDocument

CHUNKER_VERSION: Final = "structure-5"
"""Stored with each document's chunks: a document chunked by another version is chunked again once."""
MAX_CHARS: Final = 1200
OVERLAP_CHARS: Final = 200
SLUG_LIMIT: Final = 48
PATH_SEPARATOR: Final = " > "
_OPENABLE: Final = ("https://", "http://", "mailto:")


@dataclass(frozen=True, kw_only=True)
class ChunkDraft:
    """A chunk before storage: its stable id, its place in the document, what it says and its hash."""

    chunk_id: str
    ordinal: int
    heading: str
    text: str
    content_hash: str
    links: tuple[Link, ...] = ()
    page: int | None = None
    anchor: str | None = None


def chunk_document(doc: SourceDocument, *, max_chars: int = MAX_CHARS,
                   overlap: int = OVERLAP_CHARS) -> list[ChunkDraft]:
    """The chunks of one document, in reading order."""
    drafts: list[ChunkDraft] = []
    ids = _ChunkIds(doc.doc_id)
    for path, anchor, section_pieces in _sections(doc):
        section_id = ids.section(path)
        heading = PATH_SEPARATOR.join((*doc.trail, *path))  # a page moved elsewhere keeps its chunk ids
        for number, run in enumerate(windows(section_pieces, max_chars=max_chars, overlap=overlap), 1):
            window = render(run)
            drafts.append(ChunkDraft(chunk_id=ids.window(section_id, number), ordinal=len(drafts),
                                     heading=heading, text=window.text, content_hash=content_hash(window.text),
                                     links=_resolved(window.links, doc.url), page=window.page, anchor=anchor))
    return drafts


def _resolved(links: Sequence[Link], base: str | None) -> tuple[Link, ...]:
    """Links as web addresses a reader can open: a relative target ("/handbook/x", "#step-2") resolved against the
    document's own address; one that cannot be (no address, or another scheme) is left as words."""
    found = []
    for link in links:
        target = urljoin(base, link.target) if base else link.target
        if target.startswith(_OPENABLE):
            found.append(replace(link, target=target))
    return tuple(found)


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- sections ----------------------------------------------------------------------------------------------


def _sections(doc: SourceDocument) -> Iterator[tuple[tuple[str, ...], str | None, list[Piece]]]:
    """Non-empty sections with their heading paths and anchors; a top heading that repeats the title is the
    title's own."""
    structure = doc.content
    for section in structure.sections:
        headings = section.headings
        if headings and headings[0] == structure.title and _same(headings[0], doc.title):
            headings = headings[1:]
        section_pieces = pieces(section.blocks)
        if any(piece.text.strip() for piece in section_pieces):
            yield (doc.title, *headings), section.anchor, section_pieces


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


def windows(section: Sequence[Piece], *, max_chars: int = MAX_CHARS,
            overlap: int = OVERLAP_CHARS) -> list[list[Piece]]:
    """The section itself if short enough, else runs of pieces of at most about `max_chars` characters as
    rendered (context included), each after the first opened by up to `overlap` characters of the one before."""
    if rendered_length(section) <= max_chars:  # most sections: one window, nothing to cut
        return [list(section)]
    runs: list[list[Piece]] = []
    current: list[Piece] = []
    fitting = list(_fitting(section, max_chars))
    for index, piece in enumerate(fitting):
        if current and _length([*current, piece]) > max_chars:
            start = _whole_list_start(current, fitting[index:], max_chars)
            if start:  # the list opens the next window whole, with its lead-in's paragraph when that fits too
                runs.append(current[:start])
                current = current[start:]
            else:
                runs.append(current)
                current = _tail(current, overlap)
                if current and _length([*current, piece]) > max_chars:
                    current = []
        current.append(piece)
    if current:
        runs.append(current)
    return runs


def _whole_list_start(run: Sequence[Piece], following: Sequence[Piece], max_chars: int) -> int | None:
    """Where to end the run so that the list its next piece continues starts the next window whole: at the
    paragraph of the list's lead-in, or else at the lead-in; None when the run holds no lead-in of that list
    (or only at its start), or the list is too long for one window anyway."""
    item = following[0]
    lead_in = next((i for i, piece in enumerate(run) if item.context and piece is item.context[0]), None)
    if not lead_in:
        return None
    paragraph = lead_in
    while paragraph > 0 and run[paragraph].joiner != "\n\n":
        paragraph -= 1
    rest = _rest_of_list(following, item)
    return next((start for start in (paragraph, lead_in)
                 if start and _length([*run[start:], *rest]) <= max_chars), None)


def _rest_of_list(following: Sequence[Piece], item: Piece) -> list[Piece]:
    """`item` and the pieces after it read under the same first lead-in (or table header): the rest of its list."""
    lead = item.context[0]
    rest = []
    for piece in following:
        if not any(context is lead for context in piece.context):
            break
        rest.append(piece)
    return rest


def _length(run: Sequence[Piece]) -> int:
    return rendered_length(run)


def _tail(run: list[Piece], overlap: int) -> list[Piece]:
    """The last pieces of a window, at most `overlap` characters of them, to open the next window with."""
    taken: list[Piece] = []
    for piece in reversed(run[1:]):
        if _length([piece, *taken]) > overlap:
            break
        taken.insert(0, piece)
    return taken


def _fitting(section: Sequence[Piece], max_chars: int) -> Iterator[Piece]:
    """Every piece, one longer than a window cut into runs of words (a sentence of a thousand words)."""
    for piece in section:
        if len(piece.text) <= max_chars:
            yield piece
            continue
        first = True
        for start, end in _word_runs(piece.text, max_chars):
            links = tuple(Link(start=max(link.start, start) - start, end=min(link.end, end) - start,
                               target=link.target) for link in piece.links if link.start < end and start < link.end)
            yield replace(piece, text=piece.text[start:end], links=links, joiner=piece.joiner if first else " ")
            first = False


def _word_runs(text: str, max_chars: int) -> Iterator[tuple[int, int]]:
    start = 0
    end = 0
    for word in re.finditer(r"\S+", text):
        if end > start and word.end() - start > max_chars:
            yield start, end
            start = word.start()
        end = word.end()
    if end > start:
        yield start, end
