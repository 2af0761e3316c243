"""Feedback on a refusal's closest passages: a "this answered it" verdict names its chunk, and each reader rates a
reply once (the older of a reader's duplicate verdicts are dropped, the newest counts, as before).

Revision ID: 0005_feedback_on_closest
Revises: 0004_postgres_index
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_feedback_on_closest"
down_revision: str | None = "0004_postgres_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLDER_DUPLICATES = sa.text(
    "DELETE FROM feedback WHERE EXISTS (SELECT 1 FROM feedback AS newer "
    "WHERE newer.correlation_id = feedback.correlation_id AND newer.user_ref = feedback.user_ref "
    "AND (newer.at > feedback.at OR (newer.at = feedback.at AND newer.id > feedback.id)))")


def upgrade() -> None:
    op.execute(_OLDER_DUPLICATES)
    with op.batch_alter_table("feedback") as batch:
        batch.add_column(sa.Column("chunk_id", sa.String(), nullable=True))
        batch.drop_constraint("ck_feedback_verdict", type_="check")
        batch.create_check_constraint("ck_feedback_verdict", "verdict IN ('helpful', 'not_helpful', 'answered_it')")
        batch.create_unique_constraint("uq_feedback_correlation_id_user_ref", ["correlation_id", "user_ref"])


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM feedback WHERE verdict = 'answered_it'"))
    with op.batch_alter_table("feedback") as batch:
        batch.drop_constraint("uq_feedback_correlation_id_user_ref", type_="unique")
        batch.drop_constraint("ck_feedback_verdict", type_="check")
        batch.create_check_constraint("ck_feedback_verdict", "verdict IN ('helpful', 'not_helpful')")
        batch.drop_column("chunk_id")
