"""Vector search alone: `VectorStore.search` over N vectors of 384 dimensions in audience-class partitions, exact
and through inverted-file indexes (one per partition), to see up to which size exact search stays fast and what
the indexes cost in build time and recall. No Sourced database is written: the store's vectors are set directly,
so only the search itself is timed (the visible partitions' scans, the merged top-k).

    .venv/bin/python -m benchmarks.vector_search --sizes 100000 300000 1000000
    .venv/bin/python -m benchmarks.vector_search --vectors-from bench.db --sizes 100000 300000

Vectors are random unit vectors by default: no structure, the worst case for an inverted file's recall. With
`--vectors-from`, they are the MiniLM vectors of a Sourced SQLite database (`sourced bench` builds one of 100k
chunks, `sourced ingest` any other); sizes beyond what it holds repeat its vectors with a little noise.

Half the documents are for everyone, the rest for one of two restricted roles; the asker holds `everyone`, so
about half the rows are searched. Queries are stored vectors with noise (a question near some chunks).
"""

import argparse
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from core.domain import EVERYONE, Audience, Principal
from core.retrieval.embeddings import MINILM_DIM, VectorStore, _Partition, _Vectors, normalise
from core.retrieval.vector_search import ExactSearch, InvertedFileSearch, Matrix, RowSearch

CHUNKS_PER_DOCUMENT = 10
DEPTH = 30
"""Candidates the hybrid index takes from the vector list."""


class FixedVectorStore(VectorStore):
    """The real search over vectors given in memory instead of read from the database."""

    def __init__(self, vectors: _Vectors) -> None:
        self._fixed = vectors

    def _current(self) -> _Vectors:
        return self._fixed


def stored_vectors(database: Path) -> Matrix:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        rows = connection.execute("SELECT vector FROM chunk_embeddings ORDER BY chunk_id").fetchall()
    return np.stack([np.frombuffer(vector, dtype="<f4") for (vector,) in rows])


def vectors_of_size(size: int, source: Matrix | None, rng: np.random.Generator) -> Matrix:
    if source is None:
        return normalise(rng.standard_normal((size, MINILM_DIM), dtype=np.float32))
    picked = source[np.arange(size) % len(source)]
    repeated = np.arange(size) >= len(source)
    noise = rng.standard_normal((int(repeated.sum()), source.shape[1]), dtype=np.float32) * 0.02
    picked[repeated] += noise
    return normalise(picked)


def store_over(build: Callable[[Matrix], RowSearch], matrix: Matrix,
               rng: np.random.Generator) -> FixedVectorStore:
    """The vectors in one partition per audience class, as the store keeps them, each searched by `build`'s."""
    size = int(matrix.shape[0])
    documents = (size + CHUNKS_PER_DOCUMENT - 1) // CHUNKS_PER_DOCUMENT
    kinds = (frozenset({EVERYONE}), frozenset({"hr"}), frozenset({"legal"}))
    of_document = rng.choice(3, size=documents, p=(0.5, 0.25, 0.25))
    of_row = of_document[np.arange(size) // CHUNKS_PER_DOCUMENT]
    partitions = []
    for kind, roles in enumerate(kinds):
        rows = np.flatnonzero(of_row == kind)
        partitions.append(_Partition(roles=roles, chunk_ids=tuple(f"c{n}" for n in rows), rows=build(matrix[rows])))
    return FixedVectorStore(_Vectors(partitions=tuple(partitions)))


def timed(store: FixedVectorStore, queries: Matrix, audience: Audience) -> tuple[float, float, list[set[str]]]:
    for query in queries[:3]:
        store.search(query, audience=audience, limit=DEPTH)
    timings, found = [], []
    for query in queries:
        started = time.perf_counter()
        hits = store.search(query, audience=audience, limit=DEPTH)
        timings.append((time.perf_counter() - started) * 1000)
        found.append({chunk_id for chunk_id, _ in hits})
    return float(np.percentile(timings, 50)), float(np.percentile(timings, 95)), found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--vectors-from", type=Path, help="a Sourced SQLite database holding MiniLM vectors")
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    source = stored_vectors(args.vectors_from) if args.vectors_from else None
    asker = Audience.only(Principal(user_id="bench", roles=frozenset({EVERYONE})))
    print(f"{'vectors':>9} {'exact p50':>10} {'exact p95':>10} {'ivf build s':>12} {'ivf p50':>8} {'ivf p95':>8} "
          f"{'recall@30':>10}  (ms)")
    for size in args.sizes:
        matrix = vectors_of_size(size, source, rng)
        queries = normalise(matrix[rng.choice(size, args.queries)]
                            + rng.standard_normal((args.queries, matrix.shape[1]), dtype=np.float32) * 0.05)
        audiences = np.random.default_rng(size)
        exact = timed(store_over(ExactSearch, matrix, audiences), queries, asker)
        started = time.perf_counter()
        inverted_files = store_over(InvertedFileSearch.of, matrix, np.random.default_rng(size))
        build = time.perf_counter() - started
        del matrix
        approximate = timed(inverted_files, queries, asker)
        recall = np.mean([len(a & e) / max(len(e), 1) for a, e in zip(approximate[2], exact[2], strict=True)])
        print(f"{size:>9,} {exact[0]:>10.2f} {exact[1]:>10.2f} {build:>12.1f} {approximate[0]:>8.2f} "
              f"{approximate[1]:>8.2f} {recall:>10.3f}", flush=True)


if __name__ == "__main__":
    main()
