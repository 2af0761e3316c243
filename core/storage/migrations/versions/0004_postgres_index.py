"""The PostgreSQL index (weighted tsvector with GIN, audience classes; pgvector's partitioned vectors with HNSW),
and the lease columns that let any worker finish a Slack event another worker started and could not finish
(`core.storage.postgres`, `bot.exactly_once`).

On PostgreSQL the vector part is created only where the extension `vector` can be had: a server without
pgvector still migrates (full-text search works there with SOURCED_EMBEDDER=none), and the vector schema is
created at the first start with an embedder once pgvector is installed (`core.storage.postgres`).

Revision ID: 0004_postgres_index
Revises: 0003
Create Date: 2026-04-01
"""

import logging
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from core.storage import postgres

revision: str = "0004_postgres_index"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger(__name__)


def upgrade() -> None:
    with op.batch_alter_table("processed_events") as batch:
        batch.add_column(sa.Column("done_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("holder", sa.String(), nullable=True))
        batch.add_column(sa.Column("payload", sa.JSON(), nullable=True))
    op.execute("UPDATE processed_events SET done_at = received_at")  # events handled before: done
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    for statement in (*postgres.AUDIENCE_SCHEMA, *postgres.TSVECTOR_SCHEMA):
        op.execute(statement)
    if postgres.installed_pgvector(bind) or postgres.pgvector_available(bind):
        _vector_schema(bind)


def _vector_schema(bind: sa.Connection) -> None:
    """In a savepoint: a role that may not create the extension still gets full-text search."""
    savepoint = bind.begin_nested()
    try:
        postgres.create_vector_schema(bind)
    except sa.exc.DBAPIError as error:
        savepoint.rollback()
        log.warning("pgvector not set up (%s); full-text search only until it is",
                    str(error.orig).splitlines()[0])
        return
    savepoint.commit()


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        postgres.drop_vector_schema(bind)
        for statement in (*postgres.DROP_TSVECTOR_SCHEMA, *postgres.DROP_AUDIENCE_SCHEMA):
            op.execute(statement)
    with op.batch_alter_table("processed_events") as batch:
        for column in ("payload", "holder", "lease_until", "done_at"):
            batch.drop_column(column)
