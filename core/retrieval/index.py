"""The built-in index: SQLite FTS5 BM25 over Snowball stems, filtered by audience before the top-k.

Scores are BM25 normalised by the best score the same query could reach in this corpus, so they lie in 0..1
and a floor means the same thing for every question: for each distinct query term FTS5 adds at most
idf(t) * (k1 + 1) (a term occurring very often in a short chunk), and the sum of those is the ceiling.

Stemming happens in Python (`core.text`) on both sides, so the terms of a query are exactly the tokens
stored in the index, and the document frequency of each can be read from the vocabulary table.

Speed. FTS5 computes `bm25()` for every row that matches any query term, a few microseconds each; at 100k
chunks a question with a few common words matches tens of thousands of rows. So when the query's postings
exceed a budget, the rarest terms within the budget select and pre-rank the candidates (still filtered
by audience, in SQL, before the top-k), and the candidates are then scored in Python with exactly FTS5's
BM25 over the whole query. Scores mean the same at every corpus size; only which rows are considered is
bounded. Below the budget (every corpus of a few thousand chunks) the result is FTS5's own ranking.
"""

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import JSON, Connection, Date, Engine, Row, TextualSelect, bindparam, text

from core import text as analysis
from core.domain import Audience, Passage, RetrievedChunk, is_visible
from core.storage.database import supports_full_text

K1: Final = 1.2
B: Final = 0.75
"""FTS5's BM25 constants: term-frequency saturation and length normalisation."""
IDF_FLOOR: Final = 1e-6
"""FTS5 replaces a non-positive idf (a term in more than half the rows) by this."""
POSTING_BUDGET: Final = 1000
"""Matching rows FTS5 may score per question before candidates are selected by the rarest terms only."""
CANDIDATES_PER_RESULT: Final = 3
MIN_CANDIDATES: Final = 24

_TOKEN: Final = re.compile(r"[a-z0-9]+")
_AVERAGES_RECORD: Final = 1
"""Row of `chunks_fts_data` holding FTS5's totals: a varint row count, then one token total per column.
Read instead of count(*), which would scan."""
_STRUCTURE_RECORD: Final = 10
"""Row of `chunks_fts_data` listing the index segments; it changes with every write to the index."""


class IndexUnavailable(RuntimeError):
    """The database cannot hold the built-in index (it is not SQLite)."""


def index_body(heading: str, chunk_text: str) -> str:
    """What the FTS `body` column stores for a chunk: the stems of its heading path and its text."""
    return " ".join(analysis.stems(heading + "\n" + chunk_text))


def query_terms(query: str) -> tuple[str, ...]:
    """The distinct index tokens of a question's content words, in order of appearance.

    A stem such as `follow-up` is two tokens to FTS5's tokenizer; splitting it here keeps every term a
    single token whose document count the vocabulary table knows.
    """
    tokens = (token for stem in analysis.content_stems(query) for token in _TOKEN.findall(stem))
    return tuple(dict.fromkeys(tokens))


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of the terms; each is quoted, so no term is read as an operator."""
    return " OR ".join(f'"{term}"' for term in terms)


def idf(rows: int, rows_with_term: int) -> float:
    """FTS5's idf, floor included, so the ceiling matches what `bm25()` can actually return."""
    value = math.log((rows - rows_with_term + 0.5) / (rows_with_term + 0.5))
    return value if value > 0.0 else IDF_FLOOR


@dataclass(frozen=True, kw_only=True)
class CorpusStats:
    """What BM25 needs to know about the corpus for one query, as FTS5 itself counts it."""

    rows: int
    tokens: int
    document_frequency: Mapping[str, int]

    @property
    def average_length(self) -> float:
        return self.tokens / self.rows if self.rows and self.tokens else 1.0

    def idf(self, term: str) -> float:
        return idf(self.rows, self.document_frequency.get(term, 0))

    def ceiling(self, terms: Sequence[str]) -> float:
        """The largest BM25 the query could score here: a term absent from the corpus still counts, so a
        question whose key words the knowledge base lacks scores low."""
        return sum(self.idf(term) * (K1 + 1.0) for term in terms)

    def bm25(self, tokens: Sequence[str], terms: Sequence[str]) -> float:
        """FTS5's BM25 of one row (its index tokens) for the query terms, positive."""
        wanted = set(terms)
        counts = Counter(token for token in tokens if token in wanted)
        norm = K1 * (1.0 - B + B * len(tokens) / self.average_length)
        return sum(self.idf(term) * n * (K1 + 1.0) / (n + norm) for term, n in counts.items())


