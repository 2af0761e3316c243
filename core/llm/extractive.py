"""The default model: offline, deterministic, extractive.

It answers with the retrieved chunks' own statements and returns the same envelope JSON an LLM would, so the
orchestrator parses and checks it exactly like any other model's output. Which statements answer is the
answerability assessment's decision (`core.application.answerability`): the best candidate when it reaches
the fitted threshold, with the statements it leads into and the other answering statements of its chunk.
"""

import json
from collections.abc import Sequence
from typing import Final

from core.application.answerability import Assessment, Candidate, assess
from core.application.ports import Embedder, GenerationRequest, Reader
from core.application.statements import Statement

MAX_CLAIMS: Final = 3
"""An answer is one fact and at most two that complete it; more would bury it."""
MAX_LIST_ITEMS: Final = 8
"""A list is quoted whole up to this many statements (a list of steps, the things an agreement must include);
a longer one, the run of its items around the best."""


class ExtractiveModel:
    """Answers with the best statements of the retrieved chunks, or says it found nothing."""

    def __init__(self, *, embedder: Embedder | None = None, reader: Reader | None = None) -> None:
        self._embedder = embedder
        self._reader = reader

    @property
    def name(self) -> str:
        return "extractive-2"

    @property
    def prompt_version(self) -> str:
        return "extractive-v2"

    def generate(self, request: GenerationRequest) -> str:
        assessment = request.assessment or assess(request.question, request.chunks, embedder=self._embedder,
                                                 reader=self._reader)
        if assessment.best is None or not assessment.answerable:
            return _envelope_not_found()
        chosen = answering_statements(assessment, whole_units=self._reader is None)
        return json.dumps({
            "found": True,
            "answer": " ".join(statement.text for statement in chosen),
            "claims": [{"text": statement.text, "chunk_ids": [statement.chunk.chunk_id], "quote": statement.quote}
                       for statement in chosen],
            "confidence": "high" if assessment.score >= (1 + assessment.threshold) / 2 else "medium",
            "refusal_reason": None,
        })


def answering_statements(assessment: Assessment, *, whole_units: bool = True) -> list[Statement]:
    """The list the best statement is an item of, or leads into ("The agreement must include:" and its items),
    quoted whole. Otherwise the best statement; the ones it leads into ("...by someone whose limit covers the
    amount:"); the other sentences of its paragraph or list item, nearest first ("No carryover." beside "No
    payment for unused days."); then the other statements of its chunk that answer in their own right, in the
    chunk's order.

    Without `whole_units` neither the list nor the rest of the paragraph or item is quoted: with a reader, the
    guard requires each claim's quote to answer the question itself (`core.application.claim_reading`), and a
    statement that only completes the best one would have the whole answer refused."""
    best = assessment.candidates[0]
    same_chunk = [c for c in assessment.candidates if c.statement.chunk.chunk_id == best.statement.chunk.chunk_id]
    listed = _its_list(best, same_chunk) if whole_units else []
    if listed:
        return listed
    completing = _same_block(best, same_chunk) if whole_units else []
    chosen = [best.statement, *_led_into(best, same_chunk), *completing]
    chosen = list(dict.fromkeys(chosen))
    for candidate in same_chunk[1:]:
        if len(chosen) >= MAX_CLAIMS:
            break
        if (candidate.probability >= assessment.threshold and candidate.statement not in chosen
                and not _about_something_else(candidate, best)):
            chosen.append(candidate.statement)
    return sorted(chosen[:MAX_CLAIMS], key=lambda statement: statement.position)


def _about_something_else(candidate: Candidate, best: Candidate) -> bool:
    """Another row of the same table is another record ("Staff engineer" beside the asked "Senior engineer"),
    and a statement that swaps the asked subject's modifier where the best keeps it is about another thing."""
    another_row = candidate.statement.row_key is not None and best.statement.row_key is not None
    return another_row or candidate.features["modifier_replaced"] > best.features["modifier_replaced"]


def _led_into(best: Candidate, same_chunk: Sequence[Candidate]) -> list[Statement]:
    if not best.statement.leads_in:
        return []
    following = sorted((c.statement for c in same_chunk if c.statement.position > best.statement.position),
                       key=lambda statement: statement.position)
    return following[: MAX_CLAIMS - 1]


def _same_block(best: Candidate, same_chunk: Sequence[Candidate]) -> list[Statement]:
    """The other sentences of the best statement's paragraph or item: a block is written as one unit, and a
    sentence of it often needs its neighbour to say what it means. A table row is a block of its own."""
    siblings = [c.statement for c in same_chunk
                if c.statement.block == best.statement.block and c.statement != best.statement]
    return sorted(siblings, key=lambda statement: abs(statement.position - best.statement.position))


def _its_list(best: Candidate, same_chunk: Sequence[Candidate]) -> list[Statement]:
    """The items the best statement leads into, or else the items read after the same lead-in as the best one,
    in the chunk's order; [] when there are fewer than two. A long list is cut to the run around its best item."""
    in_order = sorted(same_chunk, key=lambda candidate: candidate.statement.position)

    def read_after(lead_in: str) -> list[Candidate]:
        return [c for c in in_order if c.statement.kind == "item" and c.statement.context == lead_in]

    stated = best.statement
    announced = read_after(f"{stated.context} {stated.own}".strip()) if stated.leads_in else []
    listed = announced if len(announced) >= 2 else (  # one item is no list
        read_after(stated.context) if stated.kind == "item" and stated.context else [])
    if len(listed) < 2:
        return []
    at = listed.index(max(listed, key=lambda candidate: candidate.probability))
    start = max(0, min(at - MAX_LIST_ITEMS // 2, len(listed) - MAX_LIST_ITEMS))
    return [candidate.statement for candidate in listed[start:start + MAX_LIST_ITEMS]]


def _envelope_not_found() -> str:
    return json.dumps({"found": False, "answer": "", "claims": [], "confidence": "low",
                       "refusal_reason": "no retrieved statement states the answer"})
