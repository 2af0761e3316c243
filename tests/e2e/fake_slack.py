"""A fake Slack on loopback: the Web API methods the bot calls, `response_url`s, and a signed-request sender.

The Web API answers from a small workspace model (users, user groups, channels) and records every request
body, so tests assert on what the bot actually sent over HTTP. Waiting is polling with a bounded timeout.
"""

import hashlib
import hmac
import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

BOT_TOKEN = "xoxb-test-token"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
BOT_USER = "UBOT"
TEAM = "T0NORTHWIND"
POLL_S = 0.01


@dataclass(frozen=True)
class Call:
    method: str
    body: dict[str, Any]


@dataclass
class Workspace:
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    groups: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    members: dict[str, list[str]] = field(default_factory=dict)


class FakeSlack:
    def __init__(self, workspace: Workspace, *, token: str = BOT_TOKEN, latency_s: float = 0.0,
                 port: int = 0) -> None:
        self.workspace = workspace
        self.token = token
        self.latency_s = latency_s
        """Added to every Web API answer, to stand in for Slack's own latency (the benchmark uses it)."""
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._holds: dict[tuple[str, str], threading.Event] = {}
        self._faults: dict[str, list[tuple[int, float | None]]] = {}
        self.faulted: list[Call] = []
        """Calls answered with a scripted HTTP error (`fail`), kept apart from `calls`, which Slack carried out."""
        self._waiting: dict[str, int] = {}
        self._refusals: dict[str, list[str]] = {}
        self.messages: list[dict[str, Any]] = []
        """The bot's messages as Slack keeps them (posted, then updated), for `conversations.replies`."""
        self._ts = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def api_url(self) -> str:
        return f"{self.base}/api/"

    def response_url(self, name: str) -> str:
        return f"{self.base}/response/{name}"

    def start(self) -> "FakeSlack":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def record(self, method: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.calls.append(Call(method, body))

    def sent(self, method: str) -> list[dict[str, Any]]:
        """Bodies of the calls to `method` (e.g. `chat.postMessage`, `response/ask-1`), oldest first."""
        with self._lock:
            return [call.body for call in self.calls if call.method == method]

    def hold(self, method: str, *, user: str) -> threading.Event:
        """Answers to `method` about `user` wait (at most 60 s) until the returned event is set: a Web API call
        in flight, as when a worker is killed in the middle of a question."""
        gate = threading.Event()
        with self._lock:
            self._holds[(method, user)] = gate
        return gate

    def fail(self, method: str, status: int, *, times: int = 1, retry_after_s: float | None = None) -> None:
        """The next `times` calls to `method` get HTTP `status` (with `Retry-After` when given) and do nothing,
        as Slack does when it rate-limits (429) or fails (5xx) a request."""
        with self._lock:
            self._faults.setdefault(method, []).extend([(status, retry_after_s)] * times)

    def refuse(self, method: str, error: str, *, times: int = 1) -> None:
        """The next `times` calls to `method` get Slack's `{"ok": false, "error": error}` (HTTP 200), as when
        Slack will not stream in a conversation (`not_allowed`) or rejects a stream's final blocks."""
        with self._lock:
            self._refusals.setdefault(method, []).extend([error] * times)

    def _refusal(self, method: str) -> str | None:
        with self._lock:
            pending = self._refusals.get(method)
            return pending.pop(0) if pending else None

    def _fault(self, method: str, params: dict[str, Any]) -> tuple[int, float | None] | None:
        with self._lock:
            pending = self._faults.get(method)
            if not pending:
                return None
            self.faulted.append(Call(method, params))
            return pending.pop(0)

    def waiting(self, method: str) -> int:
        """Calls to `method` held right now."""
        with self._lock:
            return self._waiting.get(method, 0)

    def wait_until_waiting(self, method: str, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while self.waiting(method) == 0:
            if time.monotonic() > deadline:
                raise AssertionError(f"no call to {method} was held within {timeout_s}s")
            time.sleep(POLL_S)

    def _held(self, method: str, params: dict[str, Any]) -> None:
        with self._lock:
            gate = self._holds.get((method, str(params.get("user", ""))))
            if gate is None:
                return
            self._waiting[method] = self._waiting.get(method, 0) + 1
        try:
            gate.wait(timeout=60)
        finally:
            with self._lock:
                self._waiting[method] -= 1

    def wait_for(self, method: str, count: int = 1, timeout_s: float = 10.0) -> list[dict[str, Any]]:
        """Poll until `count` calls to `method` were recorded; fail the test after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = self.sent(method)
            if len(found) >= count:
                return found
            time.sleep(POLL_S)
        raise AssertionError(f"expected {count} call(s) to {method} within {timeout_s}s; got "
                             f"{[call.method for call in self.calls]}")

    # -- the Web API ---------------------------------------------------------------------------------

    def answer(self, method: str, params: dict[str, Any], token: str | None) -> dict[str, Any]:
        if token != self.token:
            return {"ok": False, "error": "invalid_auth"}
        refusal = self._refusal(method)
        if refusal is not None:
            return {"ok": False, "error": refusal}
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        return handler(params) if handler else {"ok": False, "error": "unknown_method"}

    def _keep(self, params: dict[str, Any], ts: str) -> None:
        with self._lock:
            self.messages.append({"type": "message", "user": BOT_USER, "bot_id": "B0BOT", "ts": ts,
                                  "channel": params.get("channel"), "thread_ts": params.get("thread_ts"),
                                  "text": params.get("text", ""), "blocks": params.get("blocks", []),
                                  "metadata": params.get("metadata")})

    def say(self, text: str, *, user: str, channel: str, ts: str, thread_ts: str | None = None) -> None:
        """A person's message, as Slack keeps it: `conversations.replies` returns it with the bot's."""
        with self._lock:
            self.messages.append({"type": "message", "user": user, "ts": ts, "channel": channel,
                                  "thread_ts": thread_ts, "text": text})

    def _auth_test(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "user_id": BOT_USER, "bot_id": "B0BOT", "team_id": TEAM, "team": "Northwind",
                "user": "sourced", "url": "https://northwind.slack.com/"}

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = self.workspace.users.get(params.get("user", ""))
        if user is None:
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "user": {"id": params["user"], "team_id": TEAM, **user}}

    def _users_list(self, _params: dict[str, Any]) -> dict[str, Any]:
        members = [{"id": uid, "team_id": TEAM, **user} for uid, user in self.workspace.users.items()]
        return {"ok": True, "members": members, "response_metadata": {"next_cursor": ""}}

    def _usergroups_list(self, _params: dict[str, Any]) -> dict[str, Any]:
        groups = [{"id": gid, "handle": handle} for gid, (handle, _) in self.workspace.groups.items()]
        return {"ok": True, "usergroups": groups}

    def _usergroups_users_list(self, params: dict[str, Any]) -> dict[str, Any]:
        group = self.workspace.groups.get(params.get("usergroup", ""))
        if group is None:
            return {"ok": False, "error": "no_such_subteam"}
        return {"ok": True, "users": group[1]}

    def _conversations_info(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.workspace.channels.get(params.get("channel", ""))
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        return {"ok": True, "channel": {"id": params["channel"], **channel}}

    def _conversations_members(self, params: dict[str, Any]) -> dict[str, Any]:
        members = self.workspace.members.get(params.get("channel", ""), [])
        return {"ok": True, "members": members, "response_metadata": {"next_cursor": ""}}

    def _chat_postMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        ts = f"{next(self._ts)}.000100"
        self._keep(params, ts)
        return {"ok": True, "channel": params.get("channel"), "ts": ts}

    def _chat_startStream(self, params: dict[str, Any]) -> dict[str, Any]:
        ts = f"{next(self._ts)}.000300"
        self._keep(params, ts)
        return {"ok": True, "channel": params.get("channel"), "ts": ts}

    def _chat_appendStream(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "channel": params.get("channel"), "ts": params.get("ts")}

    def _chat_stopStream(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "channel": params.get("channel"), "ts": params.get("ts")}

    def _conversations_replies(self, params: dict[str, Any]) -> dict[str, Any]:
        """The thread's messages, its first included, oldest first; `latest` bounds them as Slack does."""
        latest = float(params["latest"]) if params.get("latest") else None
        with self._lock:
            thread = [dict(message) for message in self.messages if message["channel"] == params.get("channel")
                      and params.get("ts") in (message["thread_ts"], message["ts"])
                      and (latest is None or float(message["ts"]) < latest)]
        return {"ok": True, "messages": sorted(thread, key=lambda message: float(message["ts"])), "has_more": False}

    def _assistant_threads_setStatus(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def _assistant_threads_setTitle(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def _assistant_threads_setSuggestedPrompts(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def _views_publish(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "view": {"id": "V0HOME", **(params.get("view") or {})}}

    def _views_open(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "view": {"id": "V0MODAL", **(params.get("view") or {})}}

    def _chat_postEphemeral(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "message_ts": f"{next(self._ts)}.000200"}

    def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            for message in self.messages:
                if message["ts"] == params.get("ts"):
                    message.update({key: params[key] for key in ("text", "blocks", "metadata") if key in params})
        return {"ok": True, "channel": params.get("channel"), "ts": params.get("ts")}

    def _chat_delete(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "channel": params.get("channel"), "ts": params.get("ts")}


def _handler(fake: FakeSlack) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the tests read the recorded calls instead."""

        def do_GET(self) -> None:
            self._handle()

        def do_POST(self) -> None:
            self._handle()

        def _handle(self) -> None:
            url = urlsplit(self.path)
            if url.path == "/_calls":  # for a benchmark running this fake in another process
                query = dict(parse_qsl(url.query))
                calls = fake.sent(query["method"])
                self._reply(200, json.dumps(len(calls) if "count" in query else calls), "application/json")
                return
            params = _params(url.query, self._body(), self.headers.get("Content-Type", ""))
            if url.path.startswith("/response/"):
                fake.record(url.path.lstrip("/"), params)
                self._reply(200, "ok", "text/plain")
                return
            method = url.path.removeprefix("/api/")
            if fake.latency_s:
                time.sleep(fake.latency_s)
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ") or params.get("token")
            fault = fake._fault(method, params)
            if fault is not None:
                status, retry_after_s = fault
                extra = {"Retry-After": f"{retry_after_s:g}"} if retry_after_s is not None else {}
                self._reply(status, json.dumps({"ok": False, "error": "ratelimited" if status == 429
                                                else "internal_error"}), "application/json", extra)
                return
            fake.record(method, params)
            fake._held(method, params)
            self._reply(200, json.dumps(fake.answer(method, params, token)), "application/json")

        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _reply(self, status: int, body: str, content_type: str, headers: dict[str, str] | None = None) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _params(query: str, body: bytes, content_type: str) -> dict[str, Any]:
    params: dict[str, Any] = dict(parse_qsl(query))
    if not body:
        return params
    if "json" in content_type:
        params.update(json.loads(body))
    else:
        params.update(dict(parse_qsl(body.decode())))
    for key in ("blocks", "metadata", "view", "prompts"):  # form-encoded calls carry these as JSON strings
        if isinstance(params.get(key), str):
            params[key] = json.loads(params[key])
    return params


@contextmanager
def running(workspace: Workspace) -> Iterator[FakeSlack]:
    fake = FakeSlack(workspace).start()
    try:
        yield fake
    finally:
        fake.stop()


# -- signed requests to the app ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Reply:
    status: int
    body: str
    seconds: float


def sign(body: str, *, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict[str, str]:
    """Slack's v0 signature: HMAC-SHA256 over `v0:{timestamp}:{body}` with the signing secret."""
    stamp = str(timestamp if timestamp is not None else int(time.time()))
    digest = hmac.new(secret.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}


def post(url: str, body: str, *, content_type: str, headers: dict[str, str] | None = None,
         timeout_s: float = 10.0) -> Reply:
    request = urllib.request.Request(url, data=body.encode(), method="POST",
                                     headers={"Content-Type": content_type, **(headers or {})})
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return Reply(response.status, response.read().decode(), time.perf_counter() - started)
    except urllib.error.HTTPError as error:
        return Reply(error.code, error.read().decode(), time.perf_counter() - started)


_event_ids = itertools.count(1)


def mention_payload(text: str, *, user: str, channel: str, ts: str = "1700000000.000100",
                    thread_ts: str | None = None, event_id: str | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "app_mention", "user": user, "text": f"<@{BOT_USER}> {text}", "ts": ts,
                             "channel": channel, "event_ts": ts}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return {"token": "legacy", "team_id": TEAM, "api_app_id": "A0SOURCED", "type": "event_callback",
            "event_id": event_id or f"Ev{next(_event_ids):08d}", "event_time": 1700000000, "event": event,
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}]}


def event_payload(event: dict[str, Any], *, event_id: str | None = None) -> dict[str, Any]:
    return {"token": "legacy", "team_id": TEAM, "api_app_id": "A0SOURCED", "type": "event_callback",
            "event_id": event_id or f"Ev{next(_event_ids):08d}", "event_time": 1700000000, "event": event,
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}]}


def dm_payload(text: str, *, user: str, channel: str = "D0DIRECT", ts: str = "1700000100.000100",
               thread_ts: str | None = None, event_id: str | None = None, **fields: Any) -> dict[str, Any]:
    """A `message.im` event; in an assistant thread when `thread_ts` is given."""
    event: dict[str, Any] = {"type": "message", "channel_type": "im", "user": user, "text": text, "ts": ts,
                             "channel": channel, "event_ts": ts, **fields}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event_payload(event, event_id=event_id)


def thread_started_payload(*, user: str, channel: str = "D0DIRECT", thread_ts: str = "1700000200.000100",
                           context_channel: str | None = None) -> dict[str, Any]:
    context = {"channel_id": context_channel, "team_id": TEAM} if context_channel else {}
    return event_payload({"type": "assistant_thread_started", "event_ts": thread_ts, "assistant_thread": {
        "user_id": user, "channel_id": channel, "thread_ts": thread_ts, "context": context}})


def context_changed_payload(*, user: str, context_channel: str, channel: str = "D0DIRECT",
                            thread_ts: str = "1700000200.000100") -> dict[str, Any]:
    return event_payload({"type": "assistant_thread_context_changed", "event_ts": thread_ts, "assistant_thread": {
        "user_id": user, "channel_id": channel, "thread_ts": thread_ts,
        "context": {"channel_id": context_channel, "team_id": TEAM}}})


def home_opened_payload(*, user: str, tab: str = "home") -> dict[str, Any]:
    return event_payload({"type": "app_home_opened", "user": user, "channel": "D0DIRECT", "tab": tab,
                          "event_ts": "1700000300.000100"})


def send_interaction(url: str, payload: dict[str, Any]) -> Reply:
    body = urlencode({"payload": json.dumps(payload)})
    return post(url, body, content_type="application/x-www-form-urlencoded", headers=sign(body))


def send_event(url: str, payload: dict[str, Any], *, retry: int | None = None,
               headers: Callable[[str], dict[str, str]] = sign) -> Reply:
    body = json.dumps(payload)
    extra = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"} if retry else {}
    return post(url, body, content_type="application/json", headers={**headers(body), **extra})


def send_command(url: str, *, text: str, user: str, channel: str, response_url: str) -> Reply:
    body = urlencode({"command": "/ask", "text": text, "user_id": user, "team_id": TEAM,
                      "channel_id": channel, "response_url": response_url, "trigger_id": "t1"})
    return post(url, body, content_type="application/x-www-form-urlencoded", headers=sign(body))


def send_click(url: str, *, user: str, action_id: str, value: str, channel: str, response_url: str,
               message: dict[str, Any] | None = None, message_ts: str = "1.000100",
               ephemeral: bool = False) -> Reply:
    payload: dict[str, Any] = {
        "type": "block_actions", "user": {"id": user, "team_id": TEAM}, "team": {"id": TEAM},
        "api_app_id": "A0SOURCED", "channel": {"id": channel}, "response_url": response_url,
        "container": {"type": "message", "message_ts": message_ts, "channel_id": channel,
                      "is_ephemeral": ephemeral},
        "actions": [{"type": "button", "action_id": action_id, "block_id": "b", "value": value,
                     "action_ts": "1.2"}],
    }
    if message is not None:
        payload["message"] = {"ts": message_ts, **message}
    body = urlencode({"payload": json.dumps(payload)})
    return post(url, body, content_type="application/x-www-form-urlencoded", headers=sign(body))
