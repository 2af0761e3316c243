"""Nothing secret or personal leaks into logs or the database: an end-to-end run with every logger at DEBUG.

Signed Slack requests go to the served HTTP app, configured with a bot token, a signing secret and an
OpenAI-compatible model with an API key (a scripted server on loopback). Everything logged (every logger at
DEBUG, tracebacks formatted), everything written to stdout and stderr, and every row of every table is then
searched for the token, the secret, the key and the questions as typed. Each question ends in a word of its own
that the audit preview (a prefix) never reaches, so finding that word anywhere means the question leaked.
The one place a question may be at rest is the short-lived state of conversations (DESIGN section 3): its
turns are checked apart, to expire within their time to live, to hold no card number, and to be gone after the
purge.
"""

import json
import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from wsgiref.simple_server import make_server

import pytest
from pydantic import SecretStr
from sqlalchemy import MetaData, select

from bot.app import create_bot
from bot.http import wsgi_app
from bot.settings import SlackSettings
from bot.surface import Action
from bot.work import ReplyWorkers
from core.bootstrap import bootstrap
from core.config import Settings
from core.eval.scripted_server import ScriptedServer
from core.storage.tables import ConversationTurnRow
from tests.e2e.conftest import CONFIG, _QuietHandler, _ThreadingWSGIServer, workspace, write_kb
from tests.e2e.fake_slack import FakeSlack, dm_payload, mention_payload, post, sign

BOT_TOKEN = "xoxb-4417-9902-Zq7sBotTokenNeverLogged"
SIGNING_SECRET = "5e1f0c0ffee5ign1ngSecretNeverLogged"
API_KEY = "sk-test-4f0c-ApiKeyNeverLogged-77d2"
QUESTIONS = {
    "answered": "How many days do customers have to return items for a refund, marmalade?",
    "refused": "Who approves a sabbatical for my partner, whose card is 4111 1111 1111 1111, tangerine?",
    "private": "What is the base salary band for a Senior Engineer, kumquat?",
    "invalid": "What is the daily meal limit when travelling " + "please " * 160 + "pomelo?",
}
MARKERS = ("marmalade", "tangerine", "kumquat", "pomelo", "4111 1111 1111 1111")
GROUNDED = json.dumps({
    "found": True, "answer": "Customers may return items within 30 days of delivery for a full refund.",
    "claims": [{"text": "Customers may return items within 30 days of delivery for a full refund.",
                "chunk_ids": ["refund-policy#return-window"],
                "quote": "Customers may return items within 30 days of delivery for a full refund."}],
    "confidence": "high", "refusal_reason": None})


