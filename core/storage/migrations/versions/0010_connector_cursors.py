"""Connectors: each document records the connector it came from and the source's version of it; each connector
its cursor, its last full pass and its last run's outcome; and the members of the sources' groups, by e-mail.

Revision ID: 0010_connector_cursors
Revises: 0009_decision_audience
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_connector_cursors"
down_revision: str | None = "0009_decision_audience"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("documents", sa.Column("origin", sa.String(), nullable=True))  # NULL: the folder's
    op.add_column("documents", sa.Column("source_version", sa.String(), nullable=True))
    op.create_index("ix_documents_origin", "documents", ["origin"])
    op.create_table(
        "connector_state",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("cursor", sa.Text(), nullable=True),
        sa.Column("full_pass_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("succeeded_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("name", name="pk_connector_state"),
    )
    op.create_table(
        "source_group_members",
        sa.Column("connector", sa.String(), nullable=False),
        sa.Column("group_id", sa.String(), nullable=False),
        sa.Column("email", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("connector", "group_id", "email", name="pk_source_group_members"),
    )
    op.create_index("ix_source_group_members_email", "source_group_members", ["email"])


def downgrade() -> None:
    op.drop_index("ix_source_group_members_email", table_name="source_group_members")
    op.drop_table("source_group_members")
    op.drop_table("connector_state")
    op.drop_index("ix_documents_origin", table_name="documents")
    with op.batch_alter_table("documents") as batch:
        batch.drop_column("source_version")
        batch.drop_column("origin")
