"""Connectors: the items a sync could not read, each kept out of the index and tried again at every sync until it
reads.

Revision ID: 0011_connector_item_failures
Revises: 0010_connector_cursors
Create Date: 2026-12-19
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_connector_item_failures"
down_revision: str | None = "0010_connector_cursors"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "connector_item_failures",
        sa.Column("connector", sa.String(), nullable=False),
        sa.Column("item_id", sa.String(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("failed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("connector", "item_id", name="pk_connector_item_failures"),
    )


def downgrade() -> None:
    op.drop_table("connector_item_failures")