class _Everything(logging.Handler):
    """Every record, formatted with its traceback, as one string per record."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record) + " " + repr(record.args))


@pytest.fixture
def everything_logged() -> Iterator[_Everything]:
    """Every logger at DEBUG (those already created and, through the root, those created later), each
    record caught, including on loggers that do not propagate."""
    handler = _Everything()
    root = logging.getLogger()
    saved = {name: (logger.level, logger.propagate) for name, logger in logging.root.manager.loggerDict.items()
             if isinstance(logger, logging.Logger)}
    root_level = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    for name in saved:
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        if not logger.propagate:
            logger.addHandler(handler)
    yield handler
    root.removeHandler(handler)
    root.setLevel(root_level)
    for name, (level, _) in saved.items():
        logger = logging.getLogger(name)
        logger.setLevel(level)
        logger.removeHandler(handler)


@pytest.fixture
def model_server() -> Iterator[str]:
    """An OpenAI-compatible chat endpoint that answers every request with one grounded envelope."""
    with ScriptedServer(lambda _messages: GROUNDED) as server:
        yield server.base_url


def test_no_secret_and_no_question_reaches_the_logs_the_console_or_the_database(
        tmp_path: Path, model_server: str, everything_logged: _Everything, capfd: pytest.CaptureFixture[str]) -> None:
    slack = FakeSlack(workspace(), token=BOT_TOKEN).start()
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'sourced.db'}", model="openai",
                        model_base_url=model_server, model_name="scripted", model_api_key=SecretStr(API_KEY),
                        embedder="auto")
    sourced = bootstrap(settings, config=CONFIG, progress=False)
    assert not sourced.ingestor.ingest(write_kb(tmp_path / "kb")).errors
    bot = create_bot(sourced, SlackSettings(bot_token=BOT_TOKEN, signing_secret=SIGNING_SECRET,
                                            api_url=slack.api_url), workers=ReplyWorkers(workers=2))
    server = make_server("127.0.0.1", 0, wsgi_app(bot.app), server_class=_ThreadingWSGIServer,
                         handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/slack/events"

    def signed(body: str) -> dict[str, str]:
        return sign(body, secret=SIGNING_SECRET)

    def event(payload: dict[str, Any]) -> None:
        body = json.dumps(payload)
        assert post(url, body, content_type="application/json", headers=signed(body)).status in (200, 400)

    def command(text: str, name: str) -> None:
        body = urlencode({"command": "/ask", "text": text, "user_id": "UALICE", "team_id": "T0NORTHWIND",
                          "channel_id": "CPUBLIC", "response_url": slack.response_url(name), "trigger_id": "t"})
        assert post(url, body, content_type="application/x-www-form-urlencoded", headers=signed(body)).status == 200

    try:
        event(mention_payload(QUESTIONS["answered"], user="UBOB", channel="CPUBLIC"))
        event(mention_payload(QUESTIONS["refused"], user="UBOB", channel="CPUBLIC"))
        event(mention_payload(QUESTIONS["invalid"], user="UBOB", channel="CPUBLIC"))
        event({**mention_payload(QUESTIONS["refused"], user="UBOB", channel="CPUBLIC"), "event": None})
        for direct in (dm_payload(QUESTIONS["answered"], user="UBOB", ts="1700000500.000100"),  # streamed
                       dm_payload(QUESTIONS["refused"], user="UBOB", ts="1.5", thread_ts="1.5")):  # assistant
            event(direct)
        forged = json.dumps(mention_payload(QUESTIONS["private"], user="UBOB", channel="CPUBLIC"))  # a rotated secret
        assert post(url, forged, content_type="application/json",
                    headers=sign(forged, secret="an-old-secret")).status == 401
        command(QUESTIONS["private"], "private")
        command(QUESTIONS["answered"], "answered")
        bot.workers.wait_idle(60)
        answered = slack.wait_for("response/answered", timeout_s=30)[0]
        buttons = [element for block in answered["blocks"] for element in
                   [*block.get("elements", []), block.get("accessory") or {}] if element.get("action_id")]
        assert {Action.SHARE, Action.PASSAGE, Action.HELPFUL} <= {button["action_id"] for button in buttons}
        for button in buttons:
            if button["action_id"] in (Action.SHARE, Action.PASSAGE, Action.HELPFUL):
                _click(url, slack, button, signed)
        bot.workers.wait_idle(60)
        assert slack.sent("chat.postMessage"), "the share and the answered mention were posted"
        assert slack.sent("chat.stopStream"), "the answered DM was streamed"
    finally:
        server.shutdown()
        server.server_close()
        bot.close()
        slack.stop()

    rows = _expire_the_turns(sourced, ttl=timedelta(minutes=settings.conversation_ttl_minutes))
    console = capfd.readouterr()
    places = {"logs": "\n".join(everything_logged.lines), "stdout": console.out, "stderr": console.err,
              "database": rows}
    assert len(everything_logged.lines) > 50, "DEBUG logging was not captured"
    secrets = {"bot token": BOT_TOKEN, "signing secret": SIGNING_SECRET, "API key": API_KEY}
    leaks = [f"{what} in {where}" for where, text in places.items() for what, secret in secrets.items()
             if secret in text or secret[-16:] in text]
    leaks += [f"question text {marker!r} in {where}" for where, text in places.items() for marker in MARKERS
              if marker.casefold() in text.casefold()]
    leaks += [f"question {name!r} in {where}" for where, text in places.items() for name, question in
              QUESTIONS.items() if question in text]
    assert not leaks, _context(leaks, places)


def _click(url: str, slack: FakeSlack, button: dict[str, Any], signed: Any) -> None:
    payload = {"type": "block_actions", "user": {"id": "UALICE", "team_id": "T0NORTHWIND"},
               "team": {"id": "T0NORTHWIND"}, "channel": {"id": "CPUBLIC"},
               "response_url": slack.response_url(str(button["action_id"])),
               "container": {"type": "message", "message_ts": "1.000100", "channel_id": "CPUBLIC",
                             "is_ephemeral": True},
               "actions": [{"type": "button", "action_id": button["action_id"], "value": button["value"],
                            "action_ts": "1.2"}]}
    body = urlencode({"payload": json.dumps(payload)})
    assert post(url, body, content_type="application/x-www-form-urlencoded", headers=signed(body)).status == 200


def _expire_the_turns(sourced: Any, *, ttl: timedelta) -> str:
    """The conversations' turns hold the questions as answered, masked, for `ttl`; after it, nothing. Returns
    every row left, and closes the database."""
    kept = _every_row(sourced.engine, only="conversation_turns")
    assert "4111 1111 1111 1111" not in kept and "[card]" in kept  # the turn keeps the topic, masked
    with sourced.engine.connect() as connection:
        lifetimes = {expires - created for created, expires in connection.execute(
            select(ConversationTurnRow.created_at, ConversationTurnRow.expires_at))}
    assert lifetimes == {ttl}
    assert sourced.turns.purge_expired(datetime.now(UTC) + ttl) > 0
    assert _every_row(sourced.engine, only="conversation_turns") == ""
    rows = _every_row(sourced.engine)
    sourced.engine.dispose()
    return rows


def _every_row(engine: Any, *, only: str | None = None) -> str:
    """Every row of every table (or of the one named), as text."""
    metadata = MetaData()
    metadata.reflect(engine)
    dumped: list[str] = []
    with engine.connect() as connection:
        for table in metadata.sorted_tables:
            if only is None or table.name == only:
                dumped += [f"{table.name}: {tuple(row)!r}" for row in connection.execute(select(table))]
    return "\n".join(dumped)


def _context(leaks: list[str], places: dict[str, str]) -> str:
    """The leaks, each with the text around its first occurrence, so the failure says where to look."""
    needles = (*MARKERS, BOT_TOKEN, SIGNING_SECRET, API_KEY, *QUESTIONS.values())
    lines = list(leaks)
    for where, text in places.items():
        for needle in needles:
            at = text.casefold().find(needle.casefold())
            if at >= 0:
                lines.append(f"{where}: ..." + text[max(0, at - 300): at + 100].replace("\n", " | ") + "...")
    return "\n".join(lines)
