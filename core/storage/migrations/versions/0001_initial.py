"""The initial schema: documents, chunks, audit, events, feedback, clarifications; FTS5 on SQLite.

Revision ID: 0001
Revises:
Create Date: 2026-01-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The indexed column holds Snowball stems joined by spaces (core.text.stems), so unicode61 only has to split
# them; diacritics are removed for text the stemmer does not know.
CREATE_FTS = (
    "CREATE VIRTUAL TABLE chunks_fts USING fts5("
    "chunk_id UNINDEXED, body, tokenize='unicode61 remove_diacritics 2')"
)
# Per-term document counts for the idf of the normalised score (core.retrieval.index).
CREATE_FTS_VOCAB = "CREATE VIRTUAL TABLE chunks_fts_vocab USING fts5vocab(chunks_fts, 'row')"


def upgrade() -> None:
    _documents()
    _audit_and_events()
    if op.get_bind().dialect.name == "sqlite":
        op.execute(CREATE_FTS)
        op.execute(CREATE_FTS_VOCAB)


def _documents() -> None:
    op.create_table(
        "documents",
        sa.Column("doc_id", sa.String(), nullable=False),
        sa.Column("source_path", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("owner", sa.String(), nullable=True),
        sa.Column("updated", sa.Date(), nullable=True),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("file_sha256", sa.String(length=64), nullable=False),
        sa.Column("supersedes", sa.JSON(), nullable=False),
        sa.Column("ingested_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("doc_id", name="pk_documents"),
    )
    op.create_table(
        "document_roles",
        sa.Column("doc_id", sa.String(), nullable=False),
        sa.Column("role", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["doc_id"], ["documents.doc_id"], ondelete="CASCADE",
                                name="fk_document_roles_doc_id_documents"),
        sa.PrimaryKeyConstraint("doc_id", "role", name="pk_document_roles"),
    )
    op.create_index("ix_document_roles_role_doc_id", "document_roles", ["role", "doc_id"])
    op.create_table(
        "chunks",
        sa.Column("chunk_id", sa.String(), nullable=False),
        sa.Column("doc_id", sa.String(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("heading", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("fts_rowid", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["doc_id"], ["documents.doc_id"], ondelete="CASCADE",
                                name="fk_chunks_doc_id_documents"),
        sa.PrimaryKeyConstraint("chunk_id", name="pk_chunks"),
    )
    op.create_index("ix_chunks_doc_id", "chunks", ["doc_id"])
    op.create_index("ix_chunks_fts_rowid_doc_id", "chunks", ["fts_rowid", "doc_id"])


def _audit_and_events() -> None:
    op.create_table(
        "audit_events",
        sa.Column("correlation_id", sa.String(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("workspace_id", sa.String(), nullable=True),
        sa.Column("channel_id", sa.String(), nullable=True),
        sa.Column("user_ref", sa.String(), nullable=False),
        sa.Column("question_sha256", sa.String(length=64), nullable=False),
        sa.Column("question_preview", sa.Text(), nullable=False),
        sa.Column("risk", sa.String(), nullable=True),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("retrieved", sa.JSON(), nullable=False),
        sa.Column("cited", sa.JSON(), nullable=False),
        sa.Column("claim_map", sa.JSON(), nullable=False),
        sa.Column("model", sa.String(), nullable=True),
        sa.Column("prompt_version", sa.String(), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("correlation_id", name="pk_audit_events"),
    )
    op.create_index("ix_audit_events_at", "audit_events", ["at"])
    op.create_table(
        "processed_events",
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("event_id", name="pk_processed_events"),
    )
    op.create_index("ix_processed_events_received_at", "processed_events", ["received_at"])
    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("correlation_id", sa.String(), nullable=False),
        sa.Column("user_ref", sa.String(), nullable=False),
        sa.Column("verdict", sa.String(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("verdict IN ('helpful', 'not_helpful')", name="ck_feedback_verdict"),
        sa.PrimaryKeyConstraint("id", name="pk_feedback"),
    )
    op.create_index("ix_feedback_correlation_id", "feedback", ["correlation_id"])
    op.create_table(
        "pending_clarifications",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("user_id", sa.String(), nullable=False),
        sa.Column("channel_id", sa.String(), nullable=True),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_pending_clarifications"),
    )
    op.create_index("ix_pending_clarifications_expires_at", "pending_clarifications", ["expires_at"])


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE IF EXISTS chunks_fts_vocab")
        op.execute("DROP TABLE IF EXISTS chunks_fts")
    for table in ("pending_clarifications", "feedback", "processed_events", "audit_events", "chunks",
                  "document_roles", "documents"):
        op.drop_table(table)
