"""The OpenAI-compatible adapter: OpenAI or Azure OpenAI, vLLM, Ollama, llama.cpp's server.

It asks for the envelope with a strict JSON schema where the server supports structured output, and falls back
to plain JSON mode, remembered per instance, when the server rejects `json_schema` with a 400. It returns the
message content exactly as received: judging it is the orchestrator's strict parser's job, so nothing is
stripped or repaired here. Every failure raises; the orchestrator turns any exception into
`model_unavailable`.

Bounds (`RemoteCalls`, shared with the embeddings adapter): each attempt has a timeout; 408, 409, 429, 5xx and
connection errors are retried at most `max_retries` times, after the server's `Retry-After` or a doubling
pause; the whole call, retries and pauses included, ends within `deadline_s`; and a circuit breaker refuses at
once, for a cool-down, an endpoint that failed several calls in a row (`core.llm.breaker`).
"""

import logging
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from openai import APIConnectionError, APIStatusError, BadRequestError, OpenAI
from openai.types.chat import ChatCompletionMessageParam
from openai.types.chat.completion_create_params import ResponseFormat
from openai.types.completion_usage import CompletionUsage
from pydantic import SecretStr

from core.application.answerability.followups import reading_json_schema
from core.application.guard.envelope import envelope_json_schema, verdict_json_schema
from core.application.ports import GenerationRequest, RewriteRequest, VerificationRequest
from core.domain.errors import ModelError
from core.llm.breaker import CircuitBreaker
from core.llm.deadline import within_deadline
from core.llm.prompts import FOLLOWUP_VERSION, VERIFY_VERSION, Prompt, PromptTemplate, load_prompt
from core.llm.safety import ensure_model_url_allowed

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_MAX_RETRIES: Final = 2
DEFAULT_DEADLINE_S: Final = 60.0
RETRYABLE_STATUS: Final = frozenset({408, 409, 429})
"""Besides 5xx: what the `openai` client itself would retry."""
FIRST_PAUSE_S: Final = 0.5
DEFAULT_MAX_TOKENS: Final = 1024
NO_KEY: Final = "sourced-no-key"
# Why a placeholder rather than None: given None, the client reads OPENAI_API_KEY from the environment and
# would send a key set for some other tool to whatever server SOURCED_MODEL_BASE_URL names. Local servers need
# no key at all.


def openai_client(*, base_url: str, api_key: SecretStr | None) -> OpenAI:
    """The `openai` client for a configured server, shared by the model and embeddings adapters: the key (or
    the `NO_KEY` placeholder, never OPENAI_API_KEY) leaves the SecretStr only here. It never retries on its own:
    `RemoteCalls` does, within the call's deadline."""
    return OpenAI(base_url=base_url, api_key=api_key.get_secret_value() if api_key else NO_KEY, max_retries=0)


def pause_before_retry(error: Exception, retry: int) -> float | None:
    """How long to wait before retrying after `error`, or None when another attempt would fail the same way."""
    if isinstance(error, APIStatusError):
        if error.status_code not in RETRYABLE_STATUS and error.status_code < 500:
            return None
        return _retry_after(error.response.headers) or _doubling(retry)
    if isinstance(error, APIConnectionError):  # timeouts included
        return _doubling(retry)
    return None


def _doubling(retry: int) -> float:
    pause: float = FIRST_PAUSE_S * 2**retry
    return pause


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """The server's own pause, in seconds (`retry-after-ms`, or `retry-after` given in seconds)."""
    for name, unit in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return float(headers[name]) * unit
        except (KeyError, ValueError):
            continue
    return None


@dataclass(frozen=True, kw_only=True)
class RemoteCalls:
    """How an adapter calls its server: attempts bounded by `timeout_s`, at most `max_retries` retries, the
    whole within `deadline_s`, through the endpoint's breaker when it has one."""

    timeout_s: float = 20.0
    deadline_s: float = DEFAULT_DEADLINE_S
    max_retries: int = DEFAULT_MAX_RETRIES
    breaker: CircuitBreaker | None = None

    def __call__(self, attempt: Callable[[float], T]) -> T:
        """`attempt(timeout)` under these bounds; its last failure, or `CircuitOpen`, is raised."""
        def bounded() -> T:
            return within_deadline(attempt, deadline_s=self.deadline_s, timeout_s=self.timeout_s,
                                   retries=self.max_retries, pause_before_retry=pause_before_retry)

        return self.breaker.call(bounded) if self.breaker is not None else bounded()


