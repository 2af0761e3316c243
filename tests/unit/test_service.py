"""The front door (`core.application.service`) through its verbs, with in-memory fakes of every port it uses."""

import json
from collections.abc import Collection, Iterator
from datetime import UTC, datetime

from core.application.audit import AuditRecord
from core.application.catalog import Activity, ConnectorStatus, DocumentSummary
from core.application.conversation import Conversations
from core.application.feedback import FeedbackEntry, LabelledPair, Verdict
from core.application.orchestrator import Orchestrator, Question
from core.application.ports import PendingClarification
from core.application.risk import KeywordRiskClassifier
from core.application.routing import OwnerRouter
from core.application.service import InThread, Service
from core.domain import (
    Answered,
    Audience,
    Clarify,
    ClarifyOption,
    Principal,
    RecordedTurn,
    RiskAssessment,
    Thread,
    Turn,
)
from tests.unit.fakes import FakeIndex, FixedClock, MemoryAudit, RecordingMetrics, ScriptedModel, answerability, chunk

REFUNDS = chunk("CHK-001", "Customers may return items within 30 days of delivery for a full refund.",
                doc_id="refunds", title="Refund Policy", heading="Refund Policy > Return window")
SALARIES = chunk("CHK-900", "The salary band for a senior engineer is $150,000 to $190,000.",
                 doc_id="bands", title="Salary Bands", heading="Salary Bands > Engineering", audience=("hr",))
STAFF = Principal(user_id="U1", roles=frozenset({"everyone"}))
OPERATOR = Principal(user_id="U9", roles=frozenset({"everyone", "ops"}))
QUESTION = "How many days do customers have to return items for a refund?"
THREAD = Thread(workspace_id="T1", channel_id="C1", thread_id="1700000000.000100")
NOON = datetime(2026, 3, 14, 12, 0, tzinfo=UTC)
LOW = RiskAssessment(level="low")
CARD_OPTIONS = (ClarifyOption(label="Corporate cards", refine="card limit (Corporate cards)?"),
                ClarifyOption(label="Tracking API", refine="card limit (Tracking API)?"))


REFUND_ANSWER = json.dumps({"found": True, "answer": "Customers may return items within 30 days.",
                            "confidence": "high", "refusal_reason": None,
                            "claims": [{"text": "Customers may return items within 30 days of delivery.",
                                        "chunk_ids": ["CHK-001"]}]})


class MemoryTurns:
    def __init__(self) -> None:
        self.kept: dict[Thread, list[RecordedTurn]] = {}

    def recent(self, thread: Thread, *, limit: int) -> list[RecordedTurn]:
        return self.kept.get(thread, [])[-limit:]

    def record(self, thread: Thread, *, message_id: str, correlation_id: str, turn: Turn) -> None:
        self.kept.setdefault(thread, []).append(RecordedTurn(message_id=message_id, turn=turn))


class MemoryClarifications:
    def __init__(self) -> None:
        self.pending: dict[str, PendingClarification] = {}

    def save(self, *, question: str, user_id: str, channel_id: str | None, options: tuple[ClarifyOption, ...],
             thread_ts: str | None = None) -> PendingClarification:
        saved = PendingClarification(id=f"clar-{len(self.pending)}", question=question, user_id=user_id,
                                     channel_id=channel_id, options=options, created_at=NOON, expires_at=NOON,
                                     thread_ts=thread_ts)
        self.pending[saved.id] = saved
        return saved

    def take(self, clarification_id: str) -> PendingClarification | None:
        return self.pending.pop(clarification_id, None)

    def purge_expired(self) -> int:
        return 0


class MemoryDecisions:
    def __init__(self, audit: MemoryAudit) -> None:
        self.audit = audit
        self.notes: list[tuple[str, str]] = []

    def get(self, correlation_id: str) -> AuditRecord | None:
        return next((r for r in self.audit.records if r.correlation_id == correlation_id), None)

    def note(self, correlation_id: str, note: str) -> bool:
        self.notes.append((correlation_id, note))
        return True


class MemoryFeedback:
    def __init__(self) -> None:
        self.entries: list[FeedbackEntry] = []
        self.keys: list[bytes] = []

    def record(self, correlation_id: str, user_ref: str, verdict: Verdict, *,
               chunk_id: str | None = None) -> FeedbackEntry | None:
        if any((e.correlation_id, e.user_ref) == (correlation_id, user_ref) for e in self.entries):
            return None
        self.entries.append(FeedbackEntry(correlation_id=correlation_id, user_ref=user_ref, verdict=verdict,
                                          at=NOON, chunk_id=chunk_id))
        return self.entries[-1]

    def labelled_pairs(self, *, reader_key: bytes, with_previews: bool = False) -> Iterator[LabelledPair]:
        self.keys.append(reader_key)
        return iter([])


class MemoryCatalog:
    def documents(self, audience: Audience) -> list[DocumentSummary]:
        return [DocumentSummary(doc_id="refunds", title="Refund Policy", owner=None, updated=None,
                                ingested_at=NOON)]


class MemoryActivity:
    def since(self, start: datetime) -> Activity:
        return Activity(answered=3)


class MemoryConnectorStates:
    def statuses(self, names: Collection[str]) -> list[ConnectorStatus]:
        return [ConnectorStatus(name=name) for name in names]


class MemorySources:
    def principals(self, email: str | None) -> frozenset[str]:
        return frozenset({f"email:{email}"}) if email else frozenset()


