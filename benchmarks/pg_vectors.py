"""pgvector per audience: the HNSW graph of each visible audience class (what `PostgresIndex` does) against an exact
scan of the same partitions, for a broad audience and for narrow ones: latency and recall@30.

    .venv/bin/python -m benchmarks.pg_vectors --database postgresql+psycopg://postgres@/postgres?host=/tmp/pg \
        --chunks 100000 --vector-cache /tmp/vectors

It ingests the benchmark's generated knowledge base (70% of documents for everyone, 15% for hr, 15% for legal)
into a database created on the server for the run, with the chunks' vectors from the cache (`sourced bench
--vector-cache`; chunks it lacks get generated vectors), embeds the 200 benchmark questions with MiniLM, and asks
each as four audiences. Exact means the same query with index scans disabled: PostgreSQL then reads every
vector of the visible partitions and sorts.
"""

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from sqlalchemy import Connection, text

from core.domain import Audience, Party, is_visible
from core.eval.bench_corpus import write_corpus
from core.eval.bench_vectors import BenchVectors
from core.eval.stats import percentile
from core.retrieval.embeddings import EmbeddingIngestor, MiniLmEmbedder, as_matrix
from core.retrieval.postgres_index import EF_SEARCH, snapshot
from core.storage import make_engine, migrate
from core.storage.postgres import audience_classes, prepare_vectors, scratch_database, vector_literal

LIMIT: Final = 30
AUDIENCES: Final = {
    "everyone (70%)": Audience(parties=(Party(),)),
    "hr alone (15%)": Audience(parties=(Party(roles=frozenset({"hr"}), is_guest=True),)),
    "legal alone (15%)": Audience(parties=(Party(roles=frozenset({"legal"}), is_guest=True),)),
    "everyone and hr (85%)": Audience(parties=(Party(roles=frozenset({"hr"})),)),
}


def nearest(connection: Connection, query: Sequence[float], keys: Sequence[str], *, exact: bool) -> list[str]:
    dim = len(query)
    distance = f"embedding::vector({dim}) <=> CAST(:query AS vector({dim}))"
    connection.execute(text(f"SET LOCAL hnsw.ef_search = {EF_SEARCH}"))
    connection.execute(text("SET LOCAL hnsw.iterative_scan = strict_order"))
    connection.execute(text(f"SET LOCAL enable_indexscan = {'off' if exact else 'on'}"))
    rows = connection.execute(text(
        f"SELECT chunk_id FROM chunk_vectors WHERE dim = {dim} AND audience_key = ANY(:keys) "
        f"ORDER BY {distance} LIMIT :limit"), {"query": vector_literal(query), "keys": list(keys), "limit": LIMIT})
    return list(rows.scalars())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", required=True, help="PostgreSQL server URL (pgvector, CREATEDB)")
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--vector-cache", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    model = MiniLmEmbedder()
    with tempfile.TemporaryDirectory() as tmp, scratch_database(args.database, prefix="sourced_vectors") as url:
        corpus = write_corpus(Path(tmp) / "kb", chunks=args.chunks, seed=args.seed)
        engine = make_engine(url)
        migrate(engine)
        prepare_vectors(engine)
        EmbeddingIngestor(engine, BenchVectors(model, args.vector_cache, compute=False), progress=True
                          ).ingest(corpus.root)
        questions = as_matrix(model, list(corpus.queries)).tolist()
        print(f"{args.chunks:,} chunks; {len(questions)} questions, {LIMIT} nearest")
        print(f"{'audience':24} {'hnsw p50':>9} {'hnsw p95':>9} {'exact p50':>10} {'exact p95':>10} {'recall@30':>10}")
        for name, audience in AUDIENCES.items():
            with snapshot(engine) as connection:
                keys = [key for key, roles in audience_classes(connection) if is_visible(roles, audience)]
            timings: dict[bool, list[float]] = {False: [], True: []}
            found: dict[bool, list[list[str]]] = {False: [], True: []}
            for exact in (False, True):
                for query in questions:
                    with snapshot(engine) as connection:
                        started = time.perf_counter()
                        found[exact].append(nearest(connection, query, keys, exact=exact))
                        timings[exact].append((time.perf_counter() - started) * 1000)
            recall = sum(len(set(a) & set(b)) for a, b in zip(found[False], found[True], strict=True)) / max(
                1, sum(len(b) for b in found[True]))
            cells = [percentile(timings[exact], q) or 0.0 for exact in (False, True) for q in (50, 95)]
            print(f"{name:24} {cells[0]:9.1f} {cells[1]:9.1f} {cells[2]:10.1f} {cells[3]:10.1f} {recall:10.3f}")
        engine.dispose()


if __name__ == "__main__":
    main()
