"""Hybrid retrieval: BM25 (the SQLite FTS5 index) and vector similarity, fused.

Both lists are computed among the chunks the audience may see, before their top-k, and with statistics of
those chunks alone: BM25 counts its idf, lengths and ceiling over the rows the audience may see, the vector
search reads only the partitions of the audience classes it may see (`core.domain.is_visible`), and every
fused hit is checked again against the documents' current roles when its passage is read. So the fused list
is the one a knowledge base holding only what the audience may see would give.

Fusion is reciprocal rank fusion (RRF, k = 60) for the order; the score each chunk carries is the larger of
its normalised BM25 score and its calibrated cosine (`cosine_score`), so a floor on it keeps the meaning it
has for plain BM25 (0..1, comparable across questions) and a question whose nearest neighbour is only
vaguely related still scores low.
"""

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

from sqlalchemy import JSON, Date, Engine, bindparam, text

from core.application.ports import Embedder
from core.domain import Audience, Passage, RetrievedChunk, is_visible
from core.retrieval.embeddings import VectorStore, as_matrix
from core.retrieval.index import SqliteIndex, retrieved_chunk
from core.retrieval.vector_search import Matrix

log = logging.getLogger(__name__)

RRF_K: Final = 60
FUSION = "sum"
"""Order: `sum` of the normalised BM25 score and the calibrated cosine (best top-3 recall on dev: 0.93, vs
0.88 for RRF, which ranks a chunk that merely shares one weak word with the question above a close paraphrase);
`rrf` and `max` are kept for measurement (benchmarks/semantic_recall.py)."""
CANDIDATES: Final = 30
"""Candidates taken from each list before fusion."""
EMBEDDING_THREADS: Final = 4
"""Questions embedded at once (beside their BM25 searches); more wait their turn."""
COSINE_ZERO: Final = 0.30
COSINE_ONE: Final = 0.80
"""Cosine mapped to score 0 and 1: MiniLM gives unrelated English sentences cosines up to about 0.3."""

_PASSAGES: Final = text("""
SELECT c.chunk_id, c.heading, c.text, c.content_hash, c.links, c.page, c.anchor,
       d.doc_id, d.title, d.owner, d.updated, d.url, d.supersedes, d.format,
       (SELECT json_group_array(r.role) FROM document_roles AS r WHERE r.doc_id = d.doc_id) AS roles
FROM chunks AS c JOIN documents AS d ON d.doc_id = c.doc_id
WHERE c.chunk_id IN :ids
""").bindparams(bindparam("ids", expanding=True)).columns(updated=Date(), supersedes=JSON(), roles=JSON(),
                                                        links=JSON())


def cosine_score(cosine: float) -> float:
    """A cosine as a 0..1 retrieval score."""
    return min(1.0, max(0.0, (cosine - COSINE_ZERO) / (COSINE_ONE - COSINE_ZERO)))


