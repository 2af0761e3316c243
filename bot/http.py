"""HTTP mode: the Slack application (`/slack/events`, `/healthz`), the metrics application (`/metrics`), and
gunicorn to serve both, each on its own listener.

Bolt's WSGI adapter handles events, commands and interactivity on `/slack/events`; gunicorn's threaded
workers serve it (Bolt's own `app.start()` is a development server). Each worker builds its own app after
the fork, so database connections and the reply pool are never shared between processes.

`/metrics` is never served on the port Slack reaches: the events port faces the internet (behind the load
balancer), and counters by outcome are something a scraper could read questions' fates from. It has a port of
its own, on loopback unless the operator binds it elsewhere, and then only behind a bearer token.
"""

import hmac
import io
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final

from gunicorn.app.base import BaseApplication  # type: ignore[import-untyped]  # gunicorn ships no types
from prometheus_client import CollectorRegistry, Histogram, make_wsgi_app, multiprocess
from prometheus_client.registry import REGISTRY
from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler

from bot.work import prestart

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger(__name__)

EVENTS_PATH: Final = "/slack/events"
METRICS_PATH: Final = "/metrics"
MAX_BODY_BYTES: Final = 1024 * 1024
"""Slack's events, commands and interactions are a few kilobytes; a request declaring more is refused unread."""
BODY_DEADLINE_S: Final = 2.0
"""A body must be in within this: Slack sends its small bodies at once, and a slow sender holds a request thread
no longer. Slower clients belong behind the buffering proxy (docs/deployment.md)."""
READ_TIMEOUT_S: Final = 1.0
"""Each read of the body from the socket."""
ACK_SECONDS: Final = Histogram("sourced_slack_ack_seconds", "Time to answer Slack's HTTP request (the ack)",
                               buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 3))


def wsgi_app(app: App, *, max_body: int = MAX_BODY_BYTES, body_deadline_s: float = BODY_DEADLINE_S,
             ) -> "WSGIApplication":
    """What Slack's port serves: `/slack/events` and `/healthz` (`/metrics` is `metrics_app`'s, elsewhere).

    The body is read here, before Bolt checks the signature: a declared length over `max_body` is answered 413
    without reading a byte of it, and a body not in within `body_deadline_s` 408, so a sender, signed or not,
    holds a request thread for at most that long."""
    slack = SlackRequestHandler(app, path=EVENTS_PATH)

    def application(environ: "WSGIEnvironment", start_response: "StartResponse") -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/healthz":
            return _health(start_response)
        if path == METRICS_PATH:
            return _plain(start_response, "404 Not Found", b"not found")
        refused = _read_body(environ, max_body=max_body, deadline_s=body_deadline_s)
        if refused is not None:
            return _plain(start_response, refused, refused.split(" ", 1)[1].lower().encode(),
                          [("Connection", "close")])
        started = time.perf_counter()
        try:
            response: Iterable[bytes] = slack(environ, start_response)
            return response
        except Exception as error:  # found by fuzzing: Bolt reads the body before verifying it, and raises
            log.warning("unreadable request to %s: %s", EVENTS_PATH, type(error).__name__)  # never the body
            return _malformed(start_response)
        finally:
            if path == EVENTS_PATH:
                ACK_SECONDS.observe(time.perf_counter() - started)

    return application


def _read_body(environ: "WSGIEnvironment", *, max_body: int, deadline_s: float) -> str | None:
    """Read the request's body into `wsgi.input` (a buffer Bolt then reads), or the status that refuses it."""
    if environ.get("REQUEST_METHOD") != "POST":
        return None
    try:
        length = int(environ.get("CONTENT_LENGTH") or "")
    except ValueError:
        return "411 Length Required"  # Slack always says how long its body is; chunked bodies are not read
    if not 0 <= length <= max_body:
        return "413 Content Too Large" if length > max_body else "400 Bad Request"
    connection = environ.get("gunicorn.socket")
    if connection is not None:
        connection.settimeout(min(deadline_s, READ_TIMEOUT_S))  # each read; the deadline bounds them all
    body = _read_within(environ["wsgi.input"], length, time.monotonic() + deadline_s)
    if isinstance(body, str):
        return body
    environ["wsgi.input"] = io.BytesIO(body)
    return None


