"""The OpenAI-compatible embeddings adapter over real HTTP: the real `openai` client against a scripted
embeddings server on loopback, alone and wired through `bootstrap` into ingestion and hybrid retrieval.

The server's vectors are a hashed bag of words (32 dimensions, deliberately not unit length), so texts that
share words are near each other and retrieval through the vectors means something."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from sqlalchemy import select

from core.bootstrap import bootstrap, build_embedder
from core.config import ConfigError, Settings, SourcedConfig
from core.domain import Audience, Principal
from core.llm.safety import RemoteModelBlocked
from core.retrieval.embeddings import CachedEmbedder, EmbeddingError
from core.retrieval.openai_embeddings import DIMENSION_PROBE, OpenAIEmbedder
from core.storage.tables import ChunkEmbeddingRow

API_KEY = "sk-embed-4b1d0c2e-never-print-me"
DIM = 32
STAFF = Principal(user_id="U1", roles=frozenset({"everyone"}))


def bag_of_words(text: str, dim: int = DIM) -> list[float]:
    """Word counts hashed into `dim` buckets, plus a constant so no text is the zero vector; not normalised."""
    vector = [0.0] * dim
    vector[0] = 0.5
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dim] += 3.0
    return vector


def unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector]


def expected(texts: list[str]) -> list[Any]:
    """What the adapter should return for `texts` (approximately: one `approx` per row)."""
    return [pytest.approx(unit(bag_of_words(text))) for text in texts]


# -- the scripted server -------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class Reply:
    status: int = 200
    payload: Any = None


@dataclass(frozen=True, kw_only=True)
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def inputs(self) -> list[str]:
        return list(self.body["input"])


def vectors_payload(inputs: list[str], *, shuffle: bool = False,
                    vector: Callable[[str], list[Any]] = bag_of_words) -> dict[str, Any]:
    data = [{"object": "embedding", "index": i, "embedding": vector(text)} for i, text in enumerate(inputs)]
    return {"object": "list", "model": "test-embed", "data": data[::-1] if shuffle else data,
            "usage": {"prompt_tokens": 1, "total_tokens": 1}}


def good(inputs: list[str]) -> Reply:
    return Reply(payload=vectors_payload(inputs))


def failing(status: int) -> Reply:
    return Reply(status=status, payload={"error": {"message": "scripted failure", "type": "server_error"}})


Script = Callable[[list[str], int], Reply]
"""(the request's inputs, how many requests came before) -> the reply."""


def then(*first: Callable[[list[str]], Reply]) -> Script:
    """The given replies for the first requests, then good vectors."""
    return lambda inputs, n: first[n](inputs) if n < len(first) else good(inputs)


@dataclass
class EmbeddingsServer:
    script: Script
    seen: list[Seen] = field(default_factory=list)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                headers = {name.lower(): value for name, value in self.headers.items()}
                server.seen.append(Seen(path=self.path, headers=headers, body=body))
                reply = server.script(list(body["input"]), len(server.seen) - 1)
                payload = json.dumps(reply.payload).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("retry-after-ms", "10")  # keeps the client's backoff short in tests
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the tests assert on `seen`."""

        return Handler


Serve = Callable[..., tuple[EmbeddingsServer, str]]


@pytest.fixture
def serve() -> Iterator[Serve]:
    started: list[ThreadingHTTPServer] = []

    def start(script: Script | None = None) -> tuple[EmbeddingsServer, str]:
        scripted = EmbeddingsServer(script or then())
        http = ThreadingHTTPServer(("127.0.0.1", 0), scripted.handler())
        http.daemon_threads = True
        threading.Thread(target=http.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        started.append(http)
        return scripted, f"http://127.0.0.1:{http.server_address[1]}/v1"

    yield start
    for http in started:
        http.shutdown()
        http.server_close()


def embedder(base_url: str, **options: Any) -> OpenAIEmbedder:
    settings: dict[str, Any] = {"model": "test-embed", "api_key": SecretStr(API_KEY), "timeout_s": 2.0,
                                "max_retries": 2, **options}
    return OpenAIEmbedder(base_url=base_url, **settings)


TEXTS = ["Returns are accepted within 30 days.", "Refunds go to the original card.", "Salary bands for engineers."]


# -- vectors -------------------------------------------------------------------------------------------------

def test_vectors_are_unit_length_and_in_input_order_when_the_server_shuffles_them(serve: Serve) -> None:
    server, url = serve(lambda inputs, n: Reply(payload=vectors_payload(inputs, shuffle=True)))
    vectors = embedder(url).embed(TEXTS)
    assert len(vectors) == len(TEXTS)
    for text, vector in zip(TEXTS, vectors, strict=True):
        assert math.isclose(math.sqrt(sum(v * v for v in vector)), 1.0, rel_tol=1e-9)
        assert vector == pytest.approx(unit(bag_of_words(text)))
    [request] = server.seen
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "test-embed", "input": TEXTS, "encoding_format": "float"}


def test_more_texts_than_a_batch_go_in_several_requests_and_come_back_in_order(serve: Serve) -> None:
    server, url = serve()
    texts = [f"text number {i} about topic {i % 3}" for i in range(10)]
    vectors = embedder(url, batch_size=4).embed(texts)
    assert [len(seen.inputs) for seen in server.seen] == [4, 4, 2]
    assert [text for seen in server.seen for text in seen.inputs] == texts
    assert vectors == expected(texts)


def test_no_texts_make_no_request(serve: Serve) -> None:
    server, url = serve()
    assert embedder(url).embed([]) == []
    assert server.seen == []


def test_an_empty_text_is_sent_as_a_blank_one(serve: Serve) -> None:
    server, url = serve()
    embedder(url).embed(["", "words"])
    assert server.seen[0].inputs == [" ", "words"]


def test_the_dimension_is_learnt_from_the_first_response_or_taken_from_the_settings(serve: Serve) -> None:
    server, url = serve()
    learning = embedder(url)
    assert learning.dim == DIM
    assert [seen.inputs for seen in server.seen] == [[DIMENSION_PROBE]]
    learning.embed(TEXTS)
    assert learning.dim == DIM and len(server.seen) == 2
    assert embedder(url, dim=DIM).dim == DIM and len(server.seen) == 2


# -- failures ------------------------------------------------------------------------------------------------

def test_a_server_error_is_retried_then_succeeds(serve: Serve) -> None:
    server, url = serve(then(lambda inputs: failing(500)))
    vectors = embedder(url).embed(TEXTS)
    assert vectors == expected(TEXTS)
    assert len(server.seen) == 2


def test_a_persistent_failure_raises_a_clear_error_after_bounded_retries(serve: Serve) -> None:
    server, url = serve(lambda inputs, n: failing(500))
    with pytest.raises(EmbeddingError, match=r"openai:test-embed@127\.0\.0\.1:\d+/v1: HTTP 500") as raised:
        embedder(url, max_retries=2).embed(TEXTS)
    assert len(server.seen) == 3
    assert API_KEY not in str(raised.value)


def test_a_client_error_is_not_retried(serve: Serve) -> None:
    server, url = serve(lambda inputs, n: failing(404))
    with pytest.raises(EmbeddingError, match="HTTP 404"):
        embedder(url).embed(TEXTS)
    assert len(server.seen) == 1


def test_an_unreachable_server_raises_the_clear_error() -> None:
    with pytest.raises(EmbeddingError, match="APIConnectionError"):
        embedder("http://127.0.0.1:9/v1", max_retries=0, timeout_s=0.5).embed(TEXTS)


def _drop_last(inputs: list[str]) -> Reply:
    payload = vectors_payload(inputs)
    payload["data"].pop()
    return Reply(payload=payload)


def _edit_vector(n: int, vector: Callable[[str], list[Any]]) -> Callable[[list[str]], Reply]:
    """Good vectors except the n-th, which `vector` computes."""
    return lambda inputs: Reply(payload=vectors_payload(
        inputs, vector=lambda text: vector(text) if text == inputs[n] else bag_of_words(text)))


def _repeat_index(inputs: list[str]) -> Reply:
    payload = vectors_payload(inputs)
    payload["data"][1]["index"] = 0
    return Reply(payload=payload)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (_drop_last, "2 vectors for 3 texts"),
        (lambda inputs: Reply(payload={"object": "list", "data": None, "model": "m"}), "no list of vectors"),
        (_edit_vector(1, lambda text: bag_of_words(text, DIM + 1)), "vector 1 has 33 dimensions, expected 32"),
        (_edit_vector(2, lambda text: ["0.5", *bag_of_words(text)[1:]]), "vector 2 is not a non-empty list"),
        (_edit_vector(0, lambda text: []), "vector 0 is not a non-empty list"),
        (_edit_vector(1, lambda text: [0.0] * DIM), "vector 1 is zero or not finite"),
        (_repeat_index, "index 0 is missing, repeated or out of range"),
    ],
    ids=["too-few", "no-data", "mixed-dimensions", "non-numeric", "empty", "zero", "repeated-index"],
)
def test_a_bad_response_raises_a_clear_error(serve: Serve, reply: Callable[[list[str]], Reply],
                                             message: str) -> None:
    server, url = serve(lambda inputs, n: reply(inputs))
    with pytest.raises(EmbeddingError, match=re.escape(message)):
        embedder(url).embed(TEXTS)
    assert len(server.seen) == 1


def test_a_dimension_other_than_the_configured_one_raises(serve: Serve) -> None:
    _, url = serve()
    with pytest.raises(EmbeddingError, match="has 32 dimensions, expected 768"):
        embedder(url, dim=768).embed(TEXTS)


def test_a_later_response_of_another_dimension_raises(serve: Serve) -> None:
    _, url = serve(lambda inputs, n: Reply(payload=vectors_payload(
        inputs, vector=lambda text: bag_of_words(text, DIM if n == 0 else 64))))
    model = embedder(url)
    model.embed(TEXTS)
    with pytest.raises(EmbeddingError, match="has 64 dimensions, expected 32"):
        model.embed(["another text"])


def test_a_hosted_base_url_is_refused_before_any_request() -> None:
    with pytest.raises(RemoteModelBlocked, match=r"api\.openai\.com"):
        embedder("https://api.openai.com/v1").embed(TEXTS)


# -- the key and the id --------------------------------------------------------------------------------------

def test_the_api_key_is_sent_as_a_bearer_token_and_never_logged_or_shown(
        serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    server, url = serve(then(lambda inputs: failing(500)))
    model = embedder(url)
    with caplog.at_level(logging.DEBUG):
        model.embed(TEXTS)
    assert [seen.headers["authorization"] for seen in server.seen] == [f"Bearer {API_KEY}"] * 2
    assert caplog.records  # the client did log the request and the retry
    shown = [caplog.text, repr(model), str(model), model.model_id]
    assert all(API_KEY not in text for text in shown)


def test_without_a_key_no_key_from_another_tool_is_sent(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    server, url = serve()
    OpenAIEmbedder(base_url=url, model="test-embed").embed(TEXTS)
    assert API_KEY not in server.seen[0].headers["authorization"]


def test_the_model_id_names_the_model_and_the_endpoint() -> None:
    one = OpenAIEmbedder(base_url="http://127.0.0.1:8000/v1", model="embed-small")
    assert one.model_id == "openai:embed-small@127.0.0.1:8000/v1"
    assert OpenAIEmbedder(base_url="http://127.0.0.1:8000/v1", model="embed-large").model_id != one.model_id
    assert OpenAIEmbedder(base_url="http://127.0.0.1:8001/v1", model="embed-small").model_id != one.model_id
    assert OpenAIEmbedder(base_url="http://127.0.0.1:8000/v1/", model="embed-small").model_id == one.model_id
    with_credentials = OpenAIEmbedder(base_url="http://user:hunter2@LOCALHOST/v1?x=1", model="m")
    assert with_credentials.model_id == "openai:m@localhost/v1"
    assert "hunter2" not in repr(with_credentials)


# -- settings ------------------------------------------------------------------------------------------------

def test_build_embedder_wires_the_adapter_from_settings_behind_the_cache() -> None:
    settings = Settings(embedder="openai", embedding_base_url="http://127.0.0.1:1/v1", embedding_model="m",
                        embedding_api_key=SecretStr(API_KEY), embedding_dim=8)
    built = build_embedder(settings.embedder, settings)
    assert isinstance(built, CachedEmbedder)
    assert (built.model_id, built.dim) == ("openai:m@127.0.0.1:1/v1", 8)
    assert API_KEY not in repr(settings)


@pytest.mark.parametrize("missing", ["embedding_base_url", "embedding_model"])
def test_a_missing_base_url_or_model_fails_with_one_clear_line(missing: str) -> None:
    values: dict[str, Any] = {"embedding_base_url": "http://127.0.0.1:1/v1", "embedding_model": "m", missing: None}
    with pytest.raises(ConfigError, match=f"SOURCED_{missing.upper()}") as raised:
        bootstrap(Settings(database_url="sqlite://", embedder="openai", **values), config=SourcedConfig(),
                  progress=False)
    assert "\n" not in str(raised.value)


def test_a_base_url_without_a_host_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="SOURCED_EMBEDDING_BASE_URL"):
        OpenAIEmbedder(base_url="/v1", model="m")


# -- end to end: bootstrap, ingest, retrieve -----------------------------------------------------------------

RETURNS = """---
id: returns-policy
title: Returns Policy
owner: "#support"
---
# Returns Policy

## Return window

Returns are accepted within 30 days of delivery when the item is unused.

## Refund method

Refunds go back to the original card within 5 business days.
"""

TRAVEL = """---
id: travel-policy
title: Travel Policy
owner: "#finance"
---
# Travel Policy

## Booking flights

Book economy flights through the travel portal at least two weeks ahead.
"""


def test_bootstrap_ingests_with_the_endpoint_and_retrieves_through_the_hybrid_index(
        serve: Serve, tmp_path: Path) -> None:
    server, url = serve()
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "returns.md").write_text(RETURNS)
    (kb / "travel.md").write_text(TRAVEL)
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'sourced.db'}", embedder="openai",
                        embedding_base_url=url, embedding_model="test-embed")
    sourced = bootstrap(settings, config=SourcedConfig(), progress=False)
    assert sourced.embedder is not None
    assert sourced.embedder.model_id == f"openai:test-embed@{url.removeprefix('http://')}"

    report = sourced.ingestor.ingest(kb)
    embedded = [text for seen in server.seen for text in seen.inputs]
    assert report.chunks > 0 and len(embedded) == report.chunks
    with sourced.engine.connect() as connection:
        stored = connection.execute(select(ChunkEmbeddingRow.model, ChunkEmbeddingRow.dim)).all()
    assert set(stored) == {(sourced.embedder.model_id, DIM)} and len(stored) == report.chunks

    requests = len(server.seen)
    sourced.ingestor.ingest(kb)
    assert len(server.seen) == requests  # unchanged files: nothing to embed, no request

    question = "Within how many days are returns accepted?"
    hits = sourced.index.search(question, audience=Audience.only(STAFF), limit=1)
    assert [(hit.doc_id, hit.passage.heading.split(" > ")[-1]) for hit in hits] == [
        ("returns-policy", "Return window")]
    assert server.seen[-1].inputs == [question]  # the question went through the endpoint too
