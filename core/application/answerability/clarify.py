"""When one question has several readings: propose one button per topic, tightly gated.

A short question is ambiguous when none of its words is specific to one of the documents that match it:
"what's the limit?" or "who approves it?" find a limit, or an approver, in several documents, and a guess
between them is a coin flip presented as an answer. A short question with a word only one matching document
uses ("VPN setup?") means that document. Both are read off the retrieved chunks, which are what the audience
may see, so the buttons never name a document the asker could not open.
"""

from collections.abc import Sequence
from typing import Final

from core.application.language.shape import Shape
from core.domain import ClarifyOption, RetrievedChunk
from core.text import content_stems

MAX_OPTIONS: Final = 4
SIMILAR_SCORE_RATIO: Final = 0.6
LABEL_LIMIT: Final = 75


def clarification_options(question: str, shape: Shape, candidates: Sequence[RetrievedChunk]
                          ) -> tuple[ClarifyOption, ...]:
    """Two to four readings when the question is short, none of its words points to one document, and the
    matches spread over several documents with similar scores; otherwise none, and the pipeline goes on."""
    if not shape.short or not candidates or _has_specific_word(question, candidates):
        return ()
    best = max(chunk.score for chunk in candidates)
    by_document: dict[str, RetrievedChunk] = {}
    for chunk in candidates:
        if chunk.score >= best * SIMILAR_SCORE_RATIO and chunk.doc_id not in by_document:
            by_document[chunk.doc_id] = chunk
    if len(by_document) < 2:
        return ()
    return tuple(_option(question, chunk) for chunk in list(by_document.values())[:MAX_OPTIONS])


def _has_specific_word(question: str, candidates: Sequence[RetrievedChunk]) -> bool:
    """Does a word of the question appear in exactly one of the matching documents?"""
    documents: dict[str, set[str]] = {}
    for chunk in candidates:
        stems = documents.setdefault(chunk.doc_id, set())
        stems.update(content_stems(f"{chunk.passage.title} {chunk.passage.heading} {chunk.text}"))
    return any(sum(term in stems for stems in documents.values()) == 1 for term in set(content_stems(question)))


def _option(question: str, chunk: RetrievedChunk) -> ClarifyOption:
    section = chunk.passage.heading.split(" > ")[-1]
    label = section if section == chunk.passage.title else f"{chunk.passage.title}: {section}"
    if len(label) > LABEL_LIMIT:
        label = label[: LABEL_LIMIT - 1] + "…"
    refine = f"{question.strip().rstrip('?')} ({chunk.passage.title}, {section})?"
    return ClarifyOption(label=label, refine=refine)
