"""The index on PostgreSQL: SQLite's BM25 computed in SQL, vectors with pgvector, fused as on SQLite.

Full text. Every chunk has its index terms in `chunk_terms` (`core.storage.postgres`): the terms SQLite's FTS5
index holds for it, each once with its count, and its length. A question's terms are SQLite's too
(`core.retrieval.bm25.query_terms`), and so is the score: FTS5's BM25 over the statistics of the chunks the
audience may see (the chunks and terms of its visible classes, and each term's count of chunks among them, all
kept by triggers), divided by the query's ceiling. The SQL computes `bm25.term_weight` with the same operations
in the same order on doubles, the terms summed in the order SQLite sums them, so the same question over the same
documents gets the same scores, hence the same order, ties by chunk id, as on SQLite. Which chunks are ranked is
bounded as on SQLite (`bm25.split_by_postings`): under the budget, every chunk having a term of the question;
over it, the best of those having the rarest terms, re-scored over the whole question. The audience filter is
part of the query, applied before the top-k; no statistic counts a chunk the audience may not see.

Vectors. The question is embedded while the full-text query runs; the nearest chunks come from the partitions of
`chunk_vectors` whose audience class the audience may see (`core.storage.postgres`: each partition has its own
HNSW graph, so hidden vectors are neither returned nor walked through), in cosine order (equal distances by chunk
id), with pgvector's iterative scan so that rows of another model filtered out after the graph walk do not shorten
the list. Each is reported with its cosine as SQLite computes it (`core.retrieval.vector_search.cosines`, from the
vector itself), so equal vectors tie and a cosine is the same double on both. The two lists are fused as on
SQLite (`core.retrieval.hybrid.fuse`).

One snapshot. A search runs in one read-only REPEATABLE READ transaction: the audience's classes, the statistics,
the full-text hits, the nearest vectors and the passages all come from the same state of the database, so a
document being re-ingested is seen whole, old or new, never a mixture.
"""

import logging
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from sqlalchemy import JSON, Connection, Date, Engine, Row, text
from sqlalchemy.types import TypeEngine

from core.application.ports import Embedder
from core.domain import Audience, Passage, RetrievedChunk
from core.retrieval.bm25 import (
    CANDIDATES_PER_RESULT,
    K1,
    MIN_CANDIDATES,
    POSTING_BUDGET,
    B,
    CorpusStats,
    normalised,
    query_terms,
    split_by_postings,
)
from core.retrieval.embeddings import as_matrix
from core.retrieval.hybrid import CANDIDATES, EMBEDDING_THREADS, cosine_score, fuse
from core.retrieval.index import IndexUnavailable, retrieved_chunk
from core.retrieval.vector_search import cosines
from core.storage.postgres import AUDIENCE_TABLE, CHUNK_TERMS_TABLE, TERM_TABLE, VECTOR_TABLE, vector_literal
from core.storage.tables import ChunkRow, DocumentRow, count_rows

log = logging.getLogger(__name__)

EF_SEARCH: Final = 64
"""HNSW candidates kept while walking the graph: above the fusion's 30, with room for recall."""

BY_CHUNK_ID: Final = 'chunk_id COLLATE "C"'
"""Equal scores are ordered by chunk id in code point order, as on SQLite (binary collation) and in the fusion,
whatever the database's collation: which of two tied chunks is shown never depends on the database."""
_PASSAGE_COLUMNS: Final = ("c.chunk_id, c.heading, c.text, c.content_hash, c.links, c.page, c.anchor, "
                           "d.doc_id, d.title, d.owner, d.updated, d.url, d.supersedes, d.format")
_PASSAGE_TYPES: Final[dict[str, TypeEngine[Any]]] = {"updated": Date(), "supersedes": JSON(), "links": JSON()}
_CONSTANTS: Final = {"k1": K1, "k1_plus_one": K1 + 1.0, "one_minus_b": 1.0 - B, "b": B}
"""`bm25.term_weight`'s constants as its Python computes them, sent as doubles (a literal would be `numeric`)."""


def term_weight_sql(n: int) -> str:
    """`bm25.term_weight` in SQL for the question's `n`th term, over a `chunk_terms` row `t` and its term count
    `f.f{n}` (0 where the row lacks the term: it adds exactly 0.0): the same operations in the same order."""
    return (f"CAST(:idf_{n} AS float8) * ((f.f{n} * CAST(:k1_plus_one AS float8)) / (f.f{n} + CAST(:k1 AS float8) "
            "* (CAST(:one_minus_b AS float8) + CAST(:b AS float8) * t.length / CAST(:average AS float8))))")