_NOT_IN_STRICT_MODE: Final = frozenset({"title", "default", "minLength", "maxLength"})


class EmptyCompletion(ModelError, RuntimeError):
    """The server answered without any choice to read."""


def strict_envelope_schema() -> dict[str, Any]:
    """The envelope schema in the form strict structured output accepts: references inlined, every property
    required, no additional properties, no keywords strict mode rejects. A claim's `quote`, optional for the
    parser, is a required string here: a model held to the schema always gives one."""
    schema = envelope_json_schema()
    definitions = schema.pop("$defs", {})
    strict: dict[str, Any] = _strict(schema, definitions)
    strict["properties"]["claims"]["items"]["properties"]["quote"] = {"type": "string"}
    return strict


def strict_verdict_schema() -> dict[str, Any]:
    strict: dict[str, Any] = _strict(verdict_json_schema(), {})
    return strict


def strict_reading_schema() -> dict[str, Any]:
    strict: dict[str, Any] = _strict(reading_json_schema(), {})
    return strict


def _strict(node: Any, definitions: Any) -> Any:
    if isinstance(node, list):
        return [_strict(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _strict(definitions[node["$ref"].rsplit("/", 1)[-1]], definitions)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {name: _strict(sub, definitions) for name, sub in value.items()}
        elif key not in _NOT_IN_STRICT_MODE:
            out[key] = _strict(value, definitions)
    if out.get("type") == "object":
        out["required"] = list(out.get("properties", {}))
        out["additionalProperties"] = False
    return out


def json_schema_format(schema: dict[str, Any], name: str = "envelope") -> ResponseFormat:
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


JSON_OBJECT_FORMAT: Final[ResponseFormat] = {"type": "json_object"}


@dataclass
class TokenCount:
    """Requests made and tokens spent, as the server reports them (`usage`)."""

    calls: int = 0
    prompt: int = 0
    completion: int = 0

    def add(self, usage: CompletionUsage | None) -> None:
        self.calls += 1
        if usage is not None:
            self.prompt += usage.prompt_tokens
            self.completion += usage.completion_tokens


class OpenAICompatModel:
    """The AnswerModel port over any server speaking OpenAI's chat completions API."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: SecretStr | None = None,
        timeout_s: float = 20.0,
        max_retries: int = DEFAULT_MAX_RETRIES,
        deadline_s: float = DEFAULT_DEADLINE_S,
        breaker: CircuitBreaker | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        provider: str = "openai",
        prompt: PromptTemplate | None = None,
        schema: dict[str, Any] | None = None,
    ) -> None:
        """`schema` replaces the strict envelope schema, for servers that accept tighter bounds on output."""
        self._base_url = base_url
        self._model = model
        self._provider = provider
        self._max_tokens = max_tokens
        self._prompt = prompt or load_prompt()
        self._schema_format = json_schema_format(schema or strict_envelope_schema())
        self._structured = True
        self.tokens = TokenCount()
        self._client = openai_client(base_url=base_url, api_key=api_key)
        self._calls = RemoteCalls(timeout_s=timeout_s, max_retries=max_retries, deadline_s=deadline_s,
                                  breaker=breaker)

    def __repr__(self) -> str:
        return f"OpenAICompatModel(name={self.name!r}, base_url={self._base_url!r})"

    @property
    def name(self) -> str:
        return f"{self._provider}:{self._model}"

    @property
    def prompt_version(self) -> str:
        return self._prompt.version

    @property
    def quotes_the_ranking(self) -> bool:
        return False

    @property
    def streams_answers(self) -> bool:
        return True

    @property
    def uses_json_schema(self) -> bool:
        """False once the server has rejected strict structured output; JSON mode is used from then on."""
        return self._structured

    def generate(self, request: GenerationRequest) -> str:
        prompt = self._prompt.render(request.question, request.chunks)
        return self.ask(prompt, self._schema_format, self.tokens)

    def verifier(self, *, schema: dict[str, Any] | None = None) -> "OpenAICompatVerifier":
        """The second opinion (`SOURCED_VERIFIER=model`) from this same endpoint and model."""
        return OpenAICompatVerifier(self, schema=schema or strict_verdict_schema())

    def rewriter(self) -> "OpenAICompatRewriter":
        """The follow-up reader's rewrite requests, to this same endpoint and model."""
        return OpenAICompatRewriter(self, schema=strict_reading_schema())

    def ask(self, prompt: Prompt, schema_format: ResponseFormat, tokens: TokenCount) -> str:
        """One completion held to `schema_format`, or to plain JSON mode once the server has rejected that."""
        ensure_model_url_allowed(self._base_url)
        messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": prompt.system},
                                                      {"role": "user", "content": prompt.user}]
        if self._structured:
            try:
                return self._complete(messages, schema_format, tokens)
            except BadRequestError as error:
                if not _rejects_response_format(error):
                    raise
                log.warning("%s rejected json_schema output; using JSON mode from now on", self.name)
                self._structured = False
        return self._complete(messages, JSON_OBJECT_FORMAT, tokens)

    def _complete(self, messages: list[ChatCompletionMessageParam], response_format: ResponseFormat,
                  tokens: TokenCount) -> str:
        """The first choice's content as-is; no content at all (a model's refusal field) is an empty output,
        which the parser then refuses as malformed."""
        completion = self._calls(lambda timeout: self._client.with_options(timeout=timeout).chat.completions.create(
            model=self._model, messages=messages, response_format=response_format, temperature=0,
            max_tokens=self._max_tokens))
        tokens.add(completion.usage)
        if not completion.choices:
            raise EmptyCompletion(f"{self.name} returned no choices")
        return completion.choices[0].message.content or ""


class OpenAICompatVerifier:
    """The Verifier port: one more strict-JSON request per answer to the answering model's own endpoint."""

    def __init__(self, model: OpenAICompatModel, *, schema: dict[str, Any]) -> None:
        self._model = model
        self._prompt = load_prompt(VERIFY_VERSION)
        self._format = json_schema_format(schema, name="verdict")
        self.tokens = TokenCount()

    @property
    def prompt_version(self) -> str:
        return self._prompt.version

    def verify(self, request: VerificationRequest) -> str:
        prompt = self._prompt.render_claims(request.question, request.claims)
        return self._model.ask(prompt, self._format, self.tokens)


class OpenAICompatRewriter:
    """The Rewriter port: one strict-JSON request per message with earlier turns, to the model's endpoint."""

    def __init__(self, model: OpenAICompatModel, *, schema: dict[str, Any]) -> None:
        self._model = model
        self._prompt = load_prompt(FOLLOWUP_VERSION)
        self._format = json_schema_format(schema, name="reading")
        self.tokens = TokenCount()

    @property
    def name(self) -> str:
        return self._model.name

    @property
    def prompt_version(self) -> str:
        return self._prompt.version

    def rewrite(self, request: RewriteRequest) -> str:
        prompt = self._prompt.render_turns(request.message, request.turns)
        return self._model.ask(prompt, self._format, self.tokens)


def _rejects_response_format(error: BadRequestError) -> bool:
    """A 400 about the requested output format (not about the prompt) means: try plain JSON mode."""
    said = f"{error.message} {error.body}".lower()
    return "response_format" in said or "json_schema" in said


def unreachable(base_url: str, *, timeout_s: float) -> str | None:
    """None when a server answers `GET {base_url}/models` within `timeout_s`, whatever its status (a 401 or a
    404 still proves the endpoint is there; the key and the model are the request's business), else why not.
    For `sourced doctor`: one request, no retries, nothing sent but the path."""
    ensure_model_url_allowed(base_url)
    try:
        with urllib.request.urlopen(f"{base_url.rstrip('/')}/models", timeout=timeout_s):
            return None
    except urllib.error.HTTPError:
        return None
    except (urllib.error.URLError, OSError) as error:
        return str(getattr(error, "reason", error))
