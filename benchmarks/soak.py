"""A soak of `sourced serve --http`: many questions from random askers in random channels, over signed requests.

A generated knowledge base holds documents for `everyone`, for guests and for restricted roles (hr, legal,
finance); each carries a unique secret word in its answer sentence and a unique document id, neither of which any
question contains. Askers are staff in zero or more role groups, and guests; channels are public, private (with and
without a role in `sourced.yml`), shared with another organisation, with a guest in them, and DMs. 80% of the
questions are mentions (answered in the thread, for the channel's audience), 20% are `/ask` (ephemeral, for the
asker alone), and 3% of the mentions are delivered again as Slack's retries.

Checked, from what the fake Slack Web API on loopback received:
- leaks: replies holding the secret word or id of a document outside the reply's audience (must be 0);
- duplicates and missing: every question gets exactly one reply (must be 0 and 0);
- memory: the serving worker's RSS at the end against its RSS after the warm-up (must grow less than 10%).

    .venv/bin/python -m benchmarks.soak                       # 10,000 questions
    .venv/bin/python -m benchmarks.soak --questions 200 --embedder none

Exit status 1 on any breach.
"""

import argparse
import json
import os
import random
import string
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode

from tests.e2e.fake_slack import BOT_TOKEN, SIGNING_SECRET, TEAM, FakeSlack, Workspace, mention_payload, post, sign

REPOSITORY: Final = Path(__file__).resolve().parents[1]
MAX_RSS_GROWTH: Final = 0.10
ROLES: Final = ("hr", "legal", "finance")
AUDIENCES: Final = (("everyone", "guests"), ("everyone",), ("everyone",), ("hr",), ("legal",), ("finance",))
"""Audiences of the generated documents, in turn: a third guest-visible or staff-wide, half restricted."""
TOPICS: Final = ("parking", "laptop", "badge", "locker", "canteen", "shuttle", "library", "gym", "printer",
                 "mailroom", "bicycle", "visitor", "archive", "training", "relocation", "mentoring", "childcare",
                 "commuting", "eyewear", "broadband", "conference", "language", "wellness", "sabbatical")
OPENERS: Final = ("", "Quick question: ", "Hi! ", "Does anyone know ", "Sorry to bother, ", "Hey, ")


@dataclass(frozen=True, kw_only=True)
class Document:
    doc_id: str
    topic: str
    audience: frozenset[str]
    secret: str
    amount: int

    def markdown(self) -> str:
        roles = ", ".join(sorted(self.audience))
        return (f"---\nid: {self.doc_id}\ntitle: {self.topic.title()} Allowance\nowner: \"#ops-{self.topic}\"\n"
                f"audience: [{roles}]\nupdated: 2026-01-15\n---\n# {self.topic.title()} Allowance\n"
                f"## Monthly allowance\nThe monthly {self.topic} allowance is {self.amount} dollars, booked under "
                f"code {self.secret}.\n## Who to ask\nQuestions about the {self.topic} allowance go to the "
                f"{self.topic} desk.\n")


@dataclass(frozen=True, kw_only=True)
class Asker:
    user_id: str
    is_guest: bool
    roles: frozenset[str]

    def party(self) -> frozenset[str]:
        return frozenset({"guests"}) if self.is_guest else self.roles | {"everyone"}


@dataclass(frozen=True, kw_only=True)
class Channel:
    channel_id: str
    info: dict[str, Any]
    roles: frozenset[str] | None = None
    """Its `channels` entry in sourced.yml, if any."""
    members: tuple[str, ...] = ()
    reaches_guests: bool = False

    @property
    def is_direct(self) -> bool:
        return self.channel_id.startswith("D")


@dataclass(frozen=True, kw_only=True)
class Question:
    number: int
    text: str
    asker: Asker
    channel: Channel
    command: bool
    redeliver: bool

    @property
    def thread_ts(self) -> str:
        return f"1800000000.{self.number:06d}"

    @property
    def response_name(self) -> str:
        return f"response/q{self.number}"

    def readers(self) -> list[frozenset[str]]:
        """The parties who will read the reply, as this soak models them (independently of the product)."""
        if self.command or self.channel.is_direct:
            return [self.asker.party()]
        channel = (self.channel.roles or frozenset()) | {"everyone"}
        parties = [channel, self.asker.party()]
        if self.channel.reaches_guests:
            parties.append(frozenset({"guests"}))
        return parties

    def may_see(self, document: Document) -> bool:
        return all(document.audience & party for party in self.readers())


