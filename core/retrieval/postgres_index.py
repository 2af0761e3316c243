"""The index on PostgreSQL: full text with a weighted tsvector, vectors with pgvector, fused as on SQLite.

Full text. Every chunk has `search_vector` (`core.storage.postgres`): PostgreSQL's English stems of its heading
path (weight A) and its text (weight B). A question's content words (`core.text`, the same stopwords as on SQLite)
are stemmed by the same configuration and matched with OR, and matching chunks are ranked by `ts_rank`.

What a score depends on. `ts_rank` of an OR query is computed from the chunk and the question alone: for each
query term, how often and where (heading or text) the chunk has it, averaged over the query's terms (a term the
chunk lacks counts as zero). No corpus statistic enters it: no document frequency, no average length, no count of
rows. So a chunk's score is the same whoever asks and whatever else is stored, and the ranking of the chunks an
audience may see is never moved by one it may not see; the audience filter is part of the query, applied before
the top-k. The score lies in 0..1 by construction (a term contributes at most 1/terms: a heading word repeated
without end), and `lexical_score` maps it onto the scale of SQLite's normalised BM25 so that the floors of the
retrieval policy mean the same on both (the factor is fitted by `benchmarks/pg_calibration.py`).

Vectors. The question is embedded while the full-text query runs; the nearest chunks come from the partitions of
`chunk_vectors` whose audience class the audience may see (`core.storage.postgres`: each partition has its own
HNSW graph, so hidden vectors are neither returned nor walked through), in cosine order, with pgvector's iterative
scan so that rows of another model filtered out after the graph walk do not shorten the list. The two lists are
fused as on SQLite (`core.retrieval.hybrid.fuse`).

One snapshot. A search runs in one read-only REPEATABLE READ transaction: the audience's classes, the term
counts, the full-text hits, the nearest vectors and the passages all come from the same state of the database,
so a document being re-ingested is seen whole, old or new, never a mixture. It takes five round trips (four
without an embedder): the classes and counts, the ranking, the vector settings, the nearest vectors, the end.
"""

import logging
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import JSON, Connection, Date, Engine, Row, text
from sqlalchemy.types import TypeEngine

from core import text as analysis
from core.application.ports import Embedder
from core.domain import Audience, Passage, RetrievedChunk
from core.retrieval.embeddings import as_matrix
from core.retrieval.hybrid import CANDIDATES, EMBEDDING_THREADS, cosine_score, fuse
from core.retrieval.index import IndexUnavailable, retrieved_chunk
from core.storage.postgres import AUDIENCE_TABLE, TERM_TABLE, VECTOR_TABLE, vector_literal
from core.storage.tables import ChunkRow, DocumentRow, count_rows

log = logging.getLogger(__name__)

RANK_WEIGHTS: Final = "{0.1, 0.2, 0.4, 0.5}"
"""`ts_rank`'s weights of the D, C, B and A labels: a word of the text (B) 0.4, of the heading path (A) 0.5. On
SQLite the heading is indexed as text; PostgreSQL's default A = 1.0 made a heading word outrank everything (top
section the same as SQLite's for 54% of the questions of dev and dev2, 68% at 0.5; `benchmarks/pg_calibration.py`)."""
RANK_NORMALIZATION: Final = 0
"""No length normalisation: the rank is the share of the query's terms the chunk has, weighted by where and how
often. Dividing by 1 + log(length) (1) ranked no closer to SQLite's BM25 on dev and dev2."""
LEXICAL_SCALE: Final = 1.3
"""`ts_rank` times this, capped at 1, is the lexical score: fitted so that the most questions of dev and dev2 fall
on the same side of every floor as with SQLite's BM25 (92% of question-floor pairs; `benchmarks/pg_calibration.py`)."""
RANKING_BUDGET: Final = 1000
"""Chunks ranked per question at most, but for the rare case below (see `PostgresIndex._candidates_for`)."""
EF_SEARCH: Final = 64
"""HNSW candidates kept while walking the graph: above the fusion's 30, with room for recall."""

BY_CHUNK_ID: Final = 'c.chunk_id COLLATE "C"'
"""Equal ranks are ordered by chunk id in code point order, as on SQLite (binary collation) and in the fusion,
whatever the database's collation: which of two tied chunks is shown never depends on the database."""
CAPPED: Final = f" ORDER BY {BY_CHUNK_ID} LIMIT :budget"
_PASSAGE_COLUMNS: Final = ("c.chunk_id, c.heading, c.text, c.content_hash, c.links, c.page, c.anchor, "
                           "d.doc_id, d.title, d.owner, d.updated, d.url, d.supersedes, d.format")
_PASSAGE_TYPES: Final[dict[str, TypeEngine[Any]]] = {"updated": Date(), "supersedes": JSON(), "links": JSON()}


