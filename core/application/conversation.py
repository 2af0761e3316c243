"""A question asked as a turn of its thread: the thread's earlier turns go with it, and its own turn is kept.

The turns come from our own records (`TurnStore`): the question each was answered as, its presented outcome
kind, the chunks it cited. A front end adds only what we never answered (the messages of a thread Sourced was
called into). Which of the turns the reply's audience may see is the orchestrator's decision, made again for
every question.
"""

import heapq
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.application.audit import redact
from core.application.orchestrator import CONTEXT_TURNS, Evidence, Orchestrator, Question
from core.application.ports import TurnStore
from core.domain import Answered, Outcome, RecordedTurn, Refused, Thread, Turn

log = logging.getLogger(__name__)

NOT_A_TURN = frozenset({"invalid_query", "audit_unavailable"})
"""Outcomes that answered nothing: a follow-up to them has nothing to lean on."""


@dataclass(frozen=True, kw_only=True)
class ThreadMessage:
    """A message of the thread that Sourced did not answer (someone else's, before Sourced was called in)."""

    message_id: str
    text: str


class Conversations:
    def __init__(self, *, orchestrator: Orchestrator, turns: TurnStore) -> None:
        self._orchestrator = orchestrator
        self._turns = turns

    def ask(self, question: Question, *, thread: Thread, message_id: str,
            unanswered: Sequence[ThreadMessage] = ()) -> Outcome:
        return self.ask_with_evidence(question, thread=thread, message_id=message_id, unanswered=unanswered)[0]

    def ask_with_evidence(self, question: Question, *, thread: Thread, message_id: str,
                          unanswered: Sequence[ThreadMessage] = ()) -> tuple[Outcome, Evidence]:
        """Ask with the thread's latest turns as context, then keep this turn for the next follow-up."""
        context = self.context(thread, unanswered)
        outcome, evidence = self._orchestrator.ask_with_evidence(replace(question, context=context))
        self.remember(thread, message_id=message_id, question=outcome.reading or question.text, outcome=outcome)
        return outcome, evidence

    def context(self, thread: Thread, unanswered: Sequence[ThreadMessage] = ()) -> tuple[Turn, ...]:
        """Our turns and the thread's other messages, in the order they were written, the latest few."""
        try:
            recorded = self._turns.recent(thread, limit=CONTEXT_TURNS)
        except Exception:  # conversation state is a help, never a condition: the message is read alone
            log.warning("could not read the turns of a thread; reading the message alone", exc_info=True)
            recorded = []
        ours = {item.message_id for item in recorded}
        others = [RecordedTurn(message_id=message.message_id, turn=Turn(question=message.text))
                  for message in unanswered if message.message_id not in ours and message.text.strip()]
        # our turns stay in the order they were kept; the thread's other messages go in between them by time
        merged = list(heapq.merge(recorded, sorted(others, key=_by_time), key=_by_time))
        return tuple(item.turn for item in merged[-CONTEXT_TURNS:])

    def remember(self, thread: Thread, *, message_id: str, question: str, outcome: Outcome) -> None:
        """Keep the turn: the question as answered (card numbers, ids, IBANs, e-mails and phone numbers
        masked: a follow-up needs the topic, not those), the presented kind, the cited chunks."""
        kind = outcome.presented_kind if isinstance(outcome, Refused) else outcome.kind
        if kind in NOT_A_TURN or not question.strip():
            return
        cited = tuple(c.passage.chunk_id for c in outcome.citations) if isinstance(outcome, Answered) else ()
        try:
            self._turns.record(thread, message_id=message_id, correlation_id=outcome.correlation_id,
                               turn=Turn(question=redact(question), kind=kind, cited=cited))
        except Exception:  # the reply still goes; the next message is then read alone
            log.warning("could not keep the turn of decision %s", outcome.correlation_id, exc_info=True)


def _by_time(item: RecordedTurn) -> tuple[int, float]:
    """Slack's message ids are times ("1700000000.000100"); anything else sorts after them."""
    try:
        return (0, float(item.message_id))
    except ValueError:
        return (1, 0.0)
