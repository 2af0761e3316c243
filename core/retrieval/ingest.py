"""Ingestion: the knowledge-base folder into the database, incrementally and one document at a time.

An unchanged file (same document id, same bytes) is skipped, a changed one has its chunks, roles and
full-text rows replaced, and a document whose file is gone is removed. Each document is its own
transaction, so a failure stores nothing half-done and the other documents still go in. What a subclass adds
beside the chunks (their vectors) is computed before that transaction and written inside it, so a reader sees
a document's old chunks and vectors or its new ones, never a mixture. One ingestion runs at a time per
database (`core.storage.locks`): a second one is refused with a line naming the first.

A line written to automated readers ("Note to AI assistants: ...") is stored as the content it is and
reported with its file and line, so the page's owner can take it out; the pipeline never quotes it.

A file that no longer loads (say, a typo in its front matter) is reported and its document removed: it
fails closed, because the broken edit may have been the one that restricted its audience.

Nothing is removed in bulk without being asked: with `guard_removal`, an ingestion that would remove more than
half of the folder's indexed documents, or all of them because the folder yields none (an unmounted share, a
folder of legacy `.doc` files), stops before writing anything and says so (`RemovalHeld`); the command line
asks for `--allow-removal` to go ahead. While it is held, a file that no longer loads keeps its previous
version: the operator is there, reading the file's error.

Every transaction starts with a write, so on SQLite it waits for the lock (the bot may be writing audit
records meanwhile) instead of failing when a read transaction cannot be upgraded.
"""

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, Final, Literal

from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from sqlalchemy import Connection, Engine, delete, func, insert, select, text, update
from sqlalchemy.exc import SQLAlchemyError

from core.application.language.instructions import instruction_lines
from core.documents.bounded import SHARED, ReadingProcess
from core.documents.sources import SourceRule
from core.progress import progress_bar
from core.retrieval.chunking import CHUNKER_VERSION, ChunkDraft, chunk_document
from core.retrieval.index import index_body
from core.retrieval.knowledge_base import (
    LoadError,
    LoadResult,
    SourceDocument,
    count_source_files,
    load_knowledge_base,
)
from core.storage.database import supports_full_text
from core.storage.locks import ingest_lock
from core.storage.postgres import refresh_statistics, write_chunk_terms
from core.storage.tables import ChunkRow, DocumentRoleRow, DocumentRow, count_rows
from core.text import chunk_stems, index_tokens

_DELETE_FTS: Final = "DELETE FROM chunks_fts WHERE rowid = :rowid"
_INSERT_FTS: Final = "INSERT INTO chunks_fts (rowid, chunk_id, body) VALUES (:rowid, :chunk_id, :body)"

Beside = Callable[[Connection], None]
"""What is written beside a document's chunks, in their transaction."""


@dataclass(frozen=True, kw_only=True)
class InstructionLine:
    """A line of a knowledge-base file that speaks to an automated reader."""

    path: Path
    line: int

    def __str__(self) -> str:
        return (f"{self.path}:{self.line}: text addressed to AI assistants; it is indexed as content and never "
                f"quoted as an answer, but consider removing it")


@dataclass(frozen=True, kw_only=True)
class RemovalHeld:
    """An ingestion stopped before it removed most of the index: what it would have removed, of how many."""

    would_remove: tuple[str, ...]
    indexed: int
    """The folder's documents in the index (a connector's are never the folder's)."""
    found: int
    """The documents the folder yields."""

    def __str__(self) -> str:
        found = "no document" if self.found == 0 else plural(self.found, "document")
        return (f"stopped: the folder yields {found} and ingesting it would remove "
                f"{len(self.would_remove)} of the {plural(self.indexed, 'document')} in the index; "
                f"nothing was changed")


def held_removal(stored: int, found: int, would_remove: int) -> bool:
    """Most of a non-empty index going: every document (the folder yields none) or more than half of them. A few
    documents going in a large index is an ordinary edit, and goes ahead."""
    return would_remove > 0 and (found == 0 or 2 * would_remove > stored)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


