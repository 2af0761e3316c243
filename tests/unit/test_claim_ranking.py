"""The ranking check's reading of an assessment: how far below the best candidate each claim's quote ranks, and
whether an answer rests on a statement near the best; and the asked value's check beside it."""

import math

import pytest

from core.application.answerability.followups import new_words_first
from core.application.answerability.model import shipped_model
from core.application.guard.asked_value import unstated_asked_value
from core.application.guard.checks import Anchor
from core.application.guard.claim_ranking import claim_rank_gaps, rests_on_an_answer
from core.application.language.quotes import Span, spanned, statements
from core.application.language.statements import split_statements
from core.application.ports import Assessment, Candidate
from core.domain import Reading, RetrievedChunk
from tests.unit import fakes

LOCKERS = fakes.chunk("gym#1", "Lockers are emptied every Friday night. Towels cost two euros at the desk. "
                      "The sauna closes at nine.", heading="Gym > Facilities").chunk
CLASSES = fakes.chunk("gym#2", "Yoga classes start at seven every Monday.", heading="Gym > Classes").chunk


def assessment(*scores: float) -> Assessment:
    """The statements of `LOCKERS`, in order, with these ranking scores, kept in this order (best first)."""
    candidates = tuple(Candidate(statement=statement, features={}, rank_score=score, probability=0.5)
                       for statement, score in zip(split_statements(LOCKERS), scores, strict=True))
    return Assessment(candidates=candidates, threshold=0.5, model_version="test")


def quoting(chunk: RetrievedChunk, quote: str) -> Anchor:
    start = chunk.text.index(quote)
    span = Span(start=start, end=start + len(quote))
    return Anchor(chunk=chunk, span=span, statements=tuple(spanned(statements(chunk.text), span)), given=True)


def test_a_claim_is_as_far_below_the_best_as_its_statement_ranks() -> None:
    ranked = assessment(9.0, 2.5, 1.0)

    assert claim_rank_gaps([quoting(LOCKERS, "Lockers are emptied every Friday night."),
                            quoting(LOCKERS, "The sauna closes at nine.")], ranked) == [0.0, 8.0]


def test_a_quote_of_two_statements_is_as_near_as_the_nearer() -> None:
    two = quoting(LOCKERS, "Towels cost two euros at the desk. The sauna closes at nine.")

    assert claim_rank_gaps([two], assessment(9.0, 2.5, 1.0)) == [6.5]


@pytest.mark.parametrize("towel_score", [9.5, 8.0, 9.0])
def test_the_statements_a_follow_up_set_aside_are_infinitely_far_however_they_scored(towel_score: float) -> None:
    """"and the sauna?" after a question about lockers: the statements that do not speak of the sauna are set
    aside (`new_words_first`), above, below or level with the sauna's own score."""
    ranked = assessment(10.0, towel_score, 9.0)
    reading = Reading(question="and the sauna?", search="sauna", followup=True, by="test", required=("sauna",))

    followed = new_words_first(reading, ranked)

    assert followed.candidates[0].statement.text == "The sauna closes at nine."
    claims = [quoting(LOCKERS, quote) for quote in ("The sauna closes at nine.",
                                                     "Lockers are emptied every Friday night.",
                                                     "Towels cost two euros at the desk.")]
    assert claim_rank_gaps(claims, followed) == [0.0, math.inf, math.inf]


def test_a_chunk_the_assessment_did_not_read_is_not_judged() -> None:
    elsewhere = quoting(CLASSES, "Yoga classes start at seven every Monday.")

    assert claim_rank_gaps([elsewhere], assessment(9.0, 2.5, 1.0)) == [None]
    assert claim_rank_gaps([elsewhere], Assessment(candidates=(), threshold=0.5, model_version="test")) == [None]


@pytest.mark.parametrize(("gaps", "rests"), [
    ((0.0, 9.0), True),  # one claim near the best carries a second true claim
    ((9.0,), False),
    ((9.0, math.inf), False),
    ((None, 9.0), False),  # a claim not judged does not carry one judged far below
    ((None,), True),  # nothing judged
    ((), True),
])
def test_an_answer_rests_on_a_claim_within_the_margin(gaps: tuple[float | None, ...], rests: bool) -> None:
    assert rests_on_an_answer(gaps, margin=5.0) is rests


def test_the_margin_belongs_to_the_rankers_it_was_fitted_on() -> None:
    """The shipped rankers without a reader carry a fitted margin; the reader's rankers none, so a margin fitted on
    one scale is never applied on another."""
    assert all(shipped_model(semantic=semantic).claim_rank_margin is not None for semantic in (True, False))
    assert all(shipped_model(semantic=semantic, reading=True).claim_rank_margin is None for semantic in (True, False))


def test_a_question_that_asks_for_a_value_needs_a_quote_that_states_one() -> None:
    desk = fakes.chunk("desk#loans", "Loan laptops are collected from the IT desk on the second floor. A loan lasts up "
                 "to 14 days.", doc_id="desk", title="IT", heading="IT > Loans").chunk
    where = quoting(desk, "Loan laptops are collected from the IT desk on the second floor.")
    span = quoting(desk, "A loan lasts up to 14 days.")
    assert unstated_asked_value("how long can I keep a loan laptop?", [where]) == "time"
    assert unstated_asked_value("how long can I keep a loan laptop?", [where, span]) is None
    # a question that asks where, or yes or no, is not checked for a value
    assert unstated_asked_value("where do I pick up a loan laptop?", [where]) is None
    assert unstated_asked_value("can I borrow a loan laptop?", [where]) is None
