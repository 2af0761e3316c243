"""Scenarios over real HTTP: signed Slack requests to the served app, a fake Slack Web API on loopback."""

import json
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest
from sqlalchemy import text

from bot import blocks
from bot.surface import Action
from core.application import refusals
from tests.e2e.conftest import Deployment
from tests.e2e.fake_slack import FakeSlack, mention_payload, post, send_click, send_command, send_event, sign
from tests.mrkdwn import mrkdwn_texts

SALARY_QUESTION = "What is the base salary band for a Senior Engineer?"
REFUND_QUESTION = "How many days do customers have to return items for a refund?"


def texts(body: dict[str, Any]) -> str:
    """Every mrkdwn text of a recorded message, joined: what a person would read."""
    return mrkdwn_texts(body.get("blocks", []))


def button(body: dict[str, Any], action_id: str) -> dict[str, Any]:
    for block in body["blocks"]:
        for element in [*block.get("elements", []), block.get("accessory") or {}]:
            if str(element.get("action_id", "")).startswith(action_id):
                return dict(element)
    raise AssertionError(f"no {action_id} button in {body['blocks']}")


def mention(bot: Deployment, slack: FakeSlack, text: str, *, user: str = "UALICE", channel: str = "CPUBLIC",
            **extra: Any) -> dict[str, Any]:
    """Send a signed mention and return the one message the bot posted in reply."""
    reply = send_event(bot.url, mention_payload(text, user=user, channel=channel, **extra))
    assert reply.status == 200
    bot.settle()
    posted = slack.wait_for("chat.postMessage")
    assert len(posted) == 1
    return posted[0]


def ask(bot: Deployment, slack: FakeSlack, text: str, *, user: str = "UALICE", channel: str = "CPUBLIC",
        name: str = "ask-1") -> dict[str, Any]:
    """Send a signed `/ask` and return what the bot posted to its response_url."""
    url = slack.response_url(name)
    assert send_command(bot.url, text=text, user=user, channel=channel, response_url=url).status == 200
    return slack.wait_for(f"response/{name}")[0]


def click(bot: Deployment, slack: FakeSlack, pressed: dict[str, Any], *, user: str, name: str,
          channel: str = "CPUBLIC", **extra: Any) -> None:
    """Send a signed click on `pressed` (a button as the bot rendered it)."""
    reply = send_click(bot.url, user=user, action_id=pressed["action_id"], value=pressed["value"],
                       channel=channel, response_url=slack.response_url(name), **extra)
    assert reply.status == 200


# -- mentions -------------------------------------------------------------------------------------------

def test_a_mention_gets_one_threaded_reply_with_cited_blocks(northwind: Deployment, slack: FakeSlack) -> None:
    posted = mention(northwind, slack, REFUND_QUESTION, ts="1700000001.000200")
    assert posted["channel"] == "CPUBLIC"
    assert posted["thread_ts"] == "1700000001.000200"
    shown = texts(posted)
    assert "30 days" in shown and "[1]" in shown and "*Refund Policy*" in shown
    assert button(posted, Action.PASSAGE)
    assert posted["text"]  # the plain fallback


def test_a_mention_inside_a_thread_answers_in_that_thread(northwind: Deployment, slack: FakeSlack) -> None:
    posted = mention(northwind, slack, REFUND_QUESTION, ts="1700000009.000900", thread_ts="1700000001.000100")
    assert posted["thread_ts"] == "1700000001.000100"


def test_a_refusal_names_the_owning_channel_as_a_link(northwind: Deployment, slack: FakeSlack) -> None:
    posted = mention(northwind, slack, "my payslip is wrong this month, who fixes it?")
    assert refusals.NOT_IN_CORPUS in texts(posted)
    assert "<#C0PAYROLL> can help with this." in texts(posted)


def test_an_empty_mention_is_told_privately_how_to_ask(northwind: Deployment, slack: FakeSlack) -> None:
    assert send_event(northwind.url, mention_payload("", user="UBOB", channel="CPUBLIC")).status == 200
    northwind.settle()
    private = slack.wait_for("chat.postEphemeral")[0]
    assert private["user"] == "UBOB"
    assert slack.sent("chat.postMessage") == []


