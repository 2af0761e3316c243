"""How fast `sourced serve --http` acknowledges Slack while answers are being computed, per kind of event.

Starts the real server (gunicorn, `--workers`) against a temporary SQLite database and knowledge base, and a
fake Slack Web API on loopback, in a process of its own, whose every call takes `--slack-latency-ms` (as
Slack's own API does). Once every worker is up, one unmeasured burst warms them (its figures are printed as
"first burst"); then it sends N concurrent signed mentions, and the same N again as Slack's retries, while
the answers are being computed, and reports:

- ack latency p50 / p99 / max (time to the HTTP 200 Slack waits for; Slack retries after 3 s),
- answers per second (first event sent to the last Web API call that answers one, e.g. `chat.postMessage`),
- duplicate replies (must be 0 for questions: each event is processed once across workers).

`--event` picks the kind: `mention` (default), `dm` (`message.im`), `assistant_message` (a message in an
assistant thread), `assistant_thread_started`, `assistant_thread_context_changed`, `app_home_opened`.

    .venv/bin/python -m benchmarks.slack_ack            # N=20 mentions, 2 workers
    .venv/bin/python -m benchmarks.slack_ack --event dm
    .venv/bin/python -m benchmarks.slack_ack -n 50 --workers 4

Exit status 1 when an ack took 100 ms or more, or a reply was duplicated or missing.
"""

import argparse
import http.client
import json
import math
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from core.bootstrap import bootstrap
from core.config import Settings
from tests.e2e.conftest import CONFIG, write_kb
from tests.e2e.conftest import workspace as northwind_workspace
from tests.e2e.fake_slack import (
    BOT_TOKEN,
    SIGNING_SECRET,
    FakeSlack,
    Reply,
    context_changed_payload,
    dm_payload,
    home_opened_payload,
    mention_payload,
    sign,
    thread_started_payload,
)

REPOSITORY: Final = Path(__file__).resolve().parents[1]
TARGET_ACK_S: Final = 0.100
QUESTIONS: Final = (
    "How many days do customers have to return items for a refund?",
    "What is the daily meal limit when travelling?",
    "What is the visitor Wi-Fi network called?",
    "my payslip is wrong this month, who fixes it?",
)




@dataclass(frozen=True)
class Surface:
    """One kind of event: the i-th event of a wave (given its ts), the Web API method whose call answers it,
    and whether it is a question (answered once however often Slack delivers it)."""

    build: Callable[[int, str], dict[str, object]]
    answered_by: str
    once: bool


SURFACES: Final[dict[str, Surface]] = {
    "mention": Surface(lambda i, ts: mention_payload(QUESTIONS[i % len(QUESTIONS)], user="UBOB", channel="CPUBLIC",
                                                     ts=ts), "chat.postMessage", once=True),
    "dm": Surface(lambda i, ts: dm_payload(QUESTIONS[i % len(QUESTIONS)], user="UBOB", ts=ts),
                  "chat.postMessage", once=True),
    "assistant_message": Surface(lambda i, ts: dm_payload(QUESTIONS[i % len(QUESTIONS)], user="UBOB", ts=ts,
                                                          thread_ts=ts), "chat.postMessage", once=True),
    "assistant_thread_started": Surface(lambda _i, ts: thread_started_payload(user="UBOB", thread_ts=ts),
                                        "assistant.threads.setSuggestedPrompts", once=False),
    "assistant_thread_context_changed": Surface(
        lambda _i, ts: context_changed_payload(user="UBOB", context_channel="CPUBLIC", thread_ts=ts),
        "conversations.replies", once=False),
    "app_home_opened": Surface(lambda _i, _ts: home_opened_payload(user="UBOB"), "views.publish", once=False),
}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    slack = multiprocessing.get_context("fork").Process(
        target=_run_fake_slack, args=(args.slack_port, args.slack_latency_ms / 1000), daemon=True)
    slack.start()
    api = RemoteSlack(f"http://127.0.0.1:{args.slack_port}")
    with tempfile.TemporaryDirectory(prefix="sourced-bench-") as folder:
        root = Path(folder)
        database_url = _prepare(root)
        server = _start_server(root, database_url, api, port=args.port, workers=args.workers)
        try:
            return _measure(args, api)
        finally:
            server.terminate()
            server.wait(timeout=30)
            slack.terminate()


