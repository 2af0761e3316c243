"""Small repositories for the bot's state: processed Slack events, feedback, pending clarifications.

Each returns frozen values, never ORM rows, so callers cannot lazily hit the database after the session.
Concurrency is settled by the database, not by locks in Python: several workers share these tables.
"""

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, Literal, cast

from sqlalchemy import Engine, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.domain import ClarifyOption
from core.storage.tables import FeedbackRow, PendingClarificationRow, ProcessedEventRow

Verdict = Literal["helpful", "not_helpful"]
CLARIFICATION_TTL: Final = timedelta(minutes=15)


def _now() -> datetime:
    return datetime.now(UTC)


class ProcessedEvents:
    """Slack event ids already handled, so a retried delivery (`x-slack-retry-num`) is processed once."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def first_time(self, event_id: str, *, at: datetime | None = None) -> bool:
        """True exactly once per id, across threads and workers: the primary key decides, not a read."""
        try:
            with Session(self._engine) as session, session.begin():
                session.add(ProcessedEventRow(event_id=event_id, received_at=at or _now()))
        except IntegrityError:
            return False
        return True

    def purge_older_than(self, cutoff: datetime) -> int:
        """Forget ids received before `cutoff`; Slack stops retrying within the hour."""
        with self._engine.begin() as connection:
            return connection.execute(delete(ProcessedEventRow).where(ProcessedEventRow.received_at < cutoff)
                                      ).rowcount


@dataclass(frozen=True, kw_only=True)
class FeedbackEntry:
    correlation_id: str
    user_ref: str
    verdict: Verdict
    at: datetime


class FeedbackLog:
    """Readers' verdicts on replies. Append-only: a changed mind is a second entry, the newest counts."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def record(self, correlation_id: str, user_ref: str, verdict: Verdict, *,
               at: datetime | None = None) -> FeedbackEntry:
        entry = FeedbackEntry(correlation_id=correlation_id, user_ref=user_ref, verdict=verdict,
                              at=at or _now())
        with Session(self._engine) as session, session.begin():
            session.add(FeedbackRow(correlation_id=entry.correlation_id, user_ref=entry.user_ref,
                                    verdict=entry.verdict, at=entry.at))
        return entry

    def for_correlation(self, correlation_id: str) -> list[FeedbackEntry]:
        """Every verdict on one reply, oldest first."""
        statement = (select(FeedbackRow).where(FeedbackRow.correlation_id == correlation_id)
                     .order_by(FeedbackRow.at, FeedbackRow.id))
        with Session(self._engine) as session:
            return [
                FeedbackEntry(correlation_id=row.correlation_id, user_ref=row.user_ref,
                              verdict=cast(Verdict, row.verdict),  # the CHECK constraint admits only these
                              at=row.at)
                for row in session.scalars(statement)
            ]


@dataclass(frozen=True, kw_only=True)
class PendingClarification:
    """A clarifying question waiting for the asker's click. Holds the raw question, hence the expiry."""

    id: str
    question: str
    user_id: str
    channel_id: str | None
    options: tuple[ClarifyOption, ...]
    created_at: datetime
    expires_at: datetime


class PendingClarifications:
    """Short-lived state between a clarifying question and the click that answers it."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def save(self, *, question: str, user_id: str, channel_id: str | None,
             options: tuple[ClarifyOption, ...], now: datetime | None = None,
             ttl: timedelta = CLARIFICATION_TTL, clarification_id: str | None = None) -> PendingClarification:
        """Store a pending clarification; its id goes into the buttons' values."""
        created = now or _now()
        pending = PendingClarification(id=clarification_id or uuid.uuid4().hex, question=question,
                                       user_id=user_id, channel_id=channel_id, options=options,
                                       created_at=created, expires_at=created + ttl)
        with Session(self._engine) as session, session.begin():
            session.add(PendingClarificationRow(
                id=pending.id, question=pending.question, user_id=pending.user_id,
                channel_id=pending.channel_id, created_at=pending.created_at, expires_at=pending.expires_at,
                options=[{"label": option.label, "refine": option.refine} for option in pending.options],
            ))
        return pending

    def take(self, clarification_id: str, now: datetime | None = None) -> PendingClarification | None:
        """Remove and return the pending clarification, at most once; None if unknown or expired.

        The delete comes first (DELETE ... RETURNING), so two concurrent clicks cannot both take it, and
        an expired one is gone after the attempt either way.
        """
        statement = delete(PendingClarificationRow).where(PendingClarificationRow.id == clarification_id)
        with Session(self._engine) as session, session.begin():
            row = session.scalars(statement.returning(PendingClarificationRow)).first()
            if row is None or row.expires_at <= (now or _now()):
                return None
            return _pending(row)

    def purge_expired(self, now: datetime | None = None) -> int:
        """Delete every clarification past its expiry, so raw questions do not outlive their use."""
        expired = delete(PendingClarificationRow).where(PendingClarificationRow.expires_at <= (now or _now()))
        with self._engine.begin() as connection:
            return connection.execute(expired).rowcount


def _pending(row: PendingClarificationRow) -> PendingClarification:
    return PendingClarification(
        id=row.id, question=row.question, user_id=row.user_id, channel_id=row.channel_id,
        options=tuple(ClarifyOption(label=item["label"], refine=item["refine"]) for item in row.options),
        created_at=row.created_at, expires_at=row.expires_at,
    )
