"""The built-in index: SQLite FTS5 BM25 over Snowball stems, filtered by audience before the top-k.

Scores are BM25 normalised by the best score the same query could reach in this corpus, so they lie in 0..1
and a floor means the same thing for every question: for each distinct query term FTS5 adds at most
idf(t) * (k1 + 1) (a term occurring very often in a short chunk), and the sum of those is the ceiling. The
score, the terms and the bound on which rows are ranked are `core.retrieval.bm25`'s, which PostgreSQL's index
computes too: the same question over the same documents scores the same on both.

Whose corpus. Every statistic of a search (the row count and average row length, each term's document count,
so the idf, the length normalisation, the ceiling and which terms are rare enough to select candidates) is
counted over the rows the search's audience may see, never over all rows: the scores, and so the reply, are
what FTS5 would compute on a knowledge base holding only the documents the audience may see, and a document
it may not see changes nothing it is told, not even by its words' frequencies (issue 13). The audit's unscoped
probe counts every row.

Stemming happens in Python (`core.text`) on both sides, so the terms of a query are exactly the tokens
stored in the index, and the document frequency of each can be read from the index itself.

Which rows are ranked. When the query's postings exceed a budget, the rarest terms within the budget select
and pre-rank the candidates (filtered by audience before the top-k), and the candidates are then scored with
exactly FTS5's BM25 over the whole query; if the audience sees too few of them, the whole query ranks every
row it may see. Below the budget (every corpus of a few thousand chunks) the result is plain BM25 over the
whole query. Scores mean the same at every corpus size; only which rows are considered is bounded.

Speed. FTS5 stores the index and keeps it current as documents are ingested, but it is not what scores:
`bm25()` costs a few microseconds for every matching row (it reads each row's length from a B-tree), and so
does the join that applies the audience, so at 100k chunks a question with a few common words took tens of
milliseconds (up to 100 when a rare term's few rows sent the whole query to FTS5). Instead, each generation
of the FTS5 index (it rewrites its structure record on every write) is read once into NumPy arrays: per term
its rows and in-row frequencies (from an `fts5vocab` instance table), per row its length (FTS5's own
`docsize` record) and its document, per document its audience. A query then computes FTS5's BM25 with
FTS5's own arithmetic, the same operations in the same order on IEEE doubles (so the same numbers), masks
out the rows the audience may not see, and takes the top-k. Equal scores are ordered by chunk id (code point
order, SQLite's binary collation), as on PostgreSQL (`COLLATE "C"`) and in the fusion: which of two tied chunks
is shown, or falls past the top-k, never depends on the database or on the order the chunks were ingested in.
Reading a generation takes under two seconds per 100k chunks, paid by the first question after an ingest; the
arrays keep about 6 bytes per (term, row) pair (30 MB at 100k chunks), and reading them briefly takes about
three times that. An audience's view of a generation (its row mask, row
count and token total) is computed on its first question, a few milliseconds at 100k chunks, and kept for the
generation; a term's document count among the rows an audience may see is one pass over its postings.
"""

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from sqlalchemy import JSON, Connection, Date, Engine, Row, bindparam, text

from core import text as analysis
from core.domain import Audience, Link, Passage, RetrievedChunk, is_visible
from core.domain.errors import OperatorError
from core.retrieval.bm25 import (
    CANDIDATES_PER_RESULT,
    MIN_CANDIDATES,
    POSTING_BUDGET,
    CorpusStats,
    normalised,
    query_terms,
    split_by_postings,
    term_weight,
)
from core.storage.database import supports_full_text
from core.storage.tables import ChunkRow, DocumentRow, count_rows

AUDIENCE_VIEWS: Final = 64
"""Audiences whose views (row mask and totals) are kept per index generation."""

_AVERAGES_RECORD: Final = 1
"""Row of `chunks_fts_data` holding FTS5's totals: a varint row count, then one token total per column.
Read instead of count(*), which would scan."""
_STRUCTURE_RECORD: Final = 10
"""Row of `chunks_fts_data` listing the index segments; it changes with every write to the index."""

