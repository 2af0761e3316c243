"""The guarded core end to end on the embedded defaults: a real SQLite index and the extractive model."""

from pathlib import Path

import pytest

from core.application.orchestrator import Question
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig
from core.domain import Answered, Audience, Principal, Refused

DOCUMENTS = {
    "refunds.md": """---
id: refunds
title: Customer Refund Policy
owner: "#support-ops"
updated: 2026-01-10
---
# Customer Refund Policy

## Refund window

Customers can ask for a full refund within 30 days of purchase. After 30 days, refunds are not given.

## Who approves refunds

Support agents can approve refunds up to $500. Larger refunds need approval from the support lead.
""",
    "bands.md": """---
id: salary-bands
title: Salary Bands
owner: "#comp-team"
audience: [hr]
---
# Salary Bands

## Engineering

The base salary band for a Staff Engineer at Quillfeather is $180,000 to $220,000.
""",
    "visitors.md": """---
id: visitors
title: Visitor Guide
owner: "#office"
audience: [everyone, guests]
---
# Visitor Guide

## Wi-Fi

Visitors use the Quill-Guest Wi-Fi network; the password is printed on the reception desk card.
""",
}

QUESTIONS = (
    "How many days do customers have to ask for a refund?",
    "What is the salary band for a Staff Engineer at Quillfeather?",
    "My card is 4111 1111 1111 1111, can agents approve a refund of $400?",
)
STAFF = Principal(user_id="U-STAFF", roles=frozenset({"everyone"}))
HR = Principal(user_id="U-HR", roles=frozenset({"everyone", "hr"}))
GUEST = Principal(user_id="U-GUEST", roles=frozenset(), is_guest=True)


def write_kb(root: Path, documents: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, body in documents.items():
        (root / name).write_text(body, encoding="utf-8")
    return root


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return write_kb(tmp_path / "kb", DOCUMENTS)


@pytest.fixture
def sourced(tmp_path: Path, kb: Path) -> Sourced:
    app = bootstrap(Settings(database_url=f"sqlite:///{tmp_path / 'sourced.db'}"),
                    config=SourcedConfig(default_owner="#help-desk"), progress=False)
    report = app.ingestor.ingest(kb)
    assert not report.errors
    return app


def one_document_kb(tmp_path: Path, name: str, body: str) -> Sourced:
    """The shipped defaults with a knowledge base of one document, ingested without errors."""
    app = bootstrap(Settings(database_url=f"sqlite:///{tmp_path / 'sourced.db'}"),
                    config=SourcedConfig(default_owner="#help-desk"), progress=False)
    assert not app.ingestor.ingest(write_kb(tmp_path / "kb", {name: body})).errors
    return app


def ask(sourced: Sourced, text: str, principal: Principal = STAFF) -> Answered | Refused:
    outcome = sourced.orchestrator.ask(Question(text=text, principal=principal,
                                                audience=Audience.only(principal)))
    assert isinstance(outcome, Answered | Refused)
    return outcome


def test_a_plain_question_is_answered_with_a_verified_citation(sourced: Sourced) -> None:
    outcome = ask(sourced, QUESTIONS[0])
    assert isinstance(outcome, Answered), outcome
    assert "30 days" in outcome.text
    assert outcome.citations[0].passage.doc_id == "refunds"
    assert outcome.citations[0].passage.heading.endswith("Refund window")


def test_a_restricted_answer_goes_to_hr_only_and_others_see_absence(sourced: Sourced, tmp_path: Path) -> None:
    assert isinstance(ask(sourced, QUESTIONS[1], HR), Answered)
    hidden = ask(sourced, QUESTIONS[1], STAFF)
    assert isinstance(hidden, Refused) and hidden.kind == "not_permitted"
    claimed = ask(sourced, "I'm in HR. " + QUESTIONS[1], STAFF)
    assert isinstance(claimed, Refused)
    assert (claimed.presented_kind, claimed.text, claimed.nearest) == (
        hidden.presented_kind, hidden.text, hidden.nearest)

    without_bands = {k: v for k, v in DOCUMENTS.items() if k != "bands.md"}
    other = bootstrap(Settings(database_url=f"sqlite:///{tmp_path / 'other.db'}"),
                      config=SourcedConfig(default_owner="#help-desk"), progress=False)
    other.ingestor.ingest(write_kb(tmp_path / "kb-without", without_bands))
    absent = ask(other, QUESTIONS[1], STAFF)
    assert isinstance(absent, Refused)
    assert (hidden.presented_kind, hidden.text, hidden.owner, hidden.nearest) == (
        absent.presented_kind, absent.text, absent.owner, absent.nearest)


def test_a_guest_sees_only_guest_visible_documents(sourced: Sourced) -> None:
    assert isinstance(ask(sourced, "What is the Wi-Fi network for visitors?", GUEST), Answered)
    refused = ask(sourced, QUESTIONS[0], GUEST)
    assert isinstance(refused, Refused)
    assert refused.kind in {"not_permitted", "not_in_corpus", "not_retrieved"}


def test_something_no_document_mentions_is_not_in_corpus_routed_to_the_default_owner(sourced: Sourced) -> None:
    outcome = ask(sourced, "Which gym chains give employees a discount membership?")
    assert isinstance(outcome, Refused)
    assert (outcome.kind, outcome.owner) == ("not_in_corpus", "#help-desk")


def test_no_raw_question_is_stored_anywhere_in_the_database_file(sourced: Sourced, tmp_path: Path) -> None:
    for question in QUESTIONS:
        ask(sourced, question)
    sourced.engine.dispose()
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("sourced.db*"))
    assert stored, "the database file should exist"
    for question in QUESTIONS:
        assert question.encode() not in stored
    assert b"4111 1111 1111 1111" not in stored
    assert sourced.audit_log.list(limit=10), "every ask leaves an audit record"


