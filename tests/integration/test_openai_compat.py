"""The OpenAI-compatible adapter over real HTTP: the real `openai` client against a scripted server on
loopback, driven through the real orchestrator, so every misbehaviour ends in the refusal kind that DESIGN
section 1 names."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from core.application.orchestrator import Evidence, Orchestrator, Question
from core.application.ports import GenerationRequest
from core.application.risk import KeywordRiskClassifier
from core.application.routing import OwnerRouter
from core.bootstrap import bootstrap, build_model, build_verifier
from core.config import ConfigError, Settings, SourcedConfig
from core.domain import Answered, Audience, Outcome, Principal, Refused
from core.llm.extractive import ExtractiveModel
from core.llm.openai_compat import OpenAICompatModel
from core.llm.safety import RemoteModelBlocked, is_loopback_url, remote_models_blocked
from tests.unit.fakes import FakeIndex, FixedClock, MemoryAudit, RecordingMetrics, chunk

API_KEY = "sk-test-7f3a9c1e-never-print-me"
STAFF = Principal(user_id="U1", roles=frozenset({"everyone"}))
QUESTION = "How many days do customers have to return items for a refund?"
REFUNDS = chunk("refunds#return-window",
                "Customers may return items within 30 days of delivery for a full refund.",
                doc_id="refunds", title="Refund Policy", heading="Refund Policy > Return window",
                owner="#support-ops")
SHIPPING = chunk("shipping#returns-label",
                 "Return shipping labels are free for items returned for a refund.",
                 doc_id="shipping", title="Shipping", heading="Shipping > Return labels",
                 owner="#support-ops")
GROUNDED = {
    "found": True,
    "answer": "Customers may return items within 30 days of delivery.",
    "claims": [{"text": "Customers may return items within 30 days of delivery.",
                "chunk_ids": ["refunds#return-window"]}],
    "confidence": "high",
    "refusal_reason": None,
}


def envelope(**overrides: Any) -> str:
    return json.dumps({**GROUNDED, **overrides})


# -- the scripted server -------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class Reply:
    status: int = 200
    content: str = ""
    finish_reason: str = "stop"
    error: str | None = None
    delay_s: float = 0.0

    def body(self) -> bytes:
        if self.error is not None:
            return json.dumps({"error": {"message": self.error, "type": "invalid_request_error"}}).encode()
        return json.dumps({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "scripted-model",
            "choices": [{"index": 0, "finish_reason": self.finish_reason,
                         "message": {"role": "assistant", "content": self.content}}],
        }).encode()


@dataclass(frozen=True, kw_only=True)
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


Script = Callable[[dict[str, Any], int], Reply]


def replies(*script: Reply) -> Script:
    """Each request gets the next reply; the last one repeats."""
    return lambda body, n: script[min(n, len(script) - 1)]


@dataclass
class ScriptedServer:
    script: Script
    seen: list[Seen] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                headers = {name.lower(): value for name, value in self.headers.items()}
                server.seen.append(Seen(path=self.path, headers=headers, body=body))
                reply = server.script(body, len(server.seen) - 1)
                if reply.delay_s and server.stopping.wait(reply.delay_s):
                    return
                payload = reply.body()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.send_header("retry-after-ms", "10")  # keeps the client's backoff short in tests
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (a timeout test); nothing left to answer
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the test asserts on `seen`, not on an access log."""

        return Handler


