"""Nearest vectors among the rows an audience may see: exact on NumPy up to `EXACT_LIMIT` rows, an inverted-file
index (faiss `IndexIVFScalarQuantizer`, 8 bits a dimension) beyond it. Both take a row mask before they rank, so
the top-k is always the top-k of the rows allowed. The vector store (`core.retrieval.embeddings.VectorStore`) keeps
one search per audience class and passes no mask: an inverted file trained on rows an audience may not see would
make what it finds depend on them.

Measured on 2 cores (`benchmarks/vector_search.py` over the 100k MiniLM vectors of `sourced bench`, the asker
seeing half the rows, 30 nearest): exact search is 5 ms p50 at 100k rows and grows linearly (about 40 ms at
1M), and holds 1.5 kB a row; the inverted file answers in under a millisecond with recall@30 near 0.98 and holds
a quarter of that. It probes the `NPROBE` lists whose centroids are nearest the query and compares the query with
their rows alone; with the mask passed in (faiss `IDSelectorBitmap`), hidden rows are skipped inside the scan.
When the probed lists hold fewer visible rows than asked for (a narrow audience), the search is repeated over
every list, which is exact. sqlite-vec would keep the vectors in SQLite, but this Python's `sqlite3` cannot load
extensions.

Exact search reports each row's cosine as `cosines` computes it, as PostgreSQL does from the vectors pgvector
returns: BLAS's float32 product ranks the rows, but rounds a row's dot product differently with the rows beside
it, so two equal vectors could differ in the last bit and a chunk's cosine depend on the search that found it.
The inverted file reports faiss's cosines of its 8-bit codes.
"""

from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
Mask = npt.NDArray[np.bool_]
Cosines = npt.NDArray[np.float64]
Hits = tuple[npt.NDArray[np.int64], Cosines]
"""Row numbers and their cosines, best first."""

EXACT_LIMIT: Final = 20_000
"""Rows up to which search is exact: about a millisecond there, and no index to train."""
NPROBE: Final = 32
"""Lists scanned per query (see the module docstring)."""
TRAINING_ROWS_PER_LIST: Final = 40
"""k-means sample per list (faiss warns under 39): the sample, not every row, sets the training time."""


def cosines(vectors: Matrix, query: Matrix) -> Cosines:
    """The cosines of unit vectors with a unit query: the float32 values multiplied in float64 (exactly) and each
    row summed on its own (NumPy's pairwise sum along the row), so a row's cosine never depends on the others and
    equal vectors tie."""
    products: Cosines = vectors.astype(np.float64) * query.astype(np.float64).reshape(1, -1)
    summed: Cosines = products.sum(axis=1)
    return summed


def rounding_margin(dim: int) -> float:
    """How far BLAS's float32 dot product of two unit vectors can lie from `cosines`' (dim float32 roundings of
    at most one unit in the last place each, on terms summing to at most 1 in absolute value), twice over."""
    return 2.0 * dim * float(np.finfo(np.float32).eps)


class RowSearch(Protocol):
    def search(self, query: Matrix, *, visible: Mask | None, limit: int) -> Hits: ...


def _no_hits() -> Hits:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)


class ExactSearch:
    """Every row's cosine in one matrix-vector product, then the visible rows' best."""

    def __init__(self, matrix: Matrix) -> None:
        self._matrix = matrix

    def search(self, query: Matrix, *, visible: Mask | None, limit: int) -> Hits:
        rows = np.arange(self._matrix.shape[0]) if visible is None else np.flatnonzero(visible)
        if limit <= 0 or rows.size == 0:
            return _no_hits()
        # Every row's cosine, then the audience's: copying its rows out first (`matrix[rows]`) cost three times
        # the product itself. A chunk's cosine is thus the same whoever asks.
        scores = (self._matrix @ query.reshape(-1))[rows]
        take = min(limit, rows.size)
        kth = np.partition(scores, scores.size - take)[scores.size - take]
        # Every row BLAS's rounding could have put among the best `take`, then their exact cosines rank them.
        near = np.flatnonzero(scores >= kth - rounding_margin(query.size))
        exact = cosines(self._matrix[rows[near]], query)
        best = np.lexsort((rows[near], -exact))[:take]
        return rows[near[best]].astype(np.int64), exact[best]


def lists_for(rows: int) -> int:
    """About √rows inverted lists, so that probing the centroids and scanning a list cost about the same."""
    return max(1, int(np.sqrt(rows)))


def training_rows(rows: int) -> int:
    return min(rows, lists_for(rows) * TRAINING_ROWS_PER_LIST)


class InvertedFileSearch:
    """faiss's inverted file (inner product = cosine, the vectors being unit length), trained on a sample of the
    rows, then filled a block at a time, so the rows never need to be in memory all at once as float32."""

    def __init__(self, sample: Matrix, *, expected_rows: int, nprobe: int = NPROBE) -> None:
        import faiss  # noqa: PLC0415  # only large knowledge bases need it

        dim = int(sample.shape[1])
        self._lists = lists_for(expected_rows)
        self._quantizer = faiss.IndexFlatIP(dim)  # the index holds a raw pointer to it: keep it alive
        self._index = faiss.IndexIVFScalarQuantizer(self._quantizer, dim, self._lists,
                                                    faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
        self._index.train(np.ascontiguousarray(sample, dtype=np.float32))
        self._faiss = faiss
        self._nprobe = min(nprobe, self._lists)

    @classmethod
    def of(cls, matrix: Matrix, *, nprobe: int = NPROBE) -> "InvertedFileSearch":
        """Trained on an evenly spaced sample of the matrix's rows, then filled with all of them."""
        rows = int(matrix.shape[0])
        sample = matrix[np.linspace(0, rows - 1, training_rows(rows)).astype(np.int64)]
        search = cls(sample, expected_rows=rows, nprobe=nprobe)
        search.add(matrix)
        return search

    def add(self, block: Matrix) -> None:
        """Rows numbered on from those added before."""
        self._index.add(np.ascontiguousarray(block, dtype=np.float32))

    def search(self, query: Matrix, *, visible: Mask | None, limit: int) -> Hits:
        if limit <= 0:
            return _no_hits()
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
            params.sel = self._faiss.IDSelectorBitmap(self._index.ntotal, self._faiss.swig_ptr(bitmap))
        scores, rows = self._index.search(query.reshape(1, -1).astype(np.float32), limit, params=params)
        found = rows[0] >= 0
        return rows[0][found].astype(np.int64), scores[0][found].astype(np.float64)