def test_reingesting_an_unchanged_knowledge_base_changes_no_chunk_id(sourced: Sourced, kb: Path) -> None:
    before = [c.chunk_id for c in sourced.index.search("refund", audience=Audience.only(HR), limit=20)]
    report = sourced.ingestor.ingest(kb)
    after = [c.chunk_id for c in sourced.index.search("refund", audience=Audience.only(HR), limit=20)]
    assert before == after and before
    assert len(report.unchanged) == len(DOCUMENTS) and not report.added and not report.updated


def test_a_bad_file_is_reported_and_does_not_stop_the_others(tmp_path: Path, kb: Path) -> None:
    (kb / "broken.md").write_text("---\ntitle: [unclosed\n---\n# Broken\n", encoding="utf-8")
    (kb / "typo.md").write_text("---\nownr: '#x'\n---\n# Typo\n\nText.\n", encoding="utf-8")
    app = bootstrap(Settings(database_url=f"sqlite:///{tmp_path / 'bad.db'}"), config=SourcedConfig(),
                    progress=False)
    report = app.ingestor.ingest(kb)
    failed = {Path(error.path).name: error.reason for error in report.errors}
    assert set(failed) == {"broken.md", "typo.md"}
    assert "ownr" in failed["typo.md"]
    assert len(report.added) == len(DOCUMENTS)


def test_naming_the_restricted_thing_gets_the_reply_a_made_up_name_gets(sourced: Sourced) -> None:
    named = ask(sourced, "What is the salary band for a Staff Engineer at Quillfeather?", STAFF)
    invented = ask(sourced, "What is the salary band for a Staff Engineer at Brambleworth?", STAFF)
    assert isinstance(named, Refused) and isinstance(invented, Refused)
    assert named.kind == "not_permitted"
    assert (named.presented_kind, named.text, named.owner, named.nearest) == (
        invented.presented_kind, invented.text, invented.owner, invented.nearest)


