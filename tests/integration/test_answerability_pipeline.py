"""The answerability decision on a knowledge base of the tests' own, with the shipped defaults (SQLite, the
MiniLM embedder, the committed fit): each class of failure seen on documents the model was not tuned on, and
the answerable question beside it that must still be answered."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.application.orchestrator import Question, answerability_note
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig
from core.domain import Answered, Audience, Clarify, Outcome, Principal, Refused

HANDBOOK = {
    "oncall.md": """---
id: oncall
title: On-call Handbook
owner: "#sre"
---
# On-call Handbook

## Call-outs

On-call engineers may be called out at most 3 times a week before a second engineer takes over.

## On-call pay

The weekday on-call stipend is $40 per night.
""",
    "refunds.md": """---
id: refunds
title: Customer Refunds
owner: "#billing-ops"
---
# Customer Refunds

## Refund windows

| Region | Refund window |
|---|---|
| European Union | 14 days from delivery |
| United States | 30 days from delivery |

## Refund approvals

Refunds above $500 need approval from the billing lead.
""",
    "environments.md": """---
id: environments
title: Environments
owner: "#platform"
---
# Environments

## Production

The production dashboard lives at https://dash.example.com and is read-only for most engineers.
""",
    "insurance.md": """---
id: travel-insurance
title: Travel Insurance
owner: "#travel-desk"
---
# Travel Insurance

## Provider

Business travel insurance is provided by Harbor Mutual for every employee.

## Claims

File a travel insurance claim within 60 days of your return, with receipts.
""",
    "expenses.md": """---
id: expenses
title: Expense Policy
owner: "#finance"
---
# Expense Policy

## Meal limits

The daily meal limit while travelling is $60.

## Submitting

Submit expense claims within 45 days of the purchase.
""",
    "equipment.md": """---
id: equipment
title: Home Equipment
owner: "#it"
---
# Home Equipment

## Monitor budget

The budget limit for a home monitor is $300, once every three years.
""",
    "leave.md": """---
id: leave
title: Annual Leave
owner: "#people-ops"
---
# Annual Leave

## Carrying leave over

- Allowance: 28 days a year, public holidays included.
- Carryover: up to 5 days roll into the next year, only if you were unable to take them because of illness.
  Carried days lapse on 30 April. Nothing is paid out for days that lapse.
- Bookings: request leave in the HR portal two weeks ahead.
""",
    "office.md": """---
id: office
title: Office Guide
owner: "#workplace"
---
# Office Guide

## Opening hours

The office opens at 8am on weekdays. Visitors sign in at reception with photo ID. Bikes go in the basement rack.
""",
    "remote.md": """---
id: remote
title: Remote Work
owner: "#people-ops"
---
# Remote Work

## The remote agreement

Before working remotely, you and your manager sign an agreement. The remote agreement must name:

- your home office address
- your core hours, in your own time zone
- the equipment the company lends you
- an emergency contact

## Contractors

Contractors bring their own equipment. IT does not lend these to contractors:

- laptops or tablets
- company phones
""",
    "offsite.md": """---
id: offsite
title: Offsite
owner: "#events"
---
# Offsite

## Packing

For the offsite, everyone should pack these things:

