"""Speed and scale: ingest, retrieval and `ask` on a generated knowledge base, on SQLite and, given a server, on
PostgreSQL, beside `rank_bm25` (the BM25 behind LangChain's and LlamaIndex's retrievers) on the same chunks and
the same tokens.

With an embedder (`minilm`), ingestion stores a vector for every chunk, and retrieval is the hybrid index (full
text and vectors fused) that `ask` uses; without one (`none`), both are full text alone. With a vector cache
(`core.eval.bench_vectors`) the chunks' vectors are computed once and reused by every database and run, or
generated from stored real ones where none was computed; the ingest rate then excludes embedding, which is
reported apart when it happens. Questions are always embedded by the model, and timed with it.

The reader (the configured one, by default the bundled cross-encoder) is timed apart on every question it reads
(`reader_p95_ms`): its share of `ask`.

Each size and database runs in a fresh interpreter, so the peak resident memory (`ru_maxrss`, a high-water mark)
belongs to it alone; it is read before the peer is built, so it is Sourced's own. The peer is measured on SQLite
only: it reads the same chunks whichever database holds them.
"""

import multiprocessing
import resource
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Final, Literal

from rich.console import Console
from rich.progress import track
from sqlalchemy import Engine, select, text

from core.application.orchestrator import Question
from core.application.ports import Reader, ReadPassage
from core.bootstrap import Sourced, bootstrap, build_reader
from core.config import Settings, SourcedConfig
from core.domain import EVERYONE, Audience, Principal
from core.eval.bench_corpus import BenchCorpus, write_corpus
from core.eval.bench_vectors import BenchVectors
from core.eval.stats import percentile
from core.retrieval.bm25 import query_terms
from core.retrieval.embeddings import CachedEmbedder, EmbeddingIngestor
from core.retrieval.index import index_body
from core.retrieval.ingest import IngestReport
from core.storage.postgres import scratch_database
from core.storage.tables import ChunkRow

DEPTH: Final = 8
"""Chunks retrieved per question: the orchestrator's default depth."""
WARMUP: Final = 10
ASKER: Final = Principal(user_id="bench", roles=frozenset({EVERYONE}))
BenchEmbedder = Literal["none", "minilm"]


@dataclass(frozen=True, kw_only=True)
class BenchResult:
    chunks: int
    database: str
    embedder: str
    ingest_chunks_per_s: float
    embed_chunks_per_s: float | None
    """Chunks embedded per second, when this run embedded some (else the vectors came from the cache)."""
    retrieve_p50_ms: float
    retrieve_p95_ms: float
    ask_p50_ms: float
    ask_p95_ms: float
    peak_rss_mb: float
    database_mb: float
    """The database's size on disk: the SQLite file with its journal, or PostgreSQL's `pg_database_size`."""
    peer_retrieve_p50_ms: float | None
    peer_ratio: float | None
    reader: str | None = None
    reader_p95_ms: float | None = None
    """One question's batch of statements read, 95th percentile; None without a reader."""

    def as_dict(self) -> dict[str, float | str | None]:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class BenchOptions:
    seed: int = 7
    embedder: BenchEmbedder = "none"
    postgres: str | None = None
    """A PostgreSQL server URL: the run uses a database created there (and dropped after) instead of SQLite."""
    vector_cache: Path | None = None
    """With `minilm`: a folder of chunk vectors reused across databases and runs (`core.eval.bench_vectors`)."""
    compute_vectors: bool = True
    """Embed (and cache) the chunks the cache lacks; else generate their vectors from the cached ones."""
    peer: bool = True


def bench_isolated(chunks: int, options: BenchOptions, *, progress: bool = True) -> BenchResult:
    """`bench` in a fresh interpreter (spawned, not forked), so its memory high-water mark is its own."""
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(bench, chunks, options, progress=progress).result()


def bench(chunks: int, options: BenchOptions, *, progress: bool = True) -> BenchResult:
    """Generate, ingest and measure `chunks` chunks in a temporary folder (and database), in this process."""
    console = Console(stderr=True, quiet=not progress)
    with tempfile.TemporaryDirectory(prefix="sourced-bench-") as tmp:
        with console.status(f"writing a knowledge base of {chunks:,} chunks"):
            corpus = write_corpus(Path(tmp) / "kb", chunks=chunks, seed=options.seed)
        with _database(options.postgres, Path(tmp)) as url:
            # The ingestor's own bars show progress (documents, then chunks embedded); no status around them.
            settings = Settings(database_url=url, embedder=options.embedder)
            built = build_reader(settings)
            reader = TimedReader(built) if built is not None else None
            sourced = bootstrap(settings, config=SourcedConfig(), known_gaps=(), progress=progress, reader=reader)
            try:
                result = _measure(sourced, corpus, console, options, options.vector_cache or Path(tmp) / "vectors")
                return replace(result, reader=reader.name, reader_p95_ms=_p(reader.timings, 95)) if reader else result
            finally:
                sourced.engine.dispose()