class Door:
    """The service over an orchestrator of fakes, with its stores in reach of the assertions."""

    def __init__(self, *, export_key: bytes | None = None) -> None:
        self.audit = MemoryAudit()
        self.orchestrator = Orchestrator(
            index=FakeIndex([REFUNDS, SALARIES]), model=ScriptedModel(REFUND_ANSWER), audit=self.audit,
            risk=KeywordRiskClassifier(), clock=FixedClock(), metrics=RecordingMetrics(),
            router=OwnerRouter(known_gaps=(), default_owner="#help-desk"), answerability=answerability(answers=True))
        self.turns = MemoryTurns()
        self.clarifications = MemoryClarifications()
        self.decisions = MemoryDecisions(self.audit)
        self.feedback = MemoryFeedback()
        self.service = Service(
            orchestrator=self.orchestrator, conversations=Conversations(orchestrator=self.orchestrator,
                                                                        turns=self.turns),
            index=FakeIndex([REFUNDS, SALARIES]), clarifications=self.clarifications, decisions=self.decisions,
            feedback=self.feedback, catalog=MemoryCatalog(), activity=MemoryActivity(),
            connector_states=MemoryConnectorStates(), source_principals=MemorySources(),
            operators=frozenset({"ops"}), connectors=["wiki"], streams_answers=False, feedback_export_key=export_key)


def question(text: str = QUESTION, principal: Principal = STAFF, channel_id: str | None = "C1") -> Question:
    return Question(text=text, principal=principal, audience=Audience.only(principal), workspace_id="T1",
                    channel_id=channel_id)


def test_a_question_alone_is_answered_and_no_turn_is_kept() -> None:
    door = Door()
    assert isinstance(door.service.ask(question()), Answered)
    assert door.turns.kept == {}


def test_a_question_in_a_thread_is_kept_as_the_threads_turn() -> None:
    door = Door()
    outcome = door.service.ask(question(), in_thread=InThread(thread=THREAD, message_id="1700000001.000100"))
    assert isinstance(outcome, Answered)
    [kept] = door.turns.kept[THREAD]
    assert (kept.message_id, kept.turn.kind, kept.turn.cited) == ("1700000001.000100", "answered", ("CHK-001",))


def test_a_chosen_reading_is_taken_once_and_only_as_the_button_says() -> None:
    door = Door()
    clarify = Clarify(text="Which?", options=CARD_OPTIONS, risk=LOW, correlation_id="c-1")
    first = door.service.await_choice(clarify, question="card limit?", asker="U1", channel_id="C1")
    assert door.service.take_choice(first, 1, "card limit (Corporate cards)?") is None  # disagrees: refused
    second = door.service.await_choice(clarify, question="card limit?", asker="U1", channel_id="C1")
    choice = door.service.take_choice(second, 1)
    assert choice is not None and choice.question == "card limit (Tracking API)?"
    assert door.service.take_choice(second, 1) is None  # once
    assert door.service.take_choice(door.service.await_choice(
        clarify, question="card limit?", asker="U1", channel_id="C1"), 2) is None  # no such reading


def test_a_reading_chosen_in_a_thread_becomes_its_next_turn() -> None:
    door = Door()
    clarify = Clarify(text="Which?", options=(ClarifyOption(label="Refunds", refine=QUESTION),), risk=LOW,
                      correlation_id="c")
    clarification = door.service.await_choice(clarify, question="refund?", asker="U1", channel_id=THREAD.channel_id,
                                              thread_id=THREAD.thread_id)
    choice = door.service.take_choice(clarification, 0)
    assert choice is not None
    outcome = door.service.answer_choice(question(choice.question), choice, message_id=None)
    assert isinstance(outcome, Answered)
    [kept] = door.turns.kept[THREAD]
    assert kept.message_id == clarification  # no message clicked on: the clarification stands for it


def test_a_verdict_counts_once_from_the_asker_and_never_from_someone_who_did_not_read_the_reply() -> None:
    door = Door()
    outcome = door.service.ask(question(channel_id=None))
    for clicker in ("U1", "U1", "U-stranger"):
        door.service.rate(outcome.correlation_id, "helpful", clicker=clicker, channel_id="C1", ephemeral=True)
    assert [(e.user_ref, e.verdict) for e in door.feedback.entries] == [("U1", "helpful")]


def test_a_passage_is_found_only_for_an_audience_that_may_see_its_document() -> None:
    door = Door()
    assert door.service.passage("CHK-001", Audience.only(STAFF)) is not None
    assert door.service.passage("CHK-900", Audience.only(STAFF)) is None


def test_home_shows_activity_and_sources_to_operators_only() -> None:
    door = Door()
    mine = door.service.home(STAFF, activity_since=NOON)
    theirs = door.service.home(OPERATOR, activity_since=NOON)
    assert (mine.activity, list(mine.sources)) == (None, [])
    assert theirs.activity == Activity(answered=3)
    assert [status.name for status in theirs.sources] == ["wiki"]
    assert [doc.title for doc in mine.documents] == ["Refund Policy"]


def test_an_export_without_the_deployments_key_says_so_and_hashes_with_a_key_of_its_own() -> None:
    unkeyed, keyed = Door(), Door(export_key=b"k" * 32)
    assert not unkeyed.service.feedback_export().keyed
    assert keyed.service.feedback_export().keyed
    assert keyed.feedback.keys == [b"k" * 32] and len(unkeyed.feedback.keys[0]) == 32


def test_a_replaced_streamed_answer_is_noted_on_its_decision() -> None:
    door = Door()
    door.service.streamed_answer_replaced("c-7", "guard rejected")
    assert door.decisions.notes == [("c-7", "streamed answer replaced: guard rejected")]
