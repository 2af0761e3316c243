"""How long a knowledge base takes to read and to ingest, so the cost of reading each document in a bounded child
process (`core.documents.bounded`) is measured rather than guessed.

    .venv/bin/python -m benchmarks.ingest_timing [FOLDER ...] [--runs 3] [--json]

Without folders: the bundled example handbook and the test fixtures' PDF, Word, PowerPoint and HTML files (the
formats read in the child process). For each folder: `read`, the loader alone (`load_knowledge_base`, as `sourced
ingest --dry-run` reads), and `ingest`, a first ingest into a fresh SQLite database with the default embedder
(as `sourced ingest` runs it), each the median of `--runs` runs in this process. The first read of a run also
pays for starting the reading process and importing the readers; the median leaves that out.
"""

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from core.bootstrap import bootstrap
from core.config import Settings
from core.retrieval.knowledge_base import load_knowledge_base

ROOT = Path(__file__).parents[1]
DEFAULT_FOLDERS = (ROOT / "examples" / "handbook", ROOT / "tests" / "fixtures" / "formats" / "files")


def _seconds(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _ingest_once(folder: Path) -> float:
    with tempfile.TemporaryDirectory(prefix="sourced-timing-") as scratch:
        sourced = bootstrap(Settings(database_url=f"sqlite:///{scratch}/timing.db"), progress=False)
        try:
            return _seconds(lambda: sourced.ingestor.ingest(folder))
        finally:
            sourced.engine.dispose()


def measure(folder: Path, runs: int) -> dict[str, object]:
    loaded = load_knowledge_base(folder)
    reads = [_seconds(lambda: load_knowledge_base(folder)) for _ in range(runs)]
    ingests = [_ingest_once(folder) for _ in range(runs)]
    return {"folder": str(folder), "documents": len(loaded.documents), "errors": len(loaded.errors),
            "read_s": round(statistics.median(reads), 3), "ingest_s": round(statistics.median(ingests), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path, default=list(DEFAULT_FOLDERS))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(folder, args.runs) for folder in args.folders]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        print(f"{row['folder']}: {row['documents']} documents ({row['errors']} refused), "
              f"read {row['read_s']:.3f} s, ingest {row['ingest_s']:.3f} s")


if __name__ == "__main__":
    main()
