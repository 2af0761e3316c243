"""Slack's AI-app surfaces over real HTTP: assistant threads, DMs, streamed answers, the Home tab, the message
shortcut. Signed requests to the served app; the fake Slack Web API on loopback records every call."""

import json
import textwrap
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot import blocks, views
from bot.surface import Shortcut, View
from core.application import refusals
from core.config import Settings, SourcedConfig
from core.connectors.port import Access
from core.eval.scripted_server import ScriptedServer
from tests.connectors.memory_source import MemoryPage, MemorySource
from tests.e2e.conftest import CONFIG, Deployment
from tests.e2e.fake_slack import (
    TEAM,
    FakeSlack,
    context_changed_payload,
    dm_payload,
    home_opened_payload,
    send_event,
    send_interaction,
    thread_started_payload,
)
from tests.mrkdwn import mrkdwn_texts

REFUND_QUESTION = "How many days do customers have to return items for a refund?"
SALARY_QUESTION = "What is the base salary band for a Senior Engineer?"
THREAD = "1700000200.000100"
REORG = """\
    ---
    id: reorg-plan
    title: Reorganisation Plan
    owner: "#people-ops"
    audience: [hr]
    updated: 2026-09-01
    ---
    # Reorganisation Plan
    ## Teams
    The support and success teams merge into one customer team in October.
    """
GROUNDED = json.dumps({
    "found": True, "answer": "Customers may return items within 30 days of delivery for a full refund.",
    "claims": [{"text": "Customers may return items within 30 days of delivery for a full refund.",
                "chunk_ids": ["refund-policy#return-window"],
                "quote": "Customers may return items within 30 days of delivery for a full refund."}],
    "confidence": "high", "refusal_reason": None})
NOT_FOUND = json.dumps({"found": False, "answer": "", "claims": [], "confidence": "low",
                        "refusal_reason": "The documents do not say."})


def texts(body: dict[str, Any]) -> str:
    return mrkdwn_texts(body.get("blocks", []))


def methods(slack: FakeSlack) -> list[str]:
    return [call.method for call in slack.calls]


def event(bot: Deployment, payload: dict[str, Any], *, retry: int | None = None) -> None:
    reply = send_event(bot.url, payload, retry=retry)
    assert reply.status == 200
    assert reply.seconds < 3  # Slack's acknowledgement budget


def start_thread(bot: Deployment, slack: FakeSlack, *, user: str, context_channel: str | None = None) -> None:
    event(bot, thread_started_payload(user=user, thread_ts=THREAD, context_channel=context_channel))
    bot.settle()


def ask_in_thread(bot: Deployment, slack: FakeSlack, text: str, *, user: str, ts: str) -> dict[str, Any]:
    """A message in the assistant thread; the reply the bot posted after it."""
    before = len(slack.sent("chat.postMessage"))
    event(bot, dm_payload(text, user=user, ts=ts, thread_ts=THREAD))
    bot.settle()
    return slack.wait_for("chat.postMessage", count=before + 1)[before]


def prompt_titles(slack: FakeSlack) -> list[str]:
    [call] = slack.wait_for("assistant.threads.setSuggestedPrompts")
    return [prompt["title"] for prompt in call["prompts"]]


def add_restricted_document(bot: Deployment, tmp_path: Path, name: str = "main") -> None:
    (tmp_path / f"kb-{name}" / "reorg.md").write_text(textwrap.dedent(REORG), encoding="utf-8")
    assert bot.sourced.ingestor.ingest(tmp_path / f"kb-{name}").added == ("reorg-plan",)


def delete_restricted_document(bot: Deployment, tmp_path: Path, name: str = "main") -> None:
    (tmp_path / f"kb-{name}" / "reorg.md").unlink()
    assert bot.sourced.ingestor.ingest(tmp_path / f"kb-{name}").removed == ("reorg-plan",)


# -- assistant threads ------------------------------------------------------------------------------------

