"""The text of an answer, written from its checked claims: each claim followed by its citation markers, and
the items of one list written as a list under their lead-in, said once.

A claim resting on a list item is read after its lead-in ("The agreement must include: Your work location"),
so that it states something on its own; said that way item after item, a list answer repeats its lead-in before
every item. Consecutive claims resting on items of the same list are written as the lead-in on a line of its
own and one bulleted line per item (the sentences of one item on one line), when each claim is its item read
after its lead-ins word for word; when the cited passage has items of that list no claim rests on, a last line
says how many, so part of a list is not shown as all of it that the passage holds.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Final

from core.application.guard.checks import Anchor
from core.application.language.statements import Statement, list_items, split_statements
from core.domain import Claim

BULLET: Final = "•"


@dataclass(frozen=True, kw_only=True)
class _Listed:
    """Where a claim stands in a list: which list (its chunk and first item), and its item's line."""

    key: tuple[str, int]
    lead_in: str
    item: int
    items: frozenset[int]


def answer_text(claims: Sequence[Claim], anchors: Sequence[Anchor]) -> str:
    of_chunk = {anchor.chunk.chunk_id: split_statements(anchor.chunk) for anchor in anchors}
    listed = [_listed(claim, anchor, of_chunk[anchor.chunk.chunk_id])
              for claim, anchor in zip(claims, anchors, strict=True)]
    claimed = {(anchor.chunk.chunk_id, statement.block) for anchor in anchors for span in anchor.statements
               if (statement := _statement_at(of_chunk[anchor.chunk.chunk_id], span.start)) is not None}
    lines: list[tuple[str, bool]] = []
    said_before = ""  # what the last prose claim was read after
    for key, run in groupby(zip(claims, anchors, listed, strict=True),
                            key=lambda triple: None if triple[2] is None else triple[2].key):
        run_claims = list(run)
        if key is None or len(run_claims) < 2:  # one item is said as it is
            for claim, anchor, _ in run_claims:
                read_after = _read_after(claim, anchor, of_chunk[anchor.chunk.chunk_id])
                lines.append((f"{_unrepeated(claim, read_after, said_before)} {_markers(claim)}", False))
                said_before = read_after
            continue
        said_before = ""
        first = run_claims[0][2]
        assert first is not None
        lines.append((first.lead_in, True))
        for _, item_claims in groupby(run_claims, key=lambda triple: triple[2].item if triple[2] else None):
            together = list(item_claims)
            words = " ".join(_item_words(claim, first.lead_in) for claim, _, _ in together)
            lines.append((f"{BULLET} {words} {_markers(together[-1][0])}", True))
        unclaimed = sum((first.key[0], item) not in claimed for item in first.items)
        if unclaimed:
            lines.append((f"{BULLET} {unclaimed} more in the source {_markers(run_claims[-1][0])}", True))
    return _joined(lines)


def _read_after(claim: Claim, anchor: Anchor, of_chunk: Sequence[Statement]) -> str:
    """What the claim's one statement is read after ("Can visitors park in the garage?" before its nested answer),
    when the claim says it; '' otherwise."""
    statement = _statement_at(of_chunk, anchor.statements[0].start) if len(anchor.statements) == 1 else None
    read = statement.read_after if statement is not None else ""
    return read if read and " ".join(claim.text.split()).startswith(read + " ") else ""


def _unrepeated(claim: Claim, read_after: str, said_before: str) -> str:
    """The claim's words, without what it is read after when the claim just before was read after it too
    ("Can visitors park? Only when booked." then "Bookings close at noon.", not the question twice)."""
    said = " ".join(claim.text.split())
    return said[len(read_after):].strip() if read_after and read_after == said_before else said


def _joined(lines: Sequence[tuple[str, bool]]) -> str:
    """Prose claims run on in one paragraph; a list's lines, and whatever follows a list, start lines."""
    text = ""
    for index, (line, in_list) in enumerate(lines):
        new_line = index > 0 and (in_list or lines[index - 1][1])
        text += ("\n" if new_line else " " if index else "") + line
    return text


def _listed(claim: Claim, anchor: Anchor, of_chunk: Sequence[Statement]) -> _Listed | None:
    """Where the one list item a claim rests on stands in its list, when the claim is that item read after its
    lead-ins word for word; None for anything else. A claim in a model's own words is never put under the
    document's lead-in: under "We don't use it to:" its own negation would read twice."""
    if len(anchor.statements) != 1 or anchor.statements[0].kind != "item" or not _reads_its_item(claim, anchor):
        return None
    statement = _statement_at(of_chunk, anchor.statements[0].start)
    items = list_items(statement, of_chunk) if statement is not None else []
    if statement is None or len({item.block for item in items}) < 2:  # one item is no list: said as prose
        return None
    return _Listed(key=(anchor.chunk.chunk_id, items[0].block), lead_in=_lead_in(statement),
                   item=statement.block, items=frozenset(item.block for item in items))


def _statement_at(of_chunk: Sequence[Statement], start: int) -> Statement | None:
    """The statement of a chunk that starts there (its `block` names its item's line)."""
    return next((s for s in of_chunk if s.start == start), None)


def _lead_in(statement: Statement) -> str:
    """The lead-ins an item is read after, as read ("Laptops: Returned by:" before "courier"), without the question
    of its item it replies to (each item says its own)."""
    return statement.read_after.removesuffix(statement.asked).strip()


def _reads_its_item(claim: Claim, anchor: Anchor) -> bool:
    return bool(anchor.pieces) and claim.text.split() == anchor.pieces[0].split()


def _item_words(claim: Claim, lead_in: str) -> str:
    """An item's own words: the claim reads it after its lead-ins (`_listed`)."""
    said = " ".join(claim.text.split())
    return said[len(lead_in):].strip() if said.startswith(lead_in) else said


def _markers(claim: Claim) -> str:
    return "".join(f"[{n}]" for n in claim.citations)
