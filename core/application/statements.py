"""The statements of a chunk: its sentences, bullets and table rows, each quotable on its own.

The answerability decision scores statements, the extractive model answers with them, and the guard checks a
claim against one; all three split a chunk the same way.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from core.application.instructions import addressed_to_assistants
from core.domain import RetrievedChunk

_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(*\[])")
_MARKUP: Final = re.compile(r"\*\*|__|`|^\s*[-*+]\s+|^\s*\d+[.)]\s+|^\s*>\s*", re.M)
_TABLE_RULE: Final = re.compile(r":?-{2,}:?")
MIN_LENGTH: Final = 4


@dataclass(frozen=True, kw_only=True)
class Statement:
    """One quotable statement of a chunk. A table row is read with its column headers ("City: Dublin;
    Nightly cap: EUR 210"), so the row says what its numbers are."""

    text: str
    chunk: RetrievedChunk
    position: int
    """Its order in the chunk, from 0: neighbours are read together when one leads into the next."""
    leads_in: bool = False
    """It ends with a colon: what it announces follows in the next statements."""
    row_key: str | None = None
    """For a table row, its first cell: what the row is about ("Dublin", "Senior engineer")."""
    quote: str = ""
    """The statement as the chunk writes it, markup and all (a table row without its header): what a claim
    resting on it quotes, found verbatim in the chunk by the guard."""
    addressed_to_assistants: bool = False
    """It belongs to a line that speaks to automated readers: a note someone planted, never the document's word."""


def split_statements(chunk: RetrievedChunk) -> list[Statement]:
    texts: list[tuple[str, str, str | None, bool]] = []
    header: list[str] | None = None
    for line in chunk.text.splitlines():
        stripped = line.strip()
        if stripped.startswith("|"):
            cells = [cell.strip() for cell in stripped.strip("|").split("|")]
            if all(_TABLE_RULE.fullmatch(cell) for cell in cells if cell):
                continue
            if header is None:
                header = cells
                continue
            row = clean("; ".join(f"{h}: {c}" for h, c in zip(header, cells, strict=False) if c))
            texts.append((row, stripped, clean(cells[0]) if cells else None, addressed_to_assistants(stripped)))
            continue
        header = None
        if stripped.startswith("#") or not stripped:
            continue
        planted = addressed_to_assistants(stripped)
        texts.extend((clean(part), part, None, planted) for part in _SENTENCE_END.split(stripped))
    kept = [item for item in texts if len(item[0]) >= MIN_LENGTH]
    return [Statement(text=text, chunk=chunk, position=n, leads_in=text.endswith(":"), row_key=key, quote=quote,
                      addressed_to_assistants=planted) for n, (text, quote, key, planted) in enumerate(kept)]


def statements_of(chunks: Sequence[RetrievedChunk]) -> list[Statement]:
    return [statement for chunk in chunks for statement in split_statements(chunk)]


def clean(text: str) -> str:
    """Markdown emphasis, code marks and list markers removed, whitespace collapsed."""
    return " ".join(_MARKUP.sub("", text).replace("*", "").split())