def test_a_new_assistant_thread_is_greeted_with_prompts_from_the_newest_documents_the_asker_may_see(
        northwind: Deployment, slack: FakeSlack) -> None:
    start_thread(northwind, slack, user="UBOB")
    [greeting] = slack.wait_for("chat.postMessage")
    assert greeting["channel"] == "D0DIRECT" and greeting["thread_ts"] == THREAD
    assert "company documents you may see" in greeting["text"]
    assert prompt_titles(slack) == ["Refund Policy", "Travel Expenses", "Visitor Wi-Fi"]


def test_a_restricted_document_is_in_no_prompt_of_someone_who_may_not_see_it(
        tmp_path: Path, northwind: Deployment, slack: FakeSlack) -> None:
    start_thread(northwind, slack, user="UBOB")
    without = prompt_titles(slack)
    add_restricted_document(northwind, tmp_path)
    slack.calls.clear()
    start_thread(northwind, slack, user="UBOB")
    assert prompt_titles(slack) == without
    slack.calls.clear()
    start_thread(northwind, slack, user="UALICE")  # in the hr group: the newest document she may see
    assert prompt_titles(slack)[0] == "Reorganisation Plan"
    delete_restricted_document(northwind, tmp_path)
    slack.calls.clear()
    start_thread(northwind, slack, user="UALICE")
    assert "Reorganisation Plan" not in prompt_titles(slack)


def test_a_message_in_an_assistant_thread_sets_status_and_title_before_the_cited_reply(
        northwind: Deployment, slack: FakeSlack) -> None:
    start_thread(northwind, slack, user="UBOB")
    reply = ask_in_thread(northwind, slack, REFUND_QUESTION, user="UBOB", ts="1700000201.000100")
    assert reply["thread_ts"] == THREAD
    assert "30 days" in texts(reply) and "[1]" in texts(reply) and "*Refund Policy*" in texts(reply)
    [status] = slack.sent("assistant.threads.setStatus")
    assert status["status"] == views.READING_STATUS
    [title] = slack.sent("assistant.threads.setTitle")
    assert title["title"] == "How many days do customers have to return…"
    order = methods(slack)
    assert order.index("assistant.threads.setStatus") < len(order) - 1 - order[::-1].index("chat.postMessage")


def test_the_thread_context_narrows_the_answer_to_the_channel_in_view_and_never_widens_it(
        northwind: Deployment, slack: FakeSlack) -> None:
    start_thread(northwind, slack, user="UALICE", context_channel="CPUBLIC")
    narrowed = ask_in_thread(northwind, slack, SALARY_QUESTION, user="UALICE", ts="1700000202.000100")
    assert refusals.NOT_IN_CORPUS in texts(narrowed) and "150,000" not in json.dumps(narrowed)

    event(northwind, context_changed_payload(user="UALICE", context_channel="CHR", thread_ts=THREAD))
    northwind.settle()
    answered = ask_in_thread(northwind, slack, SALARY_QUESTION, user="UALICE", ts="1700000203.000100")
    assert "150,000" in texts(answered)

    slack.calls.clear()
    start_thread(northwind, slack, user="UBOB", context_channel="CHR")  # hr's channel: Bob is not in hr
    widened = ask_in_thread(northwind, slack, SALARY_QUESTION, user="UBOB", ts="1700000204.000100")
    assert "150,000" not in json.dumps(widened)


# -- direct messages ------------------------------------------------------------------------------------

def test_a_direct_message_is_answered_from_everything_the_asker_may_see(
        northwind: Deployment, slack: FakeSlack) -> None:
    event(northwind, dm_payload(SALARY_QUESTION, user="UALICE", ts="1700000101.000100"))
    northwind.settle()
    [reply] = slack.wait_for("chat.postMessage")
    assert reply["channel"] == "D0DIRECT" and reply["thread_ts"] == "1700000101.000100"
    assert "150,000" in texts(reply) and "*Salary Bands*" in texts(reply)


