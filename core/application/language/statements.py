"""The statements of a chunk: its sentences, list items and table rows, each quotable on its own.

The answerability decision scores statements, the extractive model answers with them, and the guard checks a
claim against one; all three take them from the one reader of the reading form (`core.documents.reading`), so
they agree on where a statement starts and ends and on what it is read with.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from core.application.language.instructions import addressed_to_assistants
from core.application.language.quote_context import heading_lead_in
from core.application.language.quotes import Span, plain, quoted_text, statements
from core.documents.reading import StatementKind, StatementSpan, stated
from core.domain import RetrievedChunk

MIN_LENGTH: Final = 4


@dataclass(frozen=True, kw_only=True)
class Statement:
    """One quotable statement of a chunk, as read alone: a table row with its column headers ("City: Dublin;
    Nightly cap: EUR 210"), a list item after its lead-ins ("Request three weeks in advance for: Conferences
    over $2,500"), so the statement says what its numbers are. A list item with no lead-in of its own, under a
    heading that denies or sets a condition, is read after that heading ("What is not reimbursed: Gym
    memberships"; `quote_context.heading_lead_in`), so it does not say the opposite alone."""

    text: str
    chunk: RetrievedChunk
    position: int
    """Its order in the chunk, from 0: neighbours are read together when one leads into the next."""
    kind: StatementKind = "sentence"
    own: str = ""
    """Its own words, without the lead-ins it is read with (for a row, its cells under their headers)."""
    context: str = ""
    """The lead-ins of a list item ("Request three weeks in advance for:"); '' otherwise."""
    asked: str = ""
    """The questions of its paragraph or item it replies to ("Can I carry over leave days?" before "No, they
    lapse."), read after its context: the statement says what it answers."""
    leads_in: bool = False
    """It ends with a colon, or asks a question ("Friday afternoon? Merge."): what it announces follows in the
    next statements, and it states nothing by itself."""
    row_key: str | None = None
    """For a table row, its first cell: what the row is about ("Dublin", "Senior engineer")."""
    quote: str = ""
    """The statement as the chunk writes it (a table row without its header, an item without its lead-ins):
    what a claim resting on it quotes, found verbatim in the chunk by the guard."""
    addressed_to_assistants: bool = False
    """It belongs to a line that speaks to automated readers: a note someone planted, never the document's word."""
    block: int
    """Where its line starts in the chunk: the sentences of one paragraph or list item share it (the reading
    form writes a block on one line), so an answer can quote a sentence with the rest of its item."""
    start: int
    """Where its quote starts in the chunk: a claim's anchor names its statement by it."""

    @property
    def read_after(self) -> str:
        """What it is read after, as read: its lead-ins and the question it replies to ('' when read alone)."""
        return self.text[: len(self.text) - len(self.own)].strip()


def list_items(statement: Statement, of_chunk: Sequence[Statement]) -> list[Statement]:
    """The items of the list `statement` is an item of, in order: the unbroken run around it of items read
    after the same lead-in, items nested deeper standing between them. Two lists with the same lead-in ("You
    need:" under "Laptop kit." and again under "Phone kit.") are two lists. [] for anything but an item read
    after a lead-in."""
    if statement.kind != "item" or not statement.context or statement not in of_chunk:
        return []
    at = of_chunk.index(statement)

    def in_list(other: Statement) -> bool:
        return other.kind == "item" and (other.context == statement.context
                                          or other.context.startswith(statement.context + " "))

    first, last = at, at
    while first > 0 and in_list(of_chunk[first - 1]):
        first -= 1
    while last + 1 < len(of_chunk) and in_list(of_chunk[last + 1]):
        last += 1
    return [other for other in of_chunk[first:last + 1] if other.context == statement.context]


def announced_items(lead_in: Statement, of_chunk: Sequence[Statement]) -> list[Statement]:
    """The items a statement ending in a colon leads into ("You need:" and the items under it), or []."""
    after = of_chunk.index(lead_in) + 1 if lead_in in of_chunk else len(of_chunk)
    if not lead_in.leads_in or after >= len(of_chunk) or of_chunk[after].context != lead_in.text:
        return []
    return list_items(of_chunk[after], of_chunk)


def split_statements(chunk: RetrievedChunk) -> list[Statement]:
    lead = heading_lead_in(chunk.passage.heading)
    return [Statement(chunk=chunk, position=position, **(_under_heading(fields, lead) if lead else fields))
            for position, fields in enumerate(_read(chunk.text))]


def _under_heading(fields: dict[str, Any], lead: str) -> dict[str, Any]:
    """A list item with no lead-in (nor question) of its own, read after the heading it stands under: the
    heading's negation or condition is its lead-in. `context` stays '' (the heading is no lead-in sentence of the
    chunk: the items stay separate facts, not one list quoted whole)."""
    if fields["kind"] != "item" or fields["context"] or fields["asked"]:
        return fields
    return {**fields, "text": stated(lead, str(fields["text"]))}


def statements_of(chunks: Sequence[RetrievedChunk]) -> list[Statement]:
    return [statement for chunk in chunks for statement in split_statements(chunk)]


@lru_cache(maxsize=8192)
def _read(text: str) -> tuple[dict[str, Any], ...]:
    """The statements of a chunk's text, read once per text: every question retrieving the chunk reads the same."""
    found: list[dict[str, Any]] = []
    for span in statements(text):
        fields = _fields(text, span)
        if len(fields["own"]) >= MIN_LENGTH or _replies(fields):
            found.append(fields)
    if not found:  # a chunk of markup or a lone "No." under a heading that asks
        return ()
    for fields, after in zip(found, [*found[1:], None], strict=True):
        if fields["kind"] == "item" and fields["own"].endswith("?"):
            fields["leads_in"] = _answered_in_item(fields, after)
        elif fields["kind"] == "sentence" and after is not None and after["kind"] == "item":
            fields["leads_in"] = fields["leads_in"] or str(after["context"]).startswith(str(fields["own"]))
        elif fields["kind"] == "item" and _labels_nested_items(fields, after):
            fields["leads_in"] = True
    return tuple(found)


def _labels_nested_items(item: dict[str, Any], after: dict[str, Any] | None) -> bool:
    """An item that is no finished sentence ("Brex", "Missing receipts cause") with items nested under it: they
    are read after it, and it states nothing by itself."""
    if after is None or str(item["own"]).rstrip("*_)\"' ").endswith((".", "!", "?")):
        return False
    return after["context"] != item["context"] and str(after["context"]).endswith(str(item["own"]))


def _replies(short: dict[str, Any]) -> bool:
    """A short reply ("No.", "Yes", "3.") to the question it is read after, nested under it or next in its paragraph
    or item: too short for a statement of its own, it is the answer."""
    after_question = bool(short["asked"]) or str(short["context"]).endswith("?")
    return after_question and any(character.isalnum() for character in str(short["own"]))


def _answered_in_item(question: dict[str, Any], after: dict[str, Any] | None) -> bool:
    """An item asking a question leads into its answer, in the item or under it ("Is there a cheaper option?
    Check first."); in a list of questions to ask, each item states itself, and so does a question whose
    sub-items ask more questions. (A paragraph's question always leads in: "Paged at night? Who do you call?
    Call the duty manager.")"""
    if after is None or str(after["own"]).endswith("?"):
        return False
    nested = after["context"] != question["context"] and str(after["context"]).endswith(question["own"])
    return bool(after["block"] == question["block"] or nested)


def _fields(text: str, span: StatementSpan) -> dict[str, Any]:
    quote = text[span.start:span.end]
    read = quoted_text(text, span, Span(start=span.start, end=span.end))
    own = read if span.kind == "row" else plain(quote)
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.end)
    line = text[line_start:line_end if line_end >= 0 else len(text)]
    return {"text": read, "kind": span.kind, "own": own,
            "context": plain(span.context) if span.kind == "item" else "", "asked": plain(span.asked),
            "leads_in": own.endswith((":", "?")),
            "row_key": _first_cell(quote) if span.kind == "row" else None, "quote": quote,
            "addressed_to_assistants": addressed_to_assistants(line), "block": line_start,
            "start": span.start}


def _first_cell(row: str) -> str:
    cells = row.strip().strip("|").split("|")
    return plain(cells[0]) if cells else ""
