"""Reading a message against its thread: which messages are follow-ups, what they are rewritten to, and what a
generative model's reading must be before it is used. Examples of our own, not of any evaluation set."""

import json

import pytest

from core.application.answerability.followups import (
    OFFLINE_VERSION,
    MalformedReading,
    ModelFollowUps,
    OfflineFollowUps,
    new_stems,
    parse_reading,
    previous_question,
)
from core.application.ports import RewriteRequest
from core.domain import Turn

BIKES = Turn(question="How many bikes fit in the Leeds bike room?", kind="answered", cited=("bikes#leeds",),
             headings=("Bike Parking > Leeds",))
BADGE = Turn(question="Who issues visitor badges at reception?", kind="answered", cited=("badges#visitors",),
             headings=("Badges > Visitors",))
REFUSED = Turn(question="What is the kayak allowance?", kind="not_in_corpus")
READER = OfflineFollowUps()


@pytest.mark.parametrize("message", [
    "and in Bristol?", "what about Bristol?", "how about e-bikes?", "and for cargo bikes?", "in Bristol?",
    "what if I cycle in from Bristol?", "same for scooters?", "OK thanks, and scooters?", "do they charge for it?",
    "is that free?", "can contractors use it too?", "how long?", "and who maintains them?",
])
def test_elliptical_messages_are_read_as_follow_ups(message: str) -> None:
    reading = READER.read(message, [BIKES])
    assert reading.followup and reading.by == OFFLINE_VERSION
    assert reading.question != message


@pytest.mark.parametrize("message", [
    "How many parking spaces does the Bristol office have?",
    "Is it OK to store a folding bike under my desk?",  # "it" stands for the clause that follows
    "How long does it take to get a new badge printed?",
    "How many volunteering days do we get this year?",  # "this year" points at the calendar
    "And how many lockers are there on the third floor of the Leeds office?",  # a question of its own
    "Where is the VPN portal?",  # a bare question with a name of its own
    "To which address do I send a lost badge?",  # a preposition carrying the question word
    "Who approves a travel request over the limit for a conference?",
])
def test_questions_of_their_own_are_read_alone(message: str) -> None:
    reading = READER.read(message, [BIKES])
    assert not reading.followup
    assert reading.question == reading.search == message


def test_a_message_with_no_earlier_turn_is_read_alone() -> None:
    assert not READER.read("and in Bristol?", []).followup


def test_a_short_question_leans_on_an_answer_but_not_on_a_refusal() -> None:
    assert READER.read("how long?", [BIKES]).followup
    assert not READER.read("how long?", [REFUSED]).followup
    assert READER.read("and the limit?", [REFUSED]).followup  # "and ..." continues whatever came before


def test_a_phrase_with_the_same_preposition_replaces_the_previous_one() -> None:
    reading = READER.read("and in Bristol?", [BIKES])
    assert reading.question == "How many bikes fit in Bristol?"
    assert "Leeds" not in reading.question


def test_a_name_replaces_the_previous_name() -> None:
    reading = READER.read("what about Bristol?", [BIKES])
    assert "Bristol" in reading.question and "Leeds" not in reading.question
    assert reading.question.startswith("How many bikes fit in")


def test_new_words_without_a_place_to_go_are_added_and_must_be_spoken_of_by_the_answer() -> None:
    reading = READER.read("and for cargo bikes?", [BIKES])
    assert reading.question == "How many bikes fit in the Leeds bike room, for cargo bikes?"
    assert set(reading.required) == {"cargo"}  # "bikes" was already asked about


def test_a_follow_up_that_keeps_its_own_frame_takes_the_previous_focus() -> None:
    reading = READER.read("who maintains them?", [BIKES])
    assert reading.question.startswith("who maintains them (")
    assert "bikes" in reading.question and "Leeds" in reading.question
    assert "How many" not in reading.question and "many" not in reading.question.split("(")[1]
    assert reading.required == ()


