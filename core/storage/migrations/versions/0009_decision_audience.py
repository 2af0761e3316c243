"""Each decision records what its reply presented and to whom: the presented kind (which the Home tab counts
instead of the true kind), the audience (its parties and the channel it was posted in, so feedback counts only
from a reader of the reply) and the chunks the reply showed (a "this answered it" may name only one of those).

Records written before this revision get the presented kind their path gave (`not_permitted` presented as the
refusal absence would have given: the model's self-refusal, the weak-match refusal below the default retrieval
floor, else `not_in_corpus`); their audience and shown chunks are unknown (NULL), so only their asker's helpful
or not-helpful counts for them, and no "this answered it".

Revision ID: 0009_decision_audience
Revises: 0008_conversation_turns
Create Date: 2026-12-12
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0009_decision_audience"
down_revision: str | None = "0008_conversation_turns"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DEFAULT_FLOOR = 0.15
"""`RetrievalPolicy.floor` when these records were written: below it, a refusal presented as `not_retrieved`."""

_AUDIT = sa.table("audit_events", sa.column("correlation_id", sa.String()), sa.column("kind", sa.String()),
                  sa.column("presented_kind", sa.String()), sa.column("detail", sa.Text()),
                  sa.column("retrieved", sa.JSON()))


def presented(detail: str | None, retrieved: list[dict[str, Any]] | None) -> str:
    """What an older `not_permitted` record presented, from the orchestrator path its detail names."""
    if detail == "model reported found=false":
        return "model_self_refusal"
    if detail == "no statement answers" and retrieved:
        return "not_retrieved" if max(float(item["score"]) for item in retrieved) < DEFAULT_FLOOR else "not_in_corpus"
    return "not_in_corpus"


def upgrade() -> None:
    with op.batch_alter_table("audit_events") as batch:
        batch.add_column(sa.Column("presented_kind", sa.String(), nullable=True))
        batch.add_column(sa.Column("audience", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("shown", sa.JSON(), nullable=True))
    connection = op.get_bind()
    connection.execute(_AUDIT.update().where(_AUDIT.c.kind != "not_permitted")
                       .values(presented_kind=_AUDIT.c.kind))
    hidden = connection.execute(sa.select(_AUDIT.c.correlation_id, _AUDIT.c.detail, _AUDIT.c.retrieved)
                                .where(_AUDIT.c.kind == "not_permitted")).all()
    for correlation_id, detail, retrieved in hidden:
        connection.execute(_AUDIT.update().where(_AUDIT.c.correlation_id == correlation_id)
                           .values(presented_kind=presented(detail, retrieved)))
    with op.batch_alter_table("audit_events") as batch:
        batch.alter_column("presented_kind", existing_type=sa.String(), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("audit_events") as batch:
        batch.drop_column("shown")
        batch.drop_column("audience")
        batch.drop_column("presented_kind")