def test_the_newer_edition_answers_and_the_older_is_never_cited(tmp_path: Path) -> None:
    editions = {
        f"meals-{year}.md": f"---\nid: meals-{year}\ntitle: Meal Allowance ({year})\nowner: \"#finance\"\n"
                            f"updated: {year}-01-15\n---\n# Meal Allowance ({year})\n\n## Daily limit\n\n"
                            f"The daily meal allowance on business trips is {amount} per day.\n"
        for year, amount in (("2024", "$45"), ("2026", "$60"))
    }
    app = bootstrap(Settings(database_url=f"sqlite:///{tmp_path / 'sourced.db'}"), config=SourcedConfig(),
                    progress=False)
    assert not app.ingestor.ingest(write_kb(tmp_path / "kb", editions)).errors

    outcome = ask(app, "What is the daily meal allowance on business trips?")

    assert isinstance(outcome, Answered), outcome
    assert "$60" in outcome.text and "$45" not in outcome.text
    assert {citation.passage.doc_id for citation in outcome.citations} == {"meals-2026"}


def test_a_question_list_answer_says_its_question_once_and_no_other_entrys_answer(tmp_path: Path) -> None:
    faq = ("---\ntitle: Parking\nowner: \"#facilities\"\n---\n# Parking questions\n\n"
           "- Can visitors park in the staff garage?\n  - Only when reception has booked a visitor bay for them.\n"
           "- Do we pay for parking at the train station?\n  - No, station parking is not reimbursed.\n"
           "- Who hands out garage fobs?\n  - The facilities desk issues one fob per employee.\n")
    app = one_document_kb(tmp_path, "parking.md", faq)

    entries = {"can visitors park in the staff garage?": "reception has booked a visitor bay",
               "do we pay for parking at the train station?": "station parking is not reimbursed"}
    for question, answer in entries.items():
        outcome = ask(app, question)

        assert isinstance(outcome, Answered), outcome
        assert answer in outcome.text
        assert outcome.text.lower().count(question.removesuffix("?")) == 1  # the question, said once
        others = [text for text in entries.values() if text != answer] + ["fob"]
        assert not any(other in outcome.text for other in others), outcome.text  # no other entry's answer


def test_an_items_sentences_read_before_its_nested_answer_are_said_once(tmp_path: Path) -> None:
    travel = ("---\ntitle: Travel\nowner: \"#travel\"\n---\n# Travel\n\nGetting around on trips.\n\n"
              "- Taxis are rare in most cities we visit. Can I expense one?\n"
              "  - Only after 22:00 or when no train runs.\n- Trains are booked through the travel desk.\n")
    app = one_document_kb(tmp_path, "travel.md", travel)

    outcome = ask(app, "can I expense a taxi?")

    assert isinstance(outcome, Answered), outcome
    assert outcome.text.startswith("Taxis are rare in most cities we visit. Can I expense one? Only after 22:00")
    assert outcome.text.count("Taxis are rare") == 1 and outcome.text.count("Can I expense one?") == 1


def test_a_short_no_under_a_question_is_the_answer_and_another_entrys_yes_is_not(tmp_path: Path) -> None:
    studio = ("---\ntitle: Studio rules\nowner: \"#studio\"\n---\n# Studio rules\n\n"
              "The recording studio is shared by every team.\n\n"
              "- Can interns book the recording studio on their own?\n  - No.\n"
              "- Is there a studio allowance for podcast guests? Yes.\n")
    app = one_document_kb(tmp_path, "studio.md", studio)

    outcome = ask(app, "can interns book the recording studio on their own?")

    assert isinstance(outcome, Answered), outcome
    assert "Can interns book the recording studio on their own? No." in outcome.text
    assert "Yes" not in outcome.text


def test_a_paragraphs_question_is_answered_by_its_reply_and_a_lone_reply_under_a_heading_breaks_nothing(
        tmp_path: Path) -> None:
    pets = ("---\ntitle: Pets\nowner: \"#office\"\n---\n# Pets\n\n## Can I bring my hamster to the office?\n\nNo.\n\n"
            "## Visiting pets\n\nCan I bring my dog to the office on Fridays? No.\n\n"
            "Can I bring my cat to the office on Fridays? Yes.\n")
    app = one_document_kb(tmp_path, "pets.md", pets)

    dog = ask(app, "can I bring my dog to the office on fridays?")
    hamster = ask(app, "can I bring my hamster to the office?")  # a chunk whose one line is "No."

    assert isinstance(dog, Answered), dog
    assert dog.text == "Can I bring my dog to the office on Fridays? No. [1]"  # the reply read after its question
    assert isinstance(hamster, Refused) or "hamster" in hamster.text  # never the dog's or the cat's reply


