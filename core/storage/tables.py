"""The tables of Sourced as SQLAlchemy 2 typed models, portable across SQLite and PostgreSQL.

Rows never leave `core.storage` and `core.retrieval`: repositories hand out frozen dataclasses, so the domain
stays free of the ORM. What one database alone has is created by the migrations, not declared here: SQLite's
full-text tables (`chunks_fts`, `chunks_fts_vocab`), and PostgreSQL's chunk terms, audience classes and pgvector
tables (`core.storage.postgres`).
"""

from datetime import UTC, date, datetime
from typing import Any, Final

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    Dialect,
    Engine,
    Float,
    ForeignKey,
    Index,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    func,
    select,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION: Final = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""Deterministic constraint names, so migrations can name what they create and later drop."""

SHA256_HEX: Final = 64


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware instant, stored as UTC on every backend.

    SQLite has no time zones: a naive UTC value is stored and UTC is attached when read, so comparisons in
    SQL (`at < :cutoff`) are correct on both databases. Naive values are refused rather than guessed.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"a naive datetime cannot be stored: {value!r}; attach a time zone")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {  # noqa: RUF012  # SQLAlchemy reads this class attribute; it is never mutated
        datetime: UtcDateTime,
        list[Any]: JSON,
        list[str]: JSON,
        list[dict[str, Any]]: JSON,
    }


class DocumentRow(Base):
    """One knowledge-base document. `file_sha256` (of the raw bytes) lets ingestion skip unchanged files."""

    __tablename__ = "documents"

    doc_id: Mapped[str] = mapped_column(String, primary_key=True)
    source_path: Mapped[str] = mapped_column(String)
    title: Mapped[str] = mapped_column(Text)
    owner: Mapped[str | None] = mapped_column(String)
    updated: Mapped[date | None]
    url: Mapped[str | None] = mapped_column(Text)
    file_sha256: Mapped[str] = mapped_column(String(SHA256_HEX))
    supersedes: Mapped[list[str]] = mapped_column(default=list)
    ingested_at: Mapped[datetime]
    chunker: Mapped[str | None] = mapped_column(String)
    """The chunker version that cut the document's chunks (`core.retrieval.chunking.CHUNKER_VERSION`)."""
    format: Mapped[str | None] = mapped_column(String)
    """The file's format (`markdown`, `pdf`, `pptx`, ...): what a chunk's page number counts (pages, slides)."""
    origin: Mapped[str | None] = mapped_column(String, index=True)
    """The connector the document came from (`core.connectors`); NULL for the knowledge-base folder. An ingest
    of the folder never removes a connector's documents, nor a sync the folder's."""
    source_version: Mapped[str | None] = mapped_column(String)
    """The source's version of the item (a Confluence version number, a Drive file's version, a Notion page's
    last edit): an item listed with the same version is not downloaded again."""


class DocumentRoleRow(Base):
    """The audience of a document, one row per role. The `(role, doc_id)` index serves the search filter."""

    __tablename__ = "document_roles"
    __table_args__ = (Index("ix_document_roles_role_doc_id", "role", "doc_id"),)

    doc_id: Mapped[str] = mapped_column(ForeignKey("documents.doc_id", ondelete="CASCADE"), primary_key=True)
    role: Mapped[str] = mapped_column(String, primary_key=True)


class ChunkRow(Base):
    """A section (or a window of a long section) of a document, as displayed and cited.

    `fts_rowid` is the chunk's row in the SQLite full-text table (NULL elsewhere): an integer key lets the
    search join and the audience filter run on an index instead of reading each match's stored text, and
    lets ingestion delete a document's full-text rows without scanning them. The `(fts_rowid, doc_id)`
    index covers the audience filter.
    """

    __tablename__ = "chunks"
    __table_args__ = (Index("ix_chunks_fts_rowid_doc_id", "fts_rowid", "doc_id"),)

    chunk_id: Mapped[str] = mapped_column(String, primary_key=True)
    doc_id: Mapped[str] = mapped_column(ForeignKey("documents.doc_id", ondelete="CASCADE"), index=True)
    ordinal: Mapped[int]
    heading: Mapped[str] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text)
    content_hash: Mapped[str] = mapped_column(String(SHA256_HEX))
    fts_rowid: Mapped[int | None]
    links: Mapped[list[Any] | None] = mapped_column(JSON)
    """The targets of the text's links, `[start, end, target]` by offsets into `text`."""
    page: Mapped[int | None]
    """The page (or slide) the chunk starts on, for formats that have pages."""
    anchor: Mapped[str | None] = mapped_column(Text)
    """Where a link to the chunk's section points inside its document (an HTML heading's id)."""