@pytest.fixture
def serve() -> Iterator[Callable[[Script], tuple[ScriptedServer, str]]]:
    started: list[tuple[ScriptedServer, ThreadingHTTPServer]] = []

    def start(script: Script) -> tuple[ScriptedServer, str]:
        scripted = ScriptedServer(script)
        http = ThreadingHTTPServer(("127.0.0.1", 0), scripted.handler())
        http.daemon_threads = True
        threading.Thread(target=http.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        started.append((scripted, http))
        return scripted, f"http://127.0.0.1:{http.server_address[1]}/v1"

    yield start
    for scripted, http in started:
        scripted.stopping.set()
        http.shutdown()
        http.server_close()


def adapter(base_url: str, **options: Any) -> OpenAICompatModel:
    settings: dict[str, Any] = {"timeout_s": 2.0, "max_retries": 2, **options}
    return OpenAICompatModel(base_url=base_url, model="scripted-model", api_key=SecretStr(API_KEY),
                             **settings)


@dataclass
class Pipeline:
    model: OpenAICompatModel
    audit: MemoryAudit = field(default_factory=MemoryAudit)

    def ask(self, text: str = QUESTION) -> tuple[Outcome, Evidence]:
        orchestrator = Orchestrator(
            index=FakeIndex([REFUNDS, SHIPPING]), model=self.model, audit=self.audit,
            risk=KeywordRiskClassifier(), clock=FixedClock(), metrics=RecordingMetrics(),
            router=OwnerRouter(known_gaps=(), default_owner="#help-desk"),
        )
        question = Question(text=text, principal=STAFF, audience=Audience.only(STAFF))
        return orchestrator.ask_with_evidence(question)


def refused_kind(outcome: Outcome) -> str:
    assert isinstance(outcome, Refused), outcome
    return outcome.kind


# -- every misbehaviour is a refusal of its kind -------------------------------------------------------------

def test_a_grounded_response_is_an_answer_citing_exactly_the_cited_ids(serve: Any) -> None:
    server, url = serve(replies(Reply(content=envelope())))
    pipeline = Pipeline(adapter(url))
    outcome, _ = pipeline.ask()
    assert isinstance(outcome, Answered), outcome
    assert [c.passage.chunk_id for c in outcome.citations] == ["refunds#return-window"]
    record = pipeline.audit.records[-1]
    assert (record.kind, record.model, record.prompt_version) == ("answered", "openai:scripted-model",
                                                                  "answer-v3")
    assert len(server.seen) == 1


TRUNCATED = envelope()[:70]


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (Reply(content=envelope(claims=[{"text": "Customers may return items within 30 days of delivery.",
                                         "chunk_ids": ["refunds#return-policy"]}])), "invalid_citation"),
        (Reply(content=envelope(claims=[{"text": "Customers may return items within 30 days of delivery.",
                                         "chunk_ids": ["1"]}])), "invalid_citation"),
        (Reply(content=envelope(sources_used=2)), "malformed_response"),
        (Reply(content="Here is the answer:\n" + envelope() + "\nHope that helps!"), "malformed_response"),
        (Reply(content="```json\n" + envelope() + "\n```"), "malformed_response"),
        (Reply(content=TRUNCATED, finish_reason="length"), "malformed_response"),
        (Reply(content=envelope(answer="I couldn't find this; the sources do not say.")),
         "model_self_refusal"),
        (Reply(content=envelope(found=False, answer="", claims=[], refusal_reason="not in the sources")),
         "not_in_corpus"),  # the model declined: refused as retrieval knows it, the audit's detail says so
        (Reply(content=envelope(claims=[{"text": "Customers may return items within 90 days of delivery.",
                                         "chunk_ids": ["refunds#return-window"]}])), "unsupported_claim"),
    ],
    ids=["invented-id", "list-position-as-id", "extra-field", "prose-around", "code-fence", "truncated",
         "found-true-refusal-prose", "found-false", "number-not-in-chunk"],
)
def test_each_bad_response_ends_in_its_refusal_kind(serve: Any, reply: Reply, kind: str) -> None:
    _, url = serve(replies(reply))
    pipeline = Pipeline(adapter(url))
    outcome, evidence = pipeline.ask()
    assert refused_kind(outcome) == kind
    assert pipeline.audit.records[-1].kind == kind
    assert evidence.model_called


def test_a_rate_limit_is_retried_then_answered(serve: Any) -> None:
    server, url = serve(replies(Reply(status=429, error="slow down"), Reply(content=envelope())))
    outcome, _ = Pipeline(adapter(url)).ask()
    assert isinstance(outcome, Answered), outcome
    assert len(server.seen) == 2


def test_a_server_error_every_time_is_model_unavailable_after_bounded_retries(serve: Any) -> None:
    server, url = serve(replies(Reply(status=500, error="internal error")))
    outcome, evidence = Pipeline(adapter(url, max_retries=2)).ask()
    assert refused_kind(outcome) == "model_unavailable"
    assert evidence.detail == "model failed: InternalServerError"
    assert len(server.seen) == 3


def test_a_response_slower_than_the_timeout_is_model_unavailable(serve: Any) -> None:
    server, url = serve(replies(Reply(content=envelope(), delay_s=5.0)))
    outcome, evidence = Pipeline(adapter(url, timeout_s=0.3, max_retries=1)).ask()
    assert refused_kind(outcome) == "model_unavailable"
    assert evidence.detail == "model failed: APITimeoutError"
    assert len(server.seen) == 2


def test_a_bad_request_about_something_else_is_not_retried_in_json_mode(serve: Any) -> None:
    server, url = serve(replies(Reply(status=400, error="the request exceeds the available context size")))
    model = adapter(url)
    outcome, _ = Pipeline(model).ask()
    assert refused_kind(outcome) == "model_unavailable"
    assert len(server.seen) == 1
    assert model.uses_json_schema