@dataclass(frozen=True, kw_only=True)
class IngestReport:
    """What one ingestion did, by document id. `changed_chunk_ids` (new or different text) and
    `removed_chunk_ids` are what a later embedding index has to recompute or forget."""

    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    chunks: int = 0
    errors: tuple[LoadError, ...] = ()
    instructions: tuple[InstructionLine, ...] = ()
    warnings: tuple[LoadError, ...] = ()
    """What reading a file left out (an HTML block without text, say), by file: ingested, but worth a look."""
    notes: tuple[str, ...] = ()
    """What is said once per ingest (the front-matter keys of other tools that were ignored)."""
    changed_chunk_ids: tuple[str, ...] = ()
    removed_chunk_ids: tuple[str, ...] = ()
    held: RemovalHeld | None = None
    """Set when the ingestion stopped rather than remove most of the index: nothing was written."""

    def summary(self) -> str:
        """One line for the console and the logs."""
        if self.held is not None:
            return str(self.held)
        documents = len(self.added) + len(self.updated) + len(self.unchanged)
        line = (f"{plural(documents, 'document')}: {len(self.added)} added, {len(self.updated)} updated, "
                f"{len(self.unchanged)} unchanged, {len(self.removed)} removed; {plural(self.chunks, 'chunk')}")
        if self.errors:
            line += f"; {plural(len(self.errors), 'file')} failed"
        if self.instructions:
            count = len(self.instructions)
            line += f"; {count} {'line' if count == 1 else 'lines'} addressed to AI assistants"
        if self.warnings:
            line += f"; {len(self.warnings)} {'warning' if len(self.warnings) == 1 else 'warnings'}"
        return line


