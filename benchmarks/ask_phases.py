"""Where a first-time `ask` spends its time, on the benchmark's generated knowledge base kept in a database of
your own, so that one ingestion (eight minutes for 100k chunks on PostgreSQL) serves any number of runs:

    .venv/bin/python -m benchmarks.ask_phases --database URL --chunks 100000 --ingest --vector-cache DIR
    .venv/bin/python -m benchmarks.ask_phases --database URL --chunks 100000

The first run writes the knowledge base `sourced bench` generates (the same seed gives the same chunks and
questions) and ingests it, with the chunks' vectors from the cache (`core.eval.bench_vectors`, generated where the
cache has none); later runs only ask. Each of the 200 questions is asked once after a warm-up, its own vector
forgotten first, as `sourced bench` does; every phase is timed around the port it goes through: the search, the
audit's unscoped probe (refusals only), the embedder's `embed` (the candidate statements the assessment reads,
and the guard's claims; retrieval's own embedding is inside the search), and with `SOURCED_MATCHER=bundled` the
question matcher's (the question and the candidate statements the assessment reads).
"""

import argparse
import functools
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from core.application.orchestrator import Question
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig
from core.domain import Audience
from core.eval.bench import ASKER, WARMUP
from core.eval.bench_corpus import write_corpus
from core.eval.bench_vectors import BenchVectors
from core.eval.stats import percentile
from core.retrieval.embeddings import CachedEmbedder, EmbeddingIngestor

Timings = defaultdict[str, list[float]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", required=True, help="a SQLAlchemy URL (SQLite file or PostgreSQL database)")
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--ingest", action="store_true", help="ingest the generated knowledge base first")
    parser.add_argument("--vector-cache", type=Path, help="with --ingest: the folder of `sourced bench --vector-cache`")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sourced-phases-") as folder:
        corpus = write_corpus(Path(folder) / "kb", chunks=args.chunks, seed=args.seed)
        sourced = bootstrap(Settings(database_url=args.database, embedder="minilm"), config=SourcedConfig(),
                            known_gaps=(), progress=True)
        if args.ingest:
            assert sourced.embedder is not None  # the `minilm` setting always builds one
            vectors = BenchVectors(sourced.embedder, args.vector_cache or Path(folder) / "vectors", compute=False)
            print(EmbeddingIngestor(sourced.engine, vectors, progress=True).ingest(corpus.root).summary())
        report(time_phases(sourced, corpus.queries))


def time_phases(sourced: Sourced, queries: Sequence[str]) -> tuple[list[float], Timings]:
    """Milliseconds per `ask`, and per call of each phase."""
    phases: Timings = defaultdict(list)
    _timed(sourced.index, "search", phases)
    _timed(sourced.index, "best_unscoped_score", phases, label="unscoped probe")
    _timed(sourced.embedder, "embed", phases, label="embed statements and claims")
    if sourced.matcher is not sourced.embedder:
        _timed(sourced.matcher, "embed", phases, label="match statements")
    audience = Audience.only(ASKER)
    ask = functools.partial(_ask, sourced, audience)
    for query in queries[:WARMUP]:
        ask(query)
    for embedder in sourced.embedders():
        if isinstance(embedder, CachedEmbedder):
            embedder.forget(queries)
    phases.clear()
    totals = []
    for query in queries:
        started = time.perf_counter()
        ask(query)
        totals.append((time.perf_counter() - started) * 1000)
    return totals, phases


def _ask(sourced: Sourced, audience: Audience, query: str) -> object:
    return sourced.orchestrator.ask(Question(text=query, principal=ASKER, audience=audience))


def _timed(port: Any, method: str, phases: Timings, *, label: str | None = None) -> None:
    """Replace the port's method on this instance by one that records its milliseconds."""
    call: Callable[..., Any] = getattr(port, method)

    @functools.wraps(call)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            phases[label or method].append((time.perf_counter() - started) * 1000)

    setattr(port, method, timed)


def report(result: tuple[list[float], Timings]) -> None:
    totals, phases = result
    print(f"{'ask':18} calls {len(totals):4}  p50 {_p(totals, 50):6.1f}  p95 {_p(totals, 95):6.1f} ms")
    for label, values in phases.items():
        print(f"{label:18} calls {len(values):4}  p50 {_p(values, 50):6.1f}  p95 {_p(values, 95):6.1f} ms  "
              f"per ask {sum(values) / len(totals):6.1f} ms")


def _p(values: Sequence[float], q: float) -> float:
    return percentile(values, q) or 0.0


if __name__ == "__main__":
    main()
