"""A typo is read as the word the retrieved passages use, and only when that reading is the one there is."""

import pytest

from core.application.answerability.model import assess
from core.domain import Passage, RetrievedChunk
from core.spelling import one_slip_apart, respelt

PASSAGE_WORDS = {"reimbursement", "receipts", "quarter", "travel", "submit", "deadline", "login", "logging"}


@pytest.mark.parametrize(("typed", "meant"), [
    ("reciepts", "receipts"),  # two letters swapped
    ("reimbursment", "reimbursement"),  # one left out
    ("quartter", "quarter"),  # one too many
])
def test_a_slip_is_read_as_the_passage_word_it_was_meant_to_be(typed: str, meant: str) -> None:
    assert respelt(f"when do I submit my {typed}?", PASSAGE_WORDS) == f"when do I submit my {meant}?"


@pytest.mark.parametrize("question", [
    "is the dairy allowance taxed?",  # an English word, though "diary" is one slip away
    "who signs off loging?",  # "login" and "logging" are both one slip away
    "can I claim my tavrel?",  # no passage word is one slip away ("travel" is two)
    "is tme off paid?",  # too short to tell a slip from another word ("time" is one slip away)
    "does Quartter sign it?",  # a capitalised word is a name as typed
    "why mustn't I submit it?",  # a word with an apostrophe is left whole ("must" is no reading of "mustn")
    "is the travel perk taxed?",  # never read as a stopword ("per")
])
def test_a_word_is_left_as_typed_unless_one_reading_is_clear(question: str) -> None:
    vocabulary = PASSAGE_WORDS | {"diary", "time", "must", "per"}
    assert respelt(question, vocabulary) == question


def test_chat_shorthand_is_read_as_the_word_the_passages_spell_out() -> None:
    vocabulary = PASSAGE_WORDS | {"messages", "hours", "documentation", "documents"}
    assert respelt("any msgs about travel hrs?", vocabulary) == "any messages about travel hours?"
    assert respelt("where are the docs?", vocabulary) == "where are the documentation?"  # the first reading used
    assert respelt("where are the docs?", PASSAGE_WORDS | {"documents"}) == "where are the documents?"
    assert respelt("any msgs about my perf?", PASSAGE_WORDS) == "any msgs about my perf?"  # words no passage uses
    assert respelt("which repo?", PASSAGE_WORDS | {"repo", "repository"}) == "which repo?"  # the page's own word


def test_one_slip_is_a_swap_of_neighbours_or_one_letter_more_or_less() -> None:
    assert one_slip_apart("form", "from")
    assert one_slip_apart("travl", "travel")
    assert not one_slip_apart("cost", "host")  # a changed letter is another word, not a slip
    assert not one_slip_apart("travle", "tarvel")


def test_a_question_with_a_typo_is_decided_as_the_same_question_spelt_right() -> None:
    passage = Passage(chunk_id="expenses#1", doc_id="expenses", title="Expenses", heading="Expenses > Receipts",
                      text="Upload every receipt within 30 days of the purchase. Meals are paid by card.")
    chunks = [RetrievedChunk(passage=passage, score=0.6, content_hash="h")]
    typed = assess("how long do I have to uplaod a reciept?", chunks)
    spelt = assess("how long do I have to upload a receipt?", chunks)
    assert typed.best is not None and spelt.best is not None
    assert typed.best.statement == spelt.best.statement
    assert typed.best.features == spelt.best.features and typed.score == spelt.score