def _run_fake_slack(port: int, latency_s: float) -> None:
    FakeSlack(northwind_workspace(), latency_s=latency_s, port=port).start()
    threading.Event().wait()


class RemoteSlack:
    """The fake Slack of the other process, through its `/_calls` endpoint."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.api_url = f"{base}/api/"

    def sent(self, method: str) -> list[dict[str, object]]:
        with urllib.request.urlopen(f"{self.base}/_calls?method={method}", timeout=10) as response:
            found: list[dict[str, object]] = json.loads(response.read())
            return found

    def count(self, method: str) -> int:
        with urllib.request.urlopen(f"{self.base}/_calls?method={method}&count=1", timeout=10) as response:
            return int(json.loads(response.read()))

    def wait_for(self, method: str, count: int, timeout_s: float) -> int:
        """Poll (cheaply: the count only) until `count` calls were recorded; the time it happened."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with suppress(OSError):
                if self.count(method) >= count:
                    return count
            time.sleep(0.01)
        raise SystemExit(f"only {self.count(method)} of {count} {method} calls within {timeout_s}s")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchmarks.slack_ack", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--mentions", type=int, default=20, help="concurrent events (default 20)")
    parser.add_argument("--event", choices=sorted(SURFACES), default="mention", help="the kind of event")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (default 2)")
    parser.add_argument("--port", type=int, default=38091, help="loopback port for the server")
    parser.add_argument("--slack-port", type=int, default=38092, help="loopback port for the fake Slack")
    parser.add_argument("--slack-latency-ms", type=float, default=50.0,
                        help="latency of every fake Web API call (default 50)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for all replies")
    return parser


def _prepare(root: Path) -> str:
    """A database with the e2e knowledge base ingested, and the matching sourced.yml."""
    database_url = f"sqlite:///{root / 'bench.db'}"
    sourced = bootstrap(Settings(database_url=database_url), config=CONFIG, progress=False)
    sourced.ingestor.ingest(write_kb(root / "kb"))
    sourced.engine.dispose()
    (root / "sourced.yml").write_text(json.dumps(CONFIG.model_dump(mode="json")), encoding="utf-8")
    return database_url


def _start_server(root: Path, database_url: str, fake: RemoteSlack, *, port: int,
                  workers: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
           "SOURCED_SLACK_API_URL": fake.api_url, "SOURCED_DATABASE_URL": database_url,
           "SOURCED_CONFIG": str(root / "sourced.yml"), "PYTHONPATH": str(REPOSITORY)}
    env.pop("SLACK_APP_TOKEN", None)
    command = [sys.executable, "-m", "bot.cli", "serve", "--http", "--host", "127.0.0.1", "--port", str(port),
               "--workers", str(workers), "--metrics-port", "0"]  # no metrics read: no second port to collide
    server = subprocess.Popen(command, env=env, cwd=root, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    _wait_for_workers(f"http://127.0.0.1:{port}/healthz", server, workers)
    return server


def _wait_for_workers(url: str, server: subprocess.Popen[bytes], workers: int,
                      timeout_s: float = 60.0) -> None:
    """Until /healthz has answered from every worker process (it names its pid)."""
    seen: set[int] = set()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and len(seen) < workers:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode} before it was healthy")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                seen.add(int(json.loads(response.read())["worker"]))
        except OSError:
            time.sleep(0.05)
    if len(seen) < workers:
        raise SystemExit(f"only {len(seen)} of {workers} workers were up within {timeout_s}s")


@dataclass(frozen=True)
class Results:
    first: list[Reply]
    acks: list[Reply]
    retries: list[Reply]
    posted: int
    elapsed_s: float
    duplicates: int


