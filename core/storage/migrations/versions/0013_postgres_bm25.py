"""PostgreSQL scores full text as SQLite does: each chunk's index terms (`chunk_terms`) and every audience class's
statistics replace the English tsvector ranked by `ts_rank`, so the same question over the same documents gets the
same scores on both databases (`core.storage.postgres`, issue 56). Chunks already stored get their terms here.

Revision ID: 0013_postgres_bm25
Revises: 0012_audience_changes
Create Date: 2026-12-21
"""

from collections.abc import Sequence
from typing import Final

from alembic import op
from sqlalchemy import text

from core import text as analysis
from core.storage import postgres

revision: str = "0013_postgres_bm25"
down_revision: str | None = "0012_audience_changes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH: Final = 2000
"""Chunks given their terms per statement."""


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    for statement in (*postgres.DROP_TSVECTOR_SCHEMA, *postgres.BM25_SCHEMA):
        op.execute(statement)
    stored = bind.execute(text("SELECT chunk_id, heading, text FROM chunks WHERE audience_key IS NOT NULL")
                          .execution_options(yield_per=BATCH))  # a server-side cursor: never all chunks at once
    for rows in stored.partitions():
        postgres.write_chunk_terms(bind, [(chunk_id, analysis.index_tokens(analysis.chunk_stems(heading, body)))
                                          for chunk_id, heading, body in rows])


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for statement in (*postgres.DROP_BM25_SCHEMA, *postgres.TSVECTOR_SCHEMA):
        op.execute(statement)
