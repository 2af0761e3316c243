"""The turns of conversations in SQL, and the conversation service over them: a thread's latest turns, found from
the top level of a DM and from the thread of one of its messages, forgotten when they expire."""

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from bot.cli import main
from core.application.conversation import Conversations, ThreadMessage
from core.application.orchestrator import Question
from core.domain import Answered, Audience, Citation, Claim, Passage, Principal, Refused, RiskAssessment, Thread, Turn
from core.storage import ConversationTurns, make_engine, migrate
from core.storage.tables import ConversationTurnRow

NOON = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
DM = Thread(workspace_id="T1", channel_id="D1", thread_id="")
STAFF = Principal(user_id="U1", roles=frozenset({"everyone"}))


def turn(question: str, kind: Any = "answered", cited: tuple[str, ...] = ()) -> Turn:
    return Turn(question=question, kind=kind, cited=cited)


def questions(found: Sequence[Any]) -> list[str]:
    return [item.turn.question for item in found]


def test_the_latest_turns_of_a_thread_come_back_oldest_first_with_kind_and_citations(engine: Engine) -> None:
    turns = ConversationTurns(engine)
    for n in range(5):
        turns.record(DM, message_id=f"170000000{n}.0001", correlation_id=f"c{n}", turn=turn(f"q{n}", cited=("a#b",)),
                     now=NOON)
    found = turns.recent(DM, limit=3, now=NOON)
    assert questions(found) == ["q2", "q3", "q4"]
    assert [item.message_id for item in found] == ["1700000002.0001", "1700000003.0001", "1700000004.0001"]
    assert found[0].turn == Turn(question="q2", kind="answered", cited=("a#b",))


def test_threads_channels_and_workspaces_keep_their_turns_apart(engine: Engine) -> None:
    turns = ConversationTurns(engine)
    turns.record(Thread(workspace_id="T1", channel_id="C1", thread_id="1.0"), message_id="1.0", correlation_id="a",
                 turn=turn("in C1"), now=NOON)
    turns.record(Thread(workspace_id="T2", channel_id="C1", thread_id="1.0"), message_id="1.0", correlation_id="b",
                 turn=turn("in T2"), now=NOON)
    turns.record(Thread(workspace_id="T1", channel_id="C2", thread_id="1.0"), message_id="1.0", correlation_id="c",
                 turn=turn("in C2"), now=NOON)
    assert questions(turns.recent(Thread(workspace_id="T1", channel_id="C1", thread_id="1.0"), limit=3,
                                  now=NOON)) == ["in C1"]
    assert turns.recent(Thread(workspace_id="T1", channel_id="C1", thread_id="2.0"), limit=3, now=NOON) == []


def test_a_reply_in_the_thread_of_a_top_level_dm_message_finds_that_messages_turn(engine: Engine) -> None:
    turns = ConversationTurns(engine)
    turns.record(DM, message_id="5.0", correlation_id="a", turn=turn("top level"), now=NOON)
    in_thread = Thread(workspace_id="T1", channel_id="D1", thread_id="5.0")
    turns.record(in_thread, message_id="6.0", correlation_id="b", turn=turn("in its thread"), now=NOON)
    assert questions(turns.recent(in_thread, limit=3, now=NOON)) == ["top level", "in its thread"]
    assert questions(turns.recent(DM, limit=3, now=NOON)) == ["top level"]


def test_turns_expire_and_the_purge_deletes_their_questions(engine: Engine) -> None:
    turns = ConversationTurns(engine, ttl=timedelta(minutes=30))
    turns.record(DM, message_id="1.0", correlation_id="a", turn=turn("old"), now=NOON)
    assert questions(turns.recent(DM, limit=3, now=NOON + timedelta(minutes=29))) == ["old"]
    assert turns.recent(DM, limit=3, now=NOON + timedelta(minutes=30)) == []
    turns.record(DM, message_id="2.0", correlation_id="b", turn=turn("new"), now=NOON + timedelta(hours=1))
    with engine.connect() as connection:  # recording purged the expired one: no raw question outlives its turn
        assert connection.execute(select(ConversationTurnRow.question)).scalars().all() == ["new"]
    assert turns.purge_expired(NOON + timedelta(hours=2)) == 1


def test_a_deployment_that_keeps_no_conversations_stores_nothing(engine: Engine) -> None:
    turns = ConversationTurns(engine, ttl=timedelta(0))
    turns.record(DM, message_id="1.0", correlation_id="a", turn=turn("q"), now=NOON)
    assert turns.recent(DM, limit=3, now=NOON) == []
    with engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(ConversationTurnRow)).scalar_one() == 0


def test_a_message_we_did_not_answer_is_never_stored_as_a_turn(engine: Engine) -> None:
    turns = ConversationTurns(engine)
    turns.record(DM, message_id="1.0", correlation_id="a", turn=Turn(question="someone else's"), now=NOON)
    assert turns.recent(DM, limit=3, now=NOON) == []


# -- the conversation service ------------------------------------------------------------------------------

class Asked:
    """An orchestrator stand-in that answers `outcome` and records the context it was given."""

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.contexts: list[tuple[Turn, ...]] = []

    def ask_with_evidence(self, question: Question) -> tuple[Any, None]:
        self.contexts.append(question.context)
        return self.outcome, None


PASSAGE = Passage(chunk_id="leave#adoption", doc_id="leave", title="Leave", heading="Leave > Adoption",
                  text="Adoptive parents receive 14 weeks.")
