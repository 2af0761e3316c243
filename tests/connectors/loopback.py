"""What the fake sources share: a threaded HTTP server on loopback that routes requests to a fake's methods,
checks its credentials, records every call (so tests count listing calls) and answers scripted faults (429 with
`Retry-After`, 5xx) before doing anything, as the real services do when they rate-limit or fail."""

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    query: dict[str, str]
    body: Any


@dataclass(frozen=True)
class Answer:
    """A route's answer: JSON (a dict or list), or raw bytes with their content type."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    content_type: str = "application/json"


Route = tuple[str, re.Pattern[str], Callable[..., Answer]]


class LoopbackServer:
    """Subclasses add routes (`route(method, pattern, handler)`) and say what an authorised request carries."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self._routes: list[Route] = []
        self._faults: list[tuple[str, int, float | None]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> "LoopbackServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def route(self, method: str, pattern: str, handler: Callable[..., Answer]) -> None:
        self._routes.append((method, re.compile(pattern), handler))

    def fail(self, path_prefix: str, status: int, *, times: int = 1, retry_after_s: float | None = None) -> None:
        """The next `times` requests whose path starts with `path_prefix` get `status` and do nothing."""
        with self._lock:
            self._faults.extend([(path_prefix, status, retry_after_s)] * times)

    def calls_to(self, pattern: str) -> list[Call]:
        with self._lock:
            return [call for call in self.calls if re.search(pattern, call.path)]

    def reset_calls(self) -> None:
        with self._lock:
            self.calls.clear()

    def authorised(self, headers: Any) -> bool:
        raise NotImplementedError

    def _fault(self, path: str) -> tuple[int, float | None] | None:
        with self._lock:
            for index, (prefix, status, after) in enumerate(self._faults):
                if path.startswith(prefix):
                    del self._faults[index]
                    return status, after
        return None

    def dispatch(self, method: str, path: str, query: dict[str, str], body: Any, headers: Any) -> Answer:
        fault = self._fault(path)
        if fault is not None:
            return Answer(status=fault[0], body={"message": "scripted fault"},
                          content_type="application/json") if fault[1] is None else Answer(
                status=fault[0], body={"message": "rate limited", "retry_after": fault[1]})
        if not self.authorised(headers):
            return Answer(status=401, body={"message": "unauthorized"})
        with self._lock:
            self.calls.append(Call(method, path, query, body))
        for route_method, pattern, handler in self._routes:
            match = pattern.fullmatch(path)
            if route_method == method and match:
                return handler(query, body, *match.groups())
        return Answer(status=404, body={"message": f"no route for {method} {path}"})


def _handler(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body leave at once, not 40 ms apart (delayed ACKs)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def do_PATCH(self) -> None:
            self._handle("PATCH")

        def _handle(self, method: str) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body: Any = raw
            if raw and "json" in (self.headers.get("Content-Type") or ""):
                body = json.loads(raw)
            elif raw and "x-www-form-urlencoded" in (self.headers.get("Content-Type") or ""):
                body = dict(parse_qsl(raw.decode()))
            answer = server.dispatch(method, parts.path, dict(parse_qsl(parts.query, keep_blank_values=True)), body,
                                     self.headers)
            payload = answer.raw if answer.raw is not None else json.dumps(answer.body).encode()
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(payload)))
            if isinstance(answer.body, dict) and "retry_after" in answer.body:
                self.send_header("Retry-After", str(answer.body["retry_after"]))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
