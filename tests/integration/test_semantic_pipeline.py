"""Semantic retrieval and answerability end to end: the real MiniLM model, a knowledge base of the tests' own
in SQLite, and the orchestrator the bot uses. A paraphrase is answered from its section; a question that
shares the section's words but asks for something it does not state is refused, and so is one that swaps
the subject for another."""

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.application.orchestrator import Question
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig
from core.domain import Answered, Audience, Principal, Refused
from core.retrieval.matcher import matcher_for, question_matcher
from tests.unit import fakes

POLICIES = {
    "returns.md": """---
id: returns-policy
title: Returns Policy
owner: "#support-ops"
---
# Returns Policy

## Return window

Returns are accepted within 30 days of delivery when the item is unused and in its original packaging.

## Refund method

Refunds go back to the original card within 5 business days of the item reaching our warehouse.
""",
    "billing.md": """---
id: billing
title: Billing
owner: "#finance-ops"
---
# Billing

## Late payment

Late fees apply to invoices that are paid after the due date shown on the invoice.
""",
    "remote.md": """---
id: remote-work
title: Remote Work
owner: "#people"
---
# Remote Work

## Coworking spaces

Fully remote employees can expense a coworking membership of up to $250 per month.
""",
}
STAFF = Principal(user_id="U1", roles=frozenset({"everyone"}))


@pytest.fixture(scope="module")
def sourced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sourced]:
    embeddings = pytest.importorskip("core.retrieval.embeddings")
    try:
        embeddings.MiniLmEmbedder()
    except embeddings.EmbedderUnavailable as error:
        pytest.skip(str(error))
    root = tmp_path_factory.mktemp("semantic")
    kb = root / "kb"
    kb.mkdir()
    for name, text in POLICIES.items():
        (kb / name).write_text(text)
    sourced = bootstrap(Settings(database_url=f"sqlite:///{root / 'sourced.db'}", embedder="minilm"),
                        config=SourcedConfig(), known_gaps=(), progress=False)
    assert sourced.ingestor.ingest(Path(kb)).errors == ()
    yield sourced
    sourced.engine.dispose()


def ask(sourced: Sourced, text: str) -> Answered | Refused:
    outcome = sourced.orchestrator.ask(Question(text=text, principal=STAFF, audience=Audience.only(STAFF)))
    assert isinstance(outcome, Answered | Refused), outcome
    return outcome


@pytest.mark.xfail(strict=True, reason=(
    "the refit of issue 28 (statements read as structure, the semantic feature read under the heading path) ranks "
    "'Refunds go back to the original card...' first for this paraphrase and its threshold rose to 0.735; held "
    "out it answers more and more rightly on the real handbook and on dev, dev2 and squad2 (docs/answering.md)"))
def test_a_paraphrased_question_is_answered_from_its_section(sourced: Sourced) -> None:
    outcome = ask(sourced, "how long do I have to send stuff back?")

    assert isinstance(outcome, Answered), outcome
    assert "30 days" in outcome.text
    assert {citation.passage.heading for citation in outcome.citations} == {"Returns Policy > Return window"}


def test_a_question_sharing_the_sections_words_but_asking_what_it_does_not_state_is_refused(
        sourced: Sourced) -> None:
    outcome = ask(sourced, "What is the late-fee percentage?")

    assert isinstance(outcome, Refused), outcome


def test_a_statement_about_another_subject_does_not_answer(sourced: Sourced) -> None:
    outcome = ask(sourced, "Can I expense a gym membership?")

    assert isinstance(outcome, Refused), outcome


def test_the_statement_about_the_asked_subject_does(sourced: Sourced) -> None:
    outcome = ask(sourced, "Can I expense a coworking membership?")

    assert isinstance(outcome, Answered), outcome
    assert "$250" in outcome.text


@pytest.mark.parametrize(("question", "answer", "neighbour"), [
    ("who do i ask for a new laptop?", "Equipment > Hardware: Requests for new hardware go to the IT desk in #it-help.",
     "Equipment > Hardware: Laptops are replaced every three years."),
    ("do we get paid extra for working on a public holiday?",
     "Pay > Holidays: Work on a public holiday is paid at twice the usual rate.",
     "Pay > Holidays: The office is closed on public holidays."),
    ("how long is the notice period if i quit",
     "Leaving > Resignation: Employees who resign give four weeks of notice in writing.",
     "Leaving > Resignation: Your manager arranges an exit interview in your last week."),
])
def test_the_bundled_question_matcher_puts_the_answer_nearer_than_its_sections_neighbour(
        question: str, answer: str, neighbour: str) -> None:
    matcher = question_matcher()
    asked, answering, beside = (np.asarray(v) for v in matcher.embed([question, answer, neighbour]))

    assert float(asked @ answering) > float(asked @ beside)


def test_the_matcher_embeds_a_statement_the_same_whatever_it_is_embedded_beside() -> None:
    # The export quantizes its activations per run: batched and padded beside a longer text, a statement's
    # vector moved, and with it the decision, depending on which questions the cache had seen.
    question = "how many days of leave can I carry into next year?"
    statement = "Leave > Carry-over: Up to five unused days move into the next calendar year."
    longer = ("Travel > Booking: Flights over six hours may be booked in premium economy when the trip is approved "
              "by a director at least three weeks before departure, and the fare stays within the travel budget.")
    matcher = question_matcher()
    alone = [np.asarray(matcher.embed([text])[0]) for text in (question, statement)]
    beside = np.asarray(matcher.embed([question, statement, longer]))

    assert float(beside[0] @ beside[1]) == pytest.approx(float(alone[0] @ alone[1]), abs=1e-6)


def test_the_chosen_matcher_is_what_the_answerability_reads_with_its_own_fit(tmp_path: Path) -> None:
    chosen = bootstrap(Settings(database_url=f"sqlite:///{tmp_path / 'sourced.db'}", embedder="minilm",
                                matcher="bundled"), config=SourcedConfig(), known_gaps=(), progress=False)

    assert chosen.matcher is not None and chosen.matcher is not chosen.embedder
    assert chosen.matcher.model_id.startswith("sourced-question-matcher-minilm-l6-int8@")
    assert chosen.answerability.version.startswith("semantic+matcher-")
    assert "question matcher: sourced-question-matcher-minilm-l6-int8@" in "\n".join(chosen.components())
    chosen.engine.dispose()


def test_by_default_and_beside_a_reader_the_answerability_reads_the_retrieval_embedder(sourced: Sourced) -> None:
    assert sourced.matcher is sourced.embedder
    assert sourced.answerability.version.startswith("semantic-")
    assert matcher_for(sourced.embedder, kind="bundled", reader=fakes.KeywordReader("any")) is sourced.embedder