def test_a_restricted_document_is_as_absent_from_a_dm_answer_as_one_deleted(
        tmp_path: Path, northwind: Deployment, slack: FakeSlack) -> None:
    question = "When do the support and success teams merge?"
    add_restricted_document(northwind, tmp_path)
    event(northwind, dm_payload(question, user="UBOB", ts="1700000102.000100"))
    northwind.settle()
    present = slack.wait_for("chat.postMessage")[0]
    event(northwind, dm_payload(question, user="UALICE", ts="1700000102.000200"))  # hr: she may see it
    northwind.settle()
    assert "October" in texts(slack.wait_for("chat.postMessage", count=2)[1])
    delete_restricted_document(northwind, tmp_path)
    event(northwind, dm_payload(question, user="UBOB", ts="1700000102.000100"))
    northwind.settle()
    deleted = slack.wait_for("chat.postMessage", count=3)[2]
    assert present["blocks"] == deleted["blocks"] and "October" not in json.dumps(present)


def test_a_retried_direct_message_is_answered_once(northwind: Deployment, slack: FakeSlack) -> None:
    payload = dm_payload(REFUND_QUESTION, user="UBOB", ts="1700000103.000100", event_id="EvDMRETRY")
    event(northwind, payload)
    for attempt in (1, 2):
        event(northwind, payload, retry=attempt)
    northwind.settle()
    assert len(slack.wait_for("chat.postMessage")) == 1


@pytest.mark.parametrize("fields", [
    {"bot_id": "B0OTHER"},
    {"subtype": "message_changed"},
    {"subtype": "bot_message"},
    {"user": "UBOT"},
], ids=["another bot", "an edit", "a bot message", "the bot itself"])
def test_edits_bot_messages_and_the_bots_own_get_no_answer(northwind: Deployment, slack: FakeSlack,
                                                          fields: dict[str, Any]) -> None:
    payload = dm_payload(REFUND_QUESTION, user="UBOB", ts="1700000104.000100")
    payload["event"].update(fields)
    event(northwind, payload)
    northwind.settle()
    assert slack.sent("chat.postMessage") == []


# -- streaming with a generative model ------------------------------------------------------------------

@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    """A model that grounds the refund question and finds nothing for anything else."""
    with ScriptedServer(lambda messages: GROUNDED if "return items" in json.dumps(messages) else NOT_FOUND) as server:
        yield server


@pytest.fixture
def generative(deploy: Any, scripted: ScriptedServer) -> Deployment:
    deployment: Deployment = deploy(settings=Settings(model="openai", model_base_url=scripted.base_url,
                                                      model_name="scripted", embedder="none"))
    return deployment


def test_a_generative_answer_streams_start_append_stop_with_the_citations_in_the_final_blocks(
        generative: Deployment, slack: FakeSlack) -> None:
    event(generative, dm_payload(REFUND_QUESTION, user="UBOB", ts="1700000105.000100"))
    generative.settle()
    streamed = [m for m in methods(slack) if m.startswith("chat.") and m.endswith("Stream")]
    assert streamed[0] == "chat.startStream" and streamed[-1] == "chat.stopStream"
    assert "chat.appendStream" in streamed[1:-1]
    [start] = slack.sent("chat.startStream")
    assert start["recipient_user_id"] == "UBOB" and start["thread_ts"] == "1700000105.000100"
    prose = "".join(chunk["text"] for call in [start, *slack.sent("chat.appendStream")] for chunk in call["chunks"])
    assert prose == "Customers may return items within 30 days of delivery for a full refund. \\[1\\]"  # Markdown
    [stop] = slack.sent("chat.stopStream")
    assert "*Refund Policy*" in texts(stop) and "*Sources*" in texts(stop)
    assert slack.sent("chat.postMessage") == [] and slack.sent("chat.update") == []


