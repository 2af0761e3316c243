"""Small repositories for the bot's state: processed Slack events, feedback, pending clarifications, the turns
of conversations.

Each returns frozen values, never ORM rows, so callers cannot lazily hit the database after the session.
Concurrency is settled by the database, not by locks in Python: several workers share these tables.
"""

import uuid
from collections.abc import Collection, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final, cast

from sqlalchemy import Engine, delete, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.application.audit import user_reference
from core.application.feedback import FeedbackEntry, LabelledPair, Verdict
from core.application.ports import PendingClarification
from core.domain import ClarifyOption, OutcomeKind, RecordedTurn, Thread, Turn
from core.storage.tables import (
    AuditEventRow,
    ConversationTurnRow,
    FeedbackRow,
    PendingClarificationRow,
    ProcessedEventRow,
)

CLARIFICATION_TTL: Final = timedelta(minutes=15)
CONVERSATION_TTL: Final = timedelta(minutes=60)
"""How long a turn's question is kept for follow-ups: a conversation in Slack rarely pauses longer, and a
follow-up after that is read alone (the reply then shows no reading)."""


def _now() -> datetime:
    return datetime.now(UTC)


class ProcessedEvents:
    """Slack event ids claimed by a worker, so each event is answered once across threads, processes and hosts,
    and an answer a dead worker never finished is not lost.

    A claim is a row keyed by the event id: the primary key decides who claims first, not a read. While the
    reply is computed the claim is leased to its holder, who renews the lease; when the reply has gone it is
    finished. A claim left unfinished with its lease run out (its worker died) may be taken over by a single
    other claimant: an update conditioned on the expired lease, so two cannot both win it. `payload` keeps what
    answering needs (the question and the signed ids) until the claim is finished, then is cleared.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def claim(self, event_id: str, *, holder: str, lease: timedelta, payload: dict[str, Any] | None = None,
              at: datetime | None = None) -> bool:
        """True when the caller now holds the event: claimed first, or taken over from a holder whose lease ran
        out unfinished. False when it was finished, or another holder's lease still runs."""
        now = at or _now()
        try:
            with Session(self._engine) as session, session.begin():
                session.add(ProcessedEventRow(event_id=event_id, received_at=now, lease_until=now + lease,
                                              holder=holder, payload=payload))
        except IntegrityError:
            return self._take_over(event_id, holder=holder, lease=lease, now=now)
        return True

    def _take_over(self, event_id: str, *, holder: str, lease: timedelta, now: datetime) -> bool:
        with self._engine.begin() as connection:
            taken = connection.execute(
                update(ProcessedEventRow)
                .where(ProcessedEventRow.event_id == event_id, ProcessedEventRow.done_at.is_(None),
                       ProcessedEventRow.lease_until < now)
                .values(lease_until=now + lease, holder=holder)).rowcount
        return taken == 1

    def renew(self, event_ids: Sequence[str], *, holder: str, lease: timedelta) -> int:
        """Extend the leases this holder still has on these events; returns how many."""
        if not event_ids:
            return 0
        with self._engine.begin() as connection:
            return connection.execute(
                update(ProcessedEventRow)
                .where(ProcessedEventRow.event_id.in_(event_ids), ProcessedEventRow.holder == holder,
                       ProcessedEventRow.done_at.is_(None))
                .values(lease_until=_now() + lease)).rowcount

    def finish(self, event_id: str, *, at: datetime | None = None) -> None:
        """The reply has gone (or was given up): never again, and the question is forgotten."""
        with self._engine.begin() as connection:
            connection.execute(update(ProcessedEventRow).where(ProcessedEventRow.event_id == event_id)
                               .values(done_at=at or _now(), lease_until=None, payload=None))

    def payload(self, event_id: str) -> dict[str, Any] | None:
        with self._engine.connect() as connection:
            found = connection.execute(select(ProcessedEventRow.payload)
                                       .where(ProcessedEventRow.event_id == event_id)).scalar()
        return dict(found) if found else None

    def abandoned(self, *, now: datetime | None = None, limit: int = 20) -> list[tuple[str, datetime]]:
        """Unfinished claims whose lease ran out (their worker died), oldest first, with when they came."""
        with self._engine.connect() as connection:
            rows = connection.execute(
                select(ProcessedEventRow.event_id, ProcessedEventRow.received_at)
                .where(ProcessedEventRow.done_at.is_(None), ProcessedEventRow.lease_until < (now or _now()))
                .order_by(ProcessedEventRow.received_at).limit(limit)).all()
        return [(event_id, received_at) for event_id, received_at in rows]

    def first_time(self, event_id: str, *, at: datetime | None = None) -> bool:
        """Claimed and finished at once: true exactly once per id (work that needs no lease)."""
        now = at or _now()
        try:
            with Session(self._engine) as session, session.begin():
                session.add(ProcessedEventRow(event_id=event_id, received_at=now, done_at=now))
        except IntegrityError:
            return False
        return True

    def purge_older_than(self, cutoff: datetime) -> int:
        """Forget ids received before `cutoff`; Slack stops retrying within the hour."""
        with self._engine.begin() as connection:
            return connection.execute(delete(ProcessedEventRow).where(ProcessedEventRow.received_at < cutoff)
                                      ).rowcount