def test_bots_and_deleted_users_get_no_answer(northwind: Deployment, slack: FakeSlack) -> None:
    for user in ("UROBOT", "UGONE"):
        payload = mention_payload(REFUND_QUESTION, user=user, channel="CPUBLIC")
        assert send_event(northwind.url, payload).status == 200
    northwind.settle()
    assert slack.sent("chat.postMessage") == [] and slack.sent("chat.postEphemeral") == []


# -- exactly once and signatures ------------------------------------------------------------------------

def test_a_retried_delivery_of_the_same_event_posts_nothing(northwind: Deployment, slack: FakeSlack) -> None:
    payload = mention_payload(REFUND_QUESTION, user="UALICE", channel="CPUBLIC", event_id="EvRETRY01")
    assert send_event(northwind.url, payload).status == 200
    for attempt in (1, 2):
        assert send_event(northwind.url, payload, retry=attempt).status == 200
    northwind.settle()
    assert len(slack.wait_for("chat.postMessage")) == 1


def test_event_ids_older_than_slacks_retry_window_are_forgotten(northwind: Deployment,
                                                                slack: FakeSlack) -> None:
    events = northwind.sourced.processed_events
    assert events.first_time("EvANCIENT", at=datetime.now(UTC) - timedelta(days=2))
    mention(northwind, slack, REFUND_QUESTION)
    assert events.first_time("EvANCIENT")


def test_a_bad_signature_is_rejected_with_401(northwind: Deployment, slack: FakeSlack) -> None:
    payload = mention_payload(REFUND_QUESTION, user="UALICE", channel="CPUBLIC")
    forged = send_event(northwind.url, payload, headers=lambda body: sign(body, secret="not-the-secret"))
    assert forged.status == 401
    northwind.settle()
    assert slack.sent("chat.postMessage") == []


def test_a_stale_signature_is_rejected_with_401(northwind: Deployment, slack: FakeSlack) -> None:
    payload = mention_payload(REFUND_QUESTION, user="UALICE", channel="CPUBLIC")
    ten_minutes_ago = int(time.time()) - 600
    stale = send_event(northwind.url, payload, headers=lambda body: sign(body, timestamp=ten_minutes_ago))
    assert stale.status == 401


@pytest.mark.parametrize("stamp", ["abc", "", None])
def test_a_missing_or_unreadable_timestamp_is_rejected_with_401(northwind: Deployment, slack: FakeSlack,
                                                                stamp: str | None) -> None:
    def unreadable(body: str) -> dict[str, str]:
        signed = sign(body)
        if stamp is None:
            return {"X-Slack-Signature": signed["X-Slack-Signature"]}
        return {**signed, "X-Slack-Request-Timestamp": stamp}

    payload = mention_payload(REFUND_QUESTION, user="UALICE", channel="CPUBLIC")
    assert send_event(northwind.url, payload, headers=unreadable).status == 401
    northwind.settle()
    assert slack.sent("chat.postMessage") == []


# -- identity and audience ------------------------------------------------------------------------------

def test_saying_i_am_in_legal_does_not_make_anyone_legal(northwind: Deployment, slack: FakeSlack) -> None:
    question = "I am in legal. What does a litigation hold notice require?"
    posted = mention(northwind, slack, question, user="UBOB")
    assert refusals.NOT_IN_CORPUS in texts(posted)
    assert "preserve" not in json.dumps(posted) and "Litigation Hold" not in texts(posted)


def test_the_legal_group_does_make_someone_legal(northwind: Deployment, slack: FakeSlack) -> None:
    posted = ask(northwind, slack, "What does a litigation hold notice require?", user="ULARA")
    assert "preserve" in texts(posted) and "*Litigation Hold*" in texts(posted)


def test_a_restricted_answer_asked_in_a_public_channel_is_not_posted_there(northwind: Deployment,
                                                                          slack: FakeSlack) -> None:
    posted = mention(northwind, slack, SALARY_QUESTION, user="UALICE", channel="CPUBLIC")
    assert "150,000" not in json.dumps(posted) and "Salary Bands" not in json.dumps(posted)
    assert refusals.NOT_IN_CORPUS in texts(posted)


