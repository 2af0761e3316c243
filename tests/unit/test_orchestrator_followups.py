"""Step 2b of the pipeline through the public orchestrator: a message read against the turns its audience may
see, the reading answered, shown and audited, earlier citations used as hints only."""

import json
from typing import Any

from core.application.audit import question_preview, question_sha256
from core.application.orchestrator import Orchestrator, Question
from core.application.risk import KeywordRiskClassifier
from core.application.routing import OwnerRouter
from core.domain import Answered, Audience, Principal, Reading, Refused, Turn
from tests.unit.fakes import FakeIndex, FixedClock, MemoryAudit, RecordingMetrics, ScriptedModel, answerability, chunk

BIRTH = chunk("LV-1", "A birth parent receives 18 weeks of paid leave.", doc_id="leave", title="Leave",
              heading="Leave > Birth parents")
ADOPTION = chunk("LV-2", "Adoptive parents receive 14 weeks of paid leave.", doc_id="leave", title="Leave",
                 heading="Leave > Adoptive parents")
BONUS = chunk("PAY-1", "The retention bonus for a birth parent returning is 2,000 dollars.", doc_id="pay",
              title="Retention Pay", heading="Retention Pay > Parents", audience=("hr",))
STAFF = Principal(user_id="U1", roles=frozenset({"everyone"}))
HR = Principal(user_id="U2", roles=frozenset({"everyone", "hr"}))
BIRTH_TURN = Turn(question="How many weeks of paid leave does a birth parent get?", kind="answered",
                  cited=("LV-1",))


def cites(chunk_id: str) -> Any:
    def reply(request: Any) -> str:
        text = next(c.text for c in request.chunks if c.chunk_id == chunk_id)
        return json.dumps({"found": True, "answer": text, "confidence": "high", "refusal_reason": None,
                           "claims": [{"text": text, "chunk_ids": [chunk_id], "quote": text}]})
    return reply


class RecordingFollowUps:
    """A reader that says what it was given and reads every message as `question`."""

    version = "recording-v0"

    def __init__(self, question: str = "How many weeks of paid leave do adoptive parents get?",
                 required: tuple[str, ...] = ()) -> None:
        self.question = question
        self.required = required
        self.seen: list[tuple[str, list[Turn]]] = []

    def read(self, message: str, turns: Any) -> Reading:
        self.seen.append((message, list(turns)))
        return Reading(question=self.question, search=self.question, followup=bool(turns), by=self.version,
                       required=self.required)


def pipeline(*, model: ScriptedModel | None = None, followups: Any = None) -> tuple[Orchestrator, MemoryAudit]:
    audit = MemoryAudit()
    orchestrator = Orchestrator(
        index=FakeIndex([BIRTH, ADOPTION, BONUS]), model=model or ScriptedModel(cites("LV-2")), audit=audit,
        risk=KeywordRiskClassifier(), clock=FixedClock(), metrics=RecordingMetrics(),
        router=OwnerRouter(known_gaps=(), default_owner="#help-desk"), answerability=answerability(answers=True),
        followups=followups)
    return orchestrator, audit


def ask(orchestrator: Orchestrator, text: str, *turns: Turn, principal: Principal = STAFF) -> Any:
    return orchestrator.ask(Question(text=text, principal=principal, audience=Audience.only(principal),
                                     context=turns))


def test_a_follow_up_is_answered_as_its_reading_which_the_outcome_carries() -> None:
    orchestrator, _ = pipeline()
    outcome = ask(orchestrator, "and if we adopt?", BIRTH_TURN)
    assert isinstance(outcome, Answered)
    assert [c.passage.chunk_id for c in outcome.citations] == ["LV-2"]
    assert outcome.reading is not None and "adopt" in outcome.reading


def test_the_audit_keeps_the_message_as_typed_and_the_reading_as_hash_and_preview() -> None:
    orchestrator, audit = pipeline()
    outcome = ask(orchestrator, "and if we adopt?", BIRTH_TURN)
    [record] = audit.records
    assert record.question_sha256 == question_sha256("and if we adopt?")
    assert record.reading is not None and record.reading.followup
    assert record.reading.sha256 == question_sha256(outcome.reading)
    assert record.reading.preview == question_preview(outcome.reading)
    assert record.reading.by == "followup-offline-v1"


