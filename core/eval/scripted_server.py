"""An OpenAI-compatible chat-completions server on loopback whose replies a function writes.

The fabrication benchmark puts it behind the real OpenAI-compatible adapter, so a scripted answer travels the
way a model's does: rendered prompt out, HTTP, the client, the strict parser and the guard back. It listens on
127.0.0.1 only, on a port the system picks, in a daemon thread of this process. A reply function may sleep (a
slow model) or raise `ScriptedFailure` (an HTTP error status, a failing model).
"""

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from core.domain.errors import SourcedError

Respond = Callable[[list[dict[str, Any]]], str]
"""The chat messages of one request to the content of the reply."""


class ScriptedFailure(SourcedError):
    """Raised by a reply function: the server answers with this HTTP status and an OpenAI-style error body."""

    def __init__(self, status: int, *, retry_after_ms: int | None = None) -> None:
        super().__init__(f"scripted HTTP {status}")
        self.status = status
        self.retry_after_ms = retry_after_ms
        """Sent as `retry-after-ms`, as OpenAI does: how long a client should wait before retrying."""


class ScriptedServer:
    def __init__(self, respond: Respond) -> None:
        self.respond = respond
        self.requests = 0
        self.bodies: list[dict[str, Any]] = []
        """Every request body, in order: what the client asked for (schema, temperature), not only the messages."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-model", daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # the name http.server dispatches to
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests += 1
                server.bodies.append(body)
                try:
                    content = server.respond(body.get("messages", []))
                except ScriptedFailure as failure:
                    wait = {} if failure.retry_after_ms is None else {"retry-after-ms": str(failure.retry_after_ms)}
                    self._send(failure.status, {"error": {"message": str(failure), "type": "server_error"}}, wait)
                    return
                self._send(200, {
                    "id": f"scripted-{server.requests}", "object": "chat.completion", "created": 0,
                    "model": body.get("model", "scripted"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                })

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                payload = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    for name, value in {"Content-Type": "application/json", "Content-Length": str(len(payload)),
                                        **(headers or {})}.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # a client past its deadline has left
                    pass

            def log_message(self, format: str, *args: Any) -> None:  # http.server's signature
                """Quiet: one line per request would drown the benchmark's own output."""

        return Handler
