"""Issue 31's findings, each over signed requests to the served app and the fake Slack on loopback: nothing an
asker, a reader, an operator or a scraper can see tells a restricted document from absence, and the smaller
breaks the security review found (forged and flooded feedback, markers and markup from documents, events
handled twice or not at all) stay closed."""

import json
import logging
import os
import re
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from bot import blocks
from bot.surface import Action
from core.config import Settings
from core.eval.scripted_server import ScriptedServer
from tests.e2e.conftest import DOCUMENTS, Deployment
from tests.e2e.fake_slack import (
    FakeSlack,
    dm_payload,
    home_opened_payload,
    mention_payload,
    send_click,
    send_command,
    send_event,
    thread_started_payload,
)
from tests.mrkdwn import mrkdwn_texts

ROOT = Path(__file__).resolve().parents[2]
SALARY_QUESTION = "What is the base salary band for a Senior Engineer?"
REFUND_QUESTION = "How many days do customers have to return items for a refund?"
HOTEL_QUESTION = "What is the hotel limit per night when travelling?"
"""Retrieves the travel policy, which says nothing of hotels: a refusal with a closest passage."""
RAISE_QUESTION = "What is the raise limit for a Junior Engineer's bonus?"
"""For someone in hr: a refusal whose closest passages are the salary bands' sections."""
WITHOUT_SALARIES = tuple(name for name in DOCUMENTS if name != "salary-bands.md")


def texts(body: dict[str, Any]) -> str:
    return mrkdwn_texts(body.get("blocks", []))


def button(body: dict[str, Any], action_id: str) -> dict[str, Any]:
    for block in body["blocks"]:
        for element in [*block.get("elements", []), block.get("accessory") or {}]:
            if element.get("action_id") == action_id:
                return dict(element)
    raise AssertionError(f"no {action_id} button in {body['blocks']}")


def event(bot: Deployment, payload: dict[str, Any], *, retry: int | None = None) -> None:
    assert send_event(bot.url, payload, retry=retry).status == 200


def mention(bot: Deployment, slack: FakeSlack, question: str, *, user: str, channel: str = "CPUBLIC") -> dict[str, Any]:
    before = len(slack.sent("chat.postMessage"))
    event(bot, mention_payload(question, user=user, channel=channel))
    bot.settle()
    return slack.wait_for("chat.postMessage", count=before + 1)[before]


def ask(bot: Deployment, slack: FakeSlack, question: str, *, user: str, name: str,
        channel: str = "CPUBLIC") -> dict[str, Any]:
    reply = send_command(bot.url, text=question, user=user, channel=channel, response_url=slack.response_url(name))
    assert reply.status == 200
    bot.settle()
    return slack.wait_for(f"response/{name}")[0]


def press(bot: Deployment, slack: FakeSlack, *, user: str, action_id: str, value: str, name: str,
          channel: str = "CPUBLIC", ephemeral: bool = False, message: dict[str, Any] | None = None) -> None:
    """A signed click, handled to the end."""
    shown = {"blocks": message["blocks"], "text": message["text"]} if message else None
    reply = send_click(bot.url, user=user, action_id=action_id, value=value, channel=channel,
                       response_url=slack.response_url(name), ephemeral=ephemeral, message=shown)
    assert reply.status == 200
    bot.settle()


def click(bot: Deployment, slack: FakeSlack, *, name: str, **pressed: Any) -> dict[str, Any]:
    """A signed click; what the clicker was sent back through the response URL."""
    press(bot, slack, name=name, **pressed)
    return slack.wait_for(f"response/{name}")[0]


def feedback_rows(bot: Deployment) -> list[tuple[Any, ...]]:
    with bot.sourced.engine.connect() as connection:
        return [tuple(row) for row in connection.execute(
            text("SELECT correlation_id, user_ref, verdict, chunk_id FROM feedback ORDER BY id"))]