class FeedbackLog:
    """Readers' verdicts on replies, one per reader and reply: the first counts, a second is not stored."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def record(self, correlation_id: str, user_ref: str, verdict: Verdict, *, chunk_id: str | None = None,
               at: datetime | None = None) -> FeedbackEntry | None:
        """The stored entry, or None when this reader has already rated this reply (the database decides)."""
        entry = FeedbackEntry(correlation_id=correlation_id, user_ref=user_ref, verdict=verdict,
                              at=at or _now(), chunk_id=chunk_id)
        try:
            with Session(self._engine) as session, session.begin():
                session.add(FeedbackRow(correlation_id=entry.correlation_id, user_ref=entry.user_ref,
                                        verdict=entry.verdict, chunk_id=entry.chunk_id, at=entry.at))
        except IntegrityError:
            return None
        return entry

    def labelled_pairs(self, *, reader_key: bytes, with_previews: bool = False,
                       correlation_ids: Collection[str] | None = None) -> Iterator[LabelledPair]:
        """(question, chunk, label, reader) for refitting answerability, oldest first: the chunk a "this
        answered it" names, and every chunk an answer rated helpful or not cited. The question is its hash; its
        redacted preview only when the operator asks for it; the reader an HMAC of their stored reference under
        `reader_key`. `correlation_ids`: only these decisions' verdicts."""
        statement = (select(FeedbackRow.verdict, FeedbackRow.chunk_id, FeedbackRow.user_ref,
                            AuditEventRow.question_sha256, AuditEventRow.question_preview, AuditEventRow.cited)
                     .join(AuditEventRow, AuditEventRow.correlation_id == FeedbackRow.correlation_id)
                     .order_by(FeedbackRow.at, FeedbackRow.id))
        if correlation_ids is not None:
            statement = statement.where(FeedbackRow.correlation_id.in_(correlation_ids))
        with self._engine.connect() as connection:
            rows = connection.execute(statement).all()
        for verdict, chunk_id, user_ref, sha256, preview, cited in rows:
            reader = user_reference(user_ref, reader_key)
            for rated in [chunk_id] if chunk_id else [item["chunk_id"] for item in cited]:
                yield LabelledPair(question_sha256=sha256, chunk_id=rated,
                                   label=cast(Verdict, verdict),  # the CHECK constraint admits only these
                                   reader=reader, question_preview=preview if with_previews else None)

    def for_correlation(self, correlation_id: str) -> list[FeedbackEntry]:
        """Every verdict on one reply, oldest first."""
        statement = (select(FeedbackRow).where(FeedbackRow.correlation_id == correlation_id)
                     .order_by(FeedbackRow.at, FeedbackRow.id))
        with Session(self._engine) as session:
            return [
                FeedbackEntry(correlation_id=row.correlation_id, user_ref=row.user_ref,
                              verdict=cast(Verdict, row.verdict),  # the CHECK constraint admits only these
                              at=row.at, chunk_id=row.chunk_id)
                for row in session.scalars(statement)
            ]


