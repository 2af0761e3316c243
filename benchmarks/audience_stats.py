"""The cost of per-audience statistics on the built-in index (SQLite, full text alone) at scale.

A generated knowledge base (`core.eval.bench_corpus`: 70% of documents for everyone, 15% for hr, 15% for legal)
is ingested once into a SQLite file (kept, with `--database`, so a second run measures the same file). Then, for
each of a few audiences in turn: the first question's latency (for the first audience it includes reading the
index generation; for the others, the audience's cached view: its row mask and statistics), and the warm
retrieval p50/p95 over the benchmark's 200 questions. Only `SqliteIndex.search` is called, so the script runs
against any version of the index (`PYTHONPATH=<another checkout>` to measure one before a change).

    python -m benchmarks.audience_stats --chunks 100000 --database /tmp/audience-bench.db
"""

import argparse
import json
import time
from pathlib import Path

from core.domain import Audience, Party
from core.eval.bench_corpus import write_corpus
from core.eval.stats import percentile
from core.retrieval import Ingestor, SqliteIndex
from core.storage import make_engine, migrate

AUDIENCES = {
    "everyone": Audience(parties=(Party(),)),
    "hr": Audience(parties=(Party(roles=frozenset({"hr"})),)),
    "legal": Audience(parties=(Party(roles=frozenset({"legal"})),)),
    "hr+legal": Audience(parties=(Party(roles=frozenset({"hr", "legal"})),)),
    "channel hr & staff": Audience(parties=(Party(roles=frozenset({"hr"})), Party())),
    "guest": Audience(parties=(Party(is_guest=True),)),
}
DEPTH = 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--database", type=Path, default=Path("/tmp/audience-bench.db"))
    parser.add_argument("--kb", type=Path, default=Path("/tmp/audience-bench-kb"))
    args = parser.parse_args()
    corpus = write_corpus(args.kb, chunks=args.chunks, seed=args.seed)
    engine = make_engine(f"sqlite:///{args.database}")
    fresh = not args.database.exists() or args.database.stat().st_size == 0
    migrate(engine)
    if fresh:
        started = time.perf_counter()
        Ingestor(engine, progress=False).ingest(corpus.root)
        print(f"ingested {args.chunks} chunks in {time.perf_counter() - started:.1f} s")
    index = SqliteIndex(engine)
    results = []
    for name, audience in AUDIENCES.items():
        started = time.perf_counter()
        index.search(corpus.queries[0], audience=audience, limit=DEPTH)
        first_ms = (time.perf_counter() - started) * 1000
        timings = []
        for question in corpus.queries:
            started = time.perf_counter()
            index.search(question, audience=audience, limit=DEPTH)
            timings.append((time.perf_counter() - started) * 1000)
        results.append({"audience": name, "first_ms": round(first_ms, 1),
                        "p50_ms": round(percentile(timings, 50) or 0.0, 2),
                        "p95_ms": round(percentile(timings, 95) or 0.0, 2)})
        print(json.dumps(results[-1]), flush=True)


if __name__ == "__main__":
    main()