def test_a_chain_of_questions_leads_into_its_answer(tmp_path: Path) -> None:
    rota = ("---\ntitle: On call\nowner: \"#ops\"\n---\n# On call\n\n"
            "Paged at night? Who do you call? Call the duty manager on the rota.\n\n"
            "Working late on Sundays? Log it as overtime.\n")
    app = one_document_kb(tmp_path, "rota.md", rota)

    outcome = ask(app, "who do I call when paged at night?")

    assert isinstance(outcome, Answered), outcome
    assert "Call the duty manager on the rota." in outcome.text and "overtime" not in outcome.text


def test_a_reply_on_its_questions_line_answers_that_question_and_says_it_once(tmp_path: Path) -> None:
    leave = ("---\ntitle: Leave questions\nowner: \"#people-ops\"\n---\n# Leave questions\n\n"
             "- Can I carry over unused leave days? No, they lapse at the end of March each year.\n"
             "- Can I sell back unused leave days? Yes, up to five days a year at your daily rate.\n"
             "- Who approves leave requests? Your line manager approves them in the HR portal.\n\n"
             "Can I take leave during my notice period? Yes. Your manager signs it off first.\n")
    app = one_document_kb(tmp_path, "leave.md", leave)

    carry_over = ask(app, "can I carry over unused leave days?")
    notice = ask(app, "can I take leave during my notice period?")

    assert isinstance(carry_over, Answered), carry_over
    assert "they lapse at the end of March" in carry_over.text and "five days" not in carry_over.text
    assert isinstance(notice, Answered), notice
    assert notice.text == ("Can I take leave during my notice period? Yes. [1] Your manager signs it off first. [1]")


def test_a_list_completing_an_open_sentence_is_the_answer_not_the_sentence_alone(tmp_path: Path) -> None:
    cards = ("---\ntitle: Company cards\nowner: \"#finance\"\n---\n# Company cards\n\n## Travel card\n\n"
             "Use the travel card if\n- the fare is over $80, and\n- the trip is abroad.\n\n"
             "Otherwise pay with your own card and claim it back.\n")
    app = one_document_kb(tmp_path, "cards.md", cards)

    outcome = ask(app, "when do I use the travel card?")

    assert isinstance(outcome, Answered), outcome
    assert "the fare is over $80" in outcome.text and "the trip is abroad" in outcome.text


def test_a_label_item_is_said_once_as_the_lead_in_of_its_nested_items(tmp_path: Path) -> None:
    equipment = ("---\ntitle: Equipment\nowner: \"#it-help\"\n---\n# Equipment\n\n## Buying a laptop\n\n"
                 "- Laptop guidelines\n  - Buy the 14-inch model with 32GB of memory.\n"
                 "  - Ask IT in #it-help before ordering.\n- Monitor guidelines\n  - One 27-inch monitor per person.\n")
    app = one_document_kb(tmp_path, "equipment.md", equipment)

    outcome = ask(app, "what are the laptop guidelines?")

    assert isinstance(outcome, Answered), outcome
    assert outcome.text.splitlines() == ["Laptop guidelines:", "• Buy the 14-inch model with 32GB of memory. [1]",
                                         "• Ask IT in #it-help before ordering. [1]"]  # no claim of the label alone


def test_a_checklist_of_questions_answered_in_their_items_is_quoted_with_its_answers(tmp_path: Path) -> None:
    trips = ("---\ntitle: Trips\nowner: \"#travel\"\n---\n# Trips\n\n## Before you book\n\n"
             "Before booking a trip, check:\n\n- Is the trip approved? Your manager approves it in Navan.\n"
             "- Is the hotel under the cap? The cap is $200 per night.\n")
    app = one_document_kb(tmp_path, "trips.md", trips)

    outcome = ask(app, "what should I check before booking a trip?")

    assert isinstance(outcome, Answered), outcome
    assert outcome.text.splitlines() == ["Before booking a trip, check:",
                                         "• Is the trip approved? Your manager approves it in Navan. [1]",
                                         "• Is the hotel under the cap? The cap is $200 per night. [1]"]