class ChunkEmbeddingRow(Base):
    """A chunk's vector (float32 bytes, `dim` of them) and the model that computed it. `content_hash` is the
    chunk's hash when it was embedded: a different hash, or a different model, means embed again."""

    __tablename__ = "chunk_embeddings"

    chunk_id: Mapped[str] = mapped_column(ForeignKey("chunks.chunk_id", ondelete="CASCADE"), primary_key=True)
    model: Mapped[str] = mapped_column(String, index=True)
    dim: Mapped[int]
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    content_hash: Mapped[str] = mapped_column(String(SHA256_HEX))


class AuditEventRow(Base):
    """One decision and its evidence (DESIGN section 3). Never the question as typed."""

    __tablename__ = "audit_events"

    correlation_id: Mapped[str] = mapped_column(String, primary_key=True)
    at: Mapped[datetime] = mapped_column(index=True)
    workspace_id: Mapped[str | None] = mapped_column(String)
    channel_id: Mapped[str | None] = mapped_column(String)
    user_ref: Mapped[str] = mapped_column(String)
    question_sha256: Mapped[str] = mapped_column(String(SHA256_HEX))
    question_preview: Mapped[str] = mapped_column(Text)
    risk: Mapped[str | None] = mapped_column(String)
    kind: Mapped[str] = mapped_column(String)
    """The true kind: `not_permitted` apart from `not_in_corpus`. Read by the audit commands alone."""
    presented_kind: Mapped[str] = mapped_column(String)
    """The kind the reply presented, which everything else (Home, metrics, exports) reads."""
    audience: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    """Who the reply was for: `{"posted_in": channel or null, "parties": [{"roles": [...], "guest": bool}]}`."""
    shown: Mapped[list[str] | None] = mapped_column(JSON)
    """The chunk ids the reply showed (citations or closest passages)."""
    retrieved: Mapped[list[dict[str, Any]]]
    cited: Mapped[list[dict[str, Any]]]
    claim_map: Mapped[list[dict[str, Any]]]
    model: Mapped[str | None] = mapped_column(String)
    prompt_version: Mapped[str | None] = mapped_column(String)
    latency_ms: Mapped[float] = mapped_column(Float)
    detail: Mapped[str | None] = mapped_column(Text)
    answerability: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    reading: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    """How a message with earlier turns was read (`ReadingNote`): its reader, and as a follow-up the standalone
    question's hash and redacted preview."""


class ProcessedEventRow(Base):
    """A Slack event id claimed by a worker. The primary key is the cross-worker de-duplication.

    While the reply is being computed the claim is leased (`lease_until`, renewed by its `holder`) and `payload`
    holds what answering needs, the question included; when the reply has gone, `done_at` is set and `payload`
    cleared. A claim whose lease ran out unfinished (its worker died) is taken over by the next delivery of the
    event, or by any worker's sweep (`bot.exactly_once`)."""

    __tablename__ = "processed_events"

    event_id: Mapped[str] = mapped_column(String, primary_key=True)
    received_at: Mapped[datetime] = mapped_column(index=True)
    done_at: Mapped[datetime | None]
    lease_until: Mapped[datetime | None]
    holder: Mapped[str | None] = mapped_column(String)
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class FeedbackRow(Base):
    """A reader's verdict on one reply, linked to its audit record by correlation id: one per reader and reply.
    `chunk_id` is the closest passage a "this answered it" verdict names."""

    __tablename__ = "feedback"
    __table_args__ = (CheckConstraint("verdict IN ('helpful', 'not_helpful', 'answered_it')", name="verdict"),
                      UniqueConstraint("correlation_id", "user_ref"))

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    correlation_id: Mapped[str] = mapped_column(String, index=True)
    user_ref: Mapped[str] = mapped_column(String)
    verdict: Mapped[str] = mapped_column(String)
    chunk_id: Mapped[str | None] = mapped_column(String)
    at: Mapped[datetime]


