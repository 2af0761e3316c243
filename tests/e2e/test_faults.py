"""Faults, each with its defined outcome, over real HTTP: signed Slack requests to the served app, a real SQLite
file, the fake Slack Web API and OpenAI-compatible model and embedding servers on loopback.

| fault                                            | outcome                                                   |
|--------------------------------------------------|-----------------------------------------------------------|
| the database refuses writes, `best_effort` audit | the reply goes; `sourced_audit_write_failures_total` +1   |
| the database refuses writes, `required` audit    | the unavailable sentence, no answer                       |
| the database refuses writes, a mention           | the asker is told privately, once (no claim, no answer)   |
| the embedding endpoint down or slower than its   | answered from words alone (BM25 and lexical answerability) |
| timeout                                          |                                                           |
| the model slower than its budget                 | "I can't answer right now", once, and nothing later       |
| Slack answers 429 with Retry-After, or a 5xx     | the reply is delivered once, after the wait               |
| a worker killed while composing a reply          | gunicorn starts another, whose sweep answers it, once     |
| the whole server killed, then restarted          | Slack's retry is answered, once                           |
"""

import hashlib
import json
import math
import os
import re
import signal
import sqlite3
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from bot import blocks
from bot.surface import Action
from core.application import refusals
from core.config import Settings
from tests.e2e.conftest import Deployment
from tests.e2e.fake_slack import FakeSlack, mention_payload, send_command, send_event
from tests.e2e.test_serve_http import environment
from tests.e2e.test_workers_postgres import (
    LEASE_S,
    Worker,
    replies_in,
    start_worker,
    stop,
    wait_for_reply,
    wait_healthy,
)
from tests.mrkdwn import mrkdwn_texts

REFUND_QUESTION = "How many days do customers have to return items for a refund?"


def texts(body: dict[str, Any]) -> str:
    return mrkdwn_texts(body.get("blocks", []))


def ask(bot: Deployment, slack: FakeSlack, text: str = REFUND_QUESTION, *, name: str = "ask-1",
        timeout_s: float = 30.0) -> dict[str, Any]:
    url = slack.response_url(name)
    assert send_command(bot.url, text=text, user="UBOB", channel="CPUBLIC", response_url=url).status == 200
    return slack.wait_for(f"response/{name}", timeout_s=timeout_s)[0]


def metric(bot: Deployment, name: str) -> float:
    """A counter as `/metrics` (the served endpoint) reports it; 0 before its first increment."""
    with urllib.request.urlopen(bot.metrics_url, timeout=5) as response:
        exposition = response.read().decode()
    found = re.search(rf"^{re.escape(name)} (\S+)$", exposition, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


@contextmanager
def writes_refused(database: Path) -> Iterator[None]:
    """Another connection holds SQLite's write lock: reads go on (WAL), every write waits out the busy timeout
    and fails with "database is locked", as when the disk or another writer stalls."""
    holder = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def database_of(bot: Deployment) -> Path:
    return Path(str(bot.sourced.engine.url.database))


# -- the database --------------------------------------------------------------------------------------------

def test_with_the_database_refusing_writes_a_best_effort_question_is_answered_and_counted(
        deploy: Any, slack: FakeSlack) -> None:
    bot: Deployment = deploy(settings=Settings(audit_mode="best_effort"))
    before = metric(bot, "sourced_audit_write_failures_total")
    with writes_refused(database_of(bot)):
        reply = ask(bot, slack)
    assert "30 days" in texts(reply)
    assert metric(bot, "sourced_audit_write_failures_total") == before + 1
    assert bot.sourced.audit_log.list(limit=5) == []


def test_with_the_database_refusing_writes_a_required_audit_withholds_the_answer(deploy: Any,
                                                                                 slack: FakeSlack) -> None:
    bot: Deployment = deploy(settings=Settings(audit_mode="required"))
    with writes_refused(database_of(bot)):
        reply = ask(bot, slack)
    assert refusals.AUDIT_UNAVAILABLE in texts(reply)
    assert "30 days" not in json.dumps(reply)


def test_a_mention_while_the_database_refuses_writes_is_told_privately_once(northwind: Deployment,
                                                                            slack: FakeSlack) -> None:
    payload = mention_payload(REFUND_QUESTION, user="UBOB", channel="CPUBLIC", ts="1700000300.000100")
    with writes_refused(database_of(northwind)):
        assert send_event(northwind.url, payload).status == 200
        northwind.settle(timeout_s=30)
    [told] = slack.wait_for("chat.postEphemeral")
    assert told["user"] == "UBOB" and told["thread_ts"] == "1700000300.000100"
    assert blocks.UNAVAILABLE in texts(told)
    assert slack.sent("chat.postMessage") == []


# -- the embedding endpoint and the model --------------------------------------------------------------------

def bag_of_words(text: str, dim: int = 64) -> list[float]:
    vector = [0.0] * dim
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dim] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