def lexical_score(rank: float) -> float:
    """`ts_rank` on the 0..1 scale of SQLite's normalised BM25."""
    return min(1.0, max(0.0, rank * LEXICAL_SCALE))


def any_of(terms: Sequence[str]) -> str:
    """A tsquery matching chunks with any of the lexemes: each quoted, so none is read as an operator."""
    return " | ".join(_quoted(term) for term in terms)


def all_of(terms: Sequence[str]) -> str:
    return " & ".join(_quoted(term) for term in terms)


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def search_words(question: str) -> str:
    """The question's content words, for PostgreSQL to stem: the stopwords of `core.text` removed, as on SQLite
    (its list is longer than PostgreSQL's, with words such as 'need' and 'tell')."""
    return " ".join(word for word in analysis.words(question) if word and word not in analysis.STOPWORDS)


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
        """SQL selecting the keys of the classes every party may see: `core.domain.is_visible` over the roles
        of each class (some role of every party among them)."""
        if self.role_sets is None:
            return f"SELECT audience_key FROM {AUDIENCE_TABLE}", {}
        overlaps = " AND ".join(f"roles && CAST(:party_{n} AS text[])" for n in range(len(self.role_sets)))
        return f"SELECT audience_key FROM {AUDIENCE_TABLE} WHERE {overlaps}", self._parties()

    def _parties(self) -> dict[str, Any]:
        assert self.role_sets is not None
        return {f"party_{n}": sorted(roles) for n, roles in enumerate(self.role_sets)}


@dataclass(frozen=True, kw_only=True)
class Terms:
    """The question's lexemes (PostgreSQL's English stems of its content words, each once) and how many chunks
    of the visible classes have each."""

    counts: dict[str, int]

    @property
    def lexemes(self) -> tuple[str, ...]:
        return tuple(self.counts)


