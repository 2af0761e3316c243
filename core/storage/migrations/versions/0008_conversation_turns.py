"""Conversations: the turns of a thread, kept briefly so a follow-up can be read against them; the audit record
says how a message with earlier turns was read; a pending clarification remembers its thread.

A turn holds the question it was answered as (raw text, hence `expires_at` and the purge), its presented outcome
kind and the chunk ids it cited.

Revision ID: 0008_conversation_turns
Revises: 0007_chunk_locators
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_conversation_turns"
down_revision: str | None = "0007_chunk_locators"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "conversation_turns",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("workspace_id", sa.String(), nullable=True),
        sa.Column("channel_id", sa.String(), nullable=False),
        sa.Column("thread_ts", sa.String(), nullable=False),
        sa.Column("message_ts", sa.String(), nullable=False),
        sa.Column("correlation_id", sa.String(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("cited", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_conversation_turns"),
    )
    op.create_index("ix_conversation_turns_channel_id_thread_ts", "conversation_turns", ["channel_id", "thread_ts"])
    op.create_index("ix_conversation_turns_channel_id_message_ts", "conversation_turns",
                    ["channel_id", "message_ts"])
    op.create_index("ix_conversation_turns_expires_at", "conversation_turns", ["expires_at"])
    with op.batch_alter_table("audit_events") as batch:
        batch.add_column(sa.Column("reading", sa.JSON(), nullable=True))
    with op.batch_alter_table("pending_clarifications") as batch:
        batch.add_column(sa.Column("thread_ts", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("pending_clarifications") as batch:
        batch.drop_column("thread_ts")
    with op.batch_alter_table("audit_events") as batch:
        batch.drop_column("reading")
    op.drop_index("ix_conversation_turns_expires_at", table_name="conversation_turns")
    op.drop_index("ix_conversation_turns_channel_id_message_ts", table_name="conversation_turns")
    op.drop_index("ix_conversation_turns_channel_id_thread_ts", table_name="conversation_turns")
    op.drop_table("conversation_turns")