@dataclass
class World:
    documents: list[Document]
    askers: list[Asker]
    channels: list[Channel]
    workspace: Workspace
    config: dict[str, Any]


def word(rng: random.Random, length: int = 9) -> str:
    """A made-up word no document or question holds by chance."""
    return "zq" + "".join(rng.choice(string.ascii_lowercase) for _ in range(length))


def build_world(rng: random.Random, *, documents: int = len(TOPICS), staff: int = 40, guests: int = 6) -> World:
    docs = [Document(doc_id=f"kb-{word(rng, 7)}", topic=TOPICS[i % len(TOPICS)],
                     audience=frozenset(AUDIENCES[i % len(AUDIENCES)]), secret=word(rng),
                     amount=rng.randint(20, 400))
            for i in range(documents)]
    askers = [Asker(user_id=f"U{n:05d}", is_guest=False,
                    roles=frozenset(role for role in ROLES if rng.random() < 0.25)) for n in range(staff)]
    askers += [Asker(user_id=f"UG{n:04d}", is_guest=True, roles=frozenset()) for n in range(guests)]
    employees = [a.user_id for a in askers if not a.is_guest]
    some_guest = next(a.user_id for a in askers if a.is_guest)
    channels = [Channel(channel_id=f"CPUB{n}", info={"is_channel": True}, members=tuple(rng.sample(employees, 10)))
                for n in range(4)]
    channels += [
        Channel(channel_id="CGUESTS", info={"is_channel": True}, reaches_guests=True,
                members=(*rng.sample(employees, 5), some_guest)),
        Channel(channel_id="CSHARED", info={"is_channel": True, "is_ext_shared": True}, reaches_guests=True,
                members=tuple(rng.sample(employees, 5))),
        Channel(channel_id="CPRIVATE", info={"is_private": True}, members=tuple(rng.sample(employees, 5))),
        *(Channel(channel_id=f"C{role.upper()}", info={"is_private": True}, roles=frozenset({role}),
                  members=tuple(rng.sample(employees, 5))) for role in ROLES),
        Channel(channel_id="DSOURCED", info={"is_im": True}),
    ]
    users: dict[str, dict[str, Any]] = {a.user_id: {"name": a.user_id.lower(), **({"is_restricted": True}
                                                                                 if a.is_guest else {})}
                                        for a in askers}
    groups = {f"S{role.upper()}": (f"{role}-team", [a.user_id for a in askers if role in a.roles]) for role in ROLES}
    workspace = Workspace(users=users, groups=groups, channels={c.channel_id: c.info for c in channels},
                          members={c.channel_id: list(c.members) for c in channels})
    config = {"default_owner": "#help-desk", "roles": {role: [f"@{role}-team"] for role in ROLES},
              "channels": {c.channel_id: sorted(c.roles) for c in channels if c.roles}}
    return World(documents=docs, askers=askers, channels=channels, workspace=workspace, config=config)


def questions(rng: random.Random, world: World, count: int) -> list[Question]:
    made = []
    for n in range(count):
        document = rng.choice(world.documents)
        kind = rng.random()
        if kind < 0.45:
            text = f"what is the monthly {document.topic} allowance?"
        elif kind < 0.75:
            text = f"how much is the {document.topic} allowance each month?"
        elif kind < 0.9:
            text = f"who do I ask about the {document.topic} allowance?"
        else:
            text = f"how many {document.topic} allowances were paid last year?"
        if rng.random() < 0.4:  # chit-chat around the question, and questions that are each unique
            text = rng.choice(OPENERS) + text + rng.choice(("", " thanks", " (asking for a colleague)", f" #{n}"))
        command = rng.random() < 0.2
        made.append(Question(number=n, text=text, asker=rng.choice(world.askers),
                             channel=rng.choice(world.channels), command=command,
                             redeliver=not command and rng.random() < 0.03))
    return made


# -- the fake Slack, counting replies as they arrive -----------------------------------------------------------

