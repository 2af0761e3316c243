"""Nearest vectors among the rows an audience may see: exact on NumPy up to `EXACT_LIMIT` rows, an inverted-file
index (faiss `IndexIVFFlat`) beyond it. Both take the audience's row mask before they rank, so the top-k is
always the top-k of what the audience may see.

Measured on 2 shared cores (`benchmarks/vector_search.py`, 384 dimensions, the asker sees half the rows, 30
nearest): exact search is 8 ms p50 / 11 ms p95 at 100k rows, 26 / 38 ms at 300k and 86 / 120 ms at 1M, so past
about 150k rows it no longer fits the 20 ms retrieval budget beside BM25. The inverted file probes the
`nprobe` lists whose centroids are nearest the query and compares the query with their rows alone; with the
mask passed in (faiss `IDSelectorBitmap`), hidden rows are skipped inside the scan. When the probed lists hold
fewer visible rows than asked for (a narrow audience), the search is repeated over every list, which is
exact. sqlite-vec would keep the vectors in SQLite, but this Python's `sqlite3` cannot load extensions.
"""

from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
Mask = npt.NDArray[np.bool_]
Hits = tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]
"""Row numbers and their cosines, best first."""

EXACT_LIMIT: Final = 150_000
"""Rows up to which search is exact (see the module docstring for the measurements)."""
LISTS_PER_SQRT_ROW: Final = 1
"""Inverted lists: about √rows, so a probe and a list scan cost about the same."""
NPROBE: Final = 32
"""Lists scanned per query: recall@30 0.96 on 300k MiniLM-like vectors (`benchmarks/vector_search.py`)."""
TRAINING_ROWS_PER_LIST: Final = 40
"""k-means sample per list (faiss warns under 39); the sample, not every row, sets the training time."""


class RowSearch(Protocol):
    rows: int

    def search(self, query: Matrix, *, visible: Mask | None, limit: int) -> Hits: ...


def row_search(matrix: Matrix, *, exact_limit: int = EXACT_LIMIT) -> RowSearch:
    """The search that suits the matrix's size."""
    if matrix.shape[0] <= exact_limit:
        return ExactSearch(matrix)
    return InvertedFileSearch(matrix)


class ExactSearch:
    """Every row's cosine in one matrix-vector product, then the visible rows' best."""

    def __init__(self, matrix: Matrix) -> None:
        self.matrix = matrix
        self.rows = int(matrix.shape[0])

    def search(self, query: Matrix, *, visible: Mask | None, limit: int) -> Hits:
        rows = np.arange(self.rows) if visible is None else np.flatnonzero(visible)
        if limit <= 0 or rows.size == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        # Every row's cosine, then the audience's: copying its rows out first (`matrix[rows]`) cost three times
        # the product itself. A chunk's cosine is thus the same whoever asks.
        scores = (self.matrix @ query.reshape(-1))[rows]
        take = min(limit, rows.size)
        top = np.argpartition(-scores, take - 1)[:take]
        top = top[np.lexsort((rows[top], -scores[top]))]
        return rows[top].astype(np.int64), scores[top]


class InvertedFileSearch:
    """faiss's inverted file over the rows (inner product = cosine, the vectors being unit length). It keeps
    its own copy of the vectors, so the caller's matrix can be freed."""

    def __init__(self, matrix: Matrix, *, nprobe: int = NPROBE, seed: int = 0) -> None:
        import faiss  # noqa: PLC0415  # only large knowledge bases need it

        self.rows = int(matrix.shape[0])
        lists = max(1, int(LISTS_PER_SQRT_ROW * np.sqrt(self.rows)))
        quantizer = faiss.IndexFlatIP(matrix.shape[1])
        self._index = faiss.IndexIVFFlat(quantizer, matrix.shape[1], lists, faiss.METRIC_INNER_PRODUCT)
        sample = np.random.default_rng(seed).choice(self.rows, size=min(self.rows, lists * TRAINING_ROWS_PER_LIST),
                                                    replace=False)
        self._index.train(np.ascontiguousarray(matrix[np.sort(sample)]))
        self._index.add(np.ascontiguousarray(matrix))
        self._faiss = faiss
        self._quantizer = quantizer  # the index holds a raw pointer to it
        self._nprobe = min(nprobe, lists)
        self._lists = lists

    def search(self, query: Matrix, *, visible: Mask | None, limit: int) -> Hits:
        if limit <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        wanted = limit if visible is None else min(limit, int(visible.sum()))
        rows, scores = self._probe(query, visible, limit, self._nprobe)
        if rows.size < wanted and self._nprobe < self._lists:
            rows, scores = self._probe(query, visible, limit, self._lists)  # every list: exact
        return rows, scores

    def _probe(self, query: Matrix, visible: Mask | None, limit: int, nprobe: int) -> Hits:
        bitmap: Any = None
        params = self._faiss.SearchParametersIVF()
        params.nprobe = nprobe
        if visible is not None:
            bitmap = np.packbits(visible, bitorder="little")  # kept alive while faiss reads it
            params.sel = self._faiss.IDSelectorBitmap(self.rows, self._faiss.swig_ptr(bitmap))
        scores, rows = self._index.search(query.reshape(1, -1).astype(np.float32), limit, params=params)
        found = rows[0] >= 0
        return rows[0][found].astype(np.int64), scores[0][found].astype(np.float32)
