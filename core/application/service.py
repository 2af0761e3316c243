"""The one door for front ends: what the Slack app and the CLI may ask of Sourced, as verbs over plain values.

A front end decides who asks and who will read the reply (the principal and the audience, from the signed
request, never from the text), then calls one verb: ask (alone, or as a turn of a thread: which of the two is
this service's choice), the answer to a clarifying question's chosen reading, the passage behind a citation, a
reader's verdict, what the Home tab shows. Rendering and delivery stay with the front end; the adapters stay
behind the ports, chosen in `core.bootstrap`.
"""

import logging
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from core.application.audit import user_reference
from core.application.catalog import (
    Activity,
    ActivityLog,
    Catalog,
    ConnectorStates,
    ConnectorStatus,
    DocumentSummary,
)
from core.application.conversation import Conversations, ThreadMessage
from core.application.feedback import Click, Decisions, FeedbackStore, LabelledPair, Verdict, why_not_counted
from core.application.orchestrator import Evidence, Orchestrator, Question
from core.application.ports import Clarifications, Index
from core.domain import Audience, Clarify, Outcome, Passage, Principal, Thread

log = logging.getLogger(__name__)


class DecisionLog(Decisions, Protocol):
    """The audit log as the front door reads and annotates it."""

    def note(self, correlation_id: str, note: str) -> bool:
        """Add what happened after the decision (a streamed answer replaced) to its record."""
        ...


class SourcePrincipals(Protocol):
    def principals(self, email: str | None) -> frozenset[str]:
        """The audience roles the connectors' sources grant a verified e-mail address."""
        ...


@dataclass(frozen=True, kw_only=True)
class InThread:
    """Where a question is a turn of a conversation: its thread, and the id of the message that asked it."""

    thread: Thread
    message_id: str


@dataclass(frozen=True, kw_only=True)
class Choice:
    """A reading chosen on a clarifying question: the refined question, and where the clarification was asked
    (its thread, whose next turn the choice becomes)."""

    question: str
    clarification_id: str
    channel_id: str | None
    thread_id: str | None


@dataclass(frozen=True, kw_only=True)
class Home:
    """What the Home tab shows one person: the documents they may see; to operators also the period's activity
    and each connector's last sync."""

    documents: Sequence[DocumentSummary]
    activity: Activity | None
    sources: Sequence[ConnectorStatus]


@dataclass(frozen=True, kw_only=True)
class FeedbackExport:
    """Readers' verdicts as labelled pairs; `keyed`: the readers are hashed with the deployment's export key
    (else with a key made for this export only, so they compare within it alone)."""

    pairs: Iterator[LabelledPair]
    keyed: bool


