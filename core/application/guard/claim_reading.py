"""The reader's check on a model's answer: the statement each claim quotes must answer *this* question.

The guard's support rules catch a claim its quote does not state (a swapped number, a flipped negation, an added
clause); they cannot catch a true sentence of the right section that answers another question ("the contract
renews every 12 months" given for "how much notice do we need to cancel?"): its quote states it word for word.
The reader reads the question with each quoted statement; a claim whose statements all score below the floor is
refused. The floor is fitted by `training/fit_claim_reading.py` on the fabrication benchmark of some sets and
reported on the others.
"""

from collections.abc import Sequence
from typing import Final

from core.application.guard.checks import Anchor
from core.application.language.quotes import Span, quoted_text, statements
from core.application.ports import Reader, ReadPassage

CLAIM_READING_FLOOR: Final = 0.015
"""The reader's probability below which a quoted statement does not answer the question: the highest floor that
keeps 95% of faithful answers on `examples/`, `dev` and `dev2` (`training/fit_claim_reading.py`'s rule, each
read by the reader fold that never saw it). On the real handbooks it was never fitted on, with the shipped
reader: `dev3` keeps 0.94 of faithful answers and refuses 0.16 of other-question fabrications, `real` 0.86 and
0.18. No floor reaches 0.90 on both: the reader ranks a section's statements better than it tells a true
sentence that answers another question from the answer."""


def claim_readings(question: str, anchors: Sequence[Anchor], reader: Reader) -> list[float]:
    """Per claim, the reader's probability that its quote answers the question: the best of the statements the
    quote spans, each read as quoted, with its heading and the statement before it. One batch per answer."""
    batch: list[ReadPassage] = []
    owners: list[int] = []
    for number, anchor in enumerate(anchors):
        ordered = statements(anchor.chunk.text)
        for statement, piece in zip(anchor.statements, anchor.pieces, strict=True):
            index = ordered.index(statement)
            before = ordered[index - 1] if index > 0 else None
            batch.append(ReadPassage(text=piece, heading=anchor.chunk.passage.heading, before="" if before is None
                                     else quoted_text(anchor.chunk.text, before, Span(start=before.start,
                                                                                      end=before.end))))
            owners.append(number)
    best = [0.0] * len(anchors)
    for owner, probability in zip(owners, reader.score(question, batch), strict=True):
        best[owner] = max(best[owner], probability)
    return best