def bm25_sql(terms: Sequence[str], stats: CorpusStats) -> tuple[str, str, dict[str, Any]]:
    """The BM25 of a `chunk_terms` row `t` for these terms, summed in their order as SQLite sums them, and the
    lateral subquery giving `f`, the row's count of each term: the score's SQL, the subquery's, their parameters."""
    counts = ", ".join(f"coalesce(t.counts[array_position(t.terms, CAST(:term_{n} AS text))], 0) AS f{n}"
                       for n in range(len(terms)))
    score = " + ".join(term_weight_sql(n) for n in range(len(terms)))
    parameters = {**_CONSTANTS, "average": stats.average_length,
                  **{f"term_{n}": term for n, term in enumerate(terms)},
                  **{f"idf_{n}": stats.idf(term) for n, term in enumerate(terms)}}
    return score, f"LATERAL (SELECT {counts}) AS f", parameters


@dataclass(frozen=True, kw_only=True)
class Scope:
    """Who may see what: the audience classes a search may use (`keys`, for filtering many rows at one comparison
    each), and the parties' roles (`role_sets`, checked against the documents' roles for the few rows returned).
    Unscoped (the audit's probe): both None."""

    keys: tuple[str, ...] | None = None
    role_sets: tuple[frozenset[str], ...] | None = None

    def classes(self, alias: str) -> tuple[str, dict[str, Any]]:
        """SQL keeping the rows of the visible audience classes."""
        if self.keys is None:
            return "", {}
        return f" AND {alias}.audience_key = ANY(:keys)", {"keys": list(self.keys)}

    def roles(self, alias: str) -> tuple[str, dict[str, Any]]:
        """SQL keeping the rows whose document every party may see (a role of the party is among its roles)."""
        if self.role_sets is None:
            return "", {}
        clauses = [f"EXISTS (SELECT 1 FROM document_roles AS r WHERE r.doc_id = {alias}.doc_id "
                   f"AND r.role = ANY(:party_{n}))" for n in range(len(self.role_sets))]
        return " AND " + " AND ".join(clauses), self._parties()

    def visible_classes(self) -> tuple[str, dict[str, Any]]:
        """SQL selecting the classes every party may see (`core.domain.is_visible` over the roles of each class:
        some role of every party among them), with their totals of chunks and terms."""
        columns = f"SELECT audience_key, chunks, tokens FROM {AUDIENCE_TABLE}"
        if self.role_sets is None:
            return columns, {}
        overlaps = " AND ".join(f"roles && CAST(:party_{n} AS text[])" for n in range(len(self.role_sets)))
        return f"{columns} WHERE {overlaps}", self._parties()

    def _parties(self) -> dict[str, Any]:
        assert self.role_sets is not None
        return {f"party_{n}": sorted(roles) for n, roles in enumerate(self.role_sets)}


