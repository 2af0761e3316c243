"""Follow-up questions over real HTTP: signed Slack requests to the served app, the fake Slack Web API on loopback.

An assistant thread, a DM, a mention inside a thread somebody else started, and a clarification followed by a
follow-up: each follow-up is answered from what it means in its conversation, and the reply shows that reading.
"""

import json
from typing import Any

import pytest
from sqlalchemy import select

from bot import blocks
from bot.surface import Action
from core.application import refusals
from core.storage.tables import ConversationTurnRow
from tests.e2e.conftest import Deployment
from tests.e2e.fake_slack import (
    FakeSlack,
    dm_payload,
    mention_payload,
    send_click,
    send_event,
    thread_started_payload,
)
from tests.mrkdwn import mrkdwn_texts

THREAD = "1700000200.000100"
LEAVE = {"parental.md": """\
    ---
    id: parental-leave
    title: Parental Leave
    owner: "#people-ops"
    audience: [everyone]
    updated: 2026-04-01
    ---
    # Parental Leave
    ## Birth parents
    A birth parent receives 18 weeks of paid parental leave. The leave must be taken within 12 months of the birth.
    ## Adoptive parents
    Adoptive parents receive 14 weeks of paid parental leave. The leave must be taken within 6 months of the
    placement.
    """}
CARDS = {
    "corporate-card.md": """\
        ---
        id: corporate-card
        title: Corporate Card
        owner: "#finance-ops"
        audience: [everyone]
        updated: 2026-04-02
        ---
        # Corporate Card
        ## Approval
        Your manager approves every corporate card request in the finance portal.
        ## Spending limit
        The corporate card limit is 4,000 dollars per month.
        """,
    "fuel-card.md": """\
        ---
        id: fuel-card
        title: Fuel Card
        owner: "#fleet"
        audience: [everyone]
        updated: 2026-04-03
        ---
        # Fuel Card
        ## Approval
        The fleet coordinator approves every fuel card request.
        ## Spending limit
        The fuel card limit is 300 dollars per month.
        """,
}


@pytest.fixture
def bot(deploy: Any) -> Deployment:
    deployment: Deployment = deploy(extra={**LEAVE, **CARDS})
    return deployment


def texts(body: dict[str, Any]) -> str:
    return mrkdwn_texts(body.get("blocks", []))


def reading_of(body: dict[str, Any]) -> str | None:
    """The "Reading this as" line of a reply, if it has one."""
    for block in body.get("blocks", []):
        for element in block.get("elements", []) if block.get("type") == "context" else []:
            if str(element.get("text", "")).startswith("Reading this as: "):
                return str(element["text"])
    return None


def send(bot: Deployment, slack: FakeSlack, payload: dict[str, Any]) -> dict[str, Any]:
    """One signed event; the message the bot posted after it."""
    before = len(slack.sent("chat.postMessage"))
    assert send_event(bot.url, payload).status == 200
    bot.settle()
    return slack.wait_for("chat.postMessage", count=before + 1)[before]


def test_an_assistant_thread_follow_up_is_answered_as_what_it_means_and_shows_its_reading(
        bot: Deployment, slack: FakeSlack) -> None:
    assert send_event(bot.url, thread_started_payload(user="UBOB", thread_ts=THREAD)).status == 200
    bot.settle()
    first = send(bot, slack, dm_payload("How many weeks of paid leave does a birth parent get?", user="UBOB",
                                        ts="1700000201.000100", thread_ts=THREAD))
    assert "18 weeks" in texts(first) and reading_of(first) is None

    followup = send(bot, slack, dm_payload("and if we adopt?", user="UBOB", ts="1700000202.000100",
                                           thread_ts=THREAD))
    assert followup["thread_ts"] == THREAD
    assert "14 weeks" in texts(followup) and "18 weeks" not in texts(followup)
    assert "*Parental Leave*" in texts(followup)
    reading = reading_of(followup)
    assert reading is not None and "adopt" in reading and "paid leave" in reading


def test_a_direct_message_follow_up_reads_the_turn_before_it_at_the_top_level_and_in_its_thread(
        bot: Deployment, slack: FakeSlack) -> None:
    first = send(bot, slack, dm_payload("How many weeks of paid leave do adoptive parents get?", user="UBOB",
                                        ts="1700000301.000100"))
    assert "14 weeks" in texts(first)

    top_level = send(bot, slack, dm_payload("what about birth parents?", user="UBOB", ts="1700000302.000100"))
    assert "18 weeks" in texts(top_level) and reading_of(top_level) is not None

    in_its_thread = send(bot, slack, dm_payload("and if we adopt?", user="UBOB", ts="1700000303.000100",
                                                thread_ts="1700000301.000100"))
    assert in_its_thread["thread_ts"] == "1700000301.000100"
    assert "14 weeks" in texts(in_its_thread) and reading_of(in_its_thread) is not None


