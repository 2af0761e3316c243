"""Outcomes as Block Kit: cited answers, four-part refusals, clarifying buttons, all within Slack's limits."""

import json
import re
from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from bot import blocks, escaping
from bot.surface import CLARIFY_ACTION, Action
from core.application import refusals
from core.application.presenting import reply_text
from core.domain import (
    Answered,
    Citation,
    Claim,
    Clarify,
    ClarifyOption,
    Link,
    Passage,
    Refused,
    RiskAssessment,
)
from tests.mrkdwn import mrkdwn_texts

LOW = RiskAssessment(level="low")
REFUNDS = Passage(chunk_id="refunds#return-window", doc_id="refunds", title="Refund Policy",
                  heading="Refund Policy > Returns > Return window", text="Customers have 30 days.",
                  owner="#support-ops", updated=date(2026, 3, 14), url="https://wiki.example/refunds?a=1&b=2")


def answered(text: str = "Customers have 30 days. [1]", *, passage: Passage = REFUNDS,
             correlation_id: str = "c1") -> Answered:
    return Answered(text=text, claims=(Claim(text="Customers have 30 days.", citations=(1,)),),
                    citations=(Citation(n=1, passage=passage, content_hash="h", tier="direct"),),
                    risk=LOW, correlation_id=correlation_id)


def refused(kind: Any = "not_in_corpus", *, shown_as: Any = None, owner: str | None = "#payroll-help",
            nearest: tuple[Passage, ...] = (), correlation_id: str = "c1") -> Refused:
    return Refused(kind=kind, shown_as=shown_as, text=refusals.BY_KIND[shown_as or kind], risk=LOW,
                   correlation_id=correlation_id, owner=owner, nearest=nearest)


def dicts(message: blocks.Message) -> list[dict[str, Any]]:
    return message.block_dicts()


def all_text(message: blocks.Message) -> str:
    """Every mrkdwn text Slack would render (button values are data, never rendered)."""
    return mrkdwn_texts(dicts(message))


def buttons(message: blocks.Message) -> list[dict[str, Any]]:
    found = []
    for block in dicts(message):
        found += block.get("elements", []) if block["type"] == "actions" else []
        if block.get("accessory", {}).get("type") == "button":
            found.append(block["accessory"])
    return found


def test_an_answer_shows_its_markers_and_a_source_line_with_title_section_owner_updated_and_link() -> None:
    message = blocks.answer_message(answered())
    first, *_ = dicts(message)
    assert first["text"]["text"] == "Customers have 30 days. [1]"
    source = next(b for b in dicts(message) if b.get("block_id") == "source_1")["text"]["text"]
    assert source.startswith("[1] *Refund Policy* \u203a Returns \u203a Return window")
    assert "Owner #support-ops" in source and "updated 2026-03-14" in source
    assert "<https://wiki.example/refunds?a=1&amp;b=2|open the document>" in source


def test_a_list_answer_keeps_its_lines_in_the_message_and_in_the_stream() -> None:
    listed = answered("Refunds need:\n• a receipt [1]\n• the original card [1]")

    assert dicts(blocks.answer_message(listed))[0]["text"]["text"] == listed.text
    streamed = "".join(blocks.answer_pieces(listed, size=12))
    assert streamed == "Refunds need:\n\n• a receipt \\[1\\]\n\n• the original card \\[1\\]"


def test_each_source_has_a_passage_button_and_the_answer_has_feedback_buttons() -> None:
    ids = [button["action_id"] for button in buttons(blocks.answer_message(answered()))]
    assert ids == [Action.PASSAGE, Action.HELPFUL, Action.NOT_HELPFUL]
    chunk_id = blocks.passage_chunk_id(buttons(blocks.answer_message(answered()))[0]["value"])
    assert chunk_id == REFUNDS.chunk_id


def test_feedback_buttons_carry_the_correlation_id() -> None:
    feedback = [b for b in buttons(blocks.answer_message(answered(correlation_id="abc123")))
                if b["action_id"] in {Action.HELPFUL, Action.NOT_HELPFUL}]
    assert {b["value"] for b in feedback} == {"abc123"}


def test_an_ephemeral_answer_can_offer_to_share_the_question_into_the_channel() -> None:
    message = blocks.render(answered(), question="how long for returns?", shareable=True)
    share = [b for b in buttons(message) if b["action_id"] == Action.SHARE]
    assert [b["value"] for b in share] == ["how long for returns?"]


