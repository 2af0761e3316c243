"""Slack requests under search, through the real Bolt app served over HTTP, every one with a VALID signature:
mentions, `/ask`, and button clicks with tampered values, oversized and malformed fields. Whatever arrives,
no 5xx and no crash; the person gets at most one message, and a question gets exactly one: the answer or
refusal, or a clear line saying what was wrong with it; anything Slack would not send is acknowledged and
ignored. Nothing else is posted."""

import itertools
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot import blocks
from bot.app import create_bot
from bot.http import wsgi_app
from bot.settings import SlackSettings
from bot.surface import Action, clarify_action_id
from bot.work import ReplyWorkers
from core.application import refusals
from core.application.language.shape import invalid_reason, visible_text
from core.bootstrap import bootstrap
from core.config import Settings
from tests.e2e.conftest import CONFIG, Deployment, serving, workspace, write_kb
from tests.e2e.fake_slack import (
    BOT_TOKEN,
    BOT_USER,
    SIGNING_SECRET,
    TEAM,
    FakeSlack,
    Reply,
    mention_payload,
    post,
    sign,
)
from tests.fuzz.conftest import scaled

POSTS = ("chat.postMessage", "chat.postEphemeral", "chat.update")
INVALID = {refusals.INVALID_QUERY_EMPTY, refusals.INVALID_QUERY_CONTROL,
           refusals.INVALID_QUERY_TOO_LONG.format(limit=1000)}
