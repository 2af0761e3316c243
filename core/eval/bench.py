"""Speed and scale: ingest, retrieval and `ask` on a generated knowledge base, beside `rank_bm25` (the BM25
behind LangChain's and LlamaIndex's retrievers) on the same chunks and the same tokens.

With an embedder (`minilm`), ingestion includes embedding every chunk, and retrieval is the hybrid index
(BM25 and vectors fused) that `ask` uses; without one (`none`), both are plain BM25.

Each size runs in a fresh interpreter, so the peak resident memory (`ru_maxrss`, a high-water mark) belongs
to that size alone; it is read before the peer is built, so it is Sourced's own.
"""

import multiprocessing
import resource
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final, Literal

from rich.console import Console
from rich.progress import track
from sqlalchemy import Engine, select

from core.application.orchestrator import Question
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig
from core.domain import EVERYONE, Audience, Principal
from core.eval.bench_corpus import BenchCorpus, write_corpus
from core.eval.stats import percentile
from core.retrieval.embeddings import CachedEmbedder
from core.retrieval.index import index_body, query_terms
from core.retrieval.ingest import IngestReport
from core.storage.tables import ChunkRow

DEPTH: Final = 8
"""Chunks retrieved per question: the orchestrator's default depth."""
WARMUP: Final = 10
ASKER: Final = Principal(user_id="bench", roles=frozenset({EVERYONE}))
BenchEmbedder = Literal["none", "minilm"]


@dataclass(frozen=True, kw_only=True)
class BenchResult:
    chunks: int
    embedder: str
    ingest_chunks_per_s: float
    retrieve_p50_ms: float
    retrieve_p95_ms: float
    ask_p50_ms: float
    ask_p95_ms: float
    peak_rss_mb: float
    peer_retrieve_p50_ms: float
    peer_ratio: float

    def as_dict(self) -> dict[str, float | str]:
        return asdict(self)


def bench_isolated(chunks: int, *, seed: int, embedder: BenchEmbedder = "none",
                   progress: bool = True) -> BenchResult:
    """`bench` in a fresh interpreter (spawned, not forked), so its memory high-water mark is its own."""
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(bench, chunks, seed=seed, embedder=embedder, progress=progress).result()


def bench(chunks: int, *, seed: int, embedder: BenchEmbedder = "none", progress: bool = True) -> BenchResult:
    """Generate, ingest and measure `chunks` chunks in a temporary folder, in this process."""
    console = Console(stderr=True, quiet=not progress)
    with tempfile.TemporaryDirectory(prefix="sourced-bench-") as tmp:
        with console.status(f"writing a knowledge base of {chunks:,} chunks"):
            corpus = write_corpus(Path(tmp) / "kb", chunks=chunks, seed=seed)
        # The ingestor's own bars show progress (documents, then chunks embedded); no status around them.
        sourced = bootstrap(Settings(database_url=f"sqlite:///{tmp}/bench.db", embedder=embedder),
                            config=SourcedConfig(), known_gaps=(), progress=progress)
        try:
            return _measure(sourced, corpus, console, embedder)
        finally:
            sourced.engine.dispose()


def _measure(sourced: Sourced, corpus: BenchCorpus, console: Console, embedder: BenchEmbedder) -> BenchResult:
    ingest_s = _ingest(sourced.ingestor.ingest, corpus)
    index = sourced.index  # what `ask` retrieves with: BM25, or the hybrid index with an embedder
    audience = Audience.only(ASKER)
    # Each timed question embeds its own text: the warm-up's (and the retrieval pass's) vectors are forgotten.
    cache = sourced.embedder if isinstance(sourced.embedder, CachedEmbedder) else None
    forget = (lambda: cache.forget(corpus.queries)) if cache else (lambda: None)
    retrieve = _latencies(lambda q: index.search(q, audience=audience, limit=DEPTH), corpus.queries, console,
                          "retrieving", forget=forget)
    ask = _latencies(lambda q: sourced.orchestrator.ask(Question(text=q, principal=ASKER, audience=audience)),
                     corpus.queries, console, "asking", forget=forget)
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    peer = _peer_latencies(sourced.engine, corpus.queries, console)
    return BenchResult(
        chunks=corpus.chunks, embedder=embedder, ingest_chunks_per_s=round(corpus.chunks / ingest_s, 1),
        retrieve_p50_ms=_p(retrieve, 50), retrieve_p95_ms=_p(retrieve, 95),
        ask_p50_ms=_p(ask, 50), ask_p95_ms=_p(ask, 95), peak_rss_mb=round(peak_rss_mb, 1),
        peer_retrieve_p50_ms=_p(peer, 50), peer_ratio=round(_p(peer, 50) / max(_p(retrieve, 50), 1e-3), 1),
    )


def _ingest(ingest: Callable[[Path], IngestReport], corpus: BenchCorpus) -> float:
    started = time.perf_counter()
    report = ingest(corpus.root)
    seconds = time.perf_counter() - started
    if report.errors or report.chunks != corpus.chunks:
        raise RuntimeError(f"the generated knowledge base did not ingest as written: {report.summary()}")
    return seconds


def _latencies(call: Callable[[str], object], queries: Sequence[str], console: Console, label: str,
               *, warmup: int = WARMUP, forget: Callable[[], None] = lambda: None) -> list[float]:
    """Milliseconds per query, after a few untimed warm-up calls (first reads of the database pages, the
    index and the vectors read into memory), then `forget`."""
    for query in queries[:warmup]:
        call(query)
    forget()
    timings = []
    for query in track(queries, description=label, console=console, transient=True):
        started = time.perf_counter()
        call(query)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def _peer_latencies(engine: Engine, queries: Sequence[str], console: Console) -> list[float]:
    """`rank_bm25.BM25Okapi.get_top_n` over exactly the tokens our index stores, queried with our terms."""
    # Imported here: rank_bm25 comes with the optional `bench` extra, and ships no type information.
    from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]  # noqa: PLC0415

    with console.status("building the rank_bm25 peer"):
        corpus = _chunk_tokens(engine)
        peer = BM25Okapi(corpus)
    positions = range(len(corpus))
    return _latencies(lambda q: peer.get_top_n(list(query_terms(q)), positions, n=DEPTH), queries, console,
                      "rank_bm25", warmup=2)


def _chunk_tokens(engine: Engine) -> list[list[str]]:
    """Every stored chunk as the tokens the full-text index holds for it."""
    query = select(ChunkRow.heading, ChunkRow.text).order_by(ChunkRow.chunk_id)
    with engine.connect() as connection:
        return [index_body(heading, text).split() for heading, text in connection.execute(query)]


def _p(values: Sequence[float], q: float) -> float:
    value = percentile(values, q)
    return round(value, 2) if value is not None else 0.0
