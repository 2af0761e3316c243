"""The `Catalog` and `ActivityLog` ports over the documents, audit and feedback tables.

The activity counts decisions by the kind their replies presented, never the true kind: whoever reads the Home
tab (any operator) learns nothing about hidden documents that the askers themselves did not.

Both read whole tables into memory and filter or add up in Python: the audience check is the domain's own
`is_visible`, the same rule retrieval applies, and a week of audit rows is small next to what one search reads.
"""

from collections import Counter, defaultdict
from datetime import datetime

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from core.application.catalog import Activity, DocumentSummary, percentile
from core.domain import ANSWERED, Audience, is_visible
from core.storage.tables import AuditEventRow, DocumentRoleRow, DocumentRow, FeedbackRow

CLARIFIED = "ambiguous"
NOT_A_QUESTION = frozenset({"invalid_query"})
"""Audit kinds that are no refusal of a question: the person typed nothing answerable."""


class SqlCatalog:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def documents(self, audience: Audience) -> list[DocumentSummary]:
        with Session(self._engine) as session:
            roles: defaultdict[str, set[str]] = defaultdict(set)
            for doc_id, role in session.execute(select(DocumentRoleRow.doc_id, DocumentRoleRow.role)):
                roles[doc_id].add(role)
            rows = [row for row in session.scalars(select(DocumentRow))
                    if is_visible(frozenset(roles[row.doc_id]), audience)]
        superseded = {old for row in rows for old in row.supersedes}
        return [DocumentSummary(doc_id=row.doc_id, title=row.title, owner=row.owner, updated=row.updated,
                                ingested_at=row.ingested_at) for row in rows if row.doc_id not in superseded]


class SqlActivityLog:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def since(self, start: datetime) -> Activity:
        decisions = (select(AuditEventRow.presented_kind, AuditEventRow.latency_ms, AuditEventRow.retrieved)
                     .where(AuditEventRow.at >= start))
        verdicts = (select(FeedbackRow.verdict, func.count()).where(FeedbackRow.at >= start)
                    .group_by(FeedbackRow.verdict))
        with Session(self._engine) as session:
            rows = session.execute(decisions).all()
            feedback = {verdict: count for verdict, count in session.execute(verdicts)}
        refused = Counter(kind for kind, _, _ in rows if kind not in {ANSWERED, CLARIFIED} | NOT_A_QUESTION)
        return Activity(
            answered=sum(1 for kind, _, _ in rows if kind == ANSWERED),
            refused=dict(refused.most_common()),
            clarified=sum(1 for kind, _, _ in rows if kind == CLARIFIED),
            helpful=int(feedback.get("helpful", 0)),
            not_helpful=int(feedback.get("not_helpful", 0)),
            dead_ends=sum(1 for kind, _, retrieved in rows if kind in refused and not retrieved),
            p95_latency_ms=percentile([latency for _, latency, _ in rows], 95),
        )
