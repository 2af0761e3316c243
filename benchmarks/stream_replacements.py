"""How often a streamed answer has to be replaced by a refusal, with a scripted generative model.

Serves the app over HTTP in this process with the e2e knowledge base, a fake Slack Web API on loopback and an
OpenAI-compatible scripted model that answers in rotation: a grounded envelope, a claim whose number its quote
does not state, a citation of a chunk that was not retrieved, `found: false`, and malformed JSON. It sends N
direct messages and counts, from the Web API calls Slack received:

- answers streamed (`chat.startStream`) and refusals posted once (`chat.postMessage`),
- streams replaced after they started (`chat.update` on a streamed message): the replacement rate,
- refusals whose prose was streamed (must be 0).

    .venv/bin/python -m benchmarks.stream_replacements          # N=100
"""

import argparse
import json
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from typing import Any, Final
from wsgiref.simple_server import make_server

from bot.app import create_bot
from bot.http import wsgi_app
from bot.settings import SlackSettings
from bot.work import ReplyWorkers
from core.bootstrap import bootstrap
from core.config import Settings
from core.eval.scripted_server import ScriptedServer
from tests.e2e.conftest import CONFIG, _QuietHandler, _ThreadingWSGIServer, workspace, write_kb
from tests.e2e.fake_slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack, dm_payload, send_event

QUESTIONS: Final = (
    "How many days do customers have to return items for a refund?",
    "What is the daily meal limit when travelling?",
    "What is the visitor Wi-Fi network called?",
    "How many days do customers have to return items, and is the refund full?",
    "What is the meal limit per day on a trip?",
)


def _claim(text: str, chunk_id: str, quote: str) -> dict[str, Any]:
    return {"text": text, "chunk_ids": [chunk_id], "quote": quote}


REFUND = "Customers may return items within 30 days of delivery for a full refund."
SCRIPT: Final = (
    json.dumps({"found": True, "answer": REFUND, "claims": [_claim(REFUND, "refund-policy#return-window", REFUND)],
                "confidence": "high", "refusal_reason": None}),
    json.dumps({"found": True, "answer": "The daily meal limit is 75 dollars per day.",
                "claims": [_claim("The daily meal limit is 75 dollars per day.", "travel-expenses#meal-limit",
                                  "The daily meal limit when travelling is 50 dollars per day.")],
                "confidence": "high", "refusal_reason": None}),
    json.dumps({"found": True, "answer": "The network is called Northwind-Guest.",
                "claims": [_claim("The network is called Northwind-Guest.", "visitor-wifi#elsewhere",
                                  "The visitor Wi-Fi network is called Northwind-Guest")],
                "confidence": "high", "refusal_reason": None}),
    json.dumps({"found": False, "answer": "", "claims": [], "confidence": "low",
                "refusal_reason": "not stated"}),
    '{"found": true, "answer": "30 days"',
)
"""One envelope per question, in the order of `QUESTIONS`: answered, unsupported, invalid citation, self-refusal,
malformed."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks.stream_replacements", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=100, help="direct messages to send (default 100)")
    args = parser.parse_args(argv)
    slack = FakeSlack(workspace()).start()
    model = ScriptedServer(_scripted)
    try:
        with tempfile.TemporaryDirectory(prefix="sourced-stream-") as folder:
            return _measure(Path(folder), slack, model, args.n)
    finally:
        model.close()
        slack.stop()


def _scripted(messages: list[dict[str, Any]]) -> str:
    asked = json.dumps(messages)
    for question, envelope in zip(QUESTIONS, SCRIPT, strict=True):
        if json.dumps(question)[1:-1] in asked:
            return envelope
    return SCRIPT[3]


def _measure(root: Path, slack: FakeSlack, model: ScriptedServer, count: int) -> int:
    settings = Settings(database_url=f"sqlite:///{root / 'bench.db'}", model="openai", model_base_url=model.base_url,
                        model_name="scripted", embedder="none")
    sourced = bootstrap(settings, config=CONFIG, progress=False)
    sourced.ingestor.ingest(write_kb(root / "kb"))
    bot = create_bot(sourced, SlackSettings(bot_token=BOT_TOKEN, signing_secret=SIGNING_SECRET,
                                            api_url=slack.api_url), workers=ReplyWorkers(workers=4))
    server = make_server("127.0.0.1", 0, wsgi_app(bot.app), server_class=_ThreadingWSGIServer,
                         handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/slack/events"
    try:
        for i in range(count):
            payload = dm_payload(QUESTIONS[i % len(QUESTIONS)], user="UBOB", channel=f"D{i:07d}",
                                 ts=f"1700001000.{i:06d}")
            assert send_event(url, payload).status == 200
        assert bot.workers.wait_idle(300), "replies still running"
        kinds = Counter(record.kind for record in sourced.audit_log.list(limit=count))
    finally:
        server.shutdown()
        bot.close()
    return _report(slack, kinds, count)


def _report(slack: FakeSlack, kinds: Counter[str], count: int) -> int:
    streamed = {call["channel"] for call in slack.sent("chat.startStream")}
    stream_ts = {message["ts"] for message in slack.messages if message["channel"] in streamed}
    replaced = [call for call in slack.sent("chat.update") if call.get("ts") in stream_ts]
    posted = slack.sent("chat.postMessage")
    refused_streamed = kinds["answered"] < len(streamed)
    print(f"{count} direct messages, scripted generative model; outcomes {dict(kinds.most_common())}")
    print(f"answers streamed          {len(streamed)} (start, append..., stop)")
    print(f"refusals posted once      {len(posted)}")
    print(f"streams replaced          {len(replaced)} of {len(streamed)} = "
          f"{len(replaced) / max(1, len(streamed)):.1%}")
    print(f"refusal prose streamed    {'yes' if refused_streamed else 0}")
    ok = not refused_streamed and len(streamed) + len(posted) == count
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