def rrf(rankings: Sequence[Sequence[str]], *, k: int = RRF_K) -> dict[str, float]:
    """Reciprocal rank fusion of several rankings of ids, best first in each."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking, start=1):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + 1.0 / (k + rank)
    return fused


def fuse(lexical: Sequence[RetrievedChunk], nearest: Sequence[tuple[str, float]],
         limit: int) -> list[tuple[str, float]]:
    """The fused top `limit` (chunk id, score), best first, from BM25's hits and the (chunk id, cosine) pairs of
    the vector search; both lists hold only chunks the audience may see."""
    fused = rrf([[chunk.chunk_id for chunk in lexical], [chunk_id for chunk_id, _ in nearest]])
    lexical_scores = {chunk.chunk_id: chunk.score for chunk in lexical}
    vector_scores = {chunk_id: cosine_score(cosine) for chunk_id, cosine in nearest}
    scores = {cid: max(lexical_scores.get(cid, 0.0), vector_scores.get(cid, 0.0)) for cid in fused}
    if FUSION == "sum":
        key = {cid: lexical_scores.get(cid, 0.0) + vector_scores.get(cid, 0.0) for cid in fused}
    elif FUSION == "max":
        key = scores
    else:
        key = fused
    return [(cid, scores[cid]) for cid in sorted(fused, key=lambda cid: (-key[cid], -scores[cid], cid))[:limit]]


class HybridIndex:
    """The `Index` port over BM25 and the stored vectors of `embedder`'s model."""

    def __init__(self, engine: Engine, embedder: Embedder, *, bm25: SqliteIndex | None = None,
                 candidates: int = CANDIDATES) -> None:
        self._engine = engine
        self._embedder = embedder
        self._bm25 = bm25 or SqliteIndex(engine)
        self._vectors = VectorStore(engine, embedder.model_id)
        self._candidates = candidates
        self._embedding_pool = ThreadPoolExecutor(max_workers=EMBEDDING_THREADS, thread_name_prefix="embed-question")

    @property
    def bm25(self) -> SqliteIndex:
        return self._bm25

    def search(self, query: str, *, audience: Audience, limit: int) -> list[RetrievedChunk]:
        if limit <= 0 or not query.strip():
            return []
        wanted = max(limit, self._candidates)
        # The question is embedded while BM25 runs: the model releases the GIL, and the two take about as long.
        embedding = self._embedding_pool.submit(self._query_vector, query)
        lexical = self._bm25.search(query, audience=audience, limit=wanted)
        query_vector = embedding.result()
        if query_vector is None:
            return lexical[:limit]
        nearest = self._vectors.search(query_vector, audience=audience, limit=wanted)
        return self._fused(lexical, nearest, audience, limit)

    def _query_vector(self, query: str) -> Matrix | None:
        """The question's vector, or None when the embedder fails: a remote embedding endpoint that is down
        degrades retrieval to BM25 instead of failing every question."""
        try:
            vectors = as_matrix(self._embedder, [query])
        except Exception as error:  # the embedder is an adapter; any failure means "no vector"
            log.warning("embedder failed, answering from BM25 alone: %s", type(error).__name__)
            return None
        return vectors[0:1].reshape(-1)

    def passage(self, chunk_id: str, *, audience: Audience) -> Passage | None:
        return self._bm25.passage(chunk_id, audience=audience)

    def best_unscoped_score(self, query: str) -> float:
        """The best score over every document; for the audit's refusal kind only."""
        query_vector = self._query_vector(query)
        nearest = [] if query_vector is None else self._vectors.search(query_vector, audience=None, limit=1)
        vector_best = cosine_score(nearest[0][1]) if nearest else 0.0
        return max(self._bm25.best_unscoped_score(query), vector_best)

    def chunk_count(self) -> int:
        return self._bm25.chunk_count()

    def document_count(self) -> int:
        return self._bm25.document_count()

    def _fused(self, lexical: Sequence[RetrievedChunk], nearest: Sequence[tuple[str, float]],
               audience: Audience, limit: int) -> list[RetrievedChunk]:
        order = fuse(lexical, nearest, limit)
        known = {chunk.chunk_id: chunk for chunk in lexical}
        missing = [cid for cid, _ in order if cid not in known]
        known.update(self._passages(missing, audience))
        return [_rescored(known[cid], score) for cid, score in order if cid in known]

    def _passages(self, chunk_ids: Sequence[str], audience: Audience) -> dict[str, RetrievedChunk]:
        """The vector hits' passages, each checked once more against its document's current audience."""
        if not chunk_ids:
            return {}
        with self._engine.connect() as connection:
            rows = connection.execute(_PASSAGES, {"ids": list(chunk_ids)}).all()
        return {row.chunk_id: _retrieved(row) for row in rows
                if is_visible(frozenset(row.roles or ()), audience)}


def _rescored(chunk: RetrievedChunk, score: float) -> RetrievedChunk:
    return RetrievedChunk(passage=chunk.passage, score=score, content_hash=chunk.content_hash,
                          supersedes=chunk.supersedes)


def _retrieved(row: Any) -> RetrievedChunk:
    return retrieved_chunk(row, 0.0)