Floats = npt.NDArray[np.float64]
Positions = npt.NDArray[np.int64]
Frequencies = npt.NDArray[Any]
"""Occurrences of a term in a row: uint16, or uint32 should a term occur more often in one row."""


class IndexUnavailable(OperatorError, RuntimeError):
    """The database cannot hold the built-in index (it is not SQLite)."""


def index_body(heading: str, chunk_text: str) -> str:
    """What the FTS `body` column stores for a chunk: the stems of its heading path and its text. FTS5's tokenizer
    splits them into the terms `core.text.index_tokens` gives, which PostgreSQL stores."""
    return " ".join(analysis.chunk_stems(heading, chunk_text))


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of the terms; each is quoted, so no term is read as an operator."""
    return " OR ".join(f'"{term}"' for term in terms)


_PASSAGES: Final = text("""
SELECT c.fts_rowid, c.chunk_id, c.heading, c.text, c.content_hash, c.links, c.page, c.anchor,
       d.doc_id, d.title, d.owner, d.updated, d.url, d.supersedes, d.format,
       (SELECT json_group_array(r.role) FROM document_roles AS r WHERE r.doc_id = d.doc_id) AS roles
FROM chunks AS c JOIN documents AS d ON d.doc_id = c.doc_id
WHERE c.fts_rowid IN :rowids
""").bindparams(bindparam("rowids", expanding=True)).columns(updated=Date(), supersedes=JSON(), roles=JSON(),
                                                            links=JSON())
_PASSAGE_BY_ID: Final = text("""
SELECT c.chunk_id, c.heading, c.text, c.content_hash, c.links, c.page, c.anchor, d.doc_id, d.title, d.owner,
       d.updated, d.url, d.supersedes, d.format