class Service:
    def __init__(self, *, orchestrator: Orchestrator, conversations: Conversations, index: Index,
                 clarifications: Clarifications, decisions: DecisionLog, feedback: FeedbackStore,
                 catalog: Catalog, activity: ActivityLog, connector_states: ConnectorStates,
                 source_principals: SourcePrincipals, operators: frozenset[str], connectors: Sequence[str],
                 streams_answers: bool, user_hash_key: bytes | None = None,
                 feedback_export_key: bytes | None = None) -> None:
        self._orchestrator = orchestrator
        self._conversations = conversations
        self._index = index
        self._clarifications = clarifications
        self._decisions = decisions
        self._feedback = feedback
        self._catalog = catalog
        self._activity = activity
        self._connector_states = connector_states
        self._source_principals = source_principals
        self._operators = operators
        self._connectors = tuple(connectors)
        self._user_hash_key = user_hash_key
        self._feedback_export_key = feedback_export_key
        self.streams_answers = streams_answers
        """Whether a front end may stream an answer once it is checked: the answer model says
        (`AnswerModel.streams_answers`)."""

    # -- questions ---------------------------------------------------------------------------------------

    def ask(self, question: Question, *, in_thread: InThread | None = None,
            unanswered: Sequence[ThreadMessage] = ()) -> Outcome:
        """The outcome for the question's audience. A turn of a thread goes with the thread's earlier turns
        (ours, and `unanswered`: its messages Sourced did not answer) and is kept for the next follow-up."""
        if in_thread is None:
            return self._orchestrator.ask(question)
        return self._conversations.ask(question, thread=in_thread.thread, message_id=in_thread.message_id,
                                       unanswered=unanswered)

    def ask_with_evidence(self, question: Question) -> tuple[Outcome, Evidence]:
        """The outcome and what the pipeline saw on the way (an operator's `sourced ask --json`)."""
        return self._orchestrator.ask_with_evidence(question)

    def await_choice(self, clarify: Clarify, *, question: str, asker: str, channel_id: str | None,
                     thread_id: str | None = None) -> str:
        """Keep a clarifying question until its asker chooses a reading; the id its buttons carry."""
        self._clarifications.purge_expired()
        return self._clarifications.save(question=question, user_id=asker, channel_id=channel_id,
                                         options=clarify.options, thread_ts=thread_id).id

    def take_choice(self, clarification_id: str, index: int, refined: str | None = None) -> Choice | None:
        """The reading chosen, once, if its clarification is live and the button agrees with it (`refined`:
        the question the button says it refines to, when it carries one)."""
        self._clarifications.purge_expired()
        pending = self._clarifications.take(clarification_id)
        if pending is None or not 0 <= index < len(pending.options):
            return None
        refine = pending.options[index].refine
        if refined is not None and refined != refine:
            log.warning("clarify click %s: button and pending record disagree", clarification_id)
            return None
        return Choice(question=refine, clarification_id=pending.id, channel_id=pending.channel_id,
                      thread_id=pending.thread_ts)

    def answer_choice(self, question: Question, choice: Choice, *, message_id: str | None) -> Outcome:
        """Ask the chosen reading; in a thread it becomes the thread's next turn (`message_id`: the message
        clicked on, else the clarification stands for it)."""
        outcome = self.ask(question)
        if choice.thread_id is not None and choice.channel_id is not None:
            thread = Thread(workspace_id=question.workspace_id, channel_id=choice.channel_id,
                            thread_id=choice.thread_id)
            self._conversations.remember(thread, message_id=message_id or choice.clarification_id,
                                         question=question.text, outcome=outcome)
        return outcome

    def streamed_answer_replaced(self, correlation_id: str, reason: str) -> None:
        """A streamed answer was replaced after it began: the decision's audit record says so."""
        self._decisions.note(correlation_id, f"streamed answer replaced: {reason}")

    # -- what a reply shows ------------------------------------------------------------------------------

    def passage(self, chunk_id: str, audience: Audience) -> Passage | None:
        """A cited passage, only if `audience` may see its document: one it may not see is never found."""
        return self._index.passage(chunk_id, audience=audience)

    def rate(self, correlation_id: str, verdict: Verdict, *, clicker: str, channel_id: str | None,
             ephemeral: bool, chunk_id: str | None = None) -> None:
        """A reader's verdict on a decision. It counts only from a reader of the reply, about a chunk it showed,
        once per reader (`core.application.feedback`); anything else is ignored and logged (ids only)."""
        click = Click(reader=user_reference(clicker, self._user_hash_key), channel_id=channel_id,
                      ephemeral=ephemeral)
        refused = why_not_counted(correlation_id, click, decisions=self._decisions, chunk_id=chunk_id)
        if refused is not None:
            log.warning("feedback ignored: %s", refused)
        elif self._feedback.record(correlation_id, click.reader, verdict, chunk_id=chunk_id) is None:
            log.info("feedback ignored: decision %s already rated by this reader", correlation_id)

    # -- what Sourced answers from -----------------------------------------------------------------------

    def documents(self, audience: Audience) -> Sequence[DocumentSummary]:
        """Every current document the audience may see."""
        return self._catalog.documents(audience)

    def home(self, principal: Principal, *, activity_since: datetime) -> Home:
        """The person's own Home tab: it is read by them alone, so it lists what they may see."""
        documents = self._catalog.documents(Audience.only(principal))
        if not self._operators & principal.roles:
            return Home(documents=documents, activity=None, sources=[])
        return Home(documents=documents, activity=self._activity.since(activity_since),
                    sources=self._connector_states.statuses(self._connectors))

    def source_roles(self, email: str | None) -> frozenset[str]:
        """The audience roles the connectors' sources grant this e-mail address (its groups, its domain)."""
        return self._source_principals.principals(email)

    def feedback_export(self, *, with_previews: bool = False) -> FeedbackExport:
        """Every stored verdict as a labelled pair, for refitting answerability."""
        key = self._feedback_export_key or secrets.token_bytes(32)
        return FeedbackExport(pairs=self._feedback.labelled_pairs(reader_key=key, with_previews=with_previews),
                              keyed=self._feedback_export_key is not None)