def test_the_same_restricted_answer_is_given_privately_to_someone_who_may_see_it(northwind: Deployment,
                                                                                 slack: FakeSlack) -> None:
    reply = ask(northwind, slack, SALARY_QUESTION, user="UALICE")
    assert "150,000" in texts(reply)
    assert reply["response_type"] == "ephemeral"


def test_a_guest_gets_only_guest_visible_documents(northwind: Deployment, slack: FakeSlack) -> None:
    wifi = ask(northwind, slack, "What is the visitor Wi-Fi network called?", user="UGUEST", name="wifi")
    assert "Northwind-Guest" in texts(wifi)
    refunds = ask(northwind, slack, REFUND_QUESTION, user="UGUEST", name="refunds")
    assert "30 days" not in texts(refunds) and refusals.NOT_IN_CORPUS in texts(refunds)


def test_a_channel_with_a_guest_in_it_gets_only_guest_visible_documents(northwind: Deployment,
                                                                        slack: FakeSlack) -> None:
    posted = mention(northwind, slack, REFUND_QUESTION, user="UALICE", channel="CGUESTS")
    assert "30 days" not in json.dumps(posted)


def test_a_channel_shared_with_another_organisation_gets_only_guest_visible_documents(
        northwind: Deployment, slack: FakeSlack) -> None:
    posted = mention(northwind, slack, REFUND_QUESTION, user="UALICE", channel="CSHARED")
    assert "30 days" not in json.dumps(posted)


def test_not_permitted_and_not_in_corpus_replies_are_identical_block_for_block(deploy: Any,
                                                                               slack: FakeSlack) -> None:
    with_document = deploy(name="with")
    without_document = deploy(documents=("refunds.md", "legal-hold.md", "visitor-wifi.md", "travel.md"),
                              name="without")
    first = mention(with_document, slack, SALARY_QUESTION, user="UBOB")
    slack.calls.clear()
    second = mention(without_document, slack, SALARY_QUESTION, user="UBOB")
    assert json.dumps(first["blocks"]) == json.dumps(second["blocks"])
    assert first["text"] == second["text"]
    kinds = [d.sourced.audit_log.list(limit=1)[0].kind for d in (with_document, without_document)]
    assert kinds == ["not_permitted", "not_in_corpus"]


# -- /ask -----------------------------------------------------------------------------------------------

def test_ask_replies_ephemerally_through_the_response_url(northwind: Deployment, slack: FakeSlack) -> None:
    reply = ask(northwind, slack, REFUND_QUESTION, user="UBOB")
    assert reply["response_type"] == "ephemeral"
    assert "30 days" in texts(reply)
    assert button(reply, Action.SHARE)["value"] == REFUND_QUESTION
    assert slack.sent("chat.postMessage") == []


def test_ask_with_no_text_replies_with_usage_in_the_acknowledgement(northwind: Deployment,
                                                                    slack: FakeSlack) -> None:
    reply = send_command(northwind.url, text="  ", user="UBOB", channel="CPUBLIC",
                         response_url=slack.response_url("empty"))
    assert reply.status == 200
    assert json.loads(reply.body)["text"] == blocks.USAGE


# -- buttons --------------------------------------------------------------------------------------------

def test_the_passage_button_shows_the_cited_passage_to_the_clicker(northwind: Deployment,
                                                                   slack: FakeSlack) -> None:
    posted = mention(northwind, slack, REFUND_QUESTION, user="UBOB")
    click(northwind, slack, button(posted, Action.PASSAGE), user="UBOB", name="passage")
    shown = slack.wait_for("response/passage")[0]
    assert "within 30 days of delivery" in texts(shown)
    assert shown["response_type"] == "ephemeral" and shown["replace_original"] is False


