"""`sourced bench [--chunks N ...] [--embedder none|minilm] [--database URL] [--json]`: ingest, retrieval, `ask`,
memory and size on disk at scale, on SQLite and PostgreSQL side by side, beside rank_bm25.
"""

import argparse
import importlib.util
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.table import Table

from bot.commands.common import report_console
from core.eval.bench import BenchOptions, BenchResult, bench_isolated
from core.install import install_extra
from core.retrieval.embeddings import EmbedderUnavailable, MiniLmEmbedder

DEFAULT_SIZES: Final = (10_000, 100_000)
TARGETS: Final = ("targets at 100k chunks on 2 cores: retrieval p95 < 20 ms (SQLite), < 30 ms (PostgreSQL), "
                  "ask p95 < 100 ms, peak memory < 500 MB, retrieval >= 20x faster than rank_bm25 (ratio = peer p50 "
                  "/ ours); at 1M on PostgreSQL retrieval p95 < 100 ms. Ingest excludes embedding, shown apart")
COLUMNS: Final = (
    ("chunks", "chunks", "{:,}"), ("database", "database", "{}"), ("embedder", "embedder", "{}"),
    ("ingest_chunks_per_s", "ingest\nchunks/s", "{:,.0f}"), ("embed_chunks_per_s", "embed\nchunks/s", "{:,.0f}"),
    ("retrieve_p50_ms", "retrieve\np50 ms", "{:.2f}"), ("retrieve_p95_ms", "retrieve\np95 ms", "{:.2f}"),
    ("ask_p50_ms", "ask\np50 ms", "{:.2f}"), ("ask_p95_ms", "ask\np95 ms", "{:.2f}"),
    ("peak_rss_mb", "peak\nRSS MB", "{:.0f}"), ("database_mb", "on disk\nMB", "{:,.0f}"),
    ("peer_retrieve_p50_ms", "rank_bm25\np50 ms", "{:.2f}"), ("peer_ratio", "ratio", "{:.1f}x"),
    ("reader_p95_ms", "reader\np95 ms", "{:.2f}"),
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bench", help="benchmark speed and scale on a generated knowledge base",
        description="Generate a knowledge base of N chunks (policy-like text, headings, mixed audiences), "
                    "ingest it into a temporary SQLite database (and with --database into a PostgreSQL one) and "
                    "time retrieval and `ask` on the default model over 200 fixed questions, beside rank_bm25 on "
                    "the same chunks. Each N and database runs in a fresh process. Needs the `bench` extra "
                    "(`make check` installs it).")
    parser.add_argument("--chunks", type=_size, nargs="+", default=list(DEFAULT_SIZES), metavar="N",
                        help="knowledge-base sizes in chunks (default: 10000 100000; e.g. 1000000)")
    parser.add_argument("--embedder", choices=("none", "minilm"), default="none",
                        help="none: full text alone (default); minilm: a vector for every chunk (embedded at about "
                             "60-90 chunks/s on 2 cores, reported apart from the ingest rate) and the hybrid index. "
                             "Needs the `semantic` extra")
    parser.add_argument("--database", metavar="URL",
                        help="also measure PostgreSQL (with pgvector for --embedder minilm): a SQLAlchemy URL of a "
                             "server where a database is created for each size and dropped after (needs CREATEDB)")
    parser.add_argument("--vector-cache", type=Path, metavar="DIR",
                        help="with --embedder minilm: keep the chunks' vectors here and reuse them (across databases "
                             "and runs) instead of embedding again; default: a temporary folder per run")
    parser.add_argument("--generate-vectors", action="store_true",
                        help="with --vector-cache: chunks without a cached vector get one generated from the cached "
                             "real vectors instead of being embedded (for 1M chunks, which would take hours)")
    parser.add_argument("--no-peer", action="store_true", help="skip rank_bm25 (it holds every chunk in memory)")
    parser.add_argument("--no-sqlite", action="store_true",
                        help="with --database: measure PostgreSQL alone (a 1M run of each takes long; run them apart)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the generated text and questions")
    parser.add_argument("--json", action="store_true", help="print one JSON object per size, one per line")
    parser.set_defaults(run=run)


def _size(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of chunks")
    return int(text)


def run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("rank_bm25") is None:
        print(f"sourced bench: the peer is missing; install the bench extra: {install_extra('bench')}",
              file=sys.stderr)
        return 2
    if args.embedder == "minilm":
        try:
            MiniLmEmbedder()  # here, so a missing extra is one line, not a traceback from the worker
        except EmbedderUnavailable as error:
            print(f"sourced bench: --embedder minilm: {error}", file=sys.stderr)
            return 2
    if args.no_sqlite and not args.database:
        print("sourced bench: --no-sqlite needs --database URL", file=sys.stderr)
        return 2
    if args.generate_vectors and not args.vector_cache:
        print("sourced bench: --generate-vectors needs --vector-cache DIR holding real vectors", file=sys.stderr)
        return 2
    options = BenchOptions(seed=args.seed, embedder=args.embedder, vector_cache=args.vector_cache,
                           compute_vectors=not args.generate_vectors, peer=not args.no_peer)
    results = []
    for chunks in args.chunks:
        # SQLite first: with --embedder minilm it fills the vector cache PostgreSQL then reuses.
        for postgres in ((args.database,) if args.no_sqlite else (None, args.database) if args.database else (None,)):
            result = bench_isolated(chunks, replace(options, postgres=postgres, peer=options.peer and not postgres))
            if args.json:
                print(json.dumps(result.as_dict()), flush=True)
            results.append(result)
    if not args.json:
        print_results(report_console(), results)
    return 0


def print_results(console: Console, results: list[BenchResult]) -> None:
    table = Table(title="sourced bench", title_justify="left", caption=TARGETS, caption_justify="left")
    for _, header, _ in COLUMNS:
        table.add_column(header, justify="right")
    for result in results:
        values = result.as_dict()
        table.add_row(*("-" if values[key] is None else template.format(values[key]) for key, _, template in COLUMNS))
    console.print(table)
