"""When one question has several readings: propose one button per topic, tightly gated."""

from collections.abc import Sequence
from typing import Final

from core.application.shape import Shape
from core.domain import ClarifyOption, RetrievedChunk

MAX_OPTIONS: Final = 4
SIMILAR_SCORE_RATIO: Final = 0.6
LABEL_LIMIT: Final = 75


def clarification_options(question: str, shape: Shape, usable: Sequence[RetrievedChunk]
                          ) -> tuple[ClarifyOption, ...]:
    """Two to four readings when the question is too short to mean one thing and the evidence spreads over
    several documents with similar scores; otherwise none, and the pipeline answers."""
    if not shape.too_short or not usable:
        return ()
    best = usable[0].score
    by_document: dict[str, RetrievedChunk] = {}
    for chunk in usable:
        if chunk.score >= best * SIMILAR_SCORE_RATIO and chunk.doc_id not in by_document:
            by_document[chunk.doc_id] = chunk
    if len(by_document) < 2:
        return ()
    return tuple(_option(question, chunk) for chunk in list(by_document.values())[:MAX_OPTIONS])


def _option(question: str, chunk: RetrievedChunk) -> ClarifyOption:
    section = chunk.passage.heading.split(" > ")[-1]
    label = section if section == chunk.passage.title else f"{chunk.passage.title}: {section}"
    if len(label) > LABEL_LIMIT:
        label = label[: LABEL_LIMIT - 1] + "…"
    refine = f"{question.strip().rstrip('?')} ({chunk.passage.title}, {section})?"
    return ClarifyOption(label=label, refine=refine)
