"""Passages of the knowledge base, as retrieval hands them to the pipeline."""

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True, kw_only=True)
class Link:
    """A link inside a text: the characters `start:end` of the text are its words, `target` where it points."""

    start: int
    end: int
    target: str


@dataclass(frozen=True, kw_only=True)
class Passage:
    """A chunk as a person sees it: where it comes from and what it says (its reading form, with the targets
    of its links kept beside the words)."""

    chunk_id: str
    doc_id: str
    title: str
    heading: str
    text: str
    owner: str | None = None
    updated: date | None = None
    url: str | None = None
    links: tuple[Link, ...] = ()
    page: int | None = None
    """The page (of a PDF) or slide (of a deck) the passage starts on."""
    anchor: str | None = None
    """Where the passage's section is inside its document (an HTML heading's id)."""
    format: str | None = None
    """The document's format (`pdf`, `pptx`, `html`...); None for Markdown."""

    @property
    def place(self) -> str | None:
        """Where in the document the words are, beyond the heading path: "page 4", "slide 2"."""
        if self.page is None:
            return None
        return f"{'slide' if self.format == 'pptx' else 'page'} {self.page}"

    @property
    def link(self) -> str | None:
        """A link that opens the place where the source allows: a PDF at its page, an HTML page at its
        heading; else the document's own link."""
        if self.url is None:
            return None
        base = self.url.split("#", 1)[0]
        if self.format == "pdf" and self.page is not None:
            return f"{base}#page={self.page}"
        if self.anchor:
            return f"{base}#{self.anchor}"
        return self.url


@dataclass(frozen=True, kw_only=True)
class RetrievedChunk:
    """A passage with its retrieval score (0..1, comparable across questions) and content hash."""

    passage: Passage
    score: float
    content_hash: str
    supersedes: tuple[str, ...] = ()

    @property
    def chunk_id(self) -> str:
        return self.passage.chunk_id

    @property
    def doc_id(self) -> str:
        return self.passage.doc_id

    @property
    def text(self) -> str:
        return self.passage.text