- a passport
- a rain jacket
- walking shoes
- a water bottle
- sunscreen
- a phone charger
- a notebook
- a torch
- a swimsuit
- a sleeping bag
""",
}
STAFF = Principal(user_id="U1", roles=frozenset({"everyone"}))


def handbook(root: Path, **settings: Any) -> Iterator[Sourced]:
    """The handbook ingested into a fresh SQLite index, with the shipped defaults and these settings."""
    kb = root / "kb"
    kb.mkdir()
    for name, text in HANDBOOK.items():
        (kb / name).write_text(text)
    sourced = bootstrap(Settings(database_url=f"sqlite:///{root / 'sourced.db'}", **settings),
                        config=SourcedConfig(), known_gaps=(), progress=False)
    assert sourced.embedder is not None, "the shipped default retrieves with the MiniLM embedder"
    assert sourced.ingestor.ingest(Path(kb)).errors == ()
    yield sourced
    sourced.engine.dispose()


@pytest.fixture(scope="module")
def sourced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sourced]:
    """The shipped defaults: `Settings()` picks the embedder itself."""
    yield from handbook(tmp_path_factory.mktemp("answerability"))


@pytest.fixture(scope="module")
def with_reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sourced]:
    """The shipped defaults with the bundled reader turned on (`SOURCED_READER=bundled`)."""
    yield from handbook(tmp_path_factory.mktemp("answerability-reader"), reader="bundled")


def ask(sourced: Sourced, text: str) -> Outcome:
    return sourced.orchestrator.ask(Question(text=text, principal=STAFF, audience=Audience.only(STAFF)))


@pytest.mark.parametrize("question", [
    "what's the weekend call-out rate?",  # the type (a rate) stated, but for another thing
    "What is the refund window for customers in Singapore?",  # a table of other regions
    "what's the URL of the staging dashboard?",  # production's URL stated, not staging's
    "does the travel insurance cover ski trips?",  # a sentence that only names the subject
])
def test_a_statement_of_the_asked_type_about_another_thing_does_not_answer(sourced: Sourced,
                                                                          question: str) -> None:
    outcome = ask(sourced, question)

    assert isinstance(outcome, Refused), outcome
    assert outcome.presented_kind in {"not_in_corpus", "not_retrieved"}


@pytest.mark.parametrize(("question", "stated"), [
    ("How many call-outs a week can one on-call engineer get?", "3 times a week"),
    ("What is the refund window in the United States?", "30 days"),
    ("what's the daily meal limit when I travel?", "$60"),
    ("how long do I have to file a travel insurance claim?", "60 days"),
    ("how long do I have to file a travle insurance cliam?", "60 days"),  # typed in a hurry
])
def test_the_question_the_statement_does_answer_is_answered(sourced: Sourced, question: str,
                                                            stated: str) -> None:
    outcome = ask(sourced, question)

    assert isinstance(outcome, Answered), outcome
    assert stated in outcome.text


def test_an_answer_quotes_the_rest_of_its_list_item_and_no_other_item(sourced: Sourced) -> None:
    outcome = ask(sourced, "until when can I use leave days I carried over?")

    assert isinstance(outcome, Answered), outcome
    assert "30 April" in outcome.text
    assert "only if you were unable to take them because of illness" in outcome.text  # the document's words
    assert "two weeks ahead" not in outcome.text and "28 days" not in outcome.text


def test_a_list_answer_says_its_lead_in_once_and_lists_every_item(sourced: Sourced) -> None:
    outcome = ask(sourced, "what does the remote agreement have to name?")

    assert isinstance(outcome, Answered), outcome
    assert outcome.text.splitlines() == [
        "The remote agreement must name:", "• your home office address [1]",
        "• your core hours, in your own time zone [1]", "• the equipment the company lends you [1]",
        "• an emergency contact [1]"]
    # each claim is still checked as read after its lead-in: an item alone would state something else
    assert all(claim.text.startswith("The remote agreement must name:") for claim in outcome.claims)


def test_a_list_under_a_negated_lead_in_is_answered_with_the_negation(sourced: Sourced) -> None:
    outcome = ask(sourced, "which devices does IT not lend to contractors?")

    assert isinstance(outcome, Answered), outcome
    assert outcome.text.startswith("IT does not lend these to contractors:\n• laptops or tablets [1]")
    assert "company phones" in outcome.text


def test_a_long_list_is_quoted_around_the_item_asked_for_and_says_how_many_more_it_has(sourced: Sourced) -> None:
    outcome = ask(sourced, "should I pack a sleeping bag for the offsite?")

    assert isinstance(outcome, Answered), outcome
    lines = outcome.text.splitlines()
    assert lines[0] == "For the offsite, everyone should pack these things:"
    assert "• a sleeping bag [1]" in lines and "• a passport [1]" not in lines
    assert lines[-1] == "• 2 more in the source [1]" and len(outcome.claims) == 8


def test_with_the_reader_an_answer_offers_no_claim_that_only_completes_another(with_reader: Sourced) -> None:
    # the guard refuses a claim whose quote the reader does not read as answering, so a sentence that only
    # completes the best one is left out rather than costing the whole answer
    outcome = ask(with_reader, "what time does the office open on weekdays?")

    assert isinstance(outcome, Answered), outcome
    assert "8am" in outcome.text and "reception" not in outcome.text


@pytest.mark.parametrize("question", [
    "how many refunds did we approve last month?",
    "which engineer got called out the most this quarter?",
    "what was our average refund amount in 2025?",
    "how much of my monitor budget do I have left?",
    "how much have I spent on monitors this year?",
    "which region has the most customers asking for refunds?",
])
def test_counts_rankings_and_balances_are_not_answerable_and_name_an_owner(sourced: Sourced,
                                                                          question: str) -> None:
    outcome = ask(sourced, question)

    assert isinstance(outcome, Refused) and outcome.kind == "not_answerable", outcome
    assert outcome.owner is not None


def test_a_short_question_whose_words_several_documents_define_is_clarified(sourced: Sourced) -> None:
    outcome = ask(sourced, "what's the limit?")

    assert isinstance(outcome, Clarify), outcome
    assert len({option.label for option in outcome.options}) >= 2


def test_a_short_question_with_a_word_one_document_owns_is_not_clarified(sourced: Sourced) -> None:
    outcome = ask(sourced, "monitor budget?")

    assert not isinstance(outcome, Clarify), outcome


def test_the_decision_is_explained_with_its_score_threshold_and_strongest_features(sourced: Sourced) -> None:
    outcome, evidence = sourced.orchestrator.ask_with_evidence(
        Question(text="what's the daily meal limit when I travel?", principal=STAFF,
                 audience=Audience.only(STAFF)))
    note = answerability_note(evidence.assessment)

    assert isinstance(outcome, Answered)
    assert note is not None and note.score >= note.threshold
    assert len(note.strongest) == 5 and all(name for name, _ in note.strongest)
    [record] = sourced.audit_log.list(limit=1)
    assert record.answerability == note