FROM chunks AS c JOIN documents AS d ON d.doc_id = c.doc_id
WHERE c.chunk_id = :chunk_id
""").columns(updated=Date(), supersedes=JSON(), links=JSON())
_DOCUMENT_ROLES: Final = text("SELECT role FROM document_roles WHERE doc_id = :doc_id")
_BODIES: Final = text("SELECT rowid, body FROM chunks_fts WHERE rowid IN :rowids").bindparams(
    bindparam("rowids", expanding=True))
_RECORDS: Final = text("SELECT id, block FROM chunks_fts_data WHERE id IN (:averages, :structure)").bindparams(
    averages=_AVERAGES_RECORD, structure=_STRUCTURE_RECORD)
_INSTANCE_VOCAB: Final = text(
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_fts_instance USING fts5vocab(main, chunks_fts, instance)")
"""One row per occurrence of a term, in term then row order. In the connection's temporary schema: it is
read only while a generation is loaded, and needs no migration."""
_POSTINGS: Final = text("SELECT term, group_concat(doc) FROM temp.chunks_fts_instance GROUP BY term")
_ROW_SIZES: Final = text("SELECT group_concat(id), group_concat(length(sz)), group_concat(hex(sz), '') "
                         "FROM (SELECT id, sz FROM chunks_fts_docsize ORDER BY id)")
_ROW_DOCUMENTS: Final = text(
    "SELECT doc_id, group_concat(fts_rowid) FROM chunks WHERE fts_rowid IS NOT NULL GROUP BY doc_id")
_ROWS_BY_CHUNK_ID: Final = text(
    "SELECT group_concat(fts_rowid) FROM (SELECT fts_rowid FROM chunks WHERE fts_rowid IS NOT NULL "
    "ORDER BY chunk_id COLLATE BINARY)")
"""The index's rows in the order of their chunks' ids: how equal scores are ordered."""
_ALL_ROLES: Final = text("SELECT doc_id, role FROM document_roles")


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
        self._generation: _Generation | None = None
        self._loading = threading.Lock()

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
        return retrieved_chunk(row, 0.0).passage

    def chunk_count(self) -> int:
        return count_rows(self._engine, ChunkRow)

    def document_count(self) -> int:
        return count_rows(self._engine, DocumentRow)

    def _search(self, query: str, *, role_sets: Sequence[frozenset[str]] | None,
                limit: int) -> list[RetrievedChunk]:
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        with self._engine.connect() as connection:  # one read transaction: one snapshot throughout
            generation = self._current(connection)
            view = generation.view(role_sets)
            stats = generation.stats(terms, view)
            ranked = self._ranked(connection, generation, view, terms, stats, limit=limit)
            passages = _passages(connection, [rowid for rowid, _ in ranked], role_sets)
        ceiling = stats.ceiling(terms)
        return [retrieved_chunk(passages[rowid], normalised(raw, ceiling)) for rowid, raw in ranked
                if rowid in passages]

    def _ranked(self, connection: Connection, generation: "_Generation", view: "_AudienceView",
                terms: Sequence[str], stats: CorpusStats, *, limit: int) -> list[tuple[int, float]]:
        """The top `limit` (row, BM25) pairs. Over the budget, candidates come from the rarest terms (rarest
        among the rows the audience may see); if they yield too few, the whole query ranks every row it may see."""
        selective, rest = split_by_postings(terms, stats, self._posting_budget)
        if rest:
            wanted = max(limit * CANDIDATES_PER_RESULT, MIN_CANDIDATES)
            ranked = generation.top(selective, view, stats, wanted)
            if len(ranked) >= wanted:
                return generation.ordered(_rescored(connection, ranked, terms, stats))[:limit]
        present = selective + rest
        return generation.top(present, view, stats, limit) if present else []

    def _current(self, connection: Connection) -> "_Generation":
        """The index as this connection's snapshot sees it, read into memory once per generation."""
        records: dict[int, bytes | None] = dict(connection.execute(_RECORDS).all())
        averages = bytes(records.get(_AVERAGES_RECORD) or b"")
        key = averages + bytes(records.get(_STRUCTURE_RECORD) or b"")
        current = self._generation
        if current is not None and current.key == key:
            return current
        with self._loading:  # one thread loads; the others wait for it rather than load the same again
            current = self._generation
            if current is None or current.key != key:
                totals = _varints(averages) or [0]
                current = _Generation.load(connection, key=key, tokens=sum(totals[1:]))
                self._generation = current
        return current