class PostgresIndex:
    """The `Index` port on PostgreSQL: full text alone, or fused with pgvector when there is an embedder."""

    def __init__(self, engine: Engine, embedder: Embedder | None = None, *, candidates: int = CANDIDATES,
                 budget: int = RANKING_BUDGET) -> None:
        if engine.dialect.name != "postgresql":
            raise IndexUnavailable(f"the PostgreSQL index needs PostgreSQL; this database is {engine.dialect.name!r}")
        self._engine = engine
        self._embedder = embedder
        self._candidates = candidates
        self._budget = budget
        self._embedding_pool = (ThreadPoolExecutor(max_workers=EMBEDDING_THREADS, thread_name_prefix="embed-question")
                                if embedder is not None else None)

    def search(self, query: str, *, audience: Audience, limit: int) -> list[RetrievedChunk]:
        """The best chunks the audience may see, best first, scores in 0..1; filtered before the top-k."""
        words = search_words(query)
        if limit <= 0 or not words:
            return []
        wanted = max(limit, self._candidates) if self._embedder is not None else limit
        embedding = self._embed(query)
        with snapshot(self._engine) as connection:
            scope, terms = self._scope_and_terms(connection, words, Scope(role_sets=audience.role_sets()))
            lexical = self._lexical(connection, terms, scope, wanted)
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
        words = search_words(query)
        if not words:
            return 0.0
        embedding = self._embed(query)
        with snapshot(self._engine) as connection:
            scope, terms = self._scope_and_terms(connection, words, Scope())
            lexical = self._lexical(connection, terms, scope, 1)
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

    def _scope_and_terms(self, connection: Connection, words: str, requested: Scope) -> tuple[Scope, Terms]:
        """In one statement: the keys of the classes the audience may see, the question's lexemes, and how many
        chunks of those classes have each lexeme."""
        classes, parameters = requested.visible_classes()
        rows = connection.execute(text(f"""
            WITH visible AS ({classes}),
            lexemes AS (SELECT DISTINCT lexeme FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig,
                                                                                         :words))) AS lexeme)
            SELECT (SELECT coalesce(array_agg(audience_key), '{{}}') FROM visible) AS keys, l.lexeme,
                   (SELECT coalesce(sum(k.chunks), 0) FROM {TERM_TABLE} AS k
                    WHERE k.lexeme = l.lexeme AND k.audience_key IN (SELECT audience_key FROM visible)) AS chunks
            FROM (SELECT NULL) AS one LEFT JOIN lexemes AS l ON true"""), {"words": words, **parameters}).all()
        keys = tuple(rows[0].keys) if requested.role_sets is not None else None
        counts = {row.lexeme: int(row.chunks) for row in rows if row.lexeme is not None}
        return Scope(keys=keys, role_sets=requested.role_sets), Terms(counts=counts)

    def _lexical(self, connection: Connection, terms: Terms, scope: Scope, limit: int) -> list[RetrievedChunk]:
        """The top `limit` chunks by `ts_rank` over the whole question, among the candidates `_candidates_for`
        picks; the few returned are checked against their documents' roles as well."""
        if not terms.lexemes:
            return []
        selections = self._candidates_for(connection, terms, scope, limit)
        classes, class_parameters = scope.classes("c")
        roles, role_parameters = scope.roles("c")
        candidates = " UNION ".join(
            f"(SELECT c.chunk_id FROM chunks AS c WHERE c.search_vector @@ CAST(:selection_{n} AS tsquery){classes}"
            f"{CAPPED if selection.capped else ''})"
            for n, selection in enumerate(selections))
        statement = text(f"""
            WITH candidate AS ({candidates}),
            ranked AS (
                SELECT c.chunk_id, ts_rank('{RANK_WEIGHTS}', c.search_vector, CAST(:query AS tsquery),
                                           {RANK_NORMALIZATION}) AS rank
                FROM candidate JOIN chunks AS c ON c.chunk_id = candidate.chunk_id
                ORDER BY rank DESC, {BY_CHUNK_ID} LIMIT :limit)
            SELECT ranked.rank, {_PASSAGE_COLUMNS}
            FROM ranked JOIN chunks AS c ON c.chunk_id = ranked.chunk_id JOIN documents AS d ON d.doc_id = c.doc_id
            WHERE true{roles}
            ORDER BY ranked.rank DESC, {BY_CHUNK_ID}""").columns(**_PASSAGE_TYPES)
        rows = connection.execute(statement, {
            **{f"selection_{n}": selection.query for n, selection in enumerate(selections)},
            "query": any_of(terms.lexemes), "limit": limit, "budget": self._budget, **class_parameters,
            **role_parameters})
        return [_retrieved(row, lexical_score(row.rank)) for row in rows]

    def _candidates_for(self, connection: Connection, terms: Terms, scope: Scope,
                        limit: int) -> list["_Selection"]:
        """Which chunks are ranked: those any of these selections match.

        Every count here is of chunks the audience may see (a term's from `class_terms`, summed over the visible
        classes; a conjunction's counted, up to one past the budget), so what is ranked never depends on a chunk
        the audience may not see. When the question's terms match no more than the budget together, every chunk
        matching any of them is ranked: the exact top-k, which is what every knowledge base of a few thousand
        chunks gets. Otherwise the rarest terms (for this audience) that fit the budget select the candidates, as
        the rare words are what a question is about; if even the rarest is too common, the chunks having the
        rarest terms together (as few of them as bring the count within the budget), and should those be fewer
        than `limit`, also the first `budget` chunks, by id, having one term fewer together.
        """
        counts = terms.counts
        present = sorted((term for term in counts if counts[term]), key=lambda term: (counts[term], term))
        if sum(counts.values()) <= self._budget:
            return [_Selection(query=any_of(present or terms.lexemes))]
        selective: list[str] = []
        for term in present:
            if sum(counts[chosen] for chosen in selective) + counts[term] > self._budget:
                break
            selective.append(term)
        if selective:
            return [_Selection(query=any_of(selective))]
        together, count, broader = present[:1], counts[present[0]], None
        for term in present[1:]:
            if count <= self._budget:
                break
            broader = _Selection(query=all_of(together), capped=True)
            together.append(term)
            count = self._visible_matches(connection, all_of(together), scope)
        selections = [_Selection(query=all_of(together), capped=count > self._budget)]
        return [*selections, broader] if broader is not None and count < limit else selections

    def _visible_matches(self, connection: Connection, selection: str, scope: Scope) -> int:
        """How many chunks of the visible classes match the tsquery, counted up to one past the budget."""
        classes, parameters = scope.classes("c")
        return int(connection.execute(text(
            f"SELECT count(*) FROM (SELECT 1 FROM chunks AS c WHERE c.search_vector @@ CAST(:selection AS tsquery)"
            f"{classes} LIMIT :cap) AS hit"), {"selection": selection, "cap": self._budget + 1, **parameters}
        ).scalar_one())

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
            f"SELECT v.chunk_id, {distance} AS distance FROM {VECTOR_TABLE} AS v "
            f"WHERE v.dim = {dim} AND v.model = :model{classes} ORDER BY {distance} LIMIT :limit"),
            {"query": vector_literal(query_vector), "model": self._embedder.model_id, "limit": limit, **parameters})
        return [(chunk_id, 1.0 - float(distance)) for chunk_id, distance in rows]

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


@dataclass(frozen=True, kw_only=True)
class _Selection:
    """A tsquery choosing chunks to rank; `capped`: only the first `budget` of them by chunk id."""

    query: str
    capped: bool = False


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