def test_retrieval_reads_the_previous_answers_section_names_but_the_reply_never_shows_them() -> None:
    reading = READER.read("who maintains them?", [BIKES])
    assert "Bike Parking > Leeds" in reading.search and "Bike Parking" not in reading.question


def test_the_latest_turn_is_the_one_a_follow_up_leans_on() -> None:
    reading = READER.read("who issues them?", [BIKES, BADGE])
    assert "badges" in reading.question and "bikes" not in reading.question


def test_the_threads_own_messages_are_read_together_with_its_first_question_first() -> None:
    thread = [Turn(question="Can I lock my bike to the railings outside?"), Turn(question="no idea tbh")]
    previous = previous_question(thread)
    assert previous is not None and previous.question.startswith("Can I lock my bike")
    assert READER.read("is that allowed?", thread).followup
    bare = READER.read("", thread)
    assert bare.followup and bare.question.startswith("Can I lock my bike")


def test_a_long_thread_question_is_cut_keeping_its_start_and_its_latest_words() -> None:
    thread = [Turn(question="Where can I park a bike " + "really " * 200 + "?"), Turn(question="ask facilities")]
    previous = previous_question(thread)
    assert previous is not None and len(previous.question) < 700
    assert previous.question.startswith("Where can I park") and previous.question.endswith("ask facilities.")


def test_new_stems_leave_out_names_numbers_indefinites_and_the_question_frame() -> None:
    assert new_stems("for how long?", "How many bikes fit?") == ()
    assert new_stems("and everyone else?", "Who issues badges?") == ()
    assert new_stems("after ten years in Bristol", "How much leave?") == ("year",)


class FixedRewriter:
    name = "scripted"
    prompt_version = "followup-v1"

    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply
        self.requests: list[RewriteRequest] = []

    def rewrite(self, request: RewriteRequest) -> str:
        self.requests.append(request)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def test_a_models_reading_is_used_as_it_wrote_it() -> None:
    rewriter = FixedRewriter(json.dumps({"followup": True, "question": "How many cargo bikes fit in Leeds?"}))
    reading = ModelFollowUps(rewriter).read("and cargo bikes?", [BIKES])
    assert reading.followup and reading.question == "How many cargo bikes fit in Leeds?"
    assert reading.by == "scripted+followup-v1" and reading.detail is None
    assert "Bike Parking > Leeds" in reading.search
    assert rewriter.requests == [RewriteRequest(message="and cargo bikes?", turns=(BIKES,))]


def test_a_model_that_says_not_a_follow_up_leaves_the_message_alone() -> None:
    rewriter = FixedRewriter(json.dumps({"followup": False, "question": "anything"}))
    reading = ModelFollowUps(rewriter).read("Where is the VPN portal?", [BIKES])
    assert not reading.followup and reading.question == "Where is the VPN portal?"


def test_the_model_is_not_asked_without_earlier_turns() -> None:
    rewriter = FixedRewriter("{}")
    assert not ModelFollowUps(rewriter).read("and cargo bikes?", []).followup
    assert rewriter.requests == []


@pytest.mark.parametrize("reply", [
    "not json", "[]", json.dumps({"followup": True}), json.dumps({"followup": "yes", "question": "q"}),
    json.dumps({"followup": True, "question": "q", "because": "I said so"}),
    json.dumps({"followup": True, "question": ""}), json.dumps({"followup": True, "question": "x" * 1001}),
    json.dumps({"followup": True, "question": "bad \x07 bell"}), TimeoutError("slow"),
])
def test_a_reading_that_is_not_exactly_the_object_falls_back_to_the_offline_reading(reply: str | Exception) -> None:
    reading = ModelFollowUps(FixedRewriter(reply)).read("and in Bristol?", [BIKES])
    offline = READER.read("and in Bristol?", [BIKES])
    assert (reading.question, reading.followup, reading.by) == (offline.question, True, OFFLINE_VERSION)
    assert reading.detail is not None and reading.detail.startswith("model reading failed: ")


def test_the_strict_parser_names_what_is_wrong() -> None:
    with pytest.raises(MalformedReading, match="question"):
        parse_reading(json.dumps({"followup": True}))