class TimedReader:
    """The configured reader, each call timed (milliseconds)."""

    def __init__(self, reader: Reader) -> None:
        self._reader = reader
        self.timings: list[float] = []

    @property
    def name(self) -> str:
        return self._reader.name

    def score(self, question: str, passages: Sequence[ReadPassage]) -> list[float]:
        started = time.perf_counter()
        try:
            return self._reader.score(question, passages)
        finally:
            self.timings.append((time.perf_counter() - started) * 1000)


@contextmanager
def _database(postgres: str | None, folder: Path) -> Iterator[str]:
    if postgres is None:
        yield f"sqlite:///{folder}/bench.db"
        return
    with scratch_database(postgres, prefix="sourced_bench") as url:
        yield url


def _measure(sourced: Sourced, corpus: BenchCorpus, console: Console, options: BenchOptions,
             vector_cache: Path) -> BenchResult:
    ingest_s, embedded, embed_s = _timed_ingest(sourced, corpus, options, vector_cache, progress=not console.quiet)
    index = sourced.index  # what `ask` retrieves with: full text, or fused with the vectors with an embedder
    audience = Audience.only(ASKER)
    # Each timed question embeds its own text, for retrieval and for the question matcher: the warm-up's (and the
    # retrieval pass's) vectors are forgotten.
    caches = [e for e in sourced.embedders() if isinstance(e, CachedEmbedder)]

    def forget() -> None:
        for cache in caches:
            cache.forget(corpus.queries)

    retrieve = _latencies(lambda q: index.search(q, audience=audience, limit=DEPTH), corpus.queries, console,
                          "retrieving", forget=forget)
    ask = _latencies(lambda q: sourced.orchestrator.ask(Question(text=q, principal=ASKER, audience=audience)),
                     corpus.queries, console, "asking", forget=forget)
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    size_mb = _database_mb(sourced.engine)
    peer = _peer_latencies(sourced.engine, corpus.queries, console) if options.peer else None
    return BenchResult(
        chunks=corpus.chunks, database=sourced.engine.dialect.name, embedder=options.embedder,
        ingest_chunks_per_s=round(corpus.chunks / (ingest_s - embed_s), 1),
        embed_chunks_per_s=round(embedded / embed_s, 1) if embedded else None,
        retrieve_p50_ms=_p(retrieve, 50), retrieve_p95_ms=_p(retrieve, 95),
        ask_p50_ms=_p(ask, 50), ask_p95_ms=_p(ask, 95), peak_rss_mb=round(peak_rss_mb, 1),
        database_mb=round(size_mb, 1),
        peer_retrieve_p50_ms=_p(peer, 50) if peer else None,
        peer_ratio=round(_p(peer, 50) / max(_p(retrieve, 50), 1e-3), 1) if peer else None,
    )


def _timed_ingest(sourced: Sourced, corpus: BenchCorpus, options: BenchOptions, vector_cache: Path,
                  *, progress: bool) -> tuple[float, int, float]:
    """Seconds ingesting, and how many chunks the model embedded in how many of those seconds (none when the
    vectors came from the cache)."""
    if sourced.embedder is None:
        started = time.perf_counter()
        _check(sourced.ingestor.ingest(corpus.root), corpus)
        return time.perf_counter() - started, 0, 0.0
    vectors = BenchVectors(sourced.embedder, vector_cache, compute=options.compute_vectors)
    started = time.perf_counter()
    _check(EmbeddingIngestor(sourced.engine, vectors, progress=progress).ingest(corpus.root), corpus)
    seconds = time.perf_counter() - started
    vectors.save()
    return seconds, vectors.computed, vectors.embedding_seconds


def _check(report: IngestReport, corpus: BenchCorpus) -> None:
    if report.errors or report.chunks != corpus.chunks:
        raise RuntimeError(f"the generated knowledge base did not ingest as written: {report.summary()}")


def _database_mb(engine: Engine) -> float:
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            size = connection.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
        return int(size) / 2**20
    database = Path(engine.url.database or "")
    return sum(path.stat().st_size for path in (database, Path(f"{database}-wal")) if path.exists()) / 2**20


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