def _measure(args: argparse.Namespace, slack: RemoteSlack) -> int:
    url = f"http://127.0.0.1:{args.port}/slack/events"
    surface = SURFACES[args.event]
    before = slack.count(surface.answered_by)
    first = _send_all(url, _wave(surface, args.mentions, wave=0), retry=None)
    slack.wait_for(surface.answered_by, count=before + args.mentions, timeout_s=args.timeout)
    _grace_for_late_duplicates(slack, surface.answered_by)
    before = slack.count(surface.answered_by)
    payloads = _wave(surface, args.mentions, wave=1)
    started = time.perf_counter()
    acks = _send_all(url, payloads, retry=None)
    retries = _send_all(url, payloads, retry=1)
    expected = args.mentions if surface.once else 2 * args.mentions  # retries of non-questions run again
    slack.wait_for(surface.answered_by, count=before + expected, timeout_s=args.timeout)
    elapsed = time.perf_counter() - started
    _grace_for_late_duplicates(slack, surface.answered_by)
    answered = slack.count(surface.answered_by) - before
    return _report(args, Results(first=first, acks=acks, retries=retries, posted=min(answered, args.mentions),
                                 elapsed_s=elapsed, duplicates=answered - expected))


def _wave(surface: Surface, count: int, *, wave: int) -> list[dict[str, object]]:
    return [surface.build(i, f"17000000{wave:02d}.{i:06d}") for i in range(count)]


def _send_all(url: str, payloads: list[dict[str, object]], *, retry: int | None) -> list[Reply]:
    """All at once, measuring only the request itself: bodies are signed and connections opened first, then
    every thread waits at a barrier and sends its one mention."""
    target = urlsplit(url)
    prepared = [_prepared(payload, retry) for payload in payloads]
    connections = [http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=30)
                   for _ in payloads]
    for connection in connections:
        connection.connect()
    barrier = threading.Barrier(len(payloads))

    def send(index: int) -> Reply:
        body, headers = prepared[index]
        connection = connections[index]
        barrier.wait()
        started = time.perf_counter()
        connection.request("POST", target.path, body=body, headers=headers)
        response = connection.getresponse()
        text = response.read().decode()
        return Reply(response.status, text, time.perf_counter() - started)

    try:
        with ThreadPoolExecutor(max_workers=len(payloads)) as pool:
            return list(pool.map(send, range(len(payloads))))
    finally:
        for connection in connections:
            connection.close()


def _prepared(payload: dict[str, object], retry: int | None) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(payload)
    headers = {"Content-Type": "application/json", **sign(body)}
    if retry:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    return body.encode(), headers


def _grace_for_late_duplicates(fake: RemoteSlack, method: str, quiet_s: float = 1.0) -> None:
    """A duplicate would arrive after the originals; wait until nothing new came for `quiet_s`."""
    seen, quiet_since = fake.count(method), time.monotonic()
    while time.monotonic() - quiet_since < quiet_s:
        time.sleep(0.05)
        now = fake.count(method)
        if now != seen:
            seen, quiet_since = now, time.monotonic()


def _report(args: argparse.Namespace, results: Results) -> int:
    latencies = sorted(reply.seconds for reply in results.acks)
    statuses = Counter(reply.status for reply in [*results.acks, *results.retries])
    slowest, slowest_retry = latencies[-1], max(reply.seconds for reply in results.retries)
    ok = (slowest < TARGET_ACK_S and results.duplicates == 0 and results.posted == args.mentions
          and set(statuses) == {200})
    print(f"{args.mentions} concurrent signed {args.event} events, {args.workers} gunicorn workers, "
          f"Slack API latency {args.slack_latency_ms:.0f} ms")
    print(f"ack latency   p50 {_ms(_percentile(latencies, 50))}   p99 {_ms(_percentile(latencies, 99))}   "
          f"max {_ms(slowest)}   (target: every ack < {_ms(TARGET_ACK_S)})")
    print(f"retry acks    max {_ms(slowest_retry)}   HTTP statuses {dict(statuses)}")
    print(f"first burst   max {_ms(max(reply.seconds for reply in results.first))}   (right after start, "
          "unmeasured warm-up)")
    print(f"answers       {results.posted} in {results.elapsed_s:.2f} s = "
          f"{results.posted / results.elapsed_s:.1f} per second")
    print(f"duplicates    {results.duplicates}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def _percentile(ordered: list[float], percent: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, math.ceil(percent / 100 * len(ordered)))
    return ordered[rank - 1]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:6.1f} ms"


if __name__ == "__main__":
    sys.exit(main())
