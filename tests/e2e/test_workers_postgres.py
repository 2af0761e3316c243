"""Many stateless workers on one PostgreSQL: two `sourced serve --http` processes on two ports (as if on two
hosts) share the suite's pgvector database, with the shipped default embedder, and take signed Slack requests.

- Slack's retries of one event, delivered to both, are answered once.
- A re-ingestion by a third process is seen by both, without a restart.
- A worker killed in the middle of a question loses nothing: Slack's retry (or the other worker's sweep) is
  answered, once.

The tests share one deployment and run in order; the last one kills the first worker.
"""

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.bootstrap import bootstrap
from core.config import Settings
from tests.conftest import new_database
from tests.e2e.conftest import CONFIG, workspace, write_kb
from tests.e2e.fake_slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack, mention_payload, send_event
from tests.e2e.test_serve_http import free_port

ROOT = Path(__file__).resolve().parents[2]
LEASE_S = 2.0
BIKES = """---
id: bike-storage
title: Bike Storage
owner: "#facilities"
---
# Bike Storage
## Monthly fee
The bike storage fee is 12 dollars per month.
"""


@dataclass
class Worker:
    url: str
    process: subprocess.Popen[bytes]


@dataclass
class Deployment:
    workers: list[Worker]
    slack: FakeSlack
    env: dict[str, str]
    kb: Path


def start_worker(env: dict[str, str], folder: Path, name: str) -> Worker:
    port = free_port()
    log = (folder / f"{name}.log").open("wb")
    process = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve", "--http", "--host", "127.0.0.1", "--port",
                                str(port), "--workers", "1", "--threads", "4", "--metrics-port", "0"], env=env,
                               cwd=folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return Worker(url=f"http://127.0.0.1:{port}", process=process)


def wait_healthy(worker: Worker, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert worker.process.poll() is None, "a worker exited during its start"
        try:
            with urllib.request.urlopen(worker.url + "/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{worker.url} not healthy within {timeout_s}s")


def stop(worker: Worker) -> None:
    if worker.process.poll() is None:
        os.killpg(worker.process.pid, signal.SIGTERM)
    worker.process.wait(timeout=60)


@pytest.fixture(scope="module")
def deployment(pgvector_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    folder = tmp_path_factory.mktemp("workers")
    database = new_database(pgvector_server)
    sourced = bootstrap(Settings(database_url=database, embedder="auto"), config=CONFIG, progress=False)
    kb = write_kb(folder / "kb")
    assert not sourced.ingestor.ingest(kb).errors
    sourced.engine.dispose()
    (folder / "sourced.yml").write_text(CONFIG.model_dump_json(), encoding="utf-8")
    slack = FakeSlack(workspace()).start()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SLACK_", "SOURCED_"))}
    env |= {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SOURCED_SLACK_API_URL": slack.api_url, "SOURCED_DATABASE_URL": database, "SOURCED_EMBEDDER": "auto",
            "SOURCED_CONFIG": str(folder / "sourced.yml"), "SOURCED_SLACK_EVENT_LEASE_S": str(LEASE_S),
            "PYTHONPATH": str(ROOT)}
    workers = [start_worker(env, folder, name) for name in ("first", "second")]
    try:
        for worker in workers:
            wait_healthy(worker)
        yield Deployment(workers=workers, slack=slack, env=env, kb=kb)
    finally:
        for worker in workers:
            stop(worker)
        slack.stop()


def replies_in(slack: FakeSlack, thread_ts: str) -> list[dict[str, object]]:
    return [body for body in slack.sent("chat.postMessage") if body.get("thread_ts") == thread_ts]


def wait_for_reply(slack: FakeSlack, thread_ts: str, timeout_s: float = 60.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout_s
    while not replies_in(slack, thread_ts):
        if time.monotonic() > deadline:
            raise AssertionError(f"no reply in thread {thread_ts} within {timeout_s}s")
        time.sleep(0.05)
    return replies_in(slack, thread_ts)[0]


def settle() -> None:
    """Long enough for any second answer to an event to have been posted: leases run out, sweeps pass."""
    time.sleep(LEASE_S * 3)


def test_retries_of_one_event_delivered_to_both_workers_are_answered_once(deployment: Deployment) -> None:
    first, second = (worker.url + "/slack/events" for worker in deployment.workers)
    events = [mention_payload("How many days do customers have to return items for a refund?", user="UBOB",
                              channel="CPUBLIC", ts=f"1700000{n:03d}.000100") for n in range(6)]
    deliveries = [(url, event, retry) for event in events
                  for url, retry in ((first, None), (second, 1), (first, 2), (second, 3))]
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(lambda delivery: send_event(delivery[0], delivery[1], retry=delivery[2]).status,
                                 deliveries))
    assert statuses == [200] * len(deliveries)
    for event in events:
        assert "30 days" in str(wait_for_reply(deployment.slack, event["event"]["ts"])["blocks"])
    settle()
    assert [len(replies_in(deployment.slack, event["event"]["ts"])) for event in events] == [1] * len(events)


def test_a_re_ingestion_by_a_third_process_is_seen_by_both_workers_without_a_restart(
        deployment: Deployment) -> None:
    question = "What is the monthly bike storage fee?"
    before = mention_payload(question, user="UBOB", channel="CPUBLIC", ts="1700001000.000100")
    send_event(deployment.workers[0].url + "/slack/events", before)
    assert "12 dollars" not in str(wait_for_reply(deployment.slack, "1700001000.000100")["blocks"])
    (deployment.kb / "bikes.md").write_text(BIKES, encoding="utf-8")
    ingested = subprocess.run([sys.executable, "-m", "bot.cli", "ingest", str(deployment.kb)], env=deployment.env,
                              cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert ingested.returncode == 0, ingested.stderr
    for n, worker in enumerate(deployment.workers):
        ts = f"170000110{n}.000100"
        send_event(worker.url + "/slack/events", mention_payload(question, user="UBOB", channel="CPUBLIC", ts=ts))
        assert "12 dollars" in str(wait_for_reply(deployment.slack, ts)["blocks"])


def test_a_worker_killed_in_the_middle_of_a_question_loses_nothing(deployment: Deployment) -> None:
    doomed, survivor = deployment.workers
    gate = deployment.slack.hold("users.info", user="ULARA")  # the first worker's question stops there
    event = mention_payload("How many days do customers have to return items for a refund?", user="ULARA",
                            channel="CPUBLIC", ts="1700002000.000100")
    assert send_event(doomed.url + "/slack/events", event).status == 200
    deployment.slack.wait_until_waiting("users.info")
    os.killpg(doomed.process.pid, signal.SIGKILL)
    doomed.process.wait(timeout=30)
    gate.set()
    assert send_event(survivor.url + "/slack/events", event, retry=1).status == 200  # Slack's retry
    assert "30 days" in str(wait_for_reply(deployment.slack, "1700002000.000100")["blocks"])
    settle()
    assert len(replies_in(deployment.slack, "1700002000.000100")) == 1
