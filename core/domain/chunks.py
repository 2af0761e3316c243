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