@dataclass(kw_only=True)
class _Tally:
    """The report while it is being gathered."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    instructions: list[InstructionLine] = field(default_factory=list)
    warnings: list[LoadError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    changed_chunk_ids: list[str] = field(default_factory=list)
    removed_chunk_ids: list[str] = field(default_factory=list)

    def report(self, chunks: int) -> IngestReport:
        return IngestReport(
            added=tuple(self.added), updated=tuple(self.updated), unchanged=tuple(self.unchanged),
            removed=tuple(self.removed), chunks=chunks, errors=tuple(self.errors),
            instructions=tuple(self.instructions), warnings=tuple(self.warnings), notes=tuple(self.notes),
            changed_chunk_ids=tuple(self.changed_chunk_ids), removed_chunk_ids=tuple(self.removed_chunk_ids),
        )


@dataclass(frozen=True, kw_only=True)
class _Stored:
    """What decides whether a stored document is still current."""

    file_sha256: str
    source_path: str
    supersedes: tuple[str, ...]
    chunker: str | None
    metadata: tuple[Any, ...] = ()
    """Title, owner, link, date, format, audience, origin and place in its source: with `sources:` rules and
    connectors they change without the bytes."""
    source_version: str | None = None

    @property
    def origin(self) -> str | None:
        return self.metadata[6] if len(self.metadata) > 6 else None


@dataclass(frozen=True, kw_only=True)
class StoredItem:
    """A connector's document as stored: what a sync compares the source's listing with."""

    doc_id: str
    source_version: str | None
    audience: frozenset[str]


Stored = Literal["added", "updated", "unchanged"]


@dataclass(frozen=True, kw_only=True)
class _OldChunk:
    chunk_id: str
    content_hash: str
    fts_rowid: int | None


class Ingestor:
    """Keeps the database in step with a knowledge-base folder. One at a time per database: a second raises
    `IngestBusy`."""

    def __init__(self, engine: Engine, *, progress: bool = True, rules: Sequence[SourceRule] = (),
                 now: Callable[[], datetime] = lambda: datetime.now(UTC), process: ReadingProcess = SHARED) -> None:
        self._engine = engine
        self.process = process  # reads every format but Markdown, under its limits (`core.documents.bounded`)
        self._progress = progress
        self._rules = tuple(rules)
        self._now = now
        self._full_text = supports_full_text(engine.dialect.name)
        self._chunk_terms = engine.dialect.name == "postgresql"  # PostgreSQL's full text (`core.storage.postgres`)

    def ingest(self, root: Path, *, guard_removal: bool = False) -> IngestReport:
        """Load `root` and bring the stored documents, chunks, roles and full-text rows in line with it. The
        documents of connectors are not the folder's: they stay. With `guard_removal`, an ingestion that would
        remove most of the folder's indexed documents writes nothing and returns a report whose `held` says so."""
        with ingest_lock(self._engine):
            report = self._ingest(root, guard_removal=guard_removal)
            if report.held is not None:
                return report
            self._finish()
            if report.added or report.updated or report.removed:
                refresh_statistics(self._engine)
            return report

    @contextmanager
    def writing(self) -> Iterator["Writer"]:
        """Documents stored and removed one at a time (a connector's sync), under the ingestion lock for the
        whole block; what is left to embed is embedded when the block ends without an error."""
        with ingest_lock(self._engine):
            writer = Writer(self)
            yield writer
            self._finish()
            if writer.changed:
                refresh_statistics(self._engine)

    def stored_items(self, origin: str) -> dict[str, StoredItem]:
        """A connector's stored documents by id, with the source version and audience each was stored with."""
        with self._engine.connect() as connection:
            rows = connection.execute(select(DocumentRow.doc_id, DocumentRow.source_version)
                                      .where(DocumentRow.origin == origin)).all()
            roles: dict[str, set[str]] = {}
            for doc_id, role in connection.execute(
                    select(DocumentRoleRow.doc_id, DocumentRoleRow.role)
                    .join(DocumentRow, DocumentRow.doc_id == DocumentRoleRow.doc_id)
                    .where(DocumentRow.origin == origin)):
                roles.setdefault(doc_id, set()).add(role)
        return {doc_id: StoredItem(doc_id=doc_id, source_version=version,
                                   audience=frozenset(roles.get(doc_id, ())))
                for doc_id, version in rows}

    def _ingest(self, root: Path, *, guard_removal: bool) -> IngestReport:
        loaded = self.load(root)
        stored = self._stored(origin=None)
        tally = _Tally(errors=list(loaded.errors), notes=list(loaded.notes()),
                       instructions=[line for document in loaded.documents for line in _instructions(document)],
                       warnings=[LoadError(path=document.path, reason=warning) for document in loaded.documents
                                 for warning in document.warnings])
        going = tuple(sorted(stored.keys() - {document.doc_id for document in loaded.documents}))
        if guard_removal and held_removal(len(stored), len(loaded.documents), len(going)):
            held = RemovalHeld(would_remove=going, indexed=len(stored), found=len(loaded.documents))
            return replace(tally.report(chunks=count_rows(self._engine, ChunkRow)), held=held)
        with self._progress_bar(len(loaded.documents), "storing") as advance:
            for document in loaded.documents:
                self._ingest_document(document, stored.get(document.doc_id), tally)
                advance()
        present = {document.doc_id for document in loaded.documents}
        for doc_id in sorted(stored.keys() - present):
            remove = partial(self._remove, doc_id=doc_id, tally=tally)
            self._guarded(Path(stored[doc_id].source_path), tally, remove)
        return tally.report(chunks=count_rows(self._engine, ChunkRow))

    def load(self, root: Path) -> LoadResult:
        """The knowledge base as this ingestor reads it (its `sources:` rules applied), a bar on long reads."""
        with self._progress_bar(count_source_files(root), "reading") as advance:
            return load_knowledge_base(root, rules=self._rules, progress=lambda _path: advance(),
                                       process=self.process)

    def _beside(self, drafts: Sequence[ChunkDraft], old: Mapping[str, tuple[str, str]]) -> Beside:
        """Computed before a document's transaction, run inside it after its chunks are written. Nothing here;
        the embedding ingestor writes the chunks' vectors (reusing those of `old` chunks that are the same)."""
        return lambda _connection: None

    def _finish(self) -> None:
        """Run once the documents are in, still under the ingestion lock."""

    def _ingest_document(self, document: SourceDocument, previous: _Stored | None, tally: _Tally) -> None:
        if (previous is not None and previous.file_sha256 == document.file_sha256
                and previous.chunker == CHUNKER_VERSION and previous.metadata == _metadata(document)):
            if previous == _fingerprint(document):
                tally.unchanged.append(document.doc_id)
            elif self._guarded(document.path, tally, lambda c: _refresh_metadata(c, document)):
                tally.updated.append(document.doc_id)
            return
        drafts = chunk_document(document)
        beside = self._beside(drafts, self._old_chunks(document.doc_id) if previous is not None else {})
        if self._guarded(document.path, tally, lambda c: self._replace(c, document, drafts, beside, tally)):
            (tally.added if previous is None else tally.updated).append(document.doc_id)

    def _old_chunks(self, doc_id: str) -> dict[str, tuple[str, str]]:
        """A stored document's chunks: id -> (heading, content hash), what says a chunk is the same again."""
        with self._engine.connect() as connection:
            rows = connection.execute(select(ChunkRow.chunk_id, ChunkRow.heading, ChunkRow.content_hash)
                                      .where(ChunkRow.doc_id == doc_id)).all()
        return {chunk_id: (heading, content) for chunk_id, heading, content in rows}

    def _guarded(self, path: Path, tally: _Tally, work: Callable[[Connection], None]) -> bool:
        """Run `work` in its own transaction; a database error becomes the file's error, not the run's."""
        try:
            with self._engine.begin() as connection:
                work(connection)
        except SQLAlchemyError as error:
            first_line = str(getattr(error, "orig", None) or error).splitlines()[0]
            reason = f"could not be stored ({type(error).__name__}: {first_line})"
            tally.errors.append(LoadError(path=path, reason=reason))
            return False
        return True

    def _replace(self, connection: Connection, document: SourceDocument, drafts: Sequence[ChunkDraft],
                 beside: Beside, tally: _Tally) -> None:
        old = {chunk.chunk_id: chunk for chunk in self._delete_document(connection, document.doc_id)}
        connection.execute(insert(DocumentRow), [_document_row(document, self._now())])
        connection.execute(insert(DocumentRoleRow),
                           [{"doc_id": document.doc_id, "role": role} for role in sorted(document.audience)])
        if drafts:
            self._insert_chunks(connection, document.doc_id, drafts)
            beside(connection)
        new_ids = {draft.chunk_id for draft in drafts}
        tally.changed_chunk_ids.extend(draft.chunk_id for draft in drafts if draft.chunk_id not in old
                                       or old[draft.chunk_id].content_hash != draft.content_hash)
        tally.removed_chunk_ids.extend(chunk_id for chunk_id in old if chunk_id not in new_ids)

    def _insert_chunks(self, connection: Connection, doc_id: str, drafts: Sequence[ChunkDraft]) -> None:
        rowids = self._new_rowids(connection, len(drafts))
        connection.execute(insert(ChunkRow), [_chunk_row(doc_id, draft, rowid)
                                              for draft, rowid in zip(drafts, rowids, strict=True)])
        if self._full_text:
            connection.execute(text(_INSERT_FTS), [
                {"rowid": rowid, "chunk_id": draft.chunk_id, "body": index_body(draft.heading, draft.text)}
                for draft, rowid in zip(drafts, rowids, strict=True)
            ])
        elif self._chunk_terms:
            write_chunk_terms(connection, [(draft.chunk_id, index_tokens(chunk_stems(draft.heading, draft.text)))
                                           for draft in drafts])

    def _remove(self, connection: Connection, *, doc_id: str, tally: _Tally) -> None:
        old = self._delete_document(connection, doc_id)
        tally.removed.append(doc_id)
        tally.removed_chunk_ids.extend(chunk.chunk_id for chunk in old)

    def _delete_document(self, connection: Connection, doc_id: str) -> list[_OldChunk]:
        """Delete a document with its chunks and full-text rows; the first statement is the write."""
        deleted = connection.execute(
            delete(ChunkRow).where(ChunkRow.doc_id == doc_id)
            .returning(ChunkRow.chunk_id, ChunkRow.content_hash, ChunkRow.fts_rowid)
        ).all()
        old = [_OldChunk(chunk_id=c, content_hash=h, fts_rowid=r) for c, h, r in deleted]
        rowids = [{"rowid": chunk.fts_rowid} for chunk in old if chunk.fts_rowid is not None]
        if self._full_text and rowids:
            connection.execute(text(_DELETE_FTS), rowids)
        connection.execute(delete(DocumentRow).where(DocumentRow.doc_id == doc_id))
        return old

    def _new_rowids(self, connection: Connection, count: int) -> Sequence[int | None]:
        """Full-text row ids for new chunks, after the highest in use; none without a full-text index."""
        if not self._full_text:
            return [None] * count
        highest = connection.execute(select(func.max(ChunkRow.fts_rowid))).scalar() or 0
        return range(highest + 1, highest + 1 + count)

    def _stored(self, *, origin: str | None, doc_id: str | None = None) -> dict[str, _Stored]:
        """The stored documents of the folder (`origin` None) or of one connector, or the one `doc_id` names."""
        columns = select(DocumentRow.doc_id, DocumentRow.file_sha256, DocumentRow.source_path,
                         DocumentRow.supersedes, DocumentRow.chunker, DocumentRow.title, DocumentRow.owner,
                         DocumentRow.url, DocumentRow.updated, DocumentRow.format, DocumentRow.source_version,
                         DocumentRow.origin)
        roles_query = select(DocumentRoleRow.doc_id, DocumentRoleRow.role)
        if doc_id is not None:
            columns = columns.where(DocumentRow.doc_id == doc_id)
            roles_query = roles_query.where(DocumentRoleRow.doc_id == doc_id)
        else:
            columns = columns.where(DocumentRow.origin.is_(None) if origin is None else DocumentRow.origin == origin)
        with self._engine.connect() as connection:
            rows = connection.execute(columns).all()
            roles: dict[str, list[str]] = {}
            for found, role in connection.execute(roles_query):
                roles.setdefault(found, []).append(role)
        return {row.doc_id: _Stored(file_sha256=row.file_sha256, source_path=row.source_path,
                                    supersedes=tuple(row.supersedes or ()), chunker=row.chunker,
                                    metadata=(row.title, row.owner, row.url, row.updated, row.format or "markdown",
                                              tuple(sorted(roles.get(row.doc_id, ()))), row.origin,
                                              _trail(row.source_path, row.origin)),
                                    source_version=row.source_version)
                for row in rows}


    @contextmanager
    def _progress_bar(self, total: int, doing: str) -> Iterator[Callable[[], None]]:
        """A transient bar on stderr, so stdout stays clean for the summary and for pipes."""
        columns = (TextColumn(doing), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with progress_bar(*columns, shown=self._progress) as progress:
            task = progress.add_task("ingest", total=total)
            yield lambda: progress.advance(task)


class Writer:
    """One document at a time into the index, for a connector's sync (`Ingestor.writing`). Each call is its own
    transaction: a crash between two calls leaves every document either as it was or as it is now."""

    def __init__(self, ingestor: Ingestor) -> None:
        self._ingestor = ingestor
        self._tally = _Tally()
        self.changed = False

    def put(self, document: SourceDocument) -> Stored | LoadError:
        """Store a connector's document, replacing what its id held; unchanged bytes and metadata store nothing.
        A document of another origin (the folder, another connector) with the same id is never replaced."""
        tally = _Tally()
        previous = self._ingestor._stored(origin=document.origin, doc_id=document.doc_id).get(document.doc_id)
        if previous is not None and previous.origin != document.origin:
            return LoadError(path=document.path, reason=f"document id {document.doc_id!r} belongs to another source")
        self._ingestor._ingest_document(document, previous, tally)
        self._merge(tally)
        if tally.errors:
            return tally.errors[0]
        if tally.unchanged:
            return "unchanged"
        self.changed = True
        return "added" if tally.added else "updated"

    def remove(self, doc_id: str, *, origin: str) -> bool:
        """Remove a connector's document (gone from the source, or no longer shared); False if it was not there."""
        if not self._ingestor._stored(origin=origin, doc_id=doc_id):
            return False
        tally = _Tally()
        removed = self._ingestor._guarded(Path(doc_id), tally, partial(self._ingestor._remove, doc_id=doc_id,
                                                                        tally=tally))
        self._merge(tally)
        self.changed = self.changed or removed
        return removed

    def report(self) -> IngestReport:
        return self._tally.report(chunks=count_rows(self._ingestor._engine, ChunkRow))

    def _merge(self, tally: _Tally) -> None:
        for name in ("added", "updated", "unchanged", "removed", "errors", "changed_chunk_ids",
                     "removed_chunk_ids"):
            getattr(self._tally, name).extend(getattr(tally, name))


def _instructions(document: SourceDocument) -> list[InstructionLine]:
    """Every document loaded, changed or not: the warning stands until the line is taken out."""
    return [InstructionLine(path=document.path, line=document.body_line + number - 1)
            for number in instruction_lines(document.body)]


def _fingerprint(document: SourceDocument) -> _Stored:
    return _Stored(file_sha256=document.file_sha256, source_path=_source_path(document),
                   supersedes=document.supersedes, chunker=CHUNKER_VERSION, metadata=_metadata(document),
                   source_version=document.source_version)


def _metadata(document: SourceDocument) -> tuple[Any, ...]:
    return (document.title, document.owner, document.url, document.updated, document.format,
            tuple(sorted(document.audience)), document.origin, document.trail)


TRAIL_SEPARATOR: Final = " > "


def _source_path(document: SourceDocument) -> str:
    """A file's path in the folder; for a connector's item its id in the source and its trail there, so that a
    page moved under another parent is re-chunked (its heading paths start with the trail)."""
    if document.origin is None:
        return document.path.as_posix()
    return TRAIL_SEPARATOR.join((document.path.as_posix(), *document.trail))


def _trail(source_path: str, origin: str | None) -> tuple[str, ...]:
    return () if origin is None else tuple(source_path.split(TRAIL_SEPARATOR)[1:])


def _refresh_metadata(connection: Connection, document: SourceDocument) -> None:
    """Same bytes, but moved, newly superseding a document added since, or at a new version of its source that
    changed nothing read: only the row changes."""
    connection.execute(update(DocumentRow).where(DocumentRow.doc_id == document.doc_id).values(
        source_path=_source_path(document), supersedes=list(document.supersedes),
        source_version=document.source_version))


def _document_row(document: SourceDocument, now: datetime) -> dict[str, Any]:
    return {
        "doc_id": document.doc_id, "source_path": _source_path(document), "title": document.title,
        "owner": document.owner, "updated": document.updated, "url": document.url,
        "file_sha256": document.file_sha256, "supersedes": list(document.supersedes), "ingested_at": now,
        "chunker": CHUNKER_VERSION, "format": document.format, "origin": document.origin,
        "source_version": document.source_version,
    }


def _chunk_row(doc_id: str, draft: ChunkDraft, fts_rowid: int | None) -> dict[str, Any]:
    return {
        "chunk_id": draft.chunk_id, "doc_id": doc_id, "ordinal": draft.ordinal, "heading": draft.heading,
        "text": draft.text, "content_hash": draft.content_hash, "fts_rowid": fts_rowid,
        "links": [[link.start, link.end, link.target] for link in draft.links] or None,
        "page": draft.page, "anchor": draft.anchor,
    }