# -- structured output and its fallback ----------------------------------------------------------------------

def rejects_json_schema(body: dict[str, Any], n: int) -> Reply:
    if body["response_format"]["type"] == "json_schema":
        return Reply(status=400, error="'response_format.type' must be 'json_object' or 'text'")
    return Reply(content=envelope())


def test_a_server_rejecting_json_schema_gets_json_mode_and_the_choice_is_remembered(serve: Any) -> None:
    server, url = serve(rejects_json_schema)
    model = adapter(url)
    pipeline = Pipeline(model)
    assert isinstance(pipeline.ask()[0], Answered)
    assert isinstance(pipeline.ask()[0], Answered)
    assert [seen.body["response_format"]["type"] for seen in server.seen] == [
        "json_schema", "json_object", "json_object"]
    assert not model.uses_json_schema


def test_the_request_asks_for_the_strict_envelope_schema_at_temperature_zero(serve: Any) -> None:
    server, url = serve(replies(Reply(content=envelope())))
    Pipeline(adapter(url)).ask()
    body = server.seen[0].body
    assert server.seen[0].path == "/v1/chat/completions"
    assert (body["model"], body["temperature"]) == ("scripted-model", 0)
    assert body["max_tokens"] > 0
    response_format = body["response_format"]
    assert response_format["json_schema"]["strict"] is True
    schema = response_format["json_schema"]["schema"]
    assert schema["additionalProperties"] is False
    assert sorted(schema["required"]) == ["answer", "claims", "confidence", "found", "refusal_reason"]


def test_the_prompt_presents_each_chunk_under_its_labelled_id(serve: Any) -> None:
    server, url = serve(replies(Reply(content=envelope())))
    Pipeline(adapter(url)).ask()
    system, user = server.seen[0].body["messages"]
    assert (system["role"], user["role"]) == ("system", "user")
    assert "found" in system["content"] and "general knowledge" in system["content"]
    assert '<source id="refunds#return-window" section="Refund Policy &gt; Return window">' in user["content"]
    assert "Customers may return items within 30 days of delivery for a full refund." in user["content"]
    assert '<source id="shipping#returns-label"' in user["content"]
    assert QUESTION in user["content"]
    assert "\n1." not in user["content"] and "[1]" not in user["content"]


# -- secrets and the switch ----------------------------------------------------------------------------------

def test_the_api_key_is_sent_as_a_bearer_token_and_never_logged_or_shown(
        serve: Any, caplog: pytest.LogCaptureFixture) -> None:
    server, url = serve(replies(Reply(status=500, error="boom"), Reply(content=envelope())))
    model = adapter(url)
    with caplog.at_level(logging.DEBUG):
        outcome, evidence = Pipeline(model).ask()
    assert isinstance(outcome, Answered)
    assert server.seen[0].headers["authorization"] == f"Bearer {API_KEY}"
    shown = [caplog.text, repr(model), str(model), repr(outcome), repr(evidence)]
    assert all(API_KEY not in text for text in shown)


def test_settings_keep_the_api_key_secret() -> None:
    settings = Settings(model="openai", model_base_url="http://127.0.0.1:1/v1", model_name="m",
                        model_api_key=SecretStr(API_KEY))
    model = build_model(settings)
    assert API_KEY not in repr(settings) and API_KEY not in repr(model)
    assert model.name == "openai:m"