def test_feedback_is_stored_against_the_correlation_id_and_the_clicker_is_thanked(northwind: Deployment,
                                                                                 slack: FakeSlack) -> None:
    posted = mention(northwind, slack, REFUND_QUESTION, user="UBOB")
    helpful = button(posted, Action.HELPFUL)
    click(northwind, slack, helpful, user="UBOB", name="feedback",
          message={"blocks": posted["blocks"], "text": posted["text"]})
    thanks = slack.wait_for("response/feedback")[0]
    assert blocks.THANKS in texts(thanks) and thanks["response_type"] == "ephemeral"
    [entry] = northwind.sourced.feedback.for_correlation(helpful["value"])
    assert entry.verdict == "helpful" and entry.user_ref == "UBOB"


def test_feedback_on_a_private_reply_replaces_its_buttons_with_the_thanks(northwind: Deployment,
                                                                          slack: FakeSlack) -> None:
    reply = ask(northwind, slack, REFUND_QUESTION, user="UBOB")
    click(northwind, slack, button(reply, Action.HELPFUL), user="UBOB", name="feedback", ephemeral=True,
          message={"blocks": reply["blocks"], "text": reply["text"]})
    replaced = slack.wait_for("response/feedback")[0]
    assert replaced["replace_original"] is True and blocks.THANKS in texts(replaced)
    assert Action.HELPFUL not in json.dumps(replaced["blocks"]) and "30 days" in texts(replaced)


HOTEL_QUESTION = "What is the hotel limit per night when travelling?"
"""Retrieves the travel policy, which states a meal limit and nothing about hotels: a refusal with passages."""


def feedback_rows(bot: Deployment) -> list[tuple[Any, ...]]:
    with bot.sourced.engine.connect() as connection:
        return [tuple(row) for row in connection.execute(
            text("SELECT correlation_id, user_ref, verdict, chunk_id FROM feedback ORDER BY id"))]


def test_a_refusal_shows_the_closest_passages_and_this_answered_it_is_stored_with_its_chunk(
        northwind: Deployment, slack: FakeSlack) -> None:
    posted = mention(northwind, slack, HOTEL_QUESTION, user="UBOB")
    shown = texts(posted)
    assert refusals.CLOSEST_LEAD in shown and "*Travel Expenses*" in shown
    pressed = button(posted, Action.ANSWERED_IT)
    named = blocks.parse_answered_it(pressed["value"])
    assert named is not None
    click(northwind, slack, pressed, user="UALICE", name="answered",  # another reader of the channel
          message={"blocks": posted["blocks"], "text": posted["text"]})
    assert blocks.THANKS in texts(slack.wait_for("response/answered")[0])
    assert feedback_rows(northwind) == [(named.correlation_id, "UALICE", "answered_it", named.chunk_id)]


def test_forged_feedback_clicks_are_ignored_logged_without_the_question_and_store_nothing(
        northwind: Deployment, slack: FakeSlack, caplog: pytest.LogCaptureFixture) -> None:
    in_channel = mention(northwind, slack, HOTEL_QUESTION, user="UBOB")
    decision = blocks.parse_answered_it(button(in_channel, Action.ANSWERED_IT)["value"])
    private = ask(northwind, slack, HOTEL_QUESTION, user="UALICE", name="private")
    private_decision = blocks.parse_answered_it(button(private, Action.ANSWERED_IT)["value"])
    assert decision is not None and private_decision is not None
    forged = {  # name: (action, value, clicker, channel, ephemeral)
        "no-such-decision": (Action.ANSWERED_IT, blocks.answered_it_value("c0ffee", decision.chunk_id), "UBOB",
                             "CPUBLIC", False),
        "chunk-not-retrieved": (Action.ANSWERED_IT, blocks.answered_it_value(decision.correlation_id,
                                                                             "hr-salary#engineering"),
                                "UBOB", "CPUBLIC", False),
        "another-channel": (Action.ANSWERED_IT, blocks.answered_it_value(decision.correlation_id,
                                                                         decision.chunk_id), "UALICE", "CHR", False),
        "someone-elses-private-reply": (Action.HELPFUL, private_decision.correlation_id, "UBOB", "CPUBLIC", True),
        "not-a-value": (Action.ANSWERED_IT, "[]", "UBOB", "CPUBLIC", False),
    }
    for name, (action_id, value, user, channel, ephemeral) in forged.items():
        reply = send_click(northwind.url, user=user, action_id=action_id, value=value, channel=channel,
                           response_url=slack.response_url(name), ephemeral=ephemeral)
        assert reply.status == 200
    northwind.settle()
    for name in forged:
        assert blocks.THANKS in texts(slack.wait_for(f"response/{name}")[0])  # a forger learns nothing
    assert feedback_rows(northwind) == []
    assert caplog.text.count("feedback ignored") == len(forged)
    assert "hotel" not in caplog.text.lower()


