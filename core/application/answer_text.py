"""The text of an answer, written from its checked claims: each claim followed by its citation markers, and
the items of one list written as a list under their lead-in, said once.

A claim resting on a list item is read after its lead-in ("The agreement must include: Your work location"),
so that it states something on its own; said that way item after item, a list answer repeats its lead-in before
every item. Consecutive claims resting on items of the same list are written as the lead-in on a line of its
own and one bulleted line per item; when the cited passage lists more items than the answer claims, a last
line says how many more, so a partial list is never shown as the whole.
"""

from collections.abc import Sequence
from itertools import groupby
from typing import Final

from core.application.checks import Anchor
from core.application.quotes import plain, statements
from core.domain import Claim

BULLET: Final = "•"


def answer_text(claims: Sequence[Claim], anchors: Sequence[Anchor]) -> str:
    pieces: list[tuple[str, bool]] = []
    for listed_in, run in groupby(zip(claims, anchors, strict=True), key=lambda pair: _list_of(pair[1])):
        pairs = list(run)
        claimed = [claim for claim, _ in pairs]
        if listed_in is not None and len(claimed) > 1:
            lead_in = listed_in[1]
            items = [f"{BULLET} {_without_lead_in(claim.text, lead_in)} {_markers(claim)}" for claim in claimed]
            unclaimed = _items_in(pairs[0][1].chunk.text, lead_in) - {_line_of(anchor) for _, anchor in pairs}
            if unclaimed:
                items.append(f"{BULLET} {len(unclaimed)} more in the source {_markers(claimed[-1])}")
            pieces.append(("\n".join([lead_in, *items]), True))
        else:
            pieces.extend((f"{claim.text} {_markers(claim)}", False) for claim in claimed)
    text = ""
    for index, (piece, listed) in enumerate(pieces):
        after_list = index > 0 and pieces[index - 1][1]
        text += ("" if index == 0 else "\n" if listed or after_list else " ") + piece
    return text


def _list_of(anchor: Anchor) -> tuple[str, str] | None:
    """The chunk and the lead-in (as a claim reads it) of the list item a claim rests on; None for anything else."""
    if len(anchor.statements) != 1 or anchor.statements[0].kind != "item":
        return None
    lead_in = plain(anchor.statements[0].context)
    return (anchor.chunk.chunk_id, lead_in) if lead_in else None


def _items_in(text: str, lead_in: str) -> set[int]:
    """The items of a chunk's text read after this lead-in, each by where its line starts."""
    return {_line_start(text, statement.start) for statement in statements(text)
            if statement.kind == "item" and plain(statement.context) == lead_in}


def _line_of(anchor: Anchor) -> int:
    return _line_start(anchor.chunk.text, anchor.statements[0].start)


def _line_start(text: str, offset: int) -> int:
    """The reading form writes a list item on one line: where that line starts names the item."""
    return text.rfind("\n", 0, offset) + 1


def _without_lead_in(text: str, lead_in: str) -> str:
    """A claim as its item says it; a claim in the model's own words stays as it is."""
    return (text[len(lead_in):].strip() if text.startswith(lead_in) else "") or text


def _markers(claim: Claim) -> str:
    return "".join(f"[{n}]" for n in claim.citations)
