"""Brute-force vector search alone: `VectorStore.search` over N random unit vectors of 384 dimensions, with an
audience mask, to see up to which size brute force stays fast. No database: the store's vectors are set
directly, so only the search itself is timed (the mask, the matrix product, the top-k).

    .venv/bin/python benchmarks/vector_search.py --sizes 100000 300000 1000000

Half the documents are for everyone, the rest for one of two restricted roles; the asker holds `everyone`,
so about half the rows are searched, and the unscoped search (every row) is timed too.
"""

import argparse
import time
from typing import Any

import numpy as np

from core.domain import EVERYONE, Audience, Principal
from core.retrieval.embeddings import MINILM_DIM, Matrix, VectorStore, _Vectors, normalise

CHUNKS_PER_DOCUMENT = 10
DEPTH = 30
"""Candidates the hybrid index takes from the vector list."""


class FixedVectorStore(VectorStore):
    """The real search over vectors given in memory instead of read from the database."""

    def __init__(self, vectors: _Vectors) -> None:
        self._fixed = vectors
        self._visible = {}

    def _current(self) -> _Vectors:
        return self._fixed


def random_store(size: int, rng: np.random.Generator) -> FixedVectorStore:
    documents = (size + CHUNKS_PER_DOCUMENT - 1) // CHUNKS_PER_DOCUMENT
    kinds = (frozenset({EVERYONE}), frozenset({"hr"}), frozenset({"legal"}))
    audiences = tuple(kinds[int(k)] for k in rng.choice(3, size=documents, p=(0.5, 0.25, 0.25)))
    matrix: Matrix = normalise(rng.standard_normal((size, MINILM_DIM), dtype=np.float32))
    return FixedVectorStore(_Vectors(
        chunk_ids=tuple(f"c{n}" for n in range(size)), matrix=matrix,
        doc_index=(np.arange(size) // CHUNKS_PER_DOCUMENT).astype(np.int32), doc_audiences=audiences))


def timed(store: FixedVectorStore, queries: Matrix, audience: Audience | None) -> tuple[float, float]:
    for query in queries[:3]:
        store.search(query, audience=audience, limit=DEPTH)
    timings = []
    for query in queries:
        started = time.perf_counter()
        store.search(query, audience=audience, limit=DEPTH)
        timings.append((time.perf_counter() - started) * 1000)
    return float(np.percentile(timings, 50)), float(np.percentile(timings, 95))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    queries: Matrix = normalise(rng.standard_normal((args.queries, MINILM_DIM), dtype=np.float32))
    asker = Audience.only(Principal(user_id="bench", roles=frozenset({EVERYONE})))
    print(f"{'vectors':>9} {'MB':>6} {'masked p50':>11} {'masked p95':>11} {'all p50':>8} {'all p95':>8}  (ms)")
    for size in args.sizes:
        store = random_store(size, rng)
        row: dict[str, Any] = {"masked": timed(store, queries, asker), "all": timed(store, queries, None)}
        print(f"{size:>9,} {store._fixed.matrix.nbytes / 1e6:>6.0f} {row['masked'][0]:>11.2f} "
              f"{row['masked'][1]:>11.2f} {row['all'][0]:>8.2f} {row['all'][1]:>8.2f}", flush=True)
        del store


if __name__ == "__main__":
    main()