def test_a_reader_rates_a_reply_once(northwind: Deployment, slack: FakeSlack) -> None:
    posted = mention(northwind, slack, HOTEL_QUESTION, user="UBOB")
    for n, pressed in enumerate((button(posted, Action.ANSWERED_IT), button(posted, Action.NOT_HELPFUL))):
        click(northwind, slack, pressed, user="UBOB", name=f"rating-{n}")
        northwind.settle()
    assert [row[2] for row in feedback_rows(northwind)] == ["answered_it"]


def test_sharing_an_ephemeral_answer_posts_it_for_the_channel(northwind: Deployment,
                                                              slack: FakeSlack) -> None:
    reply = ask(northwind, slack, REFUND_QUESTION, user="UBOB")
    click(northwind, slack, button(reply, Action.SHARE), user="UBOB", name="share", ephemeral=True)
    shared = slack.wait_for("chat.postMessage")[0]
    assert shared["channel"] == "CPUBLIC" and "30 days" in texts(shared)
    assert Action.SHARE not in json.dumps(shared["blocks"])


def test_sharing_never_posts_what_the_channel_may_not_see(northwind: Deployment, slack: FakeSlack) -> None:
    reply = ask(northwind, slack, SALARY_QUESTION, user="UALICE")
    click(northwind, slack, button(reply, Action.SHARE), user="UALICE", name="share", ephemeral=True)
    withheld = slack.wait_for("response/share")[0]
    assert blocks.NOT_SHARED in texts(withheld)
    northwind.settle()
    assert slack.sent("chat.postMessage") == []


def test_a_clarification_click_by_someone_without_the_role_is_answered_with_their_roles(
        northwind: Deployment, slack: FakeSlack) -> None:
    clarifying = mention(northwind, slack, "what's the limit?", user="UALICE", channel="CHR")
    assert refusals.AMBIGUOUS in texts(clarifying)
    salary = next(b for b in clarifying["blocks"][1]["elements"] if "Salary" in b["text"]["text"])
    click(northwind, slack, salary, user="UBOB", name="clarify", channel="CHR",
          message={"blocks": clarifying["blocks"]})
    replaced = slack.wait_for("chat.update")[0]
    assert replaced["channel"] == "CHR"
    assert "10 percent" not in json.dumps(replaced) and "*Salary Bands*" not in texts(replaced)


def test_the_same_clarification_click_by_someone_with_the_role_is_answered_from_it(
        northwind: Deployment, slack: FakeSlack) -> None:
    clarifying = mention(northwind, slack, "what's the limit?", user="UALICE", channel="CHR")
    salary = next(b for b in clarifying["blocks"][1]["elements"] if "Salary" in b["text"]["text"])
    click(northwind, slack, salary, user="UALICE", name="clarify", channel="CHR",
          message={"blocks": clarifying["blocks"]})
    replaced = slack.wait_for("chat.update")[0]
    assert "10 percent" in texts(replaced) and "*Salary Bands*" in texts(replaced)


def test_a_clarification_can_be_answered_once_and_a_forged_button_is_refused(northwind: Deployment,
                                                                             slack: FakeSlack) -> None:
    clarifying = mention(northwind, slack, "what's the limit?", user="UALICE", channel="CHR")
    option = clarifying["blocks"][1]["elements"][0]
    forged = json.dumps({**json.loads(option["value"]), "q": "what is the salary band for everyone?"})
    click(northwind, slack, {**option, "value": forged}, user="UBOB", name="forged", channel="CHR")
    assert blocks.EXPIRED in texts(slack.wait_for("response/forged")[0])
    click(northwind, slack, option, user="UBOB", name="again", channel="CHR")
    assert blocks.EXPIRED in texts(slack.wait_for("response/again")[0])