@dataclass
class Endpoint:
    """An OpenAI-compatible server on loopback (`/embeddings`, `/chat/completions`) whose behaviour a test
    changes while it runs: `up`, `failing` (HTTP 503), or `slow` (answers after `delay_s`)."""

    mode: str = "up"
    delay_s: float = 0.0
    requests: int = 0
    url: str = ""

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.requests += 1
        if self.mode == "slow":
            time.sleep(self.delay_s)
        if self.mode == "failing":
            return 503, {"error": {"message": "scripted outage", "type": "server_error"}}
        if path.endswith("/embeddings"):
            data = [{"object": "embedding", "index": i, "embedding": bag_of_words(text)}
                    for i, text in enumerate(body["input"])]
            return 200, {"object": "list", "model": "bow", "data": data}
        return 200, {"id": "c1", "object": "chat.completion", "created": 1, "model": "slow-model",
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": "{}"}}]}


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    state = Endpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, payload = state.answer(self.path, body)
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("retry-after-ms", "10")  # keeps the client's backoff short in tests
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client timed out and left
                pass

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield state
    server.shutdown()
    server.server_close()


def embedding_settings(endpoint: Endpoint) -> Settings:
    return Settings(embedder="openai", embedding_base_url=endpoint.url, embedding_model="bow",
                    embedding_timeout_s=0.5)


@pytest.mark.parametrize("fault", ["failing", "slow"])
def test_with_the_embedding_endpoint_down_or_slow_a_question_is_answered_from_words_alone(
        deploy: Any, slack: FakeSlack, endpoint: Endpoint, fault: str) -> None:
    bot: Deployment = deploy(settings=embedding_settings(endpoint))  # ingested with the endpoint up
    endpoint.mode, endpoint.delay_s, endpoint.requests = fault, 2.0, 0
    started = time.monotonic()
    reply = ask(bot, slack)
    assert "30 days" in texts(reply) and "*Refund Policy*" in texts(reply)
    assert endpoint.requests > 0  # it was asked, and failed
    assert time.monotonic() - started < 25  # bounded: timeouts and retries, never a hang
    [record] = bot.sourced.audit_log.list(limit=1)
    assert record.kind == "answered"


def test_a_model_slower_than_its_budget_is_told_once_and_nothing_comes_later(
        deploy: Any, slack: FakeSlack, endpoint: Endpoint) -> None:
    settings = Settings(model="openai", model_base_url=endpoint.url, model_name="slow-model",
                        model_timeout_s=0.5, embedder="none")
    bot: Deployment = deploy(settings=settings)
    endpoint.mode, endpoint.delay_s = "slow", 3.0
    payload = mention_payload(REFUND_QUESTION, user="UBOB", channel="CPUBLIC", ts="1700000400.000100")
    assert send_event(bot.url, payload).status == 200
    [told] = slack.wait_for("chat.postMessage", timeout_s=30)
    assert refusals.MODEL_UNAVAILABLE in texts(told)
    assert Action.PASSAGE not in json.dumps(told)  # no answer's sources (its closest passages may say 30 days)
    bot.settle(timeout_s=30)
    time.sleep(endpoint.delay_s)  # past the moment the model would have answered
    assert len(slack.sent("chat.postMessage")) == 1 and slack.sent("chat.postEphemeral") == []
    [record] = bot.sourced.audit_log.list(limit=1)
    assert record.kind == "model_unavailable"


def slow_model(endpoint: Endpoint) -> Settings:
    """A model that answers after `endpoint.delay_s`, within its deadline (its "{}" is refused as malformed)."""
    endpoint.mode, endpoint.delay_s = "slow", 1.5
    return Settings(model="openai", model_base_url=endpoint.url, model_name="slow-model", embedder="none")


def test_a_slow_mention_shows_still_working_in_the_thread_then_the_reply_replaces_it(
        deploy: Any, slack: FakeSlack, endpoint: Endpoint) -> None:
    bot: Deployment = deploy(settings=slow_model(endpoint), slack_settings={"working_after_s": 0.3})
    payload = mention_payload(REFUND_QUESTION, user="UBOB", channel="CPUBLIC", ts="1700000500.000100")
    assert send_event(bot.url, payload).status == 200

    [notice] = slack.wait_for("chat.postMessage", timeout_s=30)
    [reply] = slack.wait_for("chat.update", timeout_s=30)

    assert blocks.STILL_WORKING in texts(notice) and notice["thread_ts"] == "1700000500.000100"
    assert blocks.STILL_WORKING not in texts(reply) and reply["channel"] == "CPUBLIC"
    assert reply["ts"].endswith(".000100")  # the notice's own ts: it is replaced, not followed
    bot.settle(timeout_s=30)
    assert len(slack.sent("chat.postMessage")) == 1


def test_a_slow_slash_command_shows_still_working_privately_then_replaces_it(
        deploy: Any, slack: FakeSlack, endpoint: Endpoint) -> None:
    bot: Deployment = deploy(settings=slow_model(endpoint), slack_settings={"working_after_s": 0.3})
    url = slack.response_url("slow-1")
    assert send_command(bot.url, text=REFUND_QUESTION, user="UBOB", channel="CPUBLIC", response_url=url).status == 200

    notice, reply = slack.wait_for("response/slow-1", count=2, timeout_s=30)

    assert blocks.STILL_WORKING in texts(notice) and notice["response_type"] == "ephemeral"
    assert blocks.STILL_WORKING not in texts(reply) and reply["replace_original"] is True


def test_a_reply_faster_than_the_notice_delay_posts_no_notice(deploy: Any, slack: FakeSlack) -> None:
    bot: Deployment = deploy(slack_settings={"working_after_s": 5.0})
    reply = ask(bot, slack)
    bot.settle()
    assert "30 days" in texts(reply) and reply["replace_original"] is False
    assert len(slack.sent("response/ask-1")) == 1


# -- Slack ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("status", "retry_after_s"), [(429, 1.0), (503, None), (500, None)])
def test_slack_refusing_the_reply_once_still_delivers_it_once(northwind: Deployment, slack: FakeSlack,
                                                              status: int, retry_after_s: float | None) -> None:
    slack.fail("chat.postMessage", status, retry_after_s=retry_after_s)
    payload = mention_payload(REFUND_QUESTION, user="UBOB", channel="CPUBLIC", ts="1700000500.000100")
    started = time.monotonic()
    assert send_event(northwind.url, payload).status == 200
    northwind.settle(timeout_s=30)
    [posted] = slack.wait_for("chat.postMessage")
    assert "30 days" in texts(posted)
    assert [call.method for call in slack.faulted] == ["chat.postMessage"]
    assert slack.sent("chat.postEphemeral") == []  # no apology: nothing failed that the person saw
    if retry_after_s is not None:
        assert time.monotonic() - started >= retry_after_s  # Slack's Retry-After was honoured


def test_slack_rate_limiting_the_reply_longer_than_the_retries_tells_the_person(northwind: Deployment,
                                                                                slack: FakeSlack) -> None:
    slack.fail("chat.postMessage", 429, times=10, retry_after_s=0.1)
    payload = mention_payload(REFUND_QUESTION, user="UBOB", channel="CPUBLIC", ts="1700000600.000100")
    assert send_event(northwind.url, payload).status == 200
    northwind.settle(timeout_s=30)
    assert slack.sent("chat.postMessage") == []
    [told] = slack.wait_for("chat.postEphemeral")
    assert blocks.UNAVAILABLE in texts(told) and told["user"] == "UBOB"


def test_a_reply_recorded_as_answered_only_after_the_database_returns_is_still_posted_once(
        deploy: Any, slack: FakeSlack) -> None:
    """The reply went, then the database refused to record the event as answered for longer than its lease:
    the worker keeps trying, and neither its own sweep nor anyone else answers the event again."""
    bot: Deployment = deploy(slack_settings={"event_lease_s": 1.0})
    gate = slack.hold("chat.postMessage", user="")  # the reply in flight, its audit record already written
    payload = mention_payload(REFUND_QUESTION, user="UBOB", channel="CPUBLIC", ts="1700000700.000100",
                              event_id="EvFINISH01")
    assert send_event(bot.url, payload).status == 200
    slack.wait_until_waiting("chat.postMessage")
    with writes_refused(database_of(bot)):
        gate.set()
        time.sleep(7.0)  # past the busy timeout (5 s) of the first attempt to finish, and several leases
    bot.settle(timeout_s=30)
    time.sleep(3.0)  # three leases: time for any sweep to take the event over
    assert len(slack.sent("chat.postMessage")) == 1
    assert bot.sourced.processed_events.abandoned() == []


# -- a worker killed while composing a reply: the default deployment, SQLite and one `sourced serve --http` ---

@pytest.fixture
def served(tmp_path: Path, slack: FakeSlack) -> Iterator[tuple[Worker, dict[str, str]]]:
    env = environment(tmp_path, slack, SOURCED_SLACK_EVENT_LEASE_S=str(LEASE_S))
    worker = start_worker(env, tmp_path, "served")
    try:
        wait_healthy(worker)
        yield worker, env
    finally:
        stop(worker)


def worker_pid(worker: Worker) -> int:
    with urllib.request.urlopen(worker.url + "/healthz", timeout=5) as response:
        return int(json.loads(response.read())["worker"])


def interrupted_question(worker: Worker, slack: FakeSlack, ts: str) -> dict[str, Any]:
    """A mention whose answer stops at `users.info` (claimed, not yet answered); the caller kills something."""
    gate = slack.hold("users.info", user="ULARA")
    event = mention_payload(REFUND_QUESTION, user="ULARA", channel="CPUBLIC", ts=ts)
    assert send_event(worker.url + "/slack/events", event).status == 200
    slack.wait_until_waiting("users.info")
    threading.Timer(1.0, gate.set).start()  # the dead worker's call returns into nothing
    return event


def test_a_worker_killed_while_composing_a_reply_is_replaced_and_the_question_answered_once(
        served: tuple[Worker, dict[str, str]], slack: FakeSlack) -> None:
    worker, _ = served
    doomed = worker_pid(worker)
    interrupted_question(worker, slack, "1700000800.000100")
    os.kill(doomed, signal.SIGKILL)  # out of memory, say; gunicorn starts another worker
    assert "30 days" in str(wait_for_reply(slack, "1700000800.000100")["blocks"])  # its sweep, no retry needed
    assert worker_pid(worker) != doomed
    time.sleep(LEASE_S * 3)
    assert len(replies_in(slack, "1700000800.000100")) == 1


def test_a_server_killed_while_composing_a_reply_answers_slacks_retry_once_after_a_restart(
        served: tuple[Worker, dict[str, str]], slack: FakeSlack, tmp_path: Path) -> None:
    worker, env = served
    event = interrupted_question(worker, slack, "1700000900.000100")
    os.killpg(worker.process.pid, signal.SIGKILL)  # the host goes
    worker.process.wait(timeout=30)
    restarted = start_worker(env, tmp_path, "restarted")
    try:
        wait_healthy(restarted)
        assert send_event(restarted.url + "/slack/events", event, retry=1).status == 200
        assert "30 days" in str(wait_for_reply(slack, "1700000900.000100")["blocks"])
        time.sleep(LEASE_S * 3)
        assert len(replies_in(slack, "1700000900.000100")) == 1
    finally:
        stop(restarted)