def test_a_generative_refusal_is_never_streamed_but_posted_once(generative: Deployment, slack: FakeSlack) -> None:
    event(generative, dm_payload("What is the daily meal limit when travelling?", user="UBOB",
                                 ts="1700000106.000100"))
    generative.settle()
    [refusal] = slack.wait_for("chat.postMessage")
    assert refusals.NOT_CONFIRMED in texts(refusal)  # the model declined: refused as retrieval's own kind
    assert not [m for m in methods(slack) if m.endswith("Stream")]


def test_a_stream_that_fails_after_it_started_is_replaced_and_the_audit_says_so(
        generative: Deployment, slack: FakeSlack) -> None:
    slack.refuse("chat.stopStream", "invalid_blocks")
    event(generative, dm_payload(REFUND_QUESTION, user="UBOB", ts="1700000107.000100"))
    generative.settle()
    [start] = slack.sent("chat.startStream")
    [replaced] = slack.wait_for("chat.update")
    stream_ts = next(m["ts"] for m in slack.messages if m["thread_ts"] == start["thread_ts"])
    assert replaced["ts"] == stream_ts and replaced["text"] == blocks.UNAVAILABLE
    [record] = generative.sourced.audit_log.list(limit=1)
    assert record.kind == "answered" and "streamed answer replaced: invalid_blocks" in (record.detail or "")


def test_where_slack_will_not_stream_the_answer_is_posted_once(generative: Deployment, slack: FakeSlack) -> None:
    slack.refuse("chat.startStream", "not_allowed")
    event(generative, dm_payload(REFUND_QUESTION, user="UBOB", ts="1700000108.000100"))
    generative.settle()
    [posted] = slack.wait_for("chat.postMessage")
    assert "30 days" in texts(posted) and "*Refund Policy*" in texts(posted)
    assert slack.sent("chat.appendStream") == [] and slack.sent("chat.update") == []


def test_the_extractive_default_posts_one_message_and_never_streams(northwind: Deployment,
                                                                    slack: FakeSlack) -> None:
    event(northwind, dm_payload(REFUND_QUESTION, user="UBOB", ts="1700000109.000100"))
    northwind.settle()
    assert len(slack.wait_for("chat.postMessage")) == 1
    assert not [m for m in methods(slack) if m.endswith("Stream")]


# -- the Home tab ---------------------------------------------------------------------------------------

def open_home(bot: Deployment, slack: FakeSlack, user: str) -> dict[str, Any]:
    before = len(slack.sent("views.publish"))
    event(bot, home_opened_payload(user=user))
    bot.settle()
    call = slack.wait_for("views.publish", count=before + 1)[before]
    assert call["user_id"] == user
    view: dict[str, Any] = call["view"]
    return view


def test_the_home_tab_shows_what_the_person_may_ask_about_and_the_operator_view_only_to_operators(
        northwind: Deployment, slack: FakeSlack) -> None:
    northwind.sourced.feedback.record("c-1", "UBOB", "not_helpful")
    everyone = open_home(northwind, slack, "UBOB")
    assert everyone["type"] == "home"
    assert "*3 documents you may see*" in mrkdwn_texts(everyone["blocks"])
    assert not [block for block in everyone["blocks"] if block.get("block_id") == "operators"]
    operator = open_home(northwind, slack, "ULARA")
    [section] = [block for block in operator["blocks"] if block.get("block_id") == "operators"]
    assert "Feedback: 0 helpful, 1 not helpful" in section["text"]["text"]


def test_home_counts_are_the_same_whether_a_restricted_document_exists_or_not(
        tmp_path: Path, northwind: Deployment, slack: FakeSlack) -> None:
    add_restricted_document(northwind, tmp_path)
    present = open_home(northwind, slack, "UBOB")
    delete_restricted_document(northwind, tmp_path)
    deleted = open_home(northwind, slack, "UBOB")
    knowledge = [next(block for block in view["blocks"] if block.get("block_id") == "knowledge")["text"]["text"]
                 for view in (present, deleted)]
    assert knowledge[0].split("\nLast ingest")[0] == knowledge[1].split("\nLast ingest")[0]
    assert "#people-ops" not in knowledge[0]