class PendingClarificationRow(Base):
    """A clarifying question awaiting a click. The raw question lives here only until `expires_at`."""

    __tablename__ = "pending_clarifications"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    question: Mapped[str] = mapped_column(Text)
    user_id: Mapped[str] = mapped_column(String)
    channel_id: Mapped[str | None] = mapped_column(String)
    options: Mapped[list[dict[str, Any]]]
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime] = mapped_column(index=True)
    thread_ts: Mapped[str | None] = mapped_column(String)
    """The thread the clarifying question was asked in: the chosen reading becomes a turn of it."""


class ConversationTurnRow(Base):
    """A turn of a thread: the question it was answered as, its presented outcome kind and cited chunk ids,
    so that a follow-up can be read against it. The raw question lives here only until `expires_at`.

    `thread_ts` is the thread the reply went to ("" for the top level of a direct message); `message_ts` the
    asker's message, so a reply in the thread of a top-level message finds that message's turn."""

    __tablename__ = "conversation_turns"
    __table_args__ = (Index("ix_conversation_turns_channel_id_thread_ts", "channel_id", "thread_ts"),
                      Index("ix_conversation_turns_channel_id_message_ts", "channel_id", "message_ts"))

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    workspace_id: Mapped[str | None] = mapped_column(String)
    channel_id: Mapped[str] = mapped_column(String)
    thread_ts: Mapped[str] = mapped_column(String)
    message_ts: Mapped[str] = mapped_column(String)
    correlation_id: Mapped[str] = mapped_column(String)
    question: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String)
    cited: Mapped[list[str]]
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime] = mapped_column(index=True)


class ConnectorStateRow(Base):
    """One connector's sync: where its change feed stands (`cursor`, the connector's own text), when its last
    full "what still exists" pass ran, and how its last run went."""

    __tablename__ = "connector_state"

    name: Mapped[str] = mapped_column(String, primary_key=True)
    cursor: Mapped[str | None] = mapped_column(Text)
    full_pass_at: Mapped[datetime | None]
    attempted_at: Mapped[datetime | None]
    succeeded_at: Mapped[datetime | None]
    error: Mapped[str | None] = mapped_column(Text)
    """The last run's failure, in one line, until a run succeeds; the last good index stays meanwhile."""
    summary: Mapped[str | None] = mapped_column(Text)


class ConnectorItemFailureRow(Base):
    """An item a connector's sync could not read (its content, its export, its permissions): it is out of the
    index until a later sync, which tries it again, reads it."""

    __tablename__ = "connector_item_failures"

    connector: Mapped[str] = mapped_column(String, primary_key=True)
    item_id: Mapped[str] = mapped_column(String, primary_key=True)
    reason: Mapped[str] = mapped_column(Text)
    failed_at: Mapped[datetime]


class SourceGroupMemberRow(Base):
    """A member (by e-mail) of a group of a source, as its connector last read it: who holds the audience role
    `group:<connector>:<group id>`."""

    __tablename__ = "source_group_members"
    __table_args__ = (Index("ix_source_group_members_email", "email"),)

    connector: Mapped[str] = mapped_column(String, primary_key=True)
    group_id: Mapped[str] = mapped_column(String, primary_key=True)
    email: Mapped[str] = mapped_column(String, primary_key=True)


class AudienceChangeRow(Base):
    """When Slack last said who may read something changed (a channel's members or sharing, a user's guest
    flag, a user group's members), by an opaque key such as `channel:C123`: every worker drops what it cached
    about that key before this instant (`bot.audience`). One row a key, so the table stays as small as the
    workspace's channels and users."""

    __tablename__ = "audience_changes"

    key: Mapped[str] = mapped_column(String, primary_key=True)
    changed_at: Mapped[datetime]


def count_rows(engine: Engine, table: type[Base]) -> int:
    """How many rows a table holds (the indexes' chunk and document counts, an ingestion's summary)."""
    with engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(table)).scalar_one())
