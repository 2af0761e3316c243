"""Locators: each chunk keeps the page (or slide) it starts on and its section's anchor, and each document its
format, so a citation can say "page 4" or "slide 2" and link to the place (`url#page=4`, `url#anchor`).

Revision ID: 0007_chunk_locators
Revises: 0006_chunk_links
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_chunk_locators"
down_revision: str | None = "0006_chunk_links"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("chunks", sa.Column("page", sa.Integer(), nullable=True))
    op.add_column("chunks", sa.Column("anchor", sa.Text(), nullable=True))
    op.add_column("documents", sa.Column("format", sa.String(), nullable=True))  # NULL: ingested as Markdown


def downgrade() -> None:
    with op.batch_alter_table("documents") as batch:
        batch.drop_column("format")
    with op.batch_alter_table("chunks") as batch:
        batch.drop_column("anchor")
        batch.drop_column("page")