_CANDIDATES: Final = """
SELECT f.rowid AS fts_rowid, -bm25(chunks_fts) AS score
FROM chunks_fts AS f JOIN chunks AS c ON c.fts_rowid = f.rowid
WHERE chunks_fts MATCH :match {audience}
ORDER BY bm25(chunks_fts), f.rowid
LIMIT :limit
"""
# The unary `+` keeps SQLite from probing the covering index once per permitted document for every match;
# it reads doc_id from the (fts_rowid, doc_id) index entry it already found.
_PARTY_FILTER: Final = "AND +c.doc_id IN (SELECT doc_id FROM document_roles WHERE role IN :roles_{n})"
_PASSAGES: Final = text("""
SELECT c.fts_rowid, c.chunk_id, c.heading, c.text, c.content_hash,
       d.doc_id, d.title, d.owner, d.updated, d.url, d.supersedes
FROM chunks AS c JOIN documents AS d ON d.doc_id = c.doc_id
WHERE c.fts_rowid IN :rowids
""").bindparams(bindparam("rowids", expanding=True)).columns(updated=Date(), supersedes=JSON())
_PASSAGE_BY_ID: Final = text("""
SELECT c.chunk_id, c.heading, c.text, c.content_hash, d.doc_id, d.title, d.owner, d.updated, d.url, d.supersedes
FROM chunks AS c JOIN documents AS d ON d.doc_id = c.doc_id
WHERE c.chunk_id = :chunk_id
""").columns(updated=Date(), supersedes=JSON())
_DOCUMENT_ROLES: Final = text("SELECT role FROM document_roles WHERE doc_id = :doc_id")
_BODIES: Final = text("SELECT rowid, body FROM chunks_fts WHERE rowid IN :rowids").bindparams(
    bindparam("rowids", expanding=True))
_RECORDS: Final = text("SELECT id, block FROM chunks_fts_data WHERE id IN (:averages, :structure)").bindparams(
    averages=_AVERAGES_RECORD, structure=_STRUCTURE_RECORD)
_FREQUENCIES: Final = text("SELECT term, doc FROM chunks_fts_vocab WHERE term IN :terms").bindparams(
    bindparam("terms", expanding=True))


class SqliteIndex:
    """The `Index` port over the `chunks_fts` table that `core.retrieval.ingest` keeps in sync."""

    def __init__(self, engine: Engine, *, posting_budget: int = POSTING_BUDGET) -> None:
        if not supports_full_text(engine.dialect.name):
            raise IndexUnavailable(
                f"the built-in index needs SQLite FTS5; this database is {engine.dialect.name!r}. "
                "Documents and chunks are stored there, but searching them needs a SQLite database."
            )
        self._engine = engine
        self._posting_budget = posting_budget
        self._statements: dict[int, TextualSelect] = {}
        self._stats = _StatsCache()

    def search(self, query: str, *, audience: Audience, limit: int) -> list[RetrievedChunk]:
        """The best chunks the audience may see: every party must be allowed, checked before the top-k."""
        return self._search(query, role_sets=audience.role_sets(), limit=limit)

    def best_unscoped_score(self, query: str) -> float:
        """The best score over all documents, whoever may see them; for the audit's refusal kind only."""
        best = self._search(query, role_sets=None, limit=1)
        return best[0].score if best else 0.0

    def passage(self, chunk_id: str, *, audience: Audience) -> Passage | None:
        """A cited chunk shown on demand: looked up by id, then refused unless every party may see it."""
        with self._engine.connect() as connection:
            row = connection.execute(_PASSAGE_BY_ID, {"chunk_id": chunk_id}).first()
            if row is None:
                return None
            roles = frozenset(connection.execute(_DOCUMENT_ROLES, {"doc_id": row.doc_id}).scalars())
        if not is_visible(roles, audience):
            return None
        return _retrieved(row, 0.0).passage

    def chunk_count(self) -> int:
        with self._engine.connect() as connection:
            return int(connection.execute(text("SELECT count(*) FROM chunks")).scalar_one())

    def document_count(self) -> int:
        with self._engine.connect() as connection:
            return int(connection.execute(text("SELECT count(*) FROM documents")).scalar_one())

    def _search(self, query: str, *, role_sets: Sequence[frozenset[str]] | None,
                limit: int) -> list[RetrievedChunk]:
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        with self._engine.connect() as connection:
            stats = self._stats.stats(connection, terms)
            ranked = self._ranked(connection, terms, stats, role_sets or (), limit)
            passages = _passages(connection, [rowid for rowid, _ in ranked])
        ceiling = stats.ceiling(terms)
        return [_retrieved(passages[rowid], raw / ceiling) for rowid, raw in ranked if rowid in passages]

    def _ranked(self, connection: Connection, terms: Sequence[str], stats: CorpusStats,
                role_sets: Sequence[frozenset[str]], limit: int) -> list[tuple[int, float]]:
        """The top `limit` (row, BM25) pairs. Over the budget, candidates come from the rarest terms; if
        they yield too few for this audience, the audience must see little, and then its filter is what
        keeps the full query cheap (FTS5 scores only the rows that pass it)."""
        selective, rest = split_by_postings(terms, stats, self._posting_budget)
        if rest:
            wanted = max(limit * CANDIDATES_PER_RESULT, MIN_CANDIDATES)
            ranked = self._candidates(connection, selective, role_sets, wanted)
            if len(ranked) >= wanted:
                return _rescored(connection, ranked, terms, stats)[:limit]
        present = selective + rest
        return self._candidates(connection, present, role_sets, limit) if present else []

    def _candidates(self, connection: Connection, terms: Sequence[str], role_sets: Sequence[frozenset[str]],
                    limit: int) -> list[tuple[int, float]]:
        params: dict[str, Any] = {"match": match_expression(terms), "limit": limit}
        params.update({f"roles_{n}": sorted(roles) for n, roles in enumerate(role_sets)})
        rows = connection.execute(self._statement(len(role_sets)), params).all()
        return [(int(rowid), float(score)) for rowid, score in rows]

    def _statement(self, parties: int) -> TextualSelect:
        """The candidate statement for an audience of `parties` parties, built once per party count."""
        if parties not in self._statements:
            audience = " ".join(_PARTY_FILTER.format(n=n) for n in range(parties))
            statement = text(_CANDIDATES.format(audience=audience)).bindparams(
                *(bindparam(f"roles_{n}", expanding=True) for n in range(parties))
            )
            self._statements[parties] = statement.columns()
        return self._statements[parties]