class _Generation:
    """One generation of the full-text index in memory, as the arrays a BM25 query needs.

    Rows are numbered by position, in row-id order; `ties` gives each position its chunk's rank in chunk-id order,
    which orders equal scores. Postings are grouped by term (`spans`), each group in row order: its rows
    (`positions`) and how often the term occurs in each (`frequencies`).
    """

    def __init__(self, *, key: bytes, spans: dict[str, tuple[int, int]],
                 positions: npt.NDArray[np.int32], frequencies: Frequencies,
                 rowids: Positions, lengths: Floats, documents: npt.NDArray[np.int32],
                 audiences: Sequence[frozenset[str]], ties: Positions) -> None:
        self.key = key
        self._ties = ties
        self._spans = spans
        self._positions = positions
        self._frequencies = frequencies
        self._rowids = rowids
        self._lengths = lengths
        self._documents = documents
        self._audiences = tuple(audiences)
        self._views: OrderedDict[tuple[frozenset[str], ...] | None, _AudienceView] = OrderedDict()
        self._views_lock = threading.Lock()

    @classmethod
    def load(cls, connection: Connection, *, key: bytes, tokens: int) -> "_Generation":
        """Read the index in this connection's snapshot (`tokens`, the whole index's, sizes the postings).
        Lists come as `group_concat` text, parsed by NumPy, so no Python object is made per row or posting."""
        rowids, lengths = _row_sizes(connection)
        doc_ids, documents = _row_documents(connection, rowids)
        roles: dict[str, set[str]] = {}
        for doc_id, role in connection.execute(_ALL_ROLES):
            roles.setdefault(doc_id, set()).add(role)
        connection.execute(_INSTANCE_VOCAB)
        postings = _PostingsBuilder(rowids, capacity=tokens)
        for term, joined in connection.execute(_POSTINGS):
            postings.add(term, _integers(joined))
        spans, positions, frequencies = postings.finish()
        return cls(key=key, spans=spans, positions=positions, frequencies=frequencies,
                   rowids=rowids, lengths=lengths, documents=documents,
                   audiences=[frozenset(roles.get(doc_id, ())) for doc_id in doc_ids],
                   ties=_chunk_id_ranks(connection, rowids))

    def stats(self, terms: Sequence[str], view: "_AudienceView") -> CorpusStats:
        """The statistics of the rows the view's audience may see: its row count, its token total, and how many
        of its rows hold each term."""
        frequency = {term: int(np.count_nonzero(view.allowed[self._positions[span[0]:span[1]]]))
                     if (span := self._spans.get(term)) else 0 for term in terms}
        return CorpusStats(rows=view.rows, tokens=view.tokens, document_frequency=frequency)

    def view(self, role_sets: Sequence[frozenset[str]] | None) -> "_AudienceView":
        """What an audience may see of this generation (None: every row that is a stored chunk), cached by
        the audience's parties as sets: the same readers in another order are the same audience."""
        key = None if role_sets is None else tuple(sorted(set(role_sets), key=sorted))
        with self._views_lock:
            view = self._views.get(key)
            if view is not None:
                self._views.move_to_end(key)
                return view
        parties = key or ()
        by_document = np.array([all(audience & roles for roles in parties) for audience in self._audiences]
                               + [False], dtype=np.bool_)  # the last entry is for rows of no chunk (-1)
        allowed = by_document[self._documents]
        # FTS5 counts tokens and rows as integers; the sum of whole-number doubles below 2**53 is exact.
        view = _AudienceView(allowed=allowed, rows=int(np.count_nonzero(allowed)),
                             tokens=int(self._lengths[allowed].sum()))
        with self._views_lock:
            self._views[key] = view
            while len(self._views) > AUDIENCE_VIEWS:
                self._views.popitem(last=False)
        return view

    def top(self, terms: Sequence[str], view: "_AudienceView", stats: CorpusStats,
            limit: int) -> list[tuple[int, float]]:
        """The best `limit` rows the audience may see matching any of the terms, by FTS5's BM25 over those terms
        (each a phrase, in this order) with the audience's statistics, best first, ties by chunk id: what
        `ORDER BY bm25(), chunk_id LIMIT` returns on an index of the rows the audience may see."""
        scores = np.zeros(self._rowids.size, dtype=np.float64)
        matched = np.zeros(self._rowids.size, dtype=np.bool_)
        average = stats.average_length
        for term in terms:
            span = self._spans.get(term)
            if span is None:
                continue
            at = self._positions[span[0]:span[1]]
            frequency = self._frequencies[span[0]:span[1]]
            scores[at] += term_weight(stats.idf(term), frequency, self._lengths[at], average)  # phrase by phrase
            matched[at] = True
        hits = np.flatnonzero(matched & view.allowed)
        if hits.size > limit:
            values = scores[hits]
            kth = np.partition(values, hits.size - limit)[hits.size - limit]
            better = hits[values > kth]
            tied = hits[values == kth]
            tied = tied[np.argsort(self._ties[tied], kind="stable")]
            hits = np.concatenate((better, tied[:limit - better.size]))
        best = hits[np.lexsort((self._ties[hits], -scores[hits]))]
        return [(int(self._rowids[at]), float(scores[at])) for at in best]

    def ordered(self, scored: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """(row id, score) pairs best first, equal scores in chunk-id order."""
        if not scored:
            return []
        at = np.minimum(np.searchsorted(self._rowids, [rowid for rowid, _ in scored]), max(self._rowids.size - 1, 0))
        ties = self._ties[at].tolist()
        return [pair for pair, _ in sorted(zip(scored, ties, strict=True), key=lambda item: (-item[0][1], item[1]))]


@dataclass(frozen=True, kw_only=True)
class _AudienceView:
    """The rows of a generation an audience may see, and their totals (FTS5's row count and token total, were
    the index to hold those rows alone)."""

    allowed: npt.NDArray[np.bool_]
    rows: int
    tokens: int


class _PostingsBuilder:
    """Occurrences (term by term, a row id per occurrence) into postings (a position and a frequency per row
    holding the term), a batch of terms at a time so NumPy does the work. The postings are written into arrays
    sized for `capacity` (the index's token count, which no count of (term, row) pairs exceeds) and trimmed in
    place at the end, so the peak memory is little more than the result."""

    BATCH: Final = 1 << 18
    """Occurrences processed together."""

    def __init__(self, rowids: Positions, *, capacity: int) -> None:
        self._rowids = rowids
        self._terms: list[str] = []
        self._occurrences: list[Positions] = []
        self._pending = 0
        self._spans: dict[str, tuple[int, int]] = {}
        self._positions = np.empty(capacity, dtype=np.int32)
        self._frequencies: Frequencies = np.empty(capacity, dtype=np.uint16)
        self._end = 0

    def add(self, term: str, occurrences: Positions) -> None:
        self._terms.append(term)
        self._occurrences.append(occurrences)
        self._pending += occurrences.size
        if self._pending >= self.BATCH:
            self._flush()

    def finish(self) -> tuple[dict[str, tuple[int, int]], npt.NDArray[np.int32], Frequencies]:
        self._flush()
        self._positions.resize(self._end, refcheck=False)  # in place: no second copy
        self._frequencies.resize(self._end, refcheck=False)
        return self._spans, self._positions, self._frequencies

    def _flush(self) -> None:
        if not self._terms:
            return
        counts = np.array([part.size for part in self._occurrences], dtype=np.int64)
        occurrences = np.concatenate(self._occurrences)
        terms = np.repeat(np.arange(len(self._terms)), counts)
        same_term = terms[1:] == terms[:-1]
        if np.any((occurrences[1:] < occurrences[:-1]) & same_term):  # FTS5 lists them in row order
            occurrences = occurrences[np.lexsort((occurrences, terms))]
        first = np.flatnonzero(np.concatenate(([True], (occurrences[1:] != occurrences[:-1]) | ~same_term)))
        rows = occurrences[first]
        positions = np.minimum(np.searchsorted(self._rowids, rows), max(self._rowids.size - 1, 0))
        if rows.size and not np.array_equal(self._rowids[positions], rows):
            raise RuntimeError("the full-text index is inconsistent: a row has postings but no size record")
        frequencies = np.diff(first, append=occurrences.size)
        if frequencies.max(initial=0) > np.iinfo(self._frequencies.dtype).max:
            self._frequencies = self._frequencies.astype(np.uint32)
        end = self._end + first.size
        if end > self._positions.size:  # not when the token count is right; grown rather than failed
            self._positions.resize(2 * end, refcheck=False)
            self._frequencies.resize(2 * end, refcheck=False)
        self._positions[self._end:end] = positions
        self._frequencies[self._end:end] = frequencies
        for term, held in zip(self._terms, np.bincount(terms[first], minlength=len(self._terms)).tolist(),
                              strict=True):
            self._spans[term] = (self._end, self._end + held)
            self._end += held
        self._terms, self._occurrences, self._pending = [], [], 0


def _integers(joined: str | None) -> Positions:
    return np.fromstring(joined, dtype=np.int64, sep=",") if joined else np.zeros(0, dtype=np.int64)


def _row_sizes(connection: Connection) -> tuple[Positions, Floats]:
    """Every row id of the index in order, and the row's token count from its `docsize` record (a varint
    per column, almost always one byte each), as FTS5's `bm25()` reads it."""
    ids, widths, hexed = connection.execute(_ROW_SIZES).one()
    rowids, width = _integers(ids), _integers(widths)
    data = np.frombuffer(bytes.fromhex(hexed or ""), dtype=np.uint8)
    if rowids.size == 0:
        return rowids, np.zeros(0, dtype=np.float64)
    starts = np.cumsum(width) - width
    if width.min() > 0 and data.max() < 0x80:  # one byte per varint: a row's size is the sum of its bytes
        return rowids, np.add.reduceat(data.astype(np.float64), starts)
    blob = data.tobytes()
    return rowids, np.array([sum(_varints(blob[at:at + n])) for at, n in zip(starts.tolist(), width.tolist(),
                                                                             strict=True)], dtype=np.float64)


def _row_documents(connection: Connection, rowids: Positions) -> tuple[list[str], npt.NDArray[np.int32]]:
    """The stored documents, and per row of the index the position of its chunk's document (-1: none)."""
    doc_ids: list[str] = []
    parts: list[Positions] = []
    for doc_id, joined in connection.execute(_ROW_DOCUMENTS):
        doc_ids.append(doc_id)
        parts.append(_integers(joined))
    documents = np.full(rowids.size, -1, dtype=np.int32)
    if not parts or rowids.size == 0:
        return doc_ids, documents
    chunk_rowids = np.concatenate(parts)
    owners = np.repeat(np.arange(len(parts), dtype=np.int32), [part.size for part in parts])
    at = np.minimum(np.searchsorted(rowids, chunk_rowids), rowids.size - 1)
    indexed = rowids[at] == chunk_rowids
    documents[at[indexed]] = owners[indexed]
    return doc_ids, documents


def _chunk_id_ranks(connection: Connection, rowids: Positions) -> Positions:
    """Per row position, its chunk's rank in chunk-id order (rows of no chunk after every chunk)."""
    (joined,) = connection.execute(_ROWS_BY_CHUNK_ID).one()
    by_chunk_id = _integers(joined)
    ranks = np.full(rowids.size, by_chunk_id.size + rowids.size, dtype=np.int64)
    if rowids.size == 0 or by_chunk_id.size == 0:
        return ranks
    at = np.minimum(np.searchsorted(rowids, by_chunk_id), rowids.size - 1)
    indexed = rowids[at] == by_chunk_id
    ranks[at[indexed]] = np.arange(by_chunk_id.size, dtype=np.int64)[indexed]
    return ranks


def _rescored(connection: Connection, ranked: list[tuple[int, float]], terms: Sequence[str],
              stats: CorpusStats) -> list[tuple[int, float]]:
    """Candidates scored by BM25 over the whole query (in no particular order: `_Generation.ordered` sorts them)."""
    if not ranked:
        return []
    bodies = connection.execute(_BODIES, {"rowids": [rowid for rowid, _ in ranked]}).all()
    return [(int(rowid), stats.bm25(analysis.index_tokens(body.split()), terms)) for rowid, body in bodies]


def _passages(connection: Connection, rowids: list[int],
              role_sets: Sequence[frozenset[str]] | None) -> dict[int, Row[Any]]:
    """The ranked rows' passages, each checked once more against its document's roles in this snapshot: the
    ranking used the audiences of the index generation (every ingest that changes them starts a new one)."""
    if not rowids:
        return {}
    rows = connection.execute(_PASSAGES, {"rowids": rowids})
    return {int(row.fts_rowid): row for row in rows
            if role_sets is None or all(frozenset(row.roles or ()) & party for party in role_sets)}


def retrieved_chunk(row: Row[Any] | Any, score: float) -> RetrievedChunk:
    """A passage row (chunk and document columns, on either database) as the pipeline takes it."""
    passage = Passage(chunk_id=row.chunk_id, doc_id=row.doc_id, title=row.title, heading=row.heading,
                      text=row.text, owner=row.owner, updated=row.updated, url=row.url,
                      links=tuple(Link(start=start, end=end, target=target)
                                  for start, end, target in (row.links or ())),
                      page=row.page, anchor=row.anchor, format=row.format)
    return RetrievedChunk(passage=passage, score=score, content_hash=row.content_hash,
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
