"""The audit log in SQL: the `AuditSink` port, and reading records back for `sourced audit` and retention.

An `AuditRecord` is stored column for column; its tuples of value objects become JSON lists of objects, so
the table stays readable with plain SQL (`SELECT cited FROM audit_events WHERE ...`). A claim's quote anchor
(offsets in its chunk and the span's hash) is stored in that claim's entry of `claim_map`, so the citation log
needs no new column.
"""

import builtins
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Engine, delete, select, update
from sqlalchemy.orm import Session

from core.application.audit import AnswerabilityNote, AuditRecord, CitedId, QuoteAnchor, ReadingNote, ScoredId
from core.domain import Audience, OutcomeKind, Party, RiskLevel
from core.storage.tables import AuditEventRow


class SqlAuditLog:
    """Audit records in the `audit_events` table. A write either commits whole or raises."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def write(self, record: AuditRecord) -> None:
        """Store one record. A second record with the same correlation id is refused by the primary key."""
        with Session(self._engine) as session, session.begin():
            session.add(_to_row(record))

    def get(self, correlation_id: str) -> AuditRecord | None:
        with Session(self._engine) as session:
            row = session.get(AuditEventRow, correlation_id)
            return None if row is None else _from_row(row)

    def note(self, correlation_id: str, note: str) -> bool:
        """Add what happened after the decision (e.g. a streamed answer replaced) to the record's detail."""
        with Session(self._engine) as session, session.begin():
            row = session.get(AuditEventRow, correlation_id)
            if row is None:
                return False
            session.execute(update(AuditEventRow).where(AuditEventRow.correlation_id == correlation_id)
                            .values(detail="; ".join(part for part in (row.detail, note) if part)))
        return True

    def purge_older_than(self, cutoff: datetime) -> int:
        """Delete records from before `cutoff` (retention); returns how many went."""
        with self._engine.begin() as connection:
            result = connection.execute(delete(AuditEventRow).where(AuditEventRow.at < cutoff))
        return result.rowcount

    def list(self, limit: int = 20) -> builtins.list[AuditRecord]:
        """The newest records first."""
        newest = select(AuditEventRow).order_by(AuditEventRow.at.desc(), AuditEventRow.correlation_id.desc())
        with Session(self._engine) as session:
            return [_from_row(row) for row in session.scalars(newest.limit(limit))]


def _to_row(record: AuditRecord) -> AuditEventRow:
    return AuditEventRow(
        correlation_id=record.correlation_id,
        at=record.at,
        workspace_id=record.workspace_id,
        channel_id=record.channel_id,
        user_ref=record.user_ref,
        question_sha256=record.question_sha256,
        question_preview=record.question_preview,
        risk=record.risk,
        kind=record.kind,
        presented_kind=record.presented_kind,
        audience=None if record.audience is None else audience_json(record.audience),
        shown=list(record.shown),
        retrieved=[{"chunk_id": item.chunk_id, "score": item.score} for item in record.retrieved],
        cited=[_cited_entry(item) for item in record.cited],
        claim_map=_claim_entries(record),
        model=record.model,
        prompt_version=record.prompt_version,
        latency_ms=record.latency_ms,
        detail=record.detail,
        answerability=None if record.answerability is None else {
            "score": record.answerability.score, "threshold": record.answerability.threshold,
            "model_version": record.answerability.model_version, "reader": record.answerability.reader,
            "strongest": [{"feature": name, "contribution": value} for name, value in record.answerability.strongest],
        },
        reading=None if record.reading is None else {
            "by": record.reading.by, "followup": record.reading.followup, "sha256": record.reading.sha256,
            "preview": record.reading.preview},
    )


def _cited_entry(item: CitedId) -> dict[str, Any]:
    """A cited chunk; its locator (heading path, page, link) only where it has one, so older rows read alike."""
    entry: dict[str, Any] = {"chunk_id": item.chunk_id, "content_hash": item.content_hash}
    for key, value in (("heading", item.heading), ("page", item.page), ("link", item.link)):
        if value is not None:
            entry[key] = value
    return entry


def _from_row(row: AuditEventRow) -> AuditRecord:
    return AuditRecord(
        correlation_id=row.correlation_id,
        at=row.at,
        workspace_id=row.workspace_id,
        channel_id=row.channel_id,
        user_ref=row.user_ref,
        question_sha256=row.question_sha256,
        question_preview=row.question_preview,
        risk=cast(RiskLevel | None, row.risk),  # written from the same Literal types, read back as is
        kind=cast(OutcomeKind, row.kind),
        shown_as=None if row.presented_kind == row.kind else cast(OutcomeKind, row.presented_kind),
        audience=None if row.audience is None else audience_from_json(row.audience),
        shown=tuple(row.shown or ()),
        retrieved=tuple(ScoredId(chunk_id=i["chunk_id"], score=float(i["score"])) for i in row.retrieved),
        cited=tuple(CitedId(chunk_id=i["chunk_id"], content_hash=i["content_hash"], heading=i.get("heading"),
                            page=i.get("page"), link=i.get("link")) for i in row.cited),
        claim_map=tuple((int(i["claim"]), tuple(i["chunk_ids"])) for i in row.claim_map),
        quotes=tuple(_quote_anchor(int(i["claim"]), i["quote"]) for i in row.claim_map if i.get("quote")),
        model=row.model,
        prompt_version=row.prompt_version,
        latency_ms=row.latency_ms,
        detail=row.detail,
        answerability=None if row.answerability is None else AnswerabilityNote(
            score=float(row.answerability["score"]), threshold=float(row.answerability["threshold"]),
            model_version=str(row.answerability["model_version"]), reader=row.answerability.get("reader"),
            strongest=tuple((str(i["feature"]), float(i["contribution"])) for i in row.answerability["strongest"]),
        ),
        reading=None if row.reading is None else ReadingNote(
            by=str(row.reading["by"]), followup=bool(row.reading["followup"]), sha256=row.reading.get("sha256"),
            preview=row.reading.get("preview")),
    )


def audience_json(audience: Audience) -> dict[str, Any]:
    return {"posted_in": audience.posted_in,
            "parties": [{"roles": sorted(party.roles), "guest": party.is_guest} for party in audience.parties]}


def audience_from_json(stored: dict[str, Any]) -> Audience:
    return Audience(posted_in=stored.get("posted_in"),
                    parties=tuple(Party(roles=frozenset(item["roles"]), is_guest=bool(item["guest"]))
                                  for item in stored["parties"]))


def _claim_entries(record: AuditRecord) -> list[dict[str, Any]]:
    quotes = {anchor.claim: anchor for anchor in record.quotes}
    entries: list[dict[str, Any]] = []
    for n, ids in record.claim_map:
        entry: dict[str, Any] = {"claim": n, "chunk_ids": list(ids)}
        if n in quotes:
            anchor = quotes[n]
            entry["quote"] = {"chunk_id": anchor.chunk_id, "start": anchor.start, "end": anchor.end,
                              "sha256": anchor.sha256, "given": anchor.given}
        entries.append(entry)
    return entries


def _quote_anchor(claim: int, stored: dict[str, Any]) -> QuoteAnchor:
    return QuoteAnchor(claim=claim, chunk_id=stored["chunk_id"], start=int(stored["start"]),
                       end=int(stored["end"]), sha256=stored["sha256"], given=bool(stored["given"]))