def test_a_mention_inside_a_thread_takes_the_threads_question_with_its_words_as_a_refinement(
        bot: Deployment, slack: FakeSlack) -> None:
    parent = "1700000401.000100"
    slack.say("How many weeks of paid leave do adoptive parents get?", user="UBOB", channel="CPUBLIC", ts=parent)
    slack.say("I think it's 12", user="UALICE", channel="CPUBLIC", ts="1700000402.000100", thread_ts=parent)

    reply = send(bot, slack, mention_payload("is that right?", user="UALICE", channel="CPUBLIC",
                                             ts="1700000403.000100", thread_ts=parent))
    assert reply["channel"] == "CPUBLIC" and reply["thread_ts"] == parent
    assert "14 weeks" in texts(reply)
    reading = reading_of(reply)
    assert reading is not None and "adoptive parents" in reading
    [read] = slack.sent("conversations.replies")
    assert read["channel"] == "CPUBLIC" and read["ts"] == parent


def test_a_bare_mention_inside_a_thread_answers_the_threads_question(bot: Deployment, slack: FakeSlack) -> None:
    parent = "1700000501.000100"
    slack.say("How many weeks of paid leave does a birth parent get?", user="UBOB", channel="CPUBLIC", ts=parent)
    reply = send(bot, slack, mention_payload("", user="UALICE", channel="CPUBLIC", ts="1700000502.000100",
                                             thread_ts=parent))
    assert "18 weeks" in texts(reply) and reading_of(reply) is not None


def test_a_mention_in_a_thread_it_cannot_read_is_answered_from_its_own_words(
        bot: Deployment, slack: FakeSlack) -> None:
    slack.refuse("conversations.replies", "missing_scope")
    reply = send(bot, slack, mention_payload("How many weeks of paid leave does a birth parent get?",
                                             user="UALICE", channel="CPUBLIC", ts="1700000602.000100",
                                             thread_ts="1700000601.000100"))
    assert "18 weeks" in texts(reply) and reading_of(reply) is None


def test_a_clarification_choice_becomes_a_turn_that_the_next_follow_up_reads(
        bot: Deployment, slack: FakeSlack) -> None:
    assert send_event(bot.url, thread_started_payload(user="UBOB", thread_ts=THREAD)).status == 200
    bot.settle()
    clarifying = send(bot, slack, dm_payload("who approves it?", user="UBOB", ts="1700000701.000100",
                                             thread_ts=THREAD))
    assert refusals.AMBIGUOUS in texts(clarifying)
    [choices] = [block for block in clarifying["blocks"] if block["type"] == "actions"]
    corporate = next(b for b in choices["elements"] if "Corporate" in b["text"]["text"])
    clarify_ts = next(m["ts"] for m in reversed(slack.messages) if m.get("bot_id") and m["text"] == clarifying["text"])

    assert send_click(bot.url, user="UBOB", action_id=corporate["action_id"], value=corporate["value"],
                      channel="D0DIRECT", response_url=slack.response_url("clarify"), message_ts=clarify_ts,
                      message={"blocks": clarifying["blocks"]}).status == 200
    bot.settle()
    chosen = slack.wait_for("chat.update")[0]
    assert "Your manager approves" in texts(chosen)

    followup = send(bot, slack, dm_payload("and what's the limit for that?", user="UBOB", ts="1700000703.000100",
                                           thread_ts=THREAD))
    assert "4,000 dollars" in texts(followup) and "300 dollars" not in texts(followup)
    reading = reading_of(followup)
    assert reading is not None and "Corporate Card" in reading


def test_a_follow_up_in_a_new_thread_is_read_alone_and_no_question_outlives_its_turn(
        bot: Deployment, slack: FakeSlack) -> None:
    send(bot, slack, mention_payload("How many weeks of paid leave does a birth parent get?", user="UALICE",
                                     channel="CPUBLIC", ts="1700000801.000100"))
    elsewhere = send(bot, slack, mention_payload("and if we adopt?", user="UALICE", channel="CPUBLIC",
                                                 ts="1700000802.000100"))
    assert reading_of(elsewhere) is None  # a new top-level mention starts a conversation of its own
    with bot.sourced.engine.connect() as connection:
        kept = connection.execute(select(ConversationTurnRow.thread_ts, ConversationTurnRow.expires_at)).all()
    assert {thread for thread, _ in kept} == {"1700000801.000100", "1700000802.000100"}
    assert bot.sourced.turns.purge_expired(max(expires for _, expires in kept)) == len(kept)


def test_the_audit_keeps_the_message_and_its_reading_as_hashes_and_previews(bot: Deployment,
                                                                             slack: FakeSlack) -> None:
    send(bot, slack, dm_payload("How many weeks of paid leave does a birth parent get?", user="UBOB",
                                ts="1700000901.000100"))
    followup = send(bot, slack, dm_payload("and if we adopt?", user="UBOB", ts="1700000902.000100"))
    feedback = next(block for block in followup["blocks"] if block.get("block_id") == blocks.FEEDBACK_BLOCK)
    correlation_id = next(e["value"] for e in feedback["elements"] if e["action_id"] == Action.HELPFUL)
    record = bot.sourced.audit_log.get(correlation_id)
    assert record is not None and record.reading is not None and record.reading.followup
    assert record.reading.by == "followup-offline-v1"
    assert record.reading.sha256 is not None and len(record.reading.sha256) == 64
    assert record.reading.preview is not None and record.reading.preview.endswith("…")
    assert "and if we adopt?" not in json.dumps([record.question_preview, record.reading.preview])