class CountingSlack(FakeSlack):
    """The e2e fake Web API; wakes the sender each time a reply lands, so at most `window` are in flight."""

    def __init__(self, workspace: Workspace, *, window: int) -> None:
        super().__init__(workspace)
        self.slots = threading.Semaphore(window)
        self.replies = 0

    def record(self, method: str, body: dict[str, Any]) -> None:
        super().record(method, body)
        if method in ("chat.postMessage", "chat.postEphemeral") or method.startswith("response/"):
            self.replies += 1
            self.slots.release()


# -- the server ------------------------------------------------------------------------------------------------

def prepare(root: Path, world: World, *, embedder: str) -> dict[str, str]:
    kb = root / "kb"
    kb.mkdir(parents=True)
    for document in world.documents:
        (kb / f"{document.doc_id}.md").write_text(document.markdown(), encoding="utf-8")
    (root / "sourced.yml").write_text(json.dumps(world.config), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SLACK_", "SOURCED_"))}
    env |= {"SOURCED_DATABASE_URL": f"sqlite:///{root / 'soak.db'}", "SOURCED_CONFIG": str(root / "sourced.yml"),
            "SOURCED_EMBEDDER": embedder, "PYTHONPATH": str(REPOSITORY)}
    subprocess.run([sys.executable, "-m", "bot.cli", "ingest", str(kb)], env=env, cwd=root, check=True,
                   stdout=subprocess.DEVNULL)
    return env


def start_server(root: Path, env: dict[str, str], slack: FakeSlack, port: int) -> tuple[subprocess.Popen[bytes], int]:
    env = env | {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
                 "SOURCED_SLACK_API_URL": slack.api_url}
    log = (root / "server.log").open("wb")
    server = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve", "--http", "--host", "127.0.0.1", "--port",
                               str(port), "--workers", "1", "--metrics-port", "0"], env=env, cwd=root, stdout=log,
                              stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}; see {root / 'server.log'}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as response:
                return server, int(json.loads(response.read())["worker"])
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server was not healthy within 120 s")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


# -- sending ---------------------------------------------------------------------------------------------------

def send(url: str, slack: FakeSlack, question: Question) -> int:
    if question.command:
        body = urlencode({"command": "/ask", "text": question.text, "user_id": question.asker.user_id,
                          "team_id": TEAM, "channel_id": question.channel.channel_id,
                          "response_url": slack.base + "/" + question.response_name, "trigger_id": "t"})
        return post(url, body, content_type="application/x-www-form-urlencoded", headers=sign(body)).status
    payload = mention_payload(question.text, user=question.asker.user_id, channel=question.channel.channel_id,
                              ts=question.thread_ts, event_id=f"EvSOAK{question.number:07d}")
    body = json.dumps(payload)
    status = post(url, body, content_type="application/json", headers=sign(body)).status
    if question.redeliver:
        retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
        status = max(status, post(url, body, content_type="application/json", headers={**sign(body), **retry}).status)
    return status


@dataclass
class Run:
    statuses: Counter[int] = field(default_factory=Counter)
    rss_warm_kib: int = 0
    rss_end_kib: int = 0
    seconds: float = 0.0


def drive(url: str, slack: CountingSlack, batch: list[Question], *, worker_pid: int, warmup: int,
          timeout_s: float) -> Run:
    run = Run()
    started = time.perf_counter()
    lock = threading.Lock()

    def one(question: Question) -> None:
        if not slack.slots.acquire(timeout=timeout_s):
            raise SystemExit(f"no reply for {timeout_s} s: the server stopped answering")
        status = send(url, slack, question)
        with lock:
            run.statuses[status] += 1

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(one, batch[:warmup]))
        wait_for_replies(slack, warmup, timeout_s)
        run.rss_warm_kib = rss_kib(worker_pid)
        list(pool.map(one, batch[warmup:]))
    wait_for_replies(slack, len(batch), timeout_s)
    run.seconds = time.perf_counter() - started
    time.sleep(2.0)  # a late duplicate would come after the originals
    run.rss_end_kib = rss_kib(worker_pid)
    return run