class PostgresIndex:
    """The `Index` port on PostgreSQL: full text alone, or fused with pgvector when there is an embedder."""

    def __init__(self, engine: Engine, embedder: Embedder | None = None, *, candidates: int = CANDIDATES,
                 budget: int = POSTING_BUDGET) -> None:
        if engine.dialect.name != "postgresql":
            raise IndexUnavailable(f"the PostgreSQL index needs PostgreSQL; this database is {engine.dialect.name!r}")
        self._engine = engine
        self._embedder = embedder
        self._candidates = candidates
        self._budget = budget
        self._embedding_pool = (ThreadPoolExecutor(max_workers=EMBEDDING_THREADS, thread_name_prefix="embed-question")
                                if embedder is not None else None)

    def search(self, query: str, *, audience: Audience, limit: int) -> list[RetrievedChunk]:
        """The best chunks the audience may see, best first, scores in 0..1; filtered before the top-k. A question
        without content words is still searched by its vector, as on SQLite."""
        if limit <= 0 or not query.strip():
            return []
        wanted = max(limit, self._candidates) if self._embedder is not None else limit
        terms = query_terms(query)
        embedding = self._embed(query)
        with snapshot(self._engine) as connection:
            scope, stats = self._scope_and_stats(connection, terms, Scope(role_sets=audience.role_sets()))
            lexical = self._lexical(connection, terms, stats, scope, wanted)
            query_vector = embedding.result() if embedding is not None else None
            if query_vector is None:
                return lexical[:limit]
            nearest = self._nearest(connection, query_vector, scope, wanted)
            order = fuse(lexical, nearest, limit)
            known = {chunk.chunk_id: chunk for chunk in lexical}
            missing = [chunk_id for chunk_id, _ in order if chunk_id not in known]
            known.update(self._passages(connection, missing, scope))
        return [_with_score(known[chunk_id], score) for chunk_id, score in order if chunk_id in known]

    def best_unscoped_score(self, query: str) -> float:
        """The best score over every document, whoever may see it (the best of each list, unfused); for the
        audit's refusal kind only."""
        terms = query_terms(query)
        embedding = self._embed(query)
        with snapshot(self._engine) as connection:
            scope, stats = self._scope_and_stats(connection, terms, Scope())
            lexical = self._lexical(connection, terms, stats, scope, 1)
            query_vector = embedding.result() if embedding is not None else None
            nearest = [] if query_vector is None else self._nearest(connection, query_vector, scope, 1)
        return max([chunk.score for chunk in lexical] + [cosine_score(cosine) for _, cosine in nearest] + [0.0])

    def passage(self, chunk_id: str, *, audience: Audience) -> Passage | None:
        """A cited chunk shown on demand: None unless it exists and every party may see its document."""
        with self._engine.connect() as connection:
            found = self._passages(connection, [chunk_id], Scope(role_sets=audience.role_sets()))
        return found[chunk_id].passage if chunk_id in found else None

    def chunk_count(self) -> int:
        return count_rows(self._engine, ChunkRow)

    def document_count(self) -> int:
        return count_rows(self._engine, DocumentRow)

    # -- steps -------------------------------------------------------------------------------------------

    def _embed(self, query: str) -> "Future[list[float] | None] | None":
        if self._embedding_pool is None:
            return None
        return self._embedding_pool.submit(self._query_vector, query)

    def _query_vector(self, query: str) -> list[float] | None:
        """The question's vector, or None when the embedder fails: full text alone then, as on SQLite."""
        assert self._embedder is not None
        try:
            return [float(value) for value in as_matrix(self._embedder, [query])[0]]
        except Exception as error:  # the embedder is an adapter; any failure means "no vector"
            log.warning("embedder failed, answering from full text alone: %s", type(error).__name__)
            return None

    def _scope_and_stats(self, connection: Connection, terms: Sequence[str],
                         requested: Scope) -> tuple[Scope, CorpusStats]:
        """In one statement: the keys of the classes the audience may see, and BM25's statistics over their chunks
        (how many, their terms in total, how many have each of the question's terms)."""
        classes, parameters = requested.visible_classes()
        row = connection.execute(text(f"""
            WITH visible AS ({classes})
            SELECT (SELECT coalesce(array_agg(audience_key), '{{}}') FROM visible) AS keys,
                   (SELECT coalesce(sum(chunks), 0) FROM visible) AS chunks,
                   (SELECT coalesce(sum(tokens), 0) FROM visible) AS tokens,
                   ARRAY(SELECT (SELECT coalesce(sum(k.chunks), 0) FROM {TERM_TABLE} AS k
                                 WHERE k.term = q.term AND k.audience_key IN (SELECT audience_key FROM visible))
                         FROM unnest(CAST(:terms AS text[])) WITH ORDINALITY AS q(term, n) ORDER BY q.n) AS counts"""),
            {"terms": list(terms), **parameters}).one()
        keys = tuple(row.keys) if requested.role_sets is not None else None
        counts = {term: int(count) for term, count in zip(terms, row.counts, strict=True)}
        stats = CorpusStats(rows=int(row.chunks), tokens=int(row.tokens), document_frequency=counts)
        return Scope(keys=keys, role_sets=requested.role_sets), stats

    def _lexical(self, connection: Connection, terms: Sequence[str], stats: CorpusStats, scope: Scope,
                 limit: int) -> list[RetrievedChunk]:
        """The top `limit` chunks by normalised BM25, as `SqliteIndex` ranks them; the few returned are checked
        against their documents' roles as well."""
        ranked = self._ranked(connection, terms, stats, scope, limit) if terms else []
        passages = self._passages(connection, [chunk_id for chunk_id, _ in ranked], scope)
        ceiling = stats.ceiling(terms)
        return [_with_score(passages[chunk_id], normalised(raw, ceiling)) for chunk_id, raw in ranked
                if chunk_id in passages]

    def _ranked(self, connection: Connection, terms: Sequence[str], stats: CorpusStats, scope: Scope,
                limit: int) -> list[tuple[str, float]]:
        """The top `limit` (chunk id, BM25) pairs, chosen as `SqliteIndex._ranked` chooses them: over the budget,
        candidates from the rarest terms, re-scored over the whole question; if they are too few, or under the
        budget, every chunk the audience may see having a term of the question."""
        selective, rest = split_by_postings(terms, stats, self._budget)
        if rest:
            wanted = max(limit * CANDIDATES_PER_RESULT, MIN_CANDIDATES)
            ranked = self._top(connection, selective, stats, scope, wanted)
            if len(ranked) >= wanted:
                rescored = self._scored(connection, [chunk_id for chunk_id, _ in ranked], terms, stats)
                return sorted(rescored, key=lambda pair: (-pair[1], pair[0]))[:limit]
        present = selective + rest
        return self._top(connection, present, stats, scope, limit) if present else []

    def _top(self, connection: Connection, terms: Sequence[str], stats: CorpusStats, scope: Scope,
             limit: int) -> list[tuple[str, float]]:
        """The best `limit` chunks of the visible classes having any of the terms, by BM25 over those terms, ties
        by chunk id."""
        score, counts, parameters = bm25_sql(terms, stats)
        classes, class_parameters = scope.classes("t")
        rows = connection.execute(text(f"""
            SELECT t.chunk_id, {score} AS score FROM {CHUNK_TERMS_TABLE} AS t, {counts}
            WHERE t.terms && CAST(:any AS text[]){classes}
            ORDER BY score DESC, t.{BY_CHUNK_ID} LIMIT :limit"""),
            {**parameters, **class_parameters, "any": list(terms), "limit": limit}).all()
        return [(chunk_id, float(value)) for chunk_id, value in rows]

    def _scored(self, connection: Connection, chunk_ids: Sequence[str], terms: Sequence[str],
                stats: CorpusStats) -> list[tuple[str, float]]:
        """These chunks' BM25 over the whole question, in no particular order."""
        score, counts, parameters = bm25_sql(terms, stats)
        rows = connection.execute(text(f"""
            SELECT t.chunk_id, {score} AS score FROM {CHUNK_TERMS_TABLE} AS t, {counts}
            WHERE t.chunk_id = ANY(:ids)"""), {**parameters, "ids": list(chunk_ids)}).all()
        return [(chunk_id, float(value)) for chunk_id, value in rows]

    def _nearest(self, connection: Connection, query_vector: Sequence[float], scope: Scope,
                 limit: int) -> list[tuple[str, float]]:
        """(chunk id, cosine) of the nearest vectors of the model in the partitions of the visible classes."""
        assert self._embedder is not None
        if scope.keys is not None and not scope.keys:
            return []
        classes, parameters = scope.classes("v")
        dim = len(query_vector)
        distance = f"v.embedding::vector({dim}) <=> CAST(:query AS vector({dim}))"
        connection.execute(text("SELECT set_config('hnsw.ef_search', :ef, true), "
                                "set_config('hnsw.iterative_scan', 'strict_order', true)"), {"ef": str(EF_SEARCH)})
        rows = connection.execute(text(
            f"SELECT v.chunk_id, vector_send(v.embedding) FROM {VECTOR_TABLE} AS v "
            f"WHERE v.dim = {dim} AND v.model = :model{classes} ORDER BY {distance}, v.{BY_CHUNK_ID} LIMIT :limit"),
            {"query": vector_literal(query_vector), "model": self._embedder.model_id, "limit": limit, **parameters}
        ).all()
        if not rows:
            return []
        # pgvector's float32 distance chose the rows; their cosines are SQLite's (`vector_search.cosines`), from the
        # vectors themselves (pgvector's binary form: two 16-bit words, then big-endian float32 values).
        vectors = np.stack([np.frombuffer(raw, dtype=">f4", offset=4) for _, raw in rows]).astype(np.float32)
        exact = cosines(vectors, np.asarray(query_vector, dtype=np.float32)).tolist()
        return sorted(((chunk_id, cosine) for (chunk_id, _), cosine in zip(rows, exact, strict=True)),
                      key=lambda hit: (-hit[1], hit[0]))

    def _passages(self, connection: Connection, chunk_ids: Sequence[str], scope: Scope) -> dict[str, RetrievedChunk]:
        """Chunks by id, each checked against its document's roles in this snapshot."""
        if not chunk_ids:
            return {}
        roles, parameters = scope.roles("c")
        rows = connection.execute(
            text(f"SELECT {_PASSAGE_COLUMNS} FROM chunks AS c JOIN documents AS d ON d.doc_id = c.doc_id "
                 f"WHERE c.chunk_id = ANY(:ids){roles}").columns(**_PASSAGE_TYPES),
            {"ids": list(chunk_ids), **parameters})
        return {row.chunk_id: _retrieved(row, 0.0) for row in rows}


@contextmanager
def snapshot(engine: Engine) -> Iterator[Connection]:
    """A read-only REPEATABLE READ transaction: every statement of a search sees the same database."""
    with engine.connect() as connection, connection.execution_options(
            isolation_level="REPEATABLE READ", postgresql_readonly=True).begin():
        yield connection


def _retrieved(row: Row[Any], score: float) -> RetrievedChunk:
    return retrieved_chunk(row, score)


def _with_score(chunk: RetrievedChunk, score: float) -> RetrievedChunk:
    return RetrievedChunk(passage=chunk.passage, score=score, content_hash=chunk.content_hash,
                          supersedes=chunk.supersedes)