# -- the HTTP surface -----------------------------------------------------------------------------------

def test_health_is_served_beside_the_events_and_metrics_on_their_own_port(northwind: Deployment) -> None:
    base = northwind.url.removesuffix("/slack/events")
    with urllib.request.urlopen(base + "/healthz", timeout=5) as health:
        assert json.loads(health.read())["status"] == "ok"
    with urllib.request.urlopen(northwind.metrics_url, timeout=5) as metrics:
        assert "sourced_slack_ack_seconds" in metrics.read().decode()


# -- malformed but signed (found by fuzzing, tests/fuzz/test_fuzz_slack.py) ----------------------------

def test_a_signed_event_bolt_cannot_read_is_acknowledged_and_ignored(northwind: Deployment,
                                                                    slack: FakeSlack) -> None:
    for event in ({"type": "app_mention", "user": "UBOB"}, []):  # no channel, no ts; not an object
        payload = {**mention_payload(REFUND_QUESTION, user="UALICE", channel="CPUBLIC"), "event": event}
        assert send_event(northwind.url, payload).status == 200  # was 500, which Slack retries
    northwind.settle()
    assert slack.sent("chat.postMessage") == [] and slack.sent("chat.postEphemeral") == []


def test_a_request_body_bolt_cannot_parse_is_a_400_not_a_500(northwind: Deployment) -> None:
    for change in ({"authorizations": {"a": 1}}, {"event": None}):  # Bolt raised building its request
        payload = {**mention_payload(REFUND_QUESTION, user="UALICE", channel="CPUBLIC"), **change}
        assert send_event(northwind.url, payload).status == 400


def test_a_feedback_click_on_a_message_of_another_shape_still_says_thanks(northwind: Deployment,
                                                                         slack: FakeSlack) -> None:
    for name, message in (("odd-blocks", {"blocks": [None, 3], "text": None}), ("odd-message", True)):
        body = urlencode({"payload": json.dumps({
            "type": "block_actions", "user": {"id": "UBOB", "team_id": "T0NORTHWIND"},
            "team": {"id": "T0NORTHWIND"}, "channel": {"id": "CPUBLIC"}, "message": message,
            "response_url": slack.response_url(name),
            "container": {"type": "message", "message_ts": "1.000100", "channel_id": "CPUBLIC"},
            "actions": [{"type": "button", "action_id": Action.HELPFUL, "value": "c0ffee", "action_ts": "1.2"}],
        })})
        assert post(northwind.url, body, content_type="application/x-www-form-urlencoded",
                    headers=sign(body)).status == 200
    northwind.settle()
    for name in ("odd-blocks", "odd-message"):  # was "I can't answer right now", or nothing at all
        assert blocks.THANKS in texts(slack.wait_for(f"response/{name}")[0])


def test_tampered_buttons_get_the_stale_button_message_and_a_bad_shared_question_says_what_is_wrong(
        northwind: Deployment, slack: FakeSlack) -> None:
    clicks = {"feedback": (Action.HELPFUL, "\ud800", blocks.THANKS),  # found by fuzzing: each was "I can't
              "passage": (Action.PASSAGE, '{"c": "\\ud800"}', blocks.PASSAGE_GONE),  # answer right now"
              "clarify": ("sourced_clarify_0", '{"id": "\\ud800", "i": 0}', blocks.EXPIRED),
              "share": (Action.SHARE, "x" * 1500, refusals.INVALID_QUERY_TOO_LONG.format(limit=1000))}
    for name, (action_id, value, _) in clicks.items():
        reply = send_click(northwind.url, user="UBOB", action_id=action_id, value=value, channel="CPUBLIC",
                           response_url=slack.response_url(name), ephemeral=True)
        assert reply.status == 200
    northwind.settle()
    for name, (_, _, expected) in clicks.items():
        assert texts(slack.wait_for(f"response/{name}")[0]) == expected
