"""The ranking's check on a model's answer: it must rest on a statement that the answerability ranker puts near
the best answer to *this* question.

A true sentence of the right section that answers another question passes every support rule: its quote states
it word for word. The ranker (`core.application.answerability`) has already ordered every candidate statement
of the question by how well it answers; an answer whose every claim quotes statements ranked far below the best
candidate answers something else. One claim near the best is enough: the second half of an answer that combines
two statements ranks lower, and it is still checked by every support rule. The check applies where a generative
model chose what to quote: the extractive model quotes the ranker's own choice, so the check would only agree
with itself.
"""

from collections.abc import Sequence
from typing import Final

from core.application.answerability import Assessment
from core.application.checks import Anchor

CLAIM_RANK_MARGIN: Final = 5.25
"""How far below the best candidate (in the ranker's log-odds) the answer's best quoted statement may rank and
still answer the question. Fitted by `benchmarks/fit_claim_ranking.py`: the lowest margin that keeps 95% of
faithful answers on `examples/`, `dev` and `dev2`; its held-out figures are in `docs/answering.md`."""


def claim_rank_gaps(anchors: Sequence[Anchor], assessment: Assessment) -> list[float | None]:
    """Per claim, how far below the assessment's best candidate its best quoted statement ranks (0 for the best
    itself, less than 0 above it); None when none of its statements is a candidate (a chunk the assessment did
    not read: no ranking speaks against it)."""
    if not assessment.candidates:
        return [None] * len(anchors)
    best = assessment.candidates[0].rank_score
    ranked = {(c.statement.chunk.chunk_id, c.statement.start): c.rank_score for c in assessment.candidates}
    gaps: list[float | None] = []
    for anchor in anchors:
        scores = [ranked[key] for statement in anchor.statements
                  if (key := (anchor.chunk.chunk_id, statement.start)) in ranked]
        gaps.append(best - max(scores) if scores else None)
    return gaps


def rests_on_an_answer(gaps: Sequence[float | None], margin: float = CLAIM_RANK_MARGIN) -> bool:
    """Does some claim quote a statement within `margin` of the best candidate, or one the ranking did not judge?
    An answer without claims ranked (no assessment) is not judged either."""
    return not gaps or any(gap is None or gap <= margin for gap in gaps)
