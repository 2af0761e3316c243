"""The default model: offline, deterministic, extractive.

It answers with the retrieved chunks' own statements and returns the same envelope JSON an LLM would, so the
orchestrator parses and checks it exactly like any other model's output. Which statements answer is the
answerability assessment's decision (`core.application.answerability.model`): the best candidate when it reaches
the fitted threshold, with the statements it leads into, the other answering statements of its chunk and the
ranker's second choice when it stands in that chunk; or, when the best is an item of a list or its lead-in, the
list.
"""

import json
from collections.abc import Sequence
from typing import Final

from core.application.answerability.model import AnswerabilityModel, assess
from core.application.language.statements import Statement, announced_items, list_items, split_statements
from core.application.ports import Assessment, Candidate, Embedder, GenerationRequest, Reader

MAX_CLAIMS: Final = 3
"""An answer is one fact and at most two that complete it; more would bury it."""
MAX_LIST_ITEMS: Final = 8
"""A list is quoted whole up to this many items (a list of steps, the things an agreement must include); a
longer one, the run of its items around the best."""


class ExtractiveModel:
    """Answers with the best statements of the retrieved chunks, or says it found nothing."""

    def __init__(self, *, matcher: Embedder | None = None, reader: Reader | None = None,
                 answerability: AnswerabilityModel | None = None) -> None:
        """`matcher`: the embedder the assessment reads (the retrieval embedder, or the question matcher)."""
        self._matcher = matcher
        self._reader = reader
        self._answerability = answerability

    @property
    def name(self) -> str:
        return "extractive-2"

    @property
    def prompt_version(self) -> str:
        return "extractive-v2"

    @property
    def quotes_the_ranking(self) -> bool:
        return True  # its answer is the assessment's best statements

    @property
    def streams_answers(self) -> bool:
        return False  # quotes, all there at once: nothing is being written

    def generate(self, request: GenerationRequest) -> str:
        assessment = request.assessment or assess(request.question, request.chunks, embedder=self._matcher,
                                                 reader=self._reader, model=self._answerability)
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
    payment for unused days."); then the other statements of its chunk that answer in their own right; then, in
    a slot left, the ranker's second choice when it stands in the same chunk: the first is often the passage's
    context ("Tell your manager two months ahead.") and the second its answer ("...twelve weeks on full pay."),
    which the decision scores just below the threshold. Quoted in the chunk's order. A list quoted whole takes
    the second choice too when it answers in its own right.

    Without `whole_units` neither the list nor the rest of the paragraph or item is quoted: with a reader, the
    guard requires each claim's quote to answer the question itself (`core.application.guard.claim_reading`), and a
    statement that only completes the best one would have the whole answer refused."""
    best = assessment.candidates[0]
    same_chunk = [c for c in assessment.candidates if c.statement.chunk.chunk_id == best.statement.chunk.chunk_id]
    second = _second_choice(assessment, same_chunk) if whole_units else None
    listed = _its_list(best, same_chunk) if whole_units else []
    if listed:
        if second is not None and _outside(second.statement, listed) and second.probability >= assessment.threshold:
            return sorted([*listed, second.statement], key=lambda statement: statement.position)
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
    if second is not None and len(chosen) < MAX_CLAIMS and second.statement not in chosen:
        chosen.append(second.statement)
    chosen = chosen[:MAX_CLAIMS]
    return sorted((s for s in chosen if not _read_before(s, chosen)), key=lambda statement: statement.position)


def _second_choice(assessment: Assessment, same_chunk: Sequence[Candidate]) -> Candidate | None:
    """The ranker's second candidate when it stands in the best one's chunk and is about the same thing."""
    if len(assessment.candidates) < 2:
        return None
    best, second = assessment.candidates[:2]
    return second if second in same_chunk and not _about_something_else(second, best) else None


def _outside(statement: Statement, listed: Sequence[Statement]) -> bool:
    """Not an item of the quoted list, nor of the part of a long list left unquoted (its items share lead-ins)."""
    return statement.kind != "item" or statement.context not in {item.context for item in listed}


def _read_before(statement: Statement, chosen: Sequence[Statement]) -> bool:
    """Another chosen item is read after this statement's words, as its lead-in ("Can I keep my laptop? No, ...",
    nested under the question): quoted on its own as well, the answer would say them twice."""
    return any(f" {statement.own} " in f" {other.read_after} " for other in chosen if other is not statement)


def _about_something_else(candidate: Candidate, best: Candidate) -> bool:
    """Another row of the same table is another record ("Staff engineer" beside the asked "Senior engineer"),
    another entry of a list of questions answers another question ("Who pays for repairs? The company ..."
    beside the asked "Can contractors get a laptop?"), and a statement that swaps the asked subject's modifier
    where the best keeps it is about another thing."""
    another_row = candidate.statement.row_key is not None and best.statement.row_key is not None
    return (another_row or _answers_another_question(candidate.statement, best.statement)
            or candidate.features["modifier_replaced"] > best.features["modifier_replaced"])


def _answers_another_question(candidate: Statement, best: Statement) -> bool:
    """The candidate asks, is read after or replies to another of the document's questions than the best."""
    asked = _question_of(candidate)
    return bool(asked) and asked != _question_of(best) and asked not in best.text


