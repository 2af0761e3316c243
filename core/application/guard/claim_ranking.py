"""The ranking's check on a model's answer: it must rest on a statement that the answerability ranker puts near
the best answer to *this* question.

A true sentence of the right section that answers another question passes every support rule: its quote states
it word for word. The ranker (`core.application.answerability.model`) has already ordered every candidate statement
of the question by how well it answers; an answer whose every claim quotes statements ranked far below the best
candidate answers something else. One claim near the best is enough: the second half of an answer that combines
two statements ranks lower, and it is still checked by every support rule. The check applies where a model chose
what to quote: the extractive model quotes the ranker's own choice, so the check would only agree with itself.
The margin belongs to the ranker it was fitted on (`AnswerabilityModel.claim_rank_margin`): the reader's rankers
have none, and are not checked this way.
"""

import math
from collections.abc import Sequence
from typing import Final

from core.application.guard.checks import Anchor
from core.application.ports import Assessment

RANKED_FAR_BELOW: Final = "no claim's quote answers the question"
"""The start of the refusal's detail in the audit record."""


def claim_rank_gaps(anchors: Sequence[Anchor], assessment: Assessment) -> list[float | None]:
    """Per claim, how far below the assessment's best candidate its nearest quoted statement ranks (0 for the
    best itself); None when none of its statements is a candidate (a chunk the assessment did not read)."""
    if not assessment.candidates:
        return [None] * len(anchors)
    gap_of = _gaps(assessment)
    gaps: list[float | None] = []
    for anchor in anchors:
        found = [gap_of[key] for statement in anchor.statements
                 if (key := (anchor.chunk.chunk_id, statement.start)) in gap_of]
        gaps.append(min(found) if found else None)
    return gaps


def _gaps(assessment: Assessment) -> dict[tuple[str, int], float]:
    """Each candidate's distance below the best. The candidates a follow-up's reading set aside answer the earlier
    question, not this one ("and for a client dinner?" is not answered by the meal allowance just given): they are
    infinitely far, however they scored."""
    best = assessment.candidates[0].rank_score
    set_aside = len(assessment.candidates) if assessment.set_aside_from is None else assessment.set_aside_from
    return {(c.statement.chunk.chunk_id, c.statement.start): best - c.rank_score if at < set_aside else math.inf
            for at, c in enumerate(assessment.candidates)}


def rests_on_an_answer(gaps: Sequence[float | None], margin: float) -> bool:
    """Does some claim quote a statement within `margin` of the best candidate? Claims the ranking did not judge
    (None) neither carry the answer nor count against it: an answer made of them alone is not judged."""
    judged = [gap for gap in gaps if gap is not None]
    return not judged or any(gap <= margin for gap in judged)
