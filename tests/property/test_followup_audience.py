"""The audience rules hold across turns: a thread's earlier turns asked in a DM by someone who may read restricted
documents, then a follow-up asked in a channel whose audience may not, never cites or reveals those documents.

Each example asks one to three questions in a DM (their words drawn from the public and the restricted
documents alike), then a follow-up of a random form for a channel: the restricted documents' distinctive facts
never appear in its reply, it cites and shows none of their passages, and the reply is exactly the one the same
follow-up gets when the turns that drew on restricted documents never happened (which turns did is read off the
documents themselves, not off the pipeline). The shipped defaults answer: SQLite, MiniLM, the offline reader.
"""

import itertools
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from benchmarks.restricted_absence import first_difference, what_the_audience_gets
from core.application.orchestrator import Question
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig
from core.domain import Answered, Audience, Party, Principal, Refused, Thread, Turn
from core.storage.tables import ChunkRow

DOCUMENTS = {
    "leave.md": ("everyone", """\
        # Parental Leave
        ## Birth parents
        A birth parent receives 18 weeks of paid parental leave, approved by their manager.
        ## Adoptive parents
        Adoptive parents receive 14 weeks of paid parental leave. The leave must be taken within 6 months.
        """),
    "travel.md": ("everyone", """\
        # Travel Expenses
        ## Hotels
        The hotel limit is 220 dollars per night in every city.
        ## Meals
        The daily meal allowance when travelling is 60 dollars.
        """),
    "bonus.md": ("hr", """\
        # Retention Bonuses
        ## Returning parents
        A returning birth parent receives a retention bonus of 7,345 dollars, approved by the Quenford panel.
        ## Engineers
        The retention bonus for a senior engineer is 12,910 dollars per year, paid by the Marlowe fund.
        """),
    "bands.md": ("hr", """\
        # Salary Bands
        ## Engineering
        The senior engineer salary band is 151,377 to 188,913 dollars, set by the Halvorsen review.
        ## Travel roles
        Field staff who travel weekly earn a hotel premium of 4,831 dollars a month under band Zephyr.
        """),
}
MARKERS = ("7,345", "Quenford", "12,910", "Marlowe", "151,377", "188,913", "Halvorsen", "4,831", "Zephyr",
           "Retention Bonuses", "Salary Bands")
"""Facts and names that only the restricted documents hold, and their titles: none may reach the channel. Each
number has a thousands separator: a bare "483" was found inside the answerability explanation's figures
("contribution": -0.483), which every reply's operator view carries."""
WORDS = ["parental", "leave", "birth", "parent", "adoptive", "weeks", "hotel", "limit", "meal", "allowance",
         "night", "retention", "bonus", "salary", "band", "engineer", "senior", "premium", "travel", "manager",
         "approved", "returning", "field", "staff"]
STARTERS = ["how much is the", "what is the", "who approves the", "how many weeks of", "is there a", "what about"]
FOLLOWUPS = ["and for {w}?", "what about {w}?", "and if I am a {w}?", "who approves it?", "how much is it?",
             "is that allowed?", "does it apply to {w} too?", "how long?", "", "{s} {w} {v}?"]
HR = Principal(user_id="UHR", roles=frozenset({"everyone", "hr"}))
CHANNEL = Audience(parties=(Party(roles=frozenset({"everyone"})), HR.party))
"""A public channel: everyone in it reads the reply, so only what everyone may see is used."""
THREADS = itertools.count()


@pytest.fixture(scope="module")
def sourced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sourced]:
    root = tmp_path_factory.mktemp("followup-kb")
    for name, (audience, body) in DOCUMENTS.items():
        front = f"---\nid: {name.removesuffix('.md')}\naudience: [{audience}]\nowner: \"#owners\"\n---\n"
        (root / name).write_text(front + textwrap.dedent(body), encoding="utf-8")
    built = bootstrap(Settings(database_url=f"sqlite:///{root / 'sourced.db'}"), config=SourcedConfig(),
                      progress=False)
    assert not built.ingestor.ingest(root).errors
    yield built
    built.engine.dispose()


def restricted_chunks(sourced: Sourced) -> frozenset[str]:
    with sourced.engine.connect() as connection:
        return frozenset(connection.execute(select(ChunkRow.chunk_id).where(ChunkRow.doc_id.in_(["bonus", "bands"])))
                         .scalars())


