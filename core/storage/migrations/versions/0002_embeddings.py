"""Chunk embeddings: one vector per chunk, recorded with the model that computed it.

Revision ID: 0002
Revises: 0001
Create Date: 2026-02-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chunk_embeddings",
        sa.Column("chunk_id", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["chunk_id"], ["chunks.chunk_id"], name="fk_chunk_embeddings_chunk_id_chunks",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("chunk_id", name="pk_chunk_embeddings"),
    )
    op.create_index("ix_chunk_embeddings_model", "chunk_embeddings", ["model"])


def downgrade() -> None:
    op.drop_index("ix_chunk_embeddings_model", table_name="chunk_embeddings")
    op.drop_table("chunk_embeddings")