class _StatsCache:
    """Document frequencies per index generation. Counting a common term walks its whole posting list,
    so counts are kept until the index changes; FTS5 rewrites its structure record on every write, so
    that record (with the totals) identifies a generation.

    Threads share one cache: the generation and its counts are swapped together, and each call works on
    the counts of the generation its own snapshot read, so a count is never used with the wrong totals.
    """

    def __init__(self) -> None:
        self._current: tuple[bytes, dict[str, int]] = (b"", {})

    def stats(self, connection: Connection, terms: Sequence[str]) -> CorpusStats:
        records: dict[int, bytes | None] = dict(connection.execute(_RECORDS).all())
        averages = bytes(records.get(_AVERAGES_RECORD) or b"")
        generation = averages + bytes(records.get(_STRUCTURE_RECORD) or b"")
        seen, frequencies = self._current
        if generation != seen:
            frequencies = {}
            self._current = (generation, frequencies)
        missing = [term for term in terms if term not in frequencies]
        if missing:
            found: dict[str, int] = dict(connection.execute(_FREQUENCIES, {"terms": missing}).all())
            frequencies.update({term: int(found.get(term, 0)) for term in missing})
        totals = _varints(averages) or [0]
        return CorpusStats(rows=totals[0], tokens=sum(totals[1:]),
                           document_frequency={term: frequencies[term] for term in terms})


def split_by_postings(terms: Sequence[str], stats: CorpusStats,
                      budget: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The rarest terms whose postings fit the budget (at least one), and the other terms that occur.

    Terms in no row are left out of both: they match nothing, though they still lower the score.
    """
    present = sorted((t for t in terms if stats.document_frequency.get(t, 0) > 0),
                     key=lambda t: (stats.document_frequency[t], t))
    selective: list[str] = []
    postings = 0
    for term in present:
        postings += stats.document_frequency[term]
        if selective and postings > budget:
            break
        selective.append(term)
    return tuple(selective), tuple(present[len(selective):])


def _rescored(connection: Connection, ranked: list[tuple[int, float]], terms: Sequence[str],
              stats: CorpusStats) -> list[tuple[int, float]]:
    """Candidates scored by BM25 over the whole query, best first, ties in row order as FTS5 sorts."""
    if not ranked:
        return []
    bodies = connection.execute(_BODIES, {"rowids": [rowid for rowid, _ in ranked]}).all()
    scored = [(int(rowid), stats.bm25(_TOKEN.findall(body), terms)) for rowid, body in bodies]
    return sorted(scored, key=lambda item: (-item[1], item[0]))


def _passages(connection: Connection, rowids: list[int]) -> dict[int, Row[Any]]:
    if not rowids:
        return {}
    return {int(row.fts_rowid): row for row in connection.execute(_PASSAGES, {"rowids": rowids})}


def _retrieved(row: Row[Any], score: float) -> RetrievedChunk:
    passage = Passage(chunk_id=row.chunk_id, doc_id=row.doc_id, title=row.title, heading=row.heading,
                      text=row.text, owner=row.owner, updated=row.updated, url=row.url)
    return RetrievedChunk(passage=passage, score=min(1.0, max(0.0, score)), content_hash=row.content_hash,
                          supersedes=tuple(row.supersedes or ()))


def _varints(data: bytes) -> list[int]:
    """SQLite's varints (big-endian, 7 bits a byte, the ninth byte whole), as FTS5 writes its records."""
    values: list[int] = []
    position = 0
    while position < len(data):
        value = 0
        for index in range(9):
            byte = data[position]
            position += 1
            if index == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values