def _question_of(statement: Statement) -> str:
    """The document's question a statement asks or is read after ("Is there a pet allowance? Yes."); '' when
    it answers none."""
    for text in (statement.read_after, statement.own):
        if text.endswith("?"):
            return text
    return ""


def _led_into(best: Candidate, same_chunk: Sequence[Candidate]) -> list[Statement]:
    """The statements after a lead-in: a chain of questions and its answer ("Paged at night? Who do you call?
    Call the duty manager."), but not the next of the document's questions once one is answered ("Can I bring
    my dog? No. Can I bring my cat? Yes.")."""
    if not best.statement.leads_in:
        return []
    following = sorted((c.statement for c in same_chunk if c.statement.position > best.statement.position),
                       key=lambda statement: statement.position)
    led: list[Statement] = []
    for statement in following[: MAX_CLAIMS - 1]:
        answered = any(not s.own.endswith("?") for s in led)
        if answered and _answers_another_question(statement, best.statement):
            break
        led.append(statement)
    return led


def _same_block(best: Candidate, same_chunk: Sequence[Candidate]) -> list[Statement]:
    """The other sentences of the best statement's paragraph or item: a block is written as one unit, and a
    sentence of it often needs its neighbour to say what it means. A table row is a block of its own."""
    siblings = [c.statement for c in same_chunk
                if c.statement.block == best.statement.block and c.statement != best.statement]
    return sorted(siblings, key=lambda statement: abs(statement.position - best.statement.position))


def _its_list(best: Candidate, same_chunk: Sequence[Candidate]) -> list[Statement]:
    """The items the best statement leads into, or else the items of the list it is an item of, in order; []
    when there are fewer than two. A longer list is cut to the run of items around its best-read one."""
    of_chunk = split_statements(best.statement.chunk)
    listed = announced_items(best.statement, of_chunk) or list_items(best.statement, of_chunk)
    items = [[s for s in listed if s.block == block and not s.addressed_to_assistants]
             for block in dict.fromkeys(s.block for s in listed)]
    items = [item for item in items if item]
    if len(items) < 2:  # one item is no list
        return []
    read = {c.statement: c.probability for c in same_chunk}
    at = max(range(len(items)), key=lambda i: max(read.get(s, 0.0) for s in items[i]))
    start = max(0, min(at - MAX_LIST_ITEMS // 2, len(items) - MAX_LIST_ITEMS))
    quoted = [statement for item in items[start:start + MAX_LIST_ITEMS] for statement in item]
    return [statement for statement in quoted if not _read_before(statement, quoted)]  # an item's question once


def _envelope_not_found() -> str:
    return json.dumps({"found": False, "answer": "", "claims": [], "confidence": "low",
                       "refusal_reason": "no retrieved statement states the answer"})