class PendingClarifications:
    """Short-lived state between a clarifying question and the click that answers it."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def save(self, *, question: str, user_id: str, channel_id: str | None,
             options: tuple[ClarifyOption, ...], now: datetime | None = None,
             ttl: timedelta = CLARIFICATION_TTL, clarification_id: str | None = None,
             thread_ts: str | None = None) -> PendingClarification:
        """Store a pending clarification; its id goes into the buttons' values. `thread_ts`: the thread it
        was asked in, whose next turn the chosen reading becomes."""
        created = now or _now()
        pending = PendingClarification(id=clarification_id or uuid.uuid4().hex, question=question,
                                       user_id=user_id, channel_id=channel_id, options=options,
                                       created_at=created, expires_at=created + ttl, thread_ts=thread_ts)
        with Session(self._engine) as session, session.begin():
            session.add(PendingClarificationRow(
                id=pending.id, question=pending.question, user_id=pending.user_id, thread_ts=pending.thread_ts,
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
        created_at=row.created_at, expires_at=row.expires_at, thread_ts=row.thread_ts,
    )


class ConversationTurns:
    """The `TurnStore` port in SQL: the recent turns of each thread, each forgotten `ttl` after it was asked.

    A turn is found by its thread, and also by the message that asked it: in a direct message a person may
    answer at the top level or in the thread of their own message, and both continue the conversation."""

    def __init__(self, engine: Engine, *, ttl: timedelta = CONVERSATION_TTL) -> None:
        self._engine = engine
        self._ttl = ttl

    @property
    def keeps_turns(self) -> bool:
        """False when the deployment keeps no conversation state (`SOURCED_CONVERSATION_TTL_MINUTES=0`)."""
        return self._ttl > timedelta(0)

    def record(self, thread: Thread, *, message_id: str, correlation_id: str, turn: Turn,
               now: datetime | None = None) -> None:
        if not self.keeps_turns or turn.kind is None:
            return
        created = now or _now()
        self.purge_expired(created)
        with Session(self._engine) as session, session.begin():
            session.add(ConversationTurnRow(
                workspace_id=thread.workspace_id, channel_id=thread.channel_id, thread_ts=thread.thread_id,
                message_ts=message_id, correlation_id=correlation_id, question=turn.question, kind=turn.kind,
                cited=list(turn.cited), created_at=created, expires_at=created + self._ttl))

    def recent(self, thread: Thread, *, limit: int, now: datetime | None = None) -> list[RecordedTurn]:
        if not self.keeps_turns or limit <= 0:
            return []
        row = ConversationTurnRow
        in_thread = (row.thread_ts == thread.thread_id if not thread.thread_id
                     else or_(row.thread_ts == thread.thread_id, row.message_ts == thread.thread_id))
        same_workspace = (row.workspace_id.is_(None) if thread.workspace_id is None
                          else row.workspace_id == thread.workspace_id)
        statement = (select(row).where(row.channel_id == thread.channel_id, in_thread, same_workspace,
                                       row.expires_at > (now or _now()))
                     .order_by(row.id.desc()).limit(limit))
        with Session(self._engine) as session:
            found = [RecordedTurn(message_id=item.message_ts, turn=Turn(
                question=item.question, kind=cast(OutcomeKind, item.kind),  # written from the same Literal
                cited=tuple(item.cited))) for item in session.scalars(statement)]
        return found[::-1]

    def purge_expired(self, now: datetime | None = None) -> int:
        """Delete every turn past its expiry, so raw questions do not outlive the conversation."""
        expired = delete(ConversationTurnRow).where(ConversationTurnRow.expires_at <= (now or _now()))
        with self._engine.begin() as connection:
            return connection.execute(expired).rowcount
