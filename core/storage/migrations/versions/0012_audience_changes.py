"""Slack: when a channel's members or sharing, a user's guest flag or a user group's members last changed, so
every worker drops the audience it cached before then.

Revision ID: 0012_audience_changes
Revises: 0011_connector_item_failures
Create Date: 2026-12-20
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_audience_changes"
down_revision: str | None = "0011_connector_item_failures"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audience_changes",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_audience_changes"),
    )


def downgrade() -> None:
    op.drop_table("audience_changes")
