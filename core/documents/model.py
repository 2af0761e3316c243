"""The document model: what every format is read into, and what statements, chunks and the guard work on.

A document is sections (each with its heading path) of blocks: paragraphs, lists with their nesting, tables
with their header row, quotes and code. Inline text is kept as a reader reads it: words without markup, a
link's words in the text and its target beside it (`Link`), never the target as words. Each format has its
reader (`core.documents.markdown`, and the readers of the `formats` extra); none of them chunks or splits
sentences, so every format is chunked and quoted the same way.

Standard library and the domain only: the application layer reads statements from this model's rendering.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import TypeAlias

from core.domain import Link

__all__ = ["Block", "Code", "Document", "Heading", "Link", "ListBlock", "ListItem", "Paragraph", "Quote", "Section",
           "Table", "Text", "sections_of"]


@dataclass(frozen=True, kw_only=True)
class Text:
    """Inline text as read: emphasis and code marks gone, whitespace runs collapsed to one space.

    `lead` is the length of a bold run that opens the text ("**Travel.** Book through..."): an author's
    lead-in, which a page without headings uses as one.
    """

    text: str
    links: tuple[Link, ...] = ()
    lead: int = 0

    def __bool__(self) -> bool:
        return bool(self.text)


@dataclass(frozen=True, kw_only=True)
class Paragraph:
    text: Text
    page: int | None = None
    """The page (or slide) the block starts on, for formats that have pages."""


@dataclass(frozen=True, kw_only=True)
class ListItem:
    """An item's own words (its paragraphs joined) and the blocks nested under it (sub-lists, code...)."""

    text: Text
    children: tuple["Block", ...] = ()
    checked: bool | None = None
    """A task-list item's box (`- [x]`): True or False; None for a plain item."""


@dataclass(frozen=True, kw_only=True)
class ListBlock:
    items: tuple[ListItem, ...]
    ordered: bool = False
    start: int = 1
    page: int | None = None


@dataclass(frozen=True, kw_only=True)
class Table:
    """A table: the header row's cells, then the body rows' cells (rows may be shorter or longer)."""

    header: tuple[Text, ...]
    rows: tuple[tuple[Text, ...], ...]
    page: int | None = None


@dataclass(frozen=True, kw_only=True)
class Quote:
    blocks: tuple["Block", ...]
    page: int | None = None


@dataclass(frozen=True, kw_only=True)
class Code:
    text: str
    language: str = ""
    page: int | None = None


Block: TypeAlias = Paragraph | ListBlock | Table | Quote | Code


@dataclass(frozen=True, kw_only=True)
class Section:
    """The blocks under one heading. `headings` is the path below the document's title (empty for the text
    before the first heading); `anchor` is where a link to the section points, where the format has one."""

    headings: tuple[str, ...]
    blocks: tuple[Block, ...]
    anchor: str | None = None


@dataclass(frozen=True, kw_only=True)
class Document:
    """A document as read. `title` is the document's own (its first top-level heading, or the format's title
    property) or None; `updated` the last edit its format records (PDF and Office properties, an export's page
    dates), or None; `warnings` are what the reader dropped or could not read, in words the author can act on."""

    sections: tuple[Section, ...]
    title: str | None = None
    updated: date | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True, kw_only=True)
class Heading:
    """A heading as a reader meets it in the flow of a document: its level (1 the top) and its words."""

    level: int
    text: str


def sections_of(flow: Iterable[Heading | Block]) -> Iterator[Section]:
    """A document's flow of headings and blocks as sections: each heading opens one, under the headings above
    it of lower levels; a heading with no block before the next one opens no section of its own."""
    stack: list[Heading] = []
    blocks: list[Block] = []
    for event in flow:
        if isinstance(event, Heading):
            if blocks:
                yield Section(headings=tuple(h.text for h in stack), blocks=tuple(blocks))
            stack = [*(h for h in stack if h.level < event.level), event]
            blocks = []
        else:
            blocks.append(event)
    if blocks:
        yield Section(headings=tuple(h.text for h in stack), blocks=tuple(blocks))