def wait_for_replies(slack: CountingSlack, count: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while slack.replies < count:
        if time.monotonic() > deadline:
            return  # reported as missing
        time.sleep(0.02)


# -- checking --------------------------------------------------------------------------------------------------

@dataclass
class Findings:
    leaks: list[str] = field(default_factory=list)
    duplicates: int = 0
    missing: int = 0
    kinds: Counter[str] = field(default_factory=Counter)


def check(slack: FakeSlack, world: World, batch: list[Question]) -> Findings:
    findings = Findings()
    by_thread: dict[str, list[dict[str, Any]]] = {}
    for method in ("chat.postMessage", "chat.postEphemeral"):
        for body in slack.sent(method):
            by_thread.setdefault(str(body.get("thread_ts")), []).append(body)
    for question in batch:
        replies = slack.sent(question.response_name) if question.command else by_thread.get(question.thread_ts, [])
        if not replies:
            findings.missing += 1
            continue
        findings.duplicates += len(replies) - 1
        shown = json.dumps(replies)
        findings.kinds["answered" if any(d.secret in shown for d in world.documents) else "other"] += 1
        for document in world.documents:
            if not question.may_see(document) and (document.secret in shown or document.doc_id in shown):
                findings.leaks.append(f"question {question.number} ({question.asker.user_id} in "
                                      f"{question.channel.channel_id}, {'/ask' if question.command else 'mention'}) "
                                      f"shows {document.doc_id} (audience {sorted(document.audience)})")
    return findings


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    rng = random.Random(args.seed)
    world = build_world(rng)
    batch = questions(rng, world, args.questions)
    warmup = args.warmup if args.warmup is not None else max(1, min(1000, args.questions // 5))
    slack = CountingSlack(world.workspace, window=args.in_flight)
    slack.start()
    with tempfile.TemporaryDirectory(prefix="sourced-soak-") as folder:
        root = Path(folder)
        env = prepare(root, world, embedder=args.embedder)
        server, worker = start_server(root, env, slack, args.port)
        try:
            run = drive(f"http://127.0.0.1:{args.port}/slack/events", slack, batch, worker_pid=worker,
                        warmup=warmup, timeout_s=args.timeout)
        finally:
            server.terminate()
            server.wait(timeout=60)
            slack.stop()
            if args.keep_log:
                Path(args.keep_log).write_bytes((root / "server.log").read_bytes())
    return report(args, world, batch, run, check(slack, world, batch), warmup=warmup)


def report(args: argparse.Namespace, world: World, batch: list[Question], run: Run, findings: Findings, *,
           warmup: int) -> int:
    growth = (run.rss_end_kib - run.rss_warm_kib) / run.rss_warm_kib
    commands = sum(q.command for q in batch)
    print(f"{len(batch)} questions ({len(batch) - commands} mentions, {commands} /ask, "
          f"{sum(q.redeliver for q in batch)} redelivered) from {len(world.askers)} askers in "
          f"{len(world.channels)} channels; {len(world.documents)} documents; embedder {args.embedder}")
    print(f"elapsed       {run.seconds:.1f} s = {len(batch) / run.seconds:.1f} questions/s; "
          f"HTTP statuses {dict(run.statuses)}")
    print(f"replies       {dict(findings.kinds)} (answered: shows a document's secret word)")
    print(f"leaks         {len(findings.leaks)}")
    for leak in findings.leaks[:10]:
        print(f"  {leak}")
    print(f"duplicates    {findings.duplicates}")
    print(f"missing       {findings.missing}")
    print(f"worker RSS    {run.rss_warm_kib / 1024:.1f} MiB after {warmup} questions, "
          f"{run.rss_end_kib / 1024:.1f} MiB at the end: {growth:+.1%} (limit +{MAX_RSS_GROWTH:.0%})")
    ok = (not findings.leaks and findings.duplicates == 0 and findings.missing == 0 and growth < MAX_RSS_GROWTH
          and set(run.statuses) == {200})
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(prog="benchmarks.soak", description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    made.add_argument("--questions", type=int, default=10_000, help="questions to send (default 10,000)")
    made.add_argument("--warmup", type=int, default=None,
                      help="questions before the first RSS reading (default a fifth, at most 1,000)")
    made.add_argument("--embedder", default="auto", choices=("auto", "none", "minilm"),
                      help="SOURCED_EMBEDDER for the server (default auto: the shipped default)")
    made.add_argument("--seed", type=int, default=13)
    made.add_argument("--in-flight", type=int, default=16, help="questions sent and not yet answered, at most")
    made.add_argument("--port", type=int, default=38113, help="loopback port for the server")
    made.add_argument("--timeout", type=float, default=120.0, help="seconds without a reply before giving up")
    made.add_argument("--keep-log", default=None, help="copy the server's log here")
    return made


if __name__ == "__main__":
    sys.exit(main())