def test_a_message_without_earlier_turns_is_not_read_at_all() -> None:
    followups = RecordingFollowUps()
    orchestrator, audit = pipeline(followups=followups)
    outcome = ask(orchestrator, "How many weeks of paid leave does a birth parent get?")
    assert outcome.reading is None and followups.seen == [] and audit.records[0].reading is None


def test_a_message_read_alone_records_who_read_it_and_shows_no_reading() -> None:
    orchestrator, audit = pipeline(model=ScriptedModel(cites("LV-1")))
    outcome = ask(orchestrator, "How many weeks of paid leave does a birth parent get?", BIRTH_TURN)
    assert outcome.reading is None
    assert audit.records[0].reading is not None and not audit.records[0].reading.followup
    assert audit.records[0].reading.sha256 is None


def test_the_headings_of_a_turn_come_from_the_index_for_this_audience_never_from_the_caller() -> None:
    followups = RecordingFollowUps()
    orchestrator, _ = pipeline(followups=followups)
    claimed = Turn(question="q", kind="answered", cited=("LV-1",), headings=("Secret Plans > Layoffs",))
    ask(orchestrator, "and if we adopt?", claimed)
    [(_, turns)] = followups.seen
    assert [turn.headings for turn in turns] == [("Leave > Birth parents",)]


def test_a_turn_that_cited_what_this_audience_may_not_see_is_left_out_question_and_all() -> None:
    followups = RecordingFollowUps()
    orchestrator, _ = pipeline(followups=followups)
    in_hr = Turn(question="What is the retention bonus for a returning birth parent?", kind="answered",
                 cited=("PAY-1",))
    ask(orchestrator, "and if we adopt?", BIRTH_TURN, in_hr)
    ask(orchestrator, "and if we adopt?", BIRTH_TURN, in_hr, principal=HR)
    (_, as_staff), (_, as_hr) = followups.seen
    assert [turn.question for turn in as_staff] == [BIRTH_TURN.question]
    assert [turn.question for turn in as_hr] == [BIRTH_TURN.question, in_hr.question]


def test_a_turn_citing_a_chunk_that_no_longer_exists_is_left_out() -> None:
    followups = RecordingFollowUps()
    orchestrator, _ = pipeline(followups=followups)
    ask(orchestrator, "and if we adopt?", Turn(question="q", kind="answered", cited=("GONE-1",)))
    assert followups.seen == [("and if we adopt?", [])]


def test_only_the_latest_turns_are_read() -> None:
    followups = RecordingFollowUps()
    orchestrator, _ = pipeline(followups=followups)
    turns = [Turn(question=f"question {n}", kind="not_in_corpus") for n in range(6)]
    ask(orchestrator, "and if we adopt?", *turns)
    assert [turn.question for turn in followups.seen[0][1]] == ["question 3", "question 4", "question 5"]


def test_a_follow_up_whose_new_words_no_passage_speaks_of_is_refused_without_the_model() -> None:
    model = ScriptedModel(cites("LV-1"))
    orchestrator, audit = pipeline(model=model, followups=RecordingFollowUps(
        question="How many weeks of paid leave does a birth parent get, for grandparents?",
        required=("grandpar",)))
    outcome = ask(orchestrator, "what about grandparents?", BIRTH_TURN)
    assert isinstance(outcome, Refused) and outcome.presented_kind == "not_in_corpus"
    assert outcome.nearest and model.requests == []
    assert audit.records[0].detail == "no passage speaks of the follow-up's words"


def test_the_passages_given_to_the_model_are_those_that_speak_of_the_new_words() -> None:
    model = ScriptedModel(cites("LV-2"))
    orchestrator, _ = pipeline(model=model, followups=RecordingFollowUps(
        question="How many weeks of paid leave does a birth parent get, if we are adoptive parents?",
        required=("adopt",)))
    ask(orchestrator, "and if we are adoptive parents?", BIRTH_TURN)
    assert [c.chunk_id for c in model.requests[0].chunks] == ["LV-2"]


def test_an_empty_message_in_a_thread_asks_the_threads_question_and_alone_is_invalid() -> None:
    orchestrator, _ = pipeline(model=ScriptedModel(cites("LV-2")))
    thread = Turn(question="How many weeks of paid leave do adoptive parents get?")
    outcome = ask(orchestrator, "", thread)
    assert isinstance(outcome, Answered) and outcome.reading == thread.question
    alone = ask(orchestrator, "")
    assert isinstance(alone, Refused) and alone.kind == "invalid_query"
