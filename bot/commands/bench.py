"""`sourced bench [--chunks N ...] [--embedder none|minilm] [--json]`: ingest, retrieval, `ask` and memory at
scale, beside rank_bm25.
"""

import argparse
import importlib.util
import json
import sys
from typing import Any, Final

from rich.console import Console
from rich.table import Table

from bot.commands.common import report_console
from core.eval.bench import BenchResult, bench_isolated
from core.retrieval.embeddings import EmbedderUnavailable, MiniLmEmbedder

DEFAULT_SIZES: Final = (10_000, 100_000)
TARGETS: Final = ("targets at 100k chunks on 2 cores: retrieval p95 < 20 ms, ask p95 < 100 ms, "
                  "peak memory < 500 MB, retrieval >= 20x faster than rank_bm25 (ratio = peer p50 / ours)")
COLUMNS: Final = (
    ("chunks", "chunks", "{:,}"), ("embedder", "embedder", "{}"),
    ("ingest_chunks_per_s", "ingest\nchunks/s", "{:,.0f}"),
    ("retrieve_p50_ms", "retrieve\np50 ms", "{:.2f}"), ("retrieve_p95_ms", "retrieve\np95 ms", "{:.2f}"),
    ("ask_p50_ms", "ask\np50 ms", "{:.2f}"), ("ask_p95_ms", "ask\np95 ms", "{:.2f}"),
    ("peak_rss_mb", "peak\nRSS MB", "{:.0f}"), ("peer_retrieve_p50_ms", "rank_bm25\np50 ms", "{:.2f}"),
    ("peer_ratio", "ratio", "{:.1f}x"),
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bench", help="benchmark speed and scale on a generated knowledge base",
        description="Generate a knowledge base of N chunks (policy-like text, headings, mixed audiences), "
                    "ingest it into a temporary SQLite database and time retrieval and `ask` on the default "
                    "model over 200 fixed questions, beside rank_bm25 on the same chunks. Each N runs in a "
                    "fresh process. Needs the `bench` extra: pip install 'sourced[bench]'.")
    parser.add_argument("--chunks", type=_size, nargs="+", default=list(DEFAULT_SIZES), metavar="N",
                        help="knowledge-base sizes in chunks (default: 10000 100000; e.g. 1000000)")
    parser.add_argument("--embedder", choices=("none", "minilm"), default="none",
                        help="none: plain BM25 (default); minilm: embed every chunk at ingest (measured in the "
                             "ingest rate: about 60 chunks/s on 2 shared cores) and retrieve with the hybrid index. "
                             "Needs the `semantic` extra")
    parser.add_argument("--seed", type=int, default=7, help="seed of the generated text and questions")
    parser.add_argument("--json", action="store_true", help="print one JSON object per size, one per line")
    parser.set_defaults(run=run)


def _size(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of chunks")
    return int(text)


def run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("rank_bm25") is None:
        print("sourced bench: the peer is missing; install the extra: pip install 'sourced[bench]'",
              file=sys.stderr)
        return 2
    if args.embedder == "minilm":
        try:
            MiniLmEmbedder()  # here, so a missing extra is one line, not a traceback from the worker
        except EmbedderUnavailable as error:
            print(f"sourced bench: --embedder minilm: {error}", file=sys.stderr)
            return 2
    results = []
    for chunks in args.chunks:
        result = bench_isolated(chunks, seed=args.seed, embedder=args.embedder)
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
        table.add_row(*(template.format(values[key]) for key, _, template in COLUMNS))
    console.print(table)