def test_an_operators_home_counts_only_the_connector_documents_the_operator_may_see(
        deploy: Any, slack: FakeSlack) -> None:
    wiki = {"name": "wiki", "kind": "confluence", "url": "https://example.atlassian.net/wiki", "spaces": ["ENG"],
            "user": "sourced-bot@example.com"}
    bot: Deployment = deploy(config=CONFIG.model_copy(update={
        "connectors": SourcedConfig.model_validate({"connectors": [wiki]}).connectors}))
    source = MemorySource(name="wiki", pages={
        "parking": MemoryPage(title="Parking", text="# Parking\n\nThe garage has 12 spaces.\n",
                              access=Access(anyone=True)),
        "salaries": MemoryPage(title="Salaries", text="# Salaries\n\nBands are reviewed in May.\n",
                               access=Access(users=frozenset({"alice@example.com"})))})
    assert bot.sourced.syncer.sync(source).ok
    operator = open_home(bot, slack, "ULARA")  # an operator whom the source shares only the parking page with
    [sources] = [block for block in operator["blocks"] if block.get("block_id") == "sources"]
    assert "`wiki`: 1 document," in sources["text"]["text"]


# -- the message shortcut -------------------------------------------------------------------------------

def test_the_shortcut_opens_a_prefilled_modal_and_answers_privately_in_the_channel(
        northwind: Deployment, slack: FakeSlack) -> None:
    shortcut = {"type": "message_action", "callback_id": Shortcut.ASK_ABOUT_MESSAGE, "trigger_id": "trig-1",
                "user": {"id": "UALICE", "team_id": TEAM}, "team": {"id": TEAM}, "channel": {"id": "CPUBLIC"},
                "message": {"type": "message", "user": "UBOB", "ts": "1700000400.000100", "text": SALARY_QUESTION},
                "response_url": slack.response_url("shortcut")}
    reply = send_interaction(northwind.url, shortcut)
    assert reply.status == 200 and reply.seconds < 3
    northwind.settle()
    [opened] = slack.wait_for("views.open")
    assert opened["trigger_id"] == "trig-1"
    view = opened["view"]
    assert view["blocks"][0]["element"]["initial_value"] == SALARY_QUESTION
    submitted = {"type": "view_submission", "user": {"id": "UALICE", "team_id": TEAM}, "team": {"id": TEAM},
                 "view": {**view, "type": "modal", "callback_id": View.ASK, "state": {"values": {
                     views.QUESTION_BLOCK: {views.QUESTION_INPUT: {"type": "plain_text_input",
                                                                   "value": SALARY_QUESTION}}}}}}
    assert send_interaction(northwind.url, submitted).status == 200
    northwind.settle()
    [answer] = slack.wait_for("chat.postEphemeral")
    assert answer["channel"] == "CPUBLIC" and answer["user"] == "UALICE"
    assert "150,000" in texts(answer)  # privately: from what Alice may see
    assert slack.sent("chat.postMessage") == []


def test_a_direct_message_whose_worker_died_is_answered_by_the_sweep_once(deploy: Any, slack: FakeSlack) -> None:
    bot: Deployment = deploy(slack_settings={"event_lease_s": 0.5})
    payload = {"kind": "conversation", "user_id": "UBOB", "team_id": TEAM, "enterprise_id": None,
               "channel_id": "D0DIRECT", "thread_ts": "1700000110.000100", "text": REFUND_QUESTION, "context": None}
    assert bot.sourced.processed_events.claim("EvDEADWORKER", holder="a-dead-worker", lease=timedelta(seconds=0.1),
                                              payload=payload)
    [reply] = slack.wait_for("chat.postMessage", timeout_s=15)
    assert reply["thread_ts"] == "1700000110.000100" and "30 days" in texts(reply)
    bot.settle()
    assert len(slack.sent("chat.postMessage")) == 1