def test_a_source_without_url_owner_or_date_has_no_empty_details() -> None:
    bare = Passage(chunk_id="x", doc_id="x", title="Notes", heading="Notes", text="t")
    source = next(b for b in dicts(blocks.answer_message(answered(passage=bare)))
                  if b.get("block_id") == "source_1")["text"]["text"]
    assert source == "[1] *Notes*"


def test_document_and_question_text_is_mrkdwn_escaped() -> None:
    hostile = Passage(chunk_id="x", doc_id="x", title="R&D <!channel>", heading="R&D <!channel> > A>B",
                      text="t", owner="#r&d")
    message = blocks.answer_message(answered(text="Use <@U1> & <!here> [1]", passage=hostile))
    text = all_text(message)
    assert "<!channel>" not in text and "<!here>" not in text and "<@U1>" not in text
    assert "R&amp;D &lt;!channel&gt;" in text and "A&gt;B" in text
    refusal = blocks.refusal_message(refused(), question="is <!everyone> & co paid?")
    assert "&lt;!everyone&gt; &amp; co" in all_text(refusal)


def test_every_message_has_the_plain_text_fallback_of_the_core() -> None:
    for outcome in (answered(), refused(),
                    Clarify(text=refusals.AMBIGUOUS, options=(ClarifyOption(label="A", refine="a?"),),
                            risk=LOW, correlation_id="c")):
        message = blocks.render(outcome, question="q", clarification_id="p1")
        assert message.text == escaping.mrkdwn(reply_text(outcome))


def test_a_long_answer_is_split_within_slacks_section_and_block_limits() -> None:
    long_text = ("All items & returns <must> be logged. " * 2000) + "[1]"
    message = blocks.answer_message(answered(text=long_text))
    rendered = dicts(message)  # to_dict() runs slack_sdk's validators
    assert len(rendered) <= blocks.BLOCK_LIMIT
    sections = [b["text"]["text"] for b in rendered if b["type"] == "section"]
    assert all(len(text) <= blocks.SECTION_LIMIT for text in sections)
    assert all("&amp" not in text[-4:] for text in sections)  # never cut inside an entity
    assert len(message.text) <= blocks.TEXT_FALLBACK_LIMIT


SHIPPING = Passage(chunk_id="shipping#costs", doc_id="shipping", title="Shipping", heading="Shipping > Costs",
                   text="Standard shipping is free above 50 euros.")


def test_a_refusal_acknowledges_the_question_says_its_limit_shows_the_closest_passages_and_the_owner() -> None:
    outcome = refused("not_retrieved", owner="C0SUPPORT", nearest=(REFUNDS, SHIPPING))
    message = blocks.refusal_message(outcome, question="returns?")
    texts = [b["text"]["text"] if "text" in b else b["elements"][0]["text"] for b in dicts(message)]
    assert texts[0] == "You asked: “returns?”"
    assert texts[1] == refusals.NOT_RETRIEVED
    assert texts[2].splitlines() == [
        "*Refund Policy* \u203a Returns \u203a Return window", "Customers have 30 days.",
        "Owner #support-ops · <https://wiki.example/refunds?a=1&amp;b=2|open the document>"]
    assert texts[3].splitlines() == ["*Shipping* \u203a Costs", "Standard shipping is free above 50 euros."]
    assert texts[4] == "<#C0SUPPORT> can help with this."


@pytest.mark.parametrize("kind", ["not_in_corpus", "not_retrieved", "not_answerable", "model_self_refusal",
                                  "unsupported_claim", "invalid_citation", "malformed_response", "model_unavailable"])
def test_every_refusal_kind_with_closest_passages_shows_them_each_with_a_this_answered_it_button(kind: str) -> None:
    message = blocks.refusal_message(refused(kind, nearest=(REFUNDS, SHIPPING), correlation_id="d-7"),
                                     question="q")
    answered_it = [b for b in buttons(message) if b["action_id"] == Action.ANSWERED_IT]
    assert [blocks.parse_answered_it(b["value"]) for b in answered_it] == [
        blocks.AnsweredIt(correlation_id="d-7", chunk_id="refunds#return-window"),
        blocks.AnsweredIt(correlation_id="d-7", chunk_id="shipping#costs")]
    assert {b["action_id"] for b in buttons(message)} == {Action.ANSWERED_IT, Action.HELPFUL, Action.NOT_HELPFUL}


@pytest.mark.parametrize("kind", ["not_in_corpus", "model_self_refusal", "unsupported_claim"])
def test_a_refusal_without_closest_passages_shows_none_and_no_buttons(kind: str) -> None:
    message = blocks.refusal_message(refused(kind), question="q")
    assert buttons(message) == []
    assert "Refund Policy" not in all_text(message)