USERS = ["UALICE", "UBOB", "ULARA", "UGUEST"]
SILENT_USERS = ["UROBOT", "UGONE", BOT_USER]
"""Bots, deleted users and Sourced itself get no reply at all."""
CHANNELS = ["CPUBLIC", "CHR", "CSHARED", "CGUESTS", "D0DIRECT"]
ANY_CHAR = st.characters(codec=None, exclude_categories=())
ANY_TEXT = st.text(ANY_CHAR, max_size=200)
HUGE_TEXT = st.tuples(st.text(ANY_CHAR, min_size=1, max_size=4), st.integers(1_001, 60_000)).map(
    lambda unit: (unit[0] * (unit[1] // len(unit[0]) + 1))[: unit[1]])
QUESTION_WORDS = st.sampled_from(["refund", "return", "days", "meal", "limit", "Wi-Fi", "salary", "band", "what",
                                  "how", "many", "is", "the", "?", "<@UBOT>", "<@UALICE>", "<!channel>", "&amp;",
                                  "*bold*", "`code`", "\u200b", "\u202e", "\u200f"])
QUESTIONS = st.one_of(ANY_TEXT, HUGE_TEXT, st.lists(QUESTION_WORDS, max_size=15).map(" ".join),
                      st.just("How many days do customers have to return items for a refund?"))
_names = itertools.count(1)


class Bench:
    def __init__(self, deployment: Deployment, slack: FakeSlack) -> None:
        self.deployment = deployment
        self.slack = slack

    def __repr__(self) -> str:
        return "Bench()"  # a failing example prints its arguments; the deployment's repr would bury them

    def messages(self) -> list[tuple[str, dict[str, Any]]]:
        """Everything posted to a person or a channel since the last `reset`."""
        with self.slack._lock:
            calls = list(self.slack.calls)
        return [(call.method, call.body) for call in calls
                if call.method in POSTS or call.method.startswith("response/")]

    def reset(self) -> None:
        self.deployment.settle(30)
        with self.slack._lock:
            self.slack.calls.clear()

    def finish(self) -> list[tuple[str, dict[str, Any]]]:
        self.deployment.settle(30)
        return self.messages()


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    folder = tmp_path_factory.mktemp("slack")
    slack = FakeSlack(workspace()).start()
    sourced = bootstrap(Settings(database_url=f"sqlite:///{folder / 'slack.db'}", embedder="none"), config=CONFIG,
                        progress=False)
    assert not sourced.ingestor.ingest(write_kb(folder / "kb")).errors
    settings_ = SlackSettings(bot_token=BOT_TOKEN, signing_secret=SIGNING_SECRET, api_url=slack.api_url)
    bot = create_bot(sourced, settings_, workers=ReplyWorkers(workers=2))
    server = serving(wsgi_app(bot.app))
    url = f"http://127.0.0.1:{server.server_port}/slack/events"
    yield Bench(Deployment(sourced=sourced, bot=bot, url=url, metrics_url=""), slack)  # no metrics read here
    server.shutdown()
    server.server_close()
    bot.close()
    sourced.engine.dispose()
    slack.stop()


def send(bench: Bench, body: str, content_type: str) -> Reply:
    reply = post(bench.deployment.url, body, content_type=content_type, headers=sign(body), timeout_s=30)
    assert reply.status < 500, (reply.status, reply.body[:300])
    return reply


def text_of(body: dict[str, Any]) -> str:
    return str(body.get("text") or "")


# -- mentions -------------------------------------------------------------------------------------------------

@settings(max_examples=scaled(1.0))
@given(QUESTIONS, st.sampled_from(USERS + SILENT_USERS), st.sampled_from(CHANNELS))
def test_a_mention_gets_exactly_one_reply_and_nothing_else(bench: Bench, question: str, user: str,
                                                           channel: str) -> None:
    bench.reset()
    payload = mention_payload(question, user=user, channel=channel)
    assert send(bench, json.dumps(payload), "application/json").status == 200
    posted = bench.finish()
    if user in SILENT_USERS:
        assert posted == []
        return
    assert len(posted) == 1, posted
    method, body = posted[0]
    assert body["channel"] == channel and text_of(body)
    if method == "chat.postEphemeral":  # what was wrong with the text, to the asker alone
        assert body["user"] == user and text_of(body) in INVALID | {blocks.UNAVAILABLE}
    else:
        assert method == "chat.postMessage" and body["thread_ts"] == payload["event"]["ts"]


JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(ANY_TEXT, inner, max_size=3), max_leaves=8)
EVENT_FIELDS = st.sampled_from(["type", "user", "text", "ts", "channel", "event_ts", "thread_ts", "team", "blocks"])
TOP_FIELDS = st.sampled_from(["event", "event_id", "team_id", "authorizations", "api_app_id", "event_time"])


@settings(max_examples=scaled(1.0))
@given(st.dictionaries(EVENT_FIELDS, JSON_VALUES, max_size=4), st.dictionaries(TOP_FIELDS, JSON_VALUES, max_size=2),
       st.sets(EVENT_FIELDS, max_size=3))
def test_a_malformed_event_is_acknowledged_and_at_most_one_message_follows(
        bench: Bench, event_changes: dict[str, Any], top_changes: dict[str, Any], dropped: set[str]) -> None:
    bench.reset()
    payload = mention_payload("How many days do customers have to return items?", user="UBOB", channel="CPUBLIC")
    payload["event"] = {k: v for k, v in {**payload["event"], **event_changes}.items() if k not in dropped}
    payload.update(top_changes)
    send(bench, json.dumps(payload), "application/json")
    assert len(bench.finish()) <= 1


# -- /ask -----------------------------------------------------------------------------------------------------

@settings(max_examples=scaled(1.0))
@given(QUESTIONS, st.sampled_from(USERS + SILENT_USERS[:2]), st.sampled_from([*CHANNELS, ""]))
def test_ask_gets_exactly_one_reply_to_the_asker(bench: Bench, question: str, user: str, channel: str) -> None:
    bench.reset()
    name = f"ask-{next(_names)}"
    body = urlencode({"command": "/ask", "text": question, "user_id": user, "team_id": TEAM, "channel_id": channel,
                      "response_url": bench.slack.response_url(name), "trigger_id": "t1"}, errors="surrogatepass")
    reply = send(bench, body, "application/x-www-form-urlencoded")
    posted = bench.finish()
    if not question.strip():
        assert reply.status == 200 and json.loads(reply.body)["text"] == blocks.USAGE and posted == []
        return
    if user in SILENT_USERS:
        assert posted == []
        return
    assert [method for method, _ in posted] == [f"response/{name}"], posted
    answer = posted[0][1]
    assert answer["response_type"] == "ephemeral" and text_of(answer)


@settings(max_examples=scaled(0.6))
@given(st.dictionaries(st.sampled_from(["command", "text", "user_id", "team_id", "channel_id", "trigger_id",
                                        "enterprise_id", "is_enterprise_install"]), ANY_TEXT | HUGE_TEXT,
                       max_size=4))
def test_a_malformed_command_is_acknowledged_and_at_most_one_message_follows(bench: Bench,
                                                                             changes: dict[str, str]) -> None:
    bench.reset()
    fields = {"command": "/ask", "text": "what is the meal limit?", "user_id": "UBOB", "team_id": TEAM,
              "channel_id": "CPUBLIC", "response_url": bench.slack.response_url(f"bad-{next(_names)}"),
              "trigger_id": "t1", **changes}
    send(bench, urlencode(fields, errors="surrogatepass"), "application/x-www-form-urlencoded")
    assert len(bench.finish()) <= 1


# -- buttons --------------------------------------------------------------------------------------------------

ACTIONS = st.sampled_from([Action.PASSAGE, Action.HELPFUL, Action.NOT_HELPFUL, Action.SHARE, clarify_action_id(0),
                           clarify_action_id(3)])
SURROGATES = st.text(st.characters(categories=["Cs"]), min_size=1, max_size=3)
"""Half UTF-16 pairs: JSON escapes them (`\\ud800`), so a signed payload can carry them; rare in ANY_TEXT."""
VALUES = st.one_of(
    ANY_TEXT, HUGE_TEXT, JSON_VALUES.map(json.dumps), SURROGATES,
    st.fixed_dictionaries({"c": SURROGATES}).map(json.dumps),
    st.fixed_dictionaries({"id": SURROGATES, "i": st.integers(-1, 4)}).map(json.dumps),
    st.fixed_dictionaries({"c": JSON_VALUES | st.sampled_from(["refund-policy#return-window",
                                                               "salary-bands#engineering"])}).map(json.dumps),
    st.fixed_dictionaries({"id": JSON_VALUES, "i": JSON_VALUES}, optional={"q": JSON_VALUES}).map(json.dumps),
)


def click_body(bench: Bench, *, action_id: str, value: Any, user: str, channel: str, name: str,
               ephemeral: bool, message: Any) -> str:
    payload: dict[str, Any] = {
        "type": "block_actions", "user": {"id": user, "team_id": TEAM}, "team": {"id": TEAM},
        "api_app_id": "A0SOURCED", "channel": {"id": channel}, "response_url": bench.slack.response_url(name),
        "container": {"type": "message", "message_ts": "1.000100", "channel_id": channel, "is_ephemeral": ephemeral},
        "actions": [{"type": "button", "action_id": action_id, "block_id": "b", "value": value, "action_ts": "1.2"}],
    }
    if message is not None:
        payload["message"] = message
    return urlencode({"payload": json.dumps(payload)})  # json.dumps escapes a lone surrogate as \\udxxx


CLICKS = st.fixed_dictionaries({
    "action_id": ACTIONS, "value": VALUES, "user": st.sampled_from(USERS), "channel": st.sampled_from(CHANNELS),
    "ephemeral": st.booleans(),
    "message": st.none() | JSON_VALUES | st.fixed_dictionaries({"ts": st.just("1.000100"), "blocks": JSON_VALUES,
                                                                "text": JSON_VALUES}),
})


@settings(max_examples=scaled(1.5))
@given(CLICKS)
def test_a_click_with_a_tampered_value_gets_exactly_one_message_and_never_a_crash(bench: Bench,
                                                                                  click: dict[str, Any]) -> None:
    bench.reset()
    name = f"click-{next(_names)}"
    assert send(bench, click_body(bench, name=name, **click), "application/x-www-form-urlencoded").status == 200
    posted = bench.finish()
    assert len(posted) == 1, posted
    shown = json.dumps(posted[0][1])
    assert blocks.UNAVAILABLE not in shown, posted  # a tampered value is ours to explain, not an outage
    invalid = invalid_reason(visible_text(json.loads(json.dumps(click["value"]))))  # as Bolt reads it
    if click["action_id"] == Action.SHARE and invalid is not None:  # what was wrong, not "the channel may not see"
        expected = refusals.INVALID_QUERY_TOO_LONG.format(limit=1000) if invalid == "too_long" else {
            "empty": refusals.INVALID_QUERY_EMPTY, "control_characters": refusals.INVALID_QUERY_CONTROL}[invalid]
        assert posted[0][1]["text"] == expected, posted