def _read_within(source: Any, length: int, deadline: float) -> bytes | str:
    """`length` bytes from `source` before `deadline`, or the status that refuses the request."""
    chunks: list[bytes] = []
    received = 0
    try:
        while received < length:
            if time.monotonic() > deadline:
                return "408 Request Timeout"
            chunk = source.read(min(length - received, 64 * 1024))
            if not chunk:
                return "400 Bad Request"  # the sender stopped short of its Content-Length
            chunks.append(chunk)
            received += len(chunk)
    except OSError:  # a read timed out, or the sender went away
        return "408 Request Timeout"
    return b"".join(chunks)


def metrics_app(token: str | None = None) -> "WSGIApplication":
    """`/metrics` (Prometheus' text format), behind `Authorization: Bearer <token>` when a token is given."""
    expected = f"Bearer {token}".encode() if token else None
    exposition = make_wsgi_app(_registry())

    def application(environ: "WSGIEnvironment", start_response: "StartResponse") -> Iterable[bytes]:
        if environ.get("PATH_INFO", "") != METRICS_PATH:
            return _plain(start_response, "404 Not Found", b"not found")
        given = str(environ.get("HTTP_AUTHORIZATION", "")).encode("utf-8", "replace")
        if expected is not None and not hmac.compare_digest(given, expected):
            return _plain(start_response, "401 Unauthorized", b"a bearer token is required",
                          [("WWW-Authenticate", "Bearer")])
        served: Iterable[bytes] = exposition(environ, start_response)
        return served

    return application


def by_listener(routes: Mapping[int, "WSGIApplication"], default: "WSGIApplication") -> "WSGIApplication":
    """Under gunicorn, which binds every listener for one application: the application of the port the
    connection was accepted on (the socket's own address, never the request's Host header)."""

    def application(environ: "WSGIEnvironment", start_response: "StartResponse") -> Iterable[bytes]:
        connection = environ.get("gunicorn.socket")
        port = connection.getsockname()[1] if connection is not None else None
        chosen: Iterable[bytes] = (routes.get(port, default) if isinstance(port, int) else default)(
            environ, start_response)
        return chosen

    return application


def _plain(start_response: "StartResponse", status: str, body: bytes,
           headers: Sequence[tuple[str, str]] = ()) -> Iterable[bytes]:
    start_response(status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body))), *headers])
    return [body]


def _malformed(start_response: "StartResponse") -> Iterable[bytes]:
    """400, with no detail: the sender is either a broken client or someone probing."""
    body = b"malformed Slack request"
    start_response("400 Bad Request", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))],
                   sys.exc_info())
    return [body]


def _health(start_response: "StartResponse") -> Iterable[bytes]:
    body = json.dumps({"status": "ok", "worker": os.getpid()}).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


def _registry() -> CollectorRegistry:
    """With several workers and PROMETHEUS_MULTIPROC_DIR set, /metrics adds up every worker's numbers;
    otherwise it reports the worker that answers."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return registry


class GunicornServer(BaseApplication):  # type: ignore[misc]  # its base class is untyped (Any)
    """gunicorn, configured in code: threaded workers, each loading the app through `build` after the fork."""

    def __init__(self, build: Callable[[], tuple["WSGIApplication", Callable[[], None]]], *,
                 binds: Sequence[str], workers: int, threads: int) -> None:
        self._build = build
        self._close: Callable[[], None] | None = None
        self._options: dict[str, Any] = {
            "bind": list(binds),
            "workers": workers,
            "worker_class": "gthread",
            "threads": threads,
            "timeout": 30,
            "graceful_timeout": 30,
            "accesslog": None,
            "post_worker_init": _prestart_request_threads,
            "worker_exit": self._worker_exit,
            "child_exit": _child_exit,
        }
        super().__init__()

    def load_config(self) -> None:
        for key, value in self._options.items():
            self.cfg.set(key, value)

    def load(self) -> "WSGIApplication":
        application, self._close = self._build()
        return application

    def _worker_exit(self, _server: object, _worker: object) -> None:
        """Let accepted replies finish before the worker goes: each is a person waiting."""
        if self._close is not None:
            self._close()


def _prestart_request_threads(worker: Any) -> None:
    """The gthread worker's request pool, started before the first request (see `bot.work.prestart`)."""
    pool = getattr(worker, "tpool", None)
    if isinstance(pool, ThreadPoolExecutor):
        prestart(pool, worker.cfg.threads)


def _child_exit(_server: object, worker: Any) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]