ANSWER = Answered(text="Adoptive parents receive 14 weeks. [1]", correlation_id="d1", risk=RiskAssessment(level="low"),
                  claims=(Claim(text="Adoptive parents receive 14 weeks.", citations=(1,)),),
                  citations=(Citation(n=1, passage=PASSAGE, content_hash="h", tier="direct"),),
                  reading="How many weeks of leave do adoptive parents get?")


def question(text: str) -> Question:
    return Question(text=text, principal=STAFF, audience=Audience.only(STAFF))


def test_a_turn_is_kept_as_the_question_it_was_answered_as_with_its_citations(engine: Engine) -> None:
    turns = ConversationTurns(engine)
    asked = Asked(ANSWER)
    conversations = Conversations(orchestrator=asked, turns=turns)  # type: ignore[arg-type]  # a stand-in
    conversations.ask(question("and if we adopt?"), thread=DM, message_id="1.0")
    conversations.ask(question("who approves it?"), thread=DM, message_id="2.0")
    assert asked.contexts[0] == ()
    assert asked.contexts[1] == (Turn(question=ANSWER.reading or "", kind="answered", cited=("leave#adoption",)),)


def test_the_threads_other_messages_go_between_our_turns_by_time_and_ours_are_not_read_twice(
        engine: Engine) -> None:
    turns = ConversationTurns(engine)
    asked = Asked(ANSWER)
    conversations = Conversations(orchestrator=asked, turns=turns)  # type: ignore[arg-type]  # a stand-in
    thread = Thread(workspace_id="T1", channel_id="C1", thread_id="1.0")
    conversations.ask(question("first"), thread=thread, message_id="2.0")
    unanswered = [ThreadMessage(message_id="1.0", text="the thread's question"),
                  ThreadMessage(message_id="2.0", text="first, as Slack has it"),
                  ThreadMessage(message_id="3.0", text="a colleague's reply"),
                  ThreadMessage(message_id="4.0", text=" ")]
    conversations.ask(question("is that right?"), thread=thread, message_id="5.0", unanswered=unanswered)
    assert [t.question for t in asked.contexts[1]] == ["the thread's question", ANSWER.reading, "a colleague's reply"]
    assert [t.kind for t in asked.contexts[1]] == [None, "answered", None]


@pytest.mark.parametrize("kind", ["invalid_query", "audit_unavailable"])
def test_an_outcome_that_answered_nothing_is_not_a_turn(engine: Engine, kind: Any) -> None:
    turns = ConversationTurns(engine)
    refused = Refused(kind=kind, text="…", risk=None, correlation_id="d2")
    Conversations(orchestrator=Asked(refused), turns=turns).ask(  # type: ignore[arg-type]  # a stand-in
        question("x"), thread=DM, message_id="1.0")
    assert turns.recent(DM, limit=3) == []


def test_a_refusal_is_kept_with_the_kind_it_presents(engine: Engine) -> None:
    turns = ConversationTurns(engine)
    hidden = Refused(kind="not_permitted", shown_as="not_in_corpus", text="…", risk=None, correlation_id="d3")
    Conversations(orchestrator=Asked(hidden), turns=turns).ask(  # type: ignore[arg-type]  # a stand-in
        question("what is the bonus?"), thread=DM, message_id="1.0")
    assert [item.turn.kind for item in turns.recent(DM, limit=3)] == ["not_in_corpus"]


class BrokenTurns:
    def recent(self, thread: Thread, *, limit: int) -> list[Any]:
        raise OSError("database away")

    def record(self, thread: Thread, **_: Any) -> None:
        raise OSError("database away")


def test_conversation_state_that_cannot_be_read_or_kept_never_stops_the_reply() -> None:
    asked = Asked(ANSWER)
    outcome = Conversations(orchestrator=asked, turns=BrokenTurns()).ask(  # type: ignore[arg-type]  # stand-in
        question("and if we adopt?"), thread=DM, message_id="1.0")
    assert outcome is ANSWER and asked.contexts == [()]


def test_the_audit_purge_also_deletes_expired_turns_so_an_idle_bot_keeps_no_question(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'sourced.db'}"
    monkeypatch.setenv("SOURCED_DATABASE_URL", url)
    monkeypatch.setenv("SOURCED_EMBEDDER", "none")
    engine = make_engine(url)
    migrate(engine)
    ConversationTurns(engine, ttl=timedelta(minutes=1)).record(
        DM, message_id="1.0", correlation_id="a", turn=turn("an old question"), now=NOON)
    assert main(["audit", "purge", "--older-than", "30"]) == 0
    assert "purged 1 expired conversation turns" in capsys.readouterr().out
    with engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(ConversationTurnRow)).scalar_one() == 0
    engine.dispose()


def test_a_turn_keeps_its_question_with_card_numbers_and_addresses_masked(engine: Engine) -> None:
    turns = ConversationTurns(engine)
    refused = Refused(kind="not_in_corpus", text="…", risk=None, correlation_id="d4")
    Conversations(orchestrator=Asked(refused), turns=turns).ask(  # type: ignore[arg-type]  # a stand-in
        question("Can I pay with card 4111 1111 1111 1111 and mail ann@example.com?"), thread=DM, message_id="1.0")
    [kept] = turns.recent(DM, limit=3)
    assert kept.turn.question == "Can I pay with card [card] and mail [email]?"
