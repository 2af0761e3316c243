"""Documents read as structure: each chunk keeps the targets of its links beside its words, and each document
records the chunker that cut it, so a new chunker re-chunks every document once.

Revision ID: 0006_chunk_links
Revises: 0005_feedback_on_closest
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_chunk_links"
down_revision: str | None = "0005_feedback_on_closest"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("chunks", sa.Column("links", sa.JSON(), nullable=True))
    op.add_column("documents", sa.Column("chunker", sa.String(), nullable=True))  # NULL: chunked line by line


def downgrade() -> None:
    with op.batch_alter_table("documents") as batch:
        batch.drop_column("chunker")
    op.drop_column("chunks", "links")