RESTRICTED_ASKED = ["What is the retention bonus for a {w}?", "What is the salary band for a senior {w}?",
                    "Who approves the retention bonus for a returning {w}?", "What is the hotel premium for {w}?"]
"""Questions the restricted documents answer, so that most examples have a turn the channel may not see."""


def question(draw: Any) -> str:
    if draw(st.booleans()):
        return draw(st.sampled_from(RESTRICTED_ASKED)).format(w=draw(st.sampled_from(WORDS)))
    chosen = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
    return f"{draw(st.sampled_from(STARTERS))} {' '.join(chosen)}?"


@st.composite
def conversations(draw: Any) -> tuple[list[str], str]:
    earlier = [question(draw) for _ in range(draw(st.integers(min_value=1, max_value=3)))]
    form = draw(st.sampled_from(FOLLOWUPS))
    followup = form.format(w=draw(st.sampled_from(WORDS)), v=draw(st.sampled_from(WORDS)),
                           s=draw(st.sampled_from(STARTERS)))
    return earlier, followup


def reply(sourced: Sourced, text: str, context: tuple[Turn, ...]) -> tuple[Any, dict[str, Any]]:
    outcome, evidence = sourced.orchestrator.ask_with_evidence(Question(
        text=text, principal=HR, audience=CHANNEL, context=context, correlation_id="followup-audience"))
    return outcome, what_the_audience_gets(outcome, evidence, text)


@settings(max_examples=120, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(conversation=conversations())
def test_a_follow_up_in_a_channel_never_cites_or_reveals_what_only_the_dm_could_see(
        sourced: Sourced, conversation: tuple[list[str], str]) -> None:
    earlier, followup = conversation
    thread = Thread(workspace_id="T1", channel_id="D1", thread_id=f"{next(THREADS)}.0")
    for n, asked in enumerate(earlier, start=1):  # in the DM: the asker alone, who may read restricted documents
        sourced.conversations.ask(Question(text=asked, principal=HR, audience=Audience.only(HR)), thread=thread,
                                  message_id=f"{n}.0")
    context = sourced.conversations.context(thread)
    hidden = restricted_chunks(sourced)
    public_only = tuple(turn for turn in context if hidden.isdisjoint(turn.cited))

    outcome, shown = reply(sourced, followup, context)
    _, shown_without = reply(sourced, followup, public_only)

    passages = ([c.passage for c in outcome.citations] if isinstance(outcome, Answered) else
                list(outcome.nearest) if isinstance(outcome, Refused) else [])
    assert {p.doc_id for p in passages}.isdisjoint({"bonus", "bands"}), (earlier, followup)
    rendered = repr(shown)
    assert [marker for marker in MARKERS if marker in rendered] == [], (earlier, followup, outcome.reading)
    difference = first_difference(shown, shown_without)
    assert difference is None, (earlier, followup, difference)


def test_the_dm_turns_really_drew_on_the_restricted_documents(sourced: Sourced) -> None:
    """The property above is only worth something if the DM answers do cite what the channel may not see."""
    thread = Thread(workspace_id="T1", channel_id="D1", thread_id="check.0")
    outcome = sourced.conversations.ask(
        Question(text="What is the retention bonus for a returning birth parent?", principal=HR,
                 audience=Audience.only(HR)), thread=thread, message_id="1.0")
    assert isinstance(outcome, Answered) and "7,345" in outcome.text
    [turn] = sourced.conversations.context(thread)
    assert not restricted_chunks(sourced).isdisjoint(turn.cited)
    _, shown = reply(sourced, "and who approves it?", (turn,))
    assert "Quenford" not in repr(shown)


def test_the_same_follow_up_in_the_dm_does_read_the_restricted_turn(sourced: Sourced) -> None:
    thread = Thread(workspace_id="T1", channel_id="D1", thread_id="dm.0")
    sourced.conversations.ask(Question(text="What is the retention bonus for a returning birth parent?",
                                       principal=HR, audience=Audience.only(HR)), thread=thread, message_id="1.0")
    outcome = sourced.conversations.ask(Question(text="and who approves it?", principal=HR,
                                                 audience=Audience.only(HR)), thread=thread, message_id="2.0")
    assert outcome.reading is not None and "retention bonus" in outcome.reading