def test_without_a_key_no_key_from_another_tool_is_sent(serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    server, url = serve(replies(Reply(content=envelope())))
    Pipeline(OpenAICompatModel(base_url=url, model="scripted-model")).ask()
    assert API_KEY not in server.seen[0].headers["authorization"]


def test_build_model_wires_the_openai_adapter_from_settings() -> None:
    model = build_model(Settings(model="openai", model_base_url="http://127.0.0.1:1/v1", model_name="m",
                                 model_timeout_s=3))
    assert isinstance(model, OpenAICompatModel) and model.prompt_version == "answer-v3"


@pytest.mark.parametrize("missing", ["model_base_url", "model_name"])
def test_build_model_without_a_base_url_or_model_name_fails_with_one_clear_line(missing: str) -> None:
    values: dict[str, Any] = {"model_base_url": "http://127.0.0.1:1/v1", "model_name": "m", missing: None}
    with pytest.raises(ConfigError, match=f"SOURCED_{missing.upper()}") as raised:
        build_model(Settings(model="openai", **values))
    assert "\n" not in str(raised.value)


def test_build_model_for_llama_cpp_needs_a_model_path() -> None:
    with pytest.raises(ConfigError, match="SOURCED_MODEL_PATH"):
        build_model(Settings(model="llama-cpp", model_path=None))


def test_the_suite_runs_with_remote_models_blocked() -> None:
    assert remote_models_blocked()


def test_a_hosted_base_url_is_refused_before_any_request() -> None:
    model = adapter("https://api.openai.com/v1")
    request = GenerationRequest(question=QUESTION, chunks=[REFUNDS.chunk],
                                risk=KeywordRiskClassifier().assess(QUESTION))
    with pytest.raises(RemoteModelBlocked, match=r"api\.openai\.com"):
        model.generate(request)
    outcome, evidence = Pipeline(model).ask()
    assert refused_kind(outcome) == "model_unavailable"
    assert evidence.detail == "model failed: RemoteModelBlocked"


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://127.1.2.3/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://localhost.example.com/v1", False),
        ("http://10.0.0.5:8000/v1", False),
        ("http://0.0.0.0:8000/v1", False),
        ("not a url", False),
    ],
)
def test_only_loopback_addresses_count_as_local(url: str, loopback: bool) -> None:
    assert is_loopback_url(url) is loopback


# -- the model verifier (SOURCED_VERIFIER=model) -----------------------------------------------------------------

def verdict(quotes: str, answers: str) -> str:
    return json.dumps({"quotes_state_claims": quotes, "answers_question": answers})


def verified_ask(url: str) -> tuple[Outcome, Evidence, MemoryAudit]:
    model = adapter(url)
    audit = MemoryAudit()
    orchestrator = Orchestrator(
        index=FakeIndex([REFUNDS, SHIPPING]), model=model, audit=audit, risk=KeywordRiskClassifier(),
        clock=FixedClock(), metrics=RecordingMetrics(), router=OwnerRouter(known_gaps=(), default_owner="#help-desk"),
        verifier=model.verifier())
    outcome, evidence = orchestrator.ask_with_evidence(Question(text=QUESTION, principal=STAFF,
                                                                audience=Audience.only(STAFF)))
    return outcome, evidence, audit


def test_the_verifier_is_one_more_strict_json_request_to_the_same_endpoint(serve: Any) -> None:
    server, url = serve(replies(Reply(content=envelope()), Reply(content=verdict("yes", "yes"))))
    outcome, _, audit = verified_ask(url)
    assert isinstance(outcome, Answered)
    assert len(server.seen) == 2
    check = server.seen[1].body
    assert check["model"] == "scripted-model"
    assert check["response_format"]["json_schema"]["name"] == "verdict"
    user = check["messages"][1]["content"]
    assert QUESTION in user and '<claim n="1">' in user
    assert "<quote>Customers may return items within 30 days of delivery for a full refund.</quote>" in user
    assert audit.records[-1].prompt_version == "answer-v3+verify-v1"


@pytest.mark.parametrize(("second", "kind"), [
    (Reply(content=verdict("no", "yes")), "unsupported_claim"),
    (Reply(content=verdict("yes", "no")), "unsupported_claim"),
    (Reply(content="Looks right to me."), "malformed_response"),
    (Reply(status=500, error="boom"), "model_unavailable"),
], ids=["quote-no", "question-no", "prose", "server-error"])
def test_a_verifier_no_or_failure_over_http_is_a_refusal(serve: Any, second: Reply, kind: str) -> None:
    _, url = serve(replies(Reply(content=envelope()), second))
    outcome, evidence, _ = verified_ask(url)
    assert refused_kind(outcome) == kind, evidence.detail


def test_sourced_verifier_model_wires_the_llms_own_verifier_and_needs_an_llm(serve: Any, tmp_path: Path) -> None:
    _, url = serve(replies(Reply(content=envelope()), Reply(content=verdict("no", "yes"))))
    settings = Settings(database_url=f"sqlite:///{tmp_path}/v.db", model="openai", model_base_url=url,
                        model_name="scripted-model", verifier="model", embedder="none")
    sourced = bootstrap(settings, config=SourcedConfig(), progress=False)
    try:
        assert build_verifier(settings, sourced.model) is not None
    finally:
        sourced.engine.dispose()
    with pytest.raises(ConfigError, match="SOURCED_VERIFIER=model needs an LLM"):
        build_verifier(Settings(verifier="model"), ExtractiveModel())
    assert build_verifier(Settings(), ExtractiveModel()) is None
