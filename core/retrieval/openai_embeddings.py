"""The OpenAI-compatible adapter of the `Embedder` port: OpenAI or Azure OpenAI, vLLM, Ollama, llama.cpp's
server, or any gateway speaking `POST {base_url}/embeddings`.

The client is the one the model adapter uses (`core.llm.openai_compat.openai_client`): the key stays a
`SecretStr` until the client is built, a placeholder is sent when none is configured (never OPENAI_API_KEY),
and the calls have its bounds (`RemoteCalls`: per attempt, per call within `deadline_s`, and the endpoint's
circuit breaker, whose refusal is an `EmbeddingError` like any other failure). The loopback-only switch
(`core.llm.safety`) is checked before every request, so the test suite cannot reach a hosted endpoint.

Texts are sent in batches (`batch_size`, 64 by default), vectors are asked for as floats (the client's own
default is base64, which not every compatible server implements), put back in input order by their `index`,
checked (one per text, every one a finite, non-zero list of numbers of one dimension) and L2-normalised, so a
dot product is the cosine. Anything else raises `EmbeddingError`; nothing is repaired or padded.
"""

import logging
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import urlsplit

import numpy as np
import openai
from pydantic import SecretStr

from core.config import ConfigError
from core.llm.breaker import CircuitBreaker, CircuitOpen
from core.llm.openai_compat import (
    DEFAULT_DEADLINE_S,
    DEFAULT_MAX_RETRIES,
    RemoteCalls,
    openai_client,
)
from core.llm.safety import ensure_model_url_allowed
from core.retrieval.embeddings import EmbeddingError

log = logging.getLogger(__name__)

DEFAULT_BATCH: Final = 64
"""Texts per request: far below OpenAI's 2,048 inputs, and small enough for local servers' batch limits."""
DIMENSION_PROBE: Final = "dimension probe"
"""Embedded once when `dim` is read before any vector was computed and no dimension is configured."""


def endpoint_label(base_url: str) -> str:
    """`host[:port]/path` of a base URL: no scheme, credentials, query or trailing slash."""
    parts = urlsplit(base_url)
    try:
        port = parts.port
    except ValueError as error:
        raise ConfigError(f"SOURCED_EMBEDDING_BASE_URL has an invalid port: {error}") from error
    host = (parts.hostname or "").lower()
    if not host:
        raise ConfigError("SOURCED_EMBEDDING_BASE_URL is not a URL with a host, e.g. https://api.openai.com/v1")
    if ":" in host:
        host = f"[{host}]"
    return f"{host}{f':{port}' if port else ''}{parts.path.rstrip('/')}"


class OpenAIEmbedder:
    """The Embedder port over any server speaking OpenAI's embeddings API."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: SecretStr | None = None,
        dim: int | None = None,
        timeout_s: float = 20.0,
        max_retries: int = DEFAULT_MAX_RETRIES,
        deadline_s: float = DEFAULT_DEADLINE_S,
        breaker: CircuitBreaker | None = None,
        batch_size: int = DEFAULT_BATCH,
    ) -> None:
        """`dim`: the vector length every response must have; None learns it from the first response."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        self._base_url = base_url
        self._model = model
        self._endpoint = endpoint_label(base_url)
        self._dim = dim
        self._batch_size = batch_size
        self._max_retries = max_retries
        self._client = openai_client(base_url=base_url, api_key=api_key)
        self._calls = RemoteCalls(timeout_s=timeout_s, max_retries=max_retries, deadline_s=deadline_s,
                                  breaker=breaker)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model_id={self.model_id!r}, dim={self._dim!r})"

    @property
    def model_id(self) -> str:
        """`openai:{model}@{host[:port]/path}`: the model and the endpoint that serves it, since one name can
        mean different weights on two servers. Stored with every vector; a changed id (another model, another
        server, or another path on it) makes `embed_pending` re-embed every chunk instead of mixing vectors."""
        return f"openai:{self._model}@{self._endpoint}"

    @property
    def dim(self) -> int:
        """The configured dimension, else the one learnt from the first response; read before any response,
        it costs one request (`DIMENSION_PROBE`)."""
        if self._dim is None:
            self.embed([DIMENSION_PROBE])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(self._embed_batch(list(texts[start:start + self._batch_size])))
        return vectors

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        ensure_model_url_allowed(self._base_url)
        try:
            # OpenAI rejects an empty string; a blank one embeds to "no content", which is what it is.
            response = self._calls(lambda timeout: self._client.with_options(timeout=timeout).embeddings.create(
                model=self._model, input=[text or " " for text in batch], encoding_format="float"))
        except CircuitOpen as error:
            raise EmbeddingError(str(error)) from error
        except openai.APIStatusError as error:
            raise EmbeddingError(f"{self.model_id}: HTTP {error.status_code} ({type(error).__name__}), "
                                 f"after at most {self._max_retries} retries") from error
        except openai.APIError as error:  # connection, timeout, or a body that is not a response
            raise EmbeddingError(f"{self.model_id}: {type(error).__name__}, "
                                 f"after at most {self._max_retries} retries") from error
        vectors = self._check(response, len(batch))
        log.debug("embedded %d texts with %s", len(batch), self.model_id)
        return vectors

    def _check(self, response: Any, expected: int) -> list[list[float]]:
        """The response's vectors in input order, unit length; `EmbeddingError` unless there is exactly one
        finite, non-zero vector of the one dimension per text."""
        data = getattr(response, "data", None)
        if not isinstance(data, list) or len(data) != expected:
            got = len(data) if isinstance(data, list) else "no list of"
            raise EmbeddingError(f"{self.model_id}: {got} vectors for {expected} texts")
        by_index: dict[int, Any] = {}
        for item in data:
            index = getattr(item, "index", None)
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < expected \
                    or index in by_index:
                raise EmbeddingError(f"{self.model_id}: vector index {index!r} is missing, repeated or out of "
                                     f"range for {expected} texts")
            by_index[index] = getattr(item, "embedding", None)
        rows = [by_index[i] for i in range(expected)]
        for i, row in enumerate(rows):
            if not isinstance(row, list) or not row or not all(
                    isinstance(x, int | float) and not isinstance(x, bool) for x in row):
                raise EmbeddingError(f"{self.model_id}: vector {i} is not a non-empty list of numbers")
        dim = self._dim if self._dim is not None else len(rows[0])
        wrong = next((i for i, row in enumerate(rows) if len(row) != dim), None)
        if wrong is not None:
            raise EmbeddingError(f"{self.model_id}: vector {wrong} has {len(rows[wrong])} dimensions, "
                                 f"expected {dim}")
        matrix = np.asarray(rows, dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1)
        bad = np.flatnonzero(~np.isfinite(norms) | (norms == 0))
        if bad.size:
            raise EmbeddingError(f"{self.model_id}: vector {int(bad[0])} is zero or not finite")
        self._dim = dim
        unit: list[list[float]] = (matrix / norms[:, None]).tolist()
        return unit
