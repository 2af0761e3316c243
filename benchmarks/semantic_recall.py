"""Ingest speed with and without embeddings, and top-k recall of the supporting section (BM25 vs hybrid).

    .venv/bin/python benchmarks/semantic_recall.py --kb ../shared/eval/dev/kb --cases ../shared/eval/dev/cases.yaml
"""

import argparse
import tempfile
import time
from pathlib import Path

import core.retrieval.hybrid as hybrid_module
from core.domain import Audience
from core.eval.cases import Case, load_cases
from core.eval.runner import case_principal
from core.eval.scoring import ChunkRef
from core.retrieval.embeddings import EmbeddingIngestor, MiniLmEmbedder
from core.retrieval.hybrid import HybridIndex
from core.retrieval.index import SqliteIndex
from core.retrieval.ingest import Ingestor
from core.storage import make_engine, migrate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--cases", type=Path)
    args = parser.parse_args()
    embedder = MiniLmEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        plain = make_engine(f"sqlite:///{tmp}/plain.db")
        migrate(plain)
        started = time.perf_counter()
        report = Ingestor(plain, progress=False).ingest(args.kb)
        plain_s = time.perf_counter() - started
        engine = make_engine(f"sqlite:///{tmp}/hybrid.db")
        migrate(engine)
        started = time.perf_counter()
        EmbeddingIngestor(engine, embedder, progress=False).ingest(args.kb)
        hybrid_s = time.perf_counter() - started
        print(f"{report.chunks} chunks: ingest {plain_s:.2f}s ({report.chunks / plain_s:.0f} chunks/s) without "
              f"embeddings, {hybrid_s:.2f}s ({report.chunks / hybrid_s:.0f} chunks/s) with")
        if not args.cases:
            return
        indexes = {"bm25": SqliteIndex(plain), "hybrid": HybridIndex(engine, embedder)}
        cases = [case for case in load_cases(args.cases) if case.expect == "answer" and case.support]
        for fusion in ("rrf", "max", "sum"):
            hybrid_module.FUSION = fusion
            recall(f"hybrid-{fusion}", indexes["hybrid"], cases)
        recall("bm25", indexes["bm25"], cases)


def recall(name: str, index: SqliteIndex | HybridIndex, cases: list[Case]) -> None:
    hits = {1: 0, 3: 0, 5: 0}
    for case in cases:
        audience = Audience.only(case_principal(case))
        found = index.search(case.question, audience=audience, limit=5)
        ranks = [n for n, chunk in enumerate(found, 1) if ChunkRef.of(chunk.passage).within(case.support)]
        for k in hits:
            hits[k] += bool(ranks and ranks[0] <= k)
    print(name, " ".join(f"top{k} {v / len(cases):.2f}" for k, v in hits.items()), f"({len(cases)} cases)")


if __name__ == "__main__":
    main()