def test_at_most_three_closest_passages_are_shown_within_slacks_limits_however_long_they_are() -> None:
    long = Passage(chunk_id="c" * 3000, doc_id="d", title="T" * 4000, heading=" > ".join(["H" * 900] * 5),
                   text="<&> " * 5000, owner="#" + "o" * 500, url="https://wiki.example/" + "&" * 3000)
    many = tuple(long for _ in range(6))
    message = blocks.refusal_message(refused(nearest=many, correlation_id="x" * 64), question="q" * 5000)
    rendered = dicts(message)  # to_dict() runs slack_sdk's validators
    assert sum(1 for b in rendered if str(b.get("block_id", "")).startswith("closest_")) == blocks.CLOSEST_SHOWN
    assert all(len(b["text"]["text"]) <= blocks.SECTION_LIMIT for b in rendered if b["type"] == "section")
    assert all(len(b["value"]) <= blocks.BUTTON_VALUE_LIMIT for b in buttons(message))
    assert len(message.text) <= blocks.TEXT_FALLBACK_LIMIT


def test_a_closest_passage_shows_a_short_excerpt_cut_at_a_word() -> None:
    passage = Passage(chunk_id="p", doc_id="d", title="Travel", heading="Travel", text="word " * 200)
    message = blocks.refusal_message(refused(nearest=(passage,)), question="q")
    excerpt = dicts(message)[2]["text"]["text"].splitlines()[1]
    assert excerpt.endswith("word…") and len(excerpt) <= blocks.EXCERPT_LIMIT


@pytest.mark.parametrize("value", ["", "not json", "[]", '{"d": "x"}', '{"c": "y"}', '{"d": 1, "c": "y"}',
                                   '{"d": "x", "c": "\\u0000"}'])
def test_a_this_answered_it_value_that_is_not_ours_is_not_read(value: str) -> None:
    assert blocks.parse_answered_it(value) is None


@pytest.mark.parametrize(("owner", "shown"), [("C0PAYROLL", "<#C0PAYROLL>"), ("#C0PAYROLL", "<#C0PAYROLL>"),
                                              ("#payroll-help", "#payroll-help"), ("payroll", "#payroll"),
                                              ("#r&d", "#r&amp;d")])
def test_an_owner_id_becomes_a_channel_link_and_a_name_stays_text(owner: str, shown: str) -> None:
    assert blocks.owner_link(owner) == shown


def test_not_permitted_renders_byte_for_byte_like_not_in_corpus() -> None:
    hidden = refused("not_permitted", shown_as="not_in_corpus", correlation_id="first")
    absent = refused("not_in_corpus", correlation_id="second")
    as_hidden = blocks.render(hidden, question="salary band for a staff engineer?", in_channel=True)
    as_absent = blocks.render(absent, question="salary band for a staff engineer?", in_channel=True)
    assert json.dumps(dicts(as_hidden)) == json.dumps(dicts(as_absent))
    assert as_hidden.text == as_absent.text


def test_a_channel_refusal_says_that_channel_replies_use_only_what_everyone_there_may_see() -> None:
    assert blocks.CHANNEL_HINT in all_text(blocks.refusal_message(refused(), question="q", in_channel=True))
    assert blocks.CHANNEL_HINT not in all_text(blocks.refusal_message(refused(), question="q"))


def test_an_invalid_question_gets_only_its_sentence() -> None:
    message = blocks.refusal_message(refused("invalid_query", owner=None), question="")
    assert [b["text"]["text"] for b in dicts(message)] == [refusals.INVALID_QUERY_EMPTY]


def test_a_clarifying_question_has_the_fixed_sentence_and_one_button_per_reading() -> None:
    options = (ClarifyOption(label="Travel: Meals", refine="limit (Travel, Meals)?"),
               ClarifyOption(label="Cards: Limits", refine="limit (Cards, Limits)?"))
    message = blocks.clarify_message(Clarify(text=refusals.AMBIGUOUS, options=options, risk=LOW,
                                             correlation_id="c"), clarification_id="p1")
    assert dicts(message)[0]["text"]["text"] == refusals.AMBIGUOUS
    found = buttons(message)
    assert [b["text"]["text"] for b in found] == ["Travel: Meals", "Cards: Limits"]
    assert all(CLARIFY_ACTION.match(b["action_id"]) for b in found)
    assert len({b["action_id"] for b in found}) == 2
    choice = blocks.parse_clarify_value(found[1]["value"])
    assert choice == blocks.ClarifyChoice(clarification_id="p1", index=1, question="limit (Cards, Limits)?")