def open_home(bot: Deployment, slack: FakeSlack, user: str) -> dict[str, str]:
    """The Home tab `user` is shown, block by block id (mrkdwn text)."""
    before = len(slack.sent("views.publish"))
    event(bot, home_opened_payload(user=user))
    bot.settle()
    view = slack.wait_for("views.publish", count=before + 1)[before]["view"]
    return {str(block.get("block_id")): mrkdwn_texts(block) for block in view["blocks"] if block.get("block_id")}


def without_timing(home: dict[str, str]) -> dict[str, str]:
    """Home without what differs between any two runs: the ingest's minute and the p95 latency."""
    return {block: re.sub(r"(Last ingest|p95 latency): [^\n]*", r"\1: -", shown) for block, shown in home.items()}


def scrape(url: str, token: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def outcome_counts(bot: Deployment) -> dict[str, float]:
    """`sourced_outcomes_total` by label set, as a scraper reads it from the metrics port."""
    status, exposition = scrape(bot.metrics_url)
    assert status == 200
    return {labels: float(value) for labels, value in
            re.findall(r"^sourced_outcomes_total(\{[^}]*\}) (\S+)$", exposition, re.MULTILINE)}


def moved(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {labels: after[labels] - before.get(labels, 0.0) for labels in after if after[labels] != before.get(labels)}


def export(bot: Deployment, key: str = "export-key") -> list[dict[str, Any]]:
    """`sourced feedback export`, run as an operator runs it, on this deployment's database."""
    env = {key_: value for key_, value in os.environ.items() if not key_.startswith(("SLACK_", "SOURCED_"))}
    env |= {"SOURCED_DATABASE_URL": bot.sourced.engine.url.render_as_string(hide_password=False),
            "SOURCED_EMBEDDER": "none", "SOURCED_FEEDBACK_EXPORT_KEY": key, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "bot.cli", "feedback", "export"], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=120, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def add_document(bot: Deployment, tmp_path: Path, name: str, body: str, deployment: str = "main") -> None:
    (tmp_path / f"kb-{deployment}" / name).write_text(textwrap.dedent(body), encoding="utf-8")
    report = bot.sourced.ingestor.ingest(tmp_path / f"kb-{deployment}")
    assert not report.errors and report.added


# -- 1. the operators' Home view --------------------------------------------------------------------------

def test_an_operators_home_after_a_restricted_question_is_the_home_after_an_absent_one(
        deploy: Any, slack: FakeSlack) -> None:
    homes = []
    for name, documents in (("with", None), ("without", WITHOUT_SALARIES)):
        bot: Deployment = deploy(documents=documents, name=name)
        ask(bot, slack, SALARY_QUESTION, user="ULARA", name=f"ask-{name}")  # an operator, not in hr
        homes.append(open_home(bot, slack, "ULARA"))
    with_document, without = homes
    assert "Refused: 1 (not_in_corpus 1)" in with_document["operators"]
    assert "not_permitted" not in json.dumps(with_document)
    assert without_timing(with_document) == without_timing(without)


# -- 2. /metrics ----------------------------------------------------------------------------------------------

def test_metrics_are_not_served_on_the_port_slack_reaches(northwind: Deployment) -> None:
    assert scrape(northwind.url.removesuffix("/slack/events") + "/metrics")[0] == 404


def test_the_outcome_counter_moves_for_a_restricted_question_as_for_an_absent_one(deploy: Any,
                                                                                 slack: FakeSlack) -> None:
    changes = []
    for name, documents in (("with", None), ("without", WITHOUT_SALARIES)):
        bot: Deployment = deploy(documents=documents, name=name)
        before = outcome_counts(bot)
        mention(bot, slack, SALARY_QUESTION, user="UBOB")
        changes.append(moved(before, outcome_counts(bot)))
    assert changes[0] == changes[1]
    assert [labels for labels in changes[0]] == ['{kind="not_in_corpus",risk="high"}']


def test_metrics_behind_a_token_are_read_only_with_it(deploy: Any) -> None:
    bot: Deployment = deploy(slack_settings={"metrics_token": "scrape-me"})
    assert scrape(bot.metrics_url)[0] == 401
    assert scrape(bot.metrics_url, token="not-it")[0] == 401
    assert scrape(bot.metrics_url, token="scrape-me")[0] == 200


# -- 3. forged feedback ---------------------------------------------------------------------------------------

def test_a_channel_click_naming_someone_elses_private_decision_and_its_restricted_chunk_is_not_counted(
        northwind: Deployment, slack: FakeSlack) -> None:
    private = ask(northwind, slack, RAISE_QUESTION, user="UALICE", name="private")  # /ask in CPUBLIC, hr
    named = blocks.parse_answered_it(button(private, Action.ANSWERED_IT)["value"])
    assert named is not None and named.chunk_id.startswith("salary-bands#")
    forged_chunk = blocks.answered_it_value(named.correlation_id, named.chunk_id)
    for name, (action_id, value) in {"answered": (Action.ANSWERED_IT, forged_chunk),
                                     "helpful": (Action.HELPFUL, named.correlation_id)}.items():
        thanks = click(northwind, slack, user="UBOB", action_id=action_id, value=value, name=name)
        assert blocks.THANKS in texts(thanks)  # thanked, as anyone is: the forger learns nothing
    assert feedback_rows(northwind) == []


def test_this_answered_it_counts_only_for_a_chunk_the_reply_showed(northwind: Deployment, slack: FakeSlack) -> None:
    answer = ask(northwind, slack, SALARY_QUESTION, user="UALICE", name="answer")
    decision = button(answer, Action.HELPFUL)["value"]
    record = northwind.sourced.audit_log.get(decision)
    assert record is not None
    unshown = [item.chunk_id for item in record.retrieved if item.chunk_id not in {c.chunk_id for c in record.cited}]
    assert unshown, "the question retrieves a chunk its answer does not cite"
    click(northwind, slack, user="UALICE", action_id=Action.ANSWERED_IT, ephemeral=True, name="unshown",
          value=blocks.answered_it_value(decision, unshown[0]))
    assert feedback_rows(northwind) == []


# -- 4. flooding and erasing ------------------------------------------------------------------------------

def test_the_export_names_each_reader_by_a_keyed_hash_so_one_persons_clicks_weigh_as_one(
        northwind: Deployment, slack: FakeSlack) -> None:
    refunds = mention(northwind, slack, REFUND_QUESTION, user="UBOB")
    meals = mention(northwind, slack, "What is the daily meal limit when travelling?", user="UBOB")
    for n, (reader, reply) in enumerate((("UBOB", refunds), ("UBOB", meals), ("UALICE", refunds))):
        press(northwind, slack, user=reader, action_id=Action.HELPFUL, value=button(reply, Action.HELPFUL)["value"],
              name=f"rate-{n}", message=reply)
    lines = export(northwind)
    assert len(lines) == 3 and all("reader" in line for line in lines)
    bob_refunds, bob_meals, alice_refunds = (line["reader"] for line in lines)
    assert bob_refunds == bob_meals != alice_refunds
    assert export(northwind, key="another-key")[0]["reader"] != bob_refunds  # keyed: no key, no link
    assert "UBOB" not in json.dumps(lines) and "UALICE" not in json.dumps(lines)


def test_one_readers_click_on_a_channel_answer_leaves_the_buttons_to_everyone_else(
        northwind: Deployment, slack: FakeSlack) -> None:
    posted = mention(northwind, slack, REFUND_QUESTION, user="UBOB")
    thanks = click(northwind, slack, user="UALICE", action_id=Action.HELPFUL, name="alice",
                   value=button(posted, Action.HELPFUL)["value"], message=posted)
    assert slack.sent("chat.update") == []
    assert thanks["response_type"] == "ephemeral" and thanks["replace_original"] is False
    assert blocks.THANKS in texts(thanks)
    assert [row[1] for row in feedback_rows(northwind)] == ["UALICE"]


# -- 5. citation markers from documents -----------------------------------------------------------------------

PARKING = """\
    ---
    id: parking-policy
    title: Parking Policy
    owner: "#facilities"
    audience: [everyone]
    ---
    # Parking Policy
    ## Permits
    A parking permit for the staff garage costs 40 dollars per month [2] [3].
    """


def test_markers_written_in_a_document_never_reach_an_answer(tmp_path: Path, northwind: Deployment,
                                                             slack: FakeSlack) -> None:
    add_document(northwind, tmp_path, "parking.md", PARKING)
    posted = mention(northwind, slack, "How much does a parking permit for the staff garage cost per month?",
                     user="UBOB")
    answer = mrkdwn_texts(posted["blocks"][0])
    assert "40 dollars per month" in answer
    assert re.findall(r"\[\d+\]", answer) == ["[1]"] and "[2]" not in posted["text"]


# -- 6. escaping by destination ---------------------------------------------------------------------------

BADGES = """\
    ---
    id: badge-rules
    title: "<!here> Badge Rules <@U0BOSS>"
    owner: "#facilities"
    audience: [everyone]
    updated: 2027-01-01
    ---
    # Badge Rules
    ## Lost badges
    A lost badge is replaced at reception within one working day &lt;!channel&gt; <https://evil.example|the form>.
    """
"""The body's `&lt;!channel&gt;` is Markdown for the words `<!channel>` (a raw `<!channel>` is an HTML
declaration, which the Markdown reader leaves out): the chunk holds Slack's special sequence as text."""
SPECIAL = ("<!here>", "<!channel>", "<@U0BOSS>", "<https://evil.example")


def test_the_passage_buttons_text_fallback_is_mrkdwn_escaped(tmp_path: Path, northwind: Deployment,
                                                             slack: FakeSlack) -> None:
    add_document(northwind, tmp_path, "badges.md", BADGES)
    posted = mention(northwind, slack, "How fast is a lost badge replaced at reception?", user="UBOB")
    shown = click(northwind, slack, user="UBOB", action_id=Action.PASSAGE, name="passage",
                  value=button(posted, Action.PASSAGE)["value"])
    assert "within one working day" in shown["text"] and "&lt;!channel&gt;" in shown["text"]
    assert not [sequence for sequence in SPECIAL if sequence in json.dumps(shown)]


def test_suggested_prompts_from_document_titles_are_plain_text(tmp_path: Path, northwind: Deployment,
                                                               slack: FakeSlack) -> None:
    add_document(northwind, tmp_path, "badges.md", BADGES)
    event(northwind, thread_started_payload(user="UBOB"))
    northwind.settle()
    [call] = slack.wait_for("assistant.threads.setSuggestedPrompts")
    newest = call["prompts"][0]
    assert "Badge Rules" in newest["title"] and "Badge Rules" in newest["message"]
    assert not [sequence for sequence in SPECIAL if sequence in json.dumps(call["prompts"])]


CLAIMS_FORM = """\
    ---
    id: expense-claims
    title: Expense Claims
    owner: "#finance-ops"
    audience: [everyone]
    url: https://wiki.example/claims
    ---
    # Expense Claims
    ## Form
    Submit expenses within 30 days through [the claims form](https://evil.example/form) or https://wiki.example/claims.
    """
CLAIMED = ("Submit expenses within 30 days through [the claims form](https://evil.example/form) or "
           "https://wiki.example/claims.")


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    """A generative model whose one claim quotes the claims form's sentence, links and all."""
    grounded = json.dumps({"found": True, "answer": CLAIMED, "confidence": "high", "refusal_reason": None,
                           "claims": [{"text": CLAIMED, "chunk_ids": ["expense-claims#form"], "quote": CLAIMED}]})
    with ScriptedServer(lambda _messages: grounded) as server:
        yield server


def test_a_streamed_answer_links_only_the_url_its_document_declares(tmp_path: Path, deploy: Any, slack: FakeSlack,
                                                                    scripted: ScriptedServer) -> None:
    bot: Deployment = deploy(settings=Settings(model="openai", model_base_url=scripted.base_url,
                                               model_name="scripted", embedder="none"))
    add_document(bot, tmp_path, "claims.md", CLAIMS_FORM)
    event(bot, dm_payload("How do I submit expenses?", user="UBOB", ts="1700000501.000100"))
    bot.settle()
    streamed = [*slack.sent("chat.startStream"), *slack.sent("chat.appendStream")]
    prose = "".join(chunk["text"] for call in streamed for chunk in call.get("chunks", []))
    assert "within 30 days" in prose
    assert "<https://wiki.example/claims>" in prose  # the document's own url: a link that shows itself
    assert "](https://evil.example" not in prose and "`https://evil.example/form`" in prose  # any other: code


# -- 7. exactly once ------------------------------------------------------------------------------------------

def test_a_redelivered_assistant_thread_start_greets_once(northwind: Deployment, slack: FakeSlack) -> None:
    started = thread_started_payload(user="UBOB")
    event(northwind, started)
    event(northwind, started, retry=1)
    northwind.settle()
    assert len(slack.sent("chat.postMessage")) == 1
    assert len(slack.sent("assistant.threads.setSuggestedPrompts")) == 1


def test_a_thread_message_whose_context_lookup_fails_is_answered_once_for_the_asker_alone(
        northwind: Deployment, slack: FakeSlack) -> None:
    slack.refuse("conversations.replies", "internal_error", times=2)
    message = dm_payload(REFUND_QUESTION, user="UBOB", ts="1700000601.000100", thread_ts="1700000600.000100")
    event(northwind, message)
    northwind.settle()
    event(northwind, message, retry=1)
    northwind.settle()
    [reply] = slack.wait_for("chat.postMessage")
    assert reply["thread_ts"] == "1700000600.000100" and "30 days" in texts(reply)
    assert len(slack.sent("conversations.replies")) == 1  # the retry was dropped before any Web API call
    [record] = northwind.sourced.audit_log.list(limit=1)
    assert record.audience is not None and record.audience.posted_in is None


# -- everything an operator or a scraper reads, with and without the restricted document ---------------------

def normalised(records: list[logging.LogRecord], ids: list[str]) -> list[tuple[str, str]]:
    """INFO and above, as the operator's log shows them, with what differs per request (decision and event
    ids, message timestamps) named by its order of appearance."""
    def named(message: str) -> str:
        for n, correlation_id in enumerate(ids):
            message = message.replace(correlation_id, f"<decision {n}>")
        return re.sub(r"\b(Ev\d+|\d{10}\.\d{6}|\d+\.0001\d\d)\b", "<id>", message)

    return [(record.levelname, named(record.getMessage())) for record in records if record.levelno >= logging.INFO]


def test_home_metrics_export_and_logs_are_the_same_with_the_restricted_document_as_without_it(
        deploy: Any, slack: FakeSlack, caplog: pytest.LogCaptureFixture) -> None:
    seen = []
    for name, documents in (("with", None), ("without", WITHOUT_SALARIES)):
        bot: Deployment = deploy(documents=documents, name=name)
        before = outcome_counts(bot)
        caplog.clear()
        with caplog.at_level(logging.INFO):
            private = ask(bot, slack, SALARY_QUESTION, user="ULARA", name=f"ask-{name}")
            refusal = mention(bot, slack, HOTEL_QUESTION, user="UBOB")
            passage = button(refusal, Action.ANSWERED_IT)
            press(bot, slack, user="UALICE", action_id=Action.ANSWERED_IT, value=passage["value"],
                  name=f"answered-{name}", message=refusal)
            home = open_home(bot, slack, "ULARA")
        ids = [record.correlation_id for record in reversed(bot.sourced.audit_log.list(limit=10))]
        seen.append({"home": without_timing(home), "metrics": moved(before, outcome_counts(bot)),
                     "export": export(bot), "logs": normalised(caplog.records, ids),
                     "replies": [json.loads(re.sub("[0-9a-f]{32}", "<id>", json.dumps(reply["blocks"])))
                                 for reply in (private, refusal)]})
    with_document, without = seen
    assert with_document["export"] and with_document["logs"]
    for surface in with_document:
        assert with_document[surface] == without[surface], surface
    assert "not_permitted" not in json.dumps(with_document)
