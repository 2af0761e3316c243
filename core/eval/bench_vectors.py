"""Chunk vectors for the benchmark, computed once and reused, so that two databases (or two runs) are measured on
the same vectors without embedding a large knowledge base twice (MiniLM embeds some 90 chunks a second on two
cores: 100k chunks take about 20 minutes, 1M would take three hours).

`BenchVectors` stands in for the embedder at ingestion only; questions are always embedded by the real model.
A text it has a real vector for (computed earlier with the same model, kept in the cache folder) gets it back;
any other text gets a *generated* vector: a stored real vector chosen by a hash of the text, moved by Gaussian
noise and normalised (cosine about 0.9 to its source), so the generated vectors are spread like real ones
rather than uniformly on the sphere (where an HNSW graph behaves quite differently). With `compute=True`, texts
without a real vector are embedded by the model and added to the cache instead.
"""

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import numpy as np

from core.application.ports import Embedder
from core.retrieval.embeddings import as_matrix, normalise, uncached
from core.retrieval.vector_search import Matrix

NOISE: Final = 0.025
"""Per-dimension standard deviation of the noise: at 384 dimensions, a cosine of about 0.9 to the source."""


def text_key(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).digest()


class BenchVectors:
    """An `Embedder` for ingestion in the benchmark: real vectors from the cache, else computed or generated."""

    def __init__(self, model: Embedder, cache: Path, *, compute: bool) -> None:
        self._model = model
        self._folder = cache
        self._compute = compute
        self._keys: dict[bytes, int] = {}
        self._rows: list[Matrix] = []
        self._matrix: Matrix | None = None
        self.computed = 0
        self.embedding_seconds = 0.0
        self.generated = 0
        self._load()

    @property
    def model_id(self) -> str:
        return self._model.model_id

    @property
    def dim(self) -> int:
        return self._model.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in self.embed_matrix(texts)]

    def embed_matrix(self, texts: Sequence[str]) -> Matrix:
        keys = [text_key(text) for text in texts]
        missing = list(dict.fromkeys(text for text, key in zip(texts, keys, strict=True) if key not in self._keys))
        if missing and self._compute:
            started = time.perf_counter()
            self._add(missing, as_matrix(uncached(self._model), missing))
            self.embedding_seconds += time.perf_counter() - started
            self.computed += len(missing)
        rows = [self._known(key) if key in self._keys else self._generated(key) for key in keys]
        return np.stack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)

    def save(self) -> None:
        """Write the cache (only if something was computed)."""
        if not self.computed:
            return
        self._folder.mkdir(parents=True, exist_ok=True)
        np.save(self._folder / "vectors.npy", self._stacked())
        in_row_order = sorted(self._keys.items(), key=lambda item: item[1])
        (self._folder / "keys.bin").write_bytes(b"".join(key for key, _ in in_row_order))

    def _load(self) -> None:
        vectors, keys = self._folder / "vectors.npy", self._folder / "keys.bin"
        if not vectors.exists() or not keys.exists():
            return
        matrix = np.load(vectors)
        raw = keys.read_bytes()
        self._keys = {raw[at:at + 20]: n for n, at in enumerate(range(0, len(raw), 20))}
        self._rows = [matrix]
        self._matrix = matrix

    def _add(self, texts: Sequence[str], vectors: Matrix) -> None:
        for text, vector in zip(texts, vectors, strict=True):
            self._keys.setdefault(text_key(text), len(self._keys))
            self._rows.append(vector.reshape(1, -1))
        self._matrix = None

    def _stacked(self) -> Matrix:
        if self._matrix is None:
            self._matrix = np.concatenate(self._rows) if self._rows else np.zeros((0, self.dim), np.float32)
            self._rows = [self._matrix]
        return self._matrix

    def _known(self, key: bytes) -> Matrix:
        row: Matrix = self._stacked()[self._keys[key]]
        return row

    def _generated(self, key: bytes) -> Matrix:
        matrix = self._stacked()
        if matrix.shape[0] == 0:
            raise RuntimeError(f"no real vectors in {self._folder} to generate from: run the benchmark once at a "
                               "smaller size with --embedder minilm to compute some")
        seed = int.from_bytes(key[:8], "little")
        rng = np.random.default_rng(seed)
        source = matrix[seed % matrix.shape[0]]
        self.generated += 1
        moved: Matrix = normalise((source + rng.normal(0.0, NOISE, source.shape[0])).astype(np.float32))
        return moved
