"""Measurements over records are told apart from rules that state a quantity, in many phrasings."""

import pytest

from core.application.language.shape import classify_shape, is_aggregate

MEASUREMENTS = [
    # counts of events in a time window
    "how many outages did we have in Q2?",
    "How many purchase orders were raised last month?",
    "number of expense claims rejected during 2024?",
    "How many support tickets came in yesterday?",
    # totals, averages, shares
    "What was the total we spent on catering this quarter?",
    "what's our average time to close a hiring req this year?",
    "What share of staff finished the ethics course so far?",
    "median onboarding time across all the teams?",
    # rankings and superlatives over entities
    "Which warehouse had the most late shipments last week?",
    "who closed the fewest deals this quarter?",
    "rank the suppliers by on-time delivery",
    "show me the top 5 customers by revenue",
    # populations of the organisation's own people or places
    "how many employees are based in Lisbon?",
    "How many contractors do we have right now?",
    "how many of our managers completed the training?",
    "which office has the most engineers?",
    "Who has the fewest contractors?",
    # listings and per-person lookups
    "list everyone in finance who hasn't submitted a timesheet",
    "which people haven't done their fire safety training?",
    "how much of my training budget do I have left?",
    "how many vacation days do I have left?",
    "how much have I already claimed for travel this year?",
    "how much did we spend on the offsite?",
    "how many days off have I taken so far this year?",
    "How many days off do employees take on average this year?",
    "How many days of leave do staff take in total this quarter?",
    "How many tickets do we get this month?",
    "How many sick days did I take this year? How many can I take?",
    "how many sick days do I have left this year?",
]

RULES = [
    "how many days of paid leave do I get?",
    "How many reviewers must approve a pull request?",
    "how many times can I enter a wrong password before lockout?",
    "How many people can I invite to the offsite?",
    "what's the maximum I can spend on a hotel night?",
    "What is the late fee for a returned book?",
    "how many hours a week can interns work?",
    "what's the most I can claim for a team dinner?",
    "Who approves refunds above the limit?",
    "which laptop is best for engineers?",
    "what's the most guests I can bring to the party?",
    "Can I invite more people to the offsite?",
    "how much can I spend on a hotel this year?",
    "how much notice did I have to give?",
    "which award goes to the team with the most customers?",
    "Is there a bonus for agents who have the most customers?",
    # a time the asker will use the rule in, not a window of records
    "moving house in March, how many days off do I get for the move?",
    "how many sick days can I take this year?",
    "how many training days will I get in 2027?",
]


@pytest.mark.parametrize("question", MEASUREMENTS)
def test_a_measurement_over_records_is_an_aggregate(question: str) -> None:
    assert is_aggregate(question)


@pytest.mark.parametrize("question", RULES)
def test_a_rule_that_states_a_quantity_is_not_an_aggregate(question: str) -> None:
    assert not is_aggregate(question)


@pytest.mark.parametrize(("question", "short"), [
    ("what's the limit?", True),
    ("who signs it off?", True),
    ("deadline?", True),
    ("what's the deadline for travel expense claims?", False),
    ("how do I reset my VPN token after it expires?", False),
])
def test_a_short_question_has_at_most_two_meaningful_words(question: str, short: bool) -> None:
    assert classify_shape(question).short is short