def test_a_clarify_value_too_long_for_a_button_carries_only_the_pending_record() -> None:
    value = blocks.clarify_value("p1", 0, "x" * 3000)
    assert len(value) <= blocks.BUTTON_VALUE_LIMIT
    assert blocks.parse_clarify_value(value) == blocks.ClarifyChoice(clarification_id="p1", index=0,
                                                                     question=None)


@pytest.mark.parametrize("value", ["", "not json", "[1]", '{"id": 3, "i": 0}', '{"id": "p", "i": "0"}'])
def test_a_button_value_that_is_not_ours_is_rejected(value: str) -> None:
    assert blocks.parse_clarify_value(value) is None
    assert blocks.passage_chunk_id(value) is None


def test_thanks_replaces_only_the_feedback_block() -> None:
    original = dicts(blocks.answer_message(answered()))
    updated = blocks.replace_block(original, blocks.FEEDBACK_BLOCK, blocks.THANKS)
    assert len(updated) == len(original)
    assert updated[-1]["type"] == "context" and updated[-1]["elements"][0]["text"] == blocks.THANKS
    assert updated[:-1] == original[:-1]


def test_a_passage_is_shown_escaped_with_its_heading_and_details() -> None:
    message = blocks.passage_message(Passage(chunk_id="x", doc_id="x", title="A&B", heading="A&B > Part",
                                             text="Say <hi> & bye", owner="C0OWNER"))
    rendered = dicts(message)
    assert rendered[0]["text"]["text"] == "*A&amp;B* \u203a Part"
    assert rendered[1]["text"]["text"] == "Say &lt;hi&gt; &amp; bye"
    assert rendered[2]["elements"][0]["text"] == "Owner <#C0OWNER>"



PARKING = "Book a bay with the parking form before you drive in."
PARKING_LINK = Link(start=PARKING.index("the parking form"), end=PARKING.index(" before"),
                    target="https://forms.example/parking?x=1&y=2")


def test_a_link_in_a_passage_shows_where_it_goes_beside_the_documents_words() -> None:
    message = blocks.passage_message(Passage(chunk_id="p#1", doc_id="p", title="Parking", heading="Parking",
                                             text=PARKING, links=(PARKING_LINK,)))
    text = all_text(message)
    assert "the parking form (<https://forms.example/parking?x=1&amp;y=2>) before" in text
    assert "|the parking form>" not in text


def test_an_answer_repeating_a_links_words_shows_the_address_too() -> None:
    passage = replace(REFUNDS, text=PARKING, links=(PARKING_LINK,))
    message = blocks.answer_message(answered("Book a bay with the parking form. [1]", passage=passage))
    text = all_text(message)
    assert "the parking form (<https://forms.example/parking?x=1&amp;y=2>)" in text
    assert not re.search(r"<https://forms[^>]*\|", text)


def test_a_link_whose_words_are_its_address_is_shown_once() -> None:
    text = "See https://forms.example/parking today."
    start = text.index("https")
    link = Link(start=start, end=start + len("https://forms.example/parking"), target="https://forms.example/parking")
    shown = all_text(blocks.passage_message(Passage(chunk_id="p#1", doc_id="p", title="P", heading="P", text=text,
                                                    links=(link,))))
    assert "See <https://forms.example/parking> today." in shown

# -- follow-ups ------------------------------------------------------------------------------------------

def test_a_follow_up_answer_starts_with_its_reading_in_one_escaped_line() -> None:
    reading = "How long do customers have <to> return items *now*,\n for refunds & credits?"
    message = blocks.answer_message(replace(answered(), reading=reading))
    first = dicts(message)[0]
    assert first["type"] == "context"
    [line] = first["elements"]
    assert line["text"] == ("Reading this as: *How long do customers have &lt;to&gt; return items now, for refunds "
                            "&amp; credits?*")
    assert "Customers have 30 days." in all_text(message)


def test_an_answer_read_alone_shows_no_reading() -> None:
    assert "Reading this as" not in json.dumps(dicts(blocks.answer_message(answered())))


def test_a_follow_up_refusal_shows_its_reading_where_it_would_echo_the_question() -> None:
    message = blocks.refusal_message(replace(refused(), reading="How long is leave for grandparents?"),
                                     question="what about grandparents?")
    shown = all_text(message)
    assert "Reading this as: *How long is leave for grandparents?*" in shown and "You asked" not in shown
