"""The bot's small state: each Slack event once, feedback, and clarifications that expire."""

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from threading import Barrier

from sqlalchemy import Engine

from core.domain import ClarifyOption
from core.storage import FeedbackLog, PendingClarifications, ProcessedEvents

NOON = datetime(2026, 3, 14, 12, 0, tzinfo=UTC)
OPTIONS = (ClarifyOption(label="Corporate cards", refine="card limit (Corporate cards)?"),
           ClarifyOption(label="Tracking API", refine="card limit (Tracking API)?"))


def test_an_event_id_is_new_the_first_time_only(engine: Engine) -> None:
    events = ProcessedEvents(engine)
    assert events.first_time("Ev1") is True
    assert events.first_time("Ev1") is False
    assert events.first_time("Ev2") is True


def test_concurrent_deliveries_of_one_event_pass_exactly_once(engine: Engine) -> None:
    events = ProcessedEvents(engine)
    workers = 6
    start = Barrier(workers)

    def deliver(_: int) -> bool:
        start.wait()
        return events.first_time("EvRace")

    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(deliver, range(workers)))
    assert results.count(True) == 1


def test_old_event_ids_are_purged_and_recent_ones_kept(engine: Engine) -> None:
    events = ProcessedEvents(engine)
    events.first_time("old", at=NOON - timedelta(hours=3))
    events.first_time("recent", at=NOON)
    assert events.purge_older_than(NOON - timedelta(hours=1)) == 1
    assert events.first_time("old") is True
    assert events.first_time("recent") is False


def test_feedback_is_kept_per_reply_in_order(engine: Engine) -> None:
    feedback = FeedbackLog(engine)
    feedback.record("c-1", "U1", "helpful", at=NOON)
    feedback.record("c-2", "U1", "not_helpful", at=NOON)
    feedback.record("c-1", "U2", "not_helpful", at=NOON + timedelta(minutes=1))
    entries = feedback.for_correlation("c-1")
    assert [(e.user_ref, e.verdict) for e in entries] == [("U1", "helpful"), ("U2", "not_helpful")]
    assert entries[0].at == NOON


def test_a_pending_clarification_is_taken_once_before_it_expires(engine: Engine) -> None:
    pending = PendingClarifications(engine)
    saved = pending.save(question="card limit?", user_id="U1", channel_id="C1", options=OPTIONS, now=NOON,
                         ttl=timedelta(minutes=15))
    taken = pending.take(saved.id, NOON + timedelta(minutes=5))
    assert taken == saved
    assert taken.options == OPTIONS
    assert pending.take(saved.id, NOON + timedelta(minutes=6)) is None


def test_an_expired_clarification_cannot_be_taken(engine: Engine) -> None:
    pending = PendingClarifications(engine)
    saved = pending.save(question="card limit?", user_id="U1", channel_id=None, options=OPTIONS, now=NOON,
                         ttl=timedelta(minutes=15))
    assert pending.take(saved.id, NOON + timedelta(minutes=15)) is None
    assert pending.take("unknown", NOON) is None


def test_purging_removes_only_expired_clarifications(engine: Engine) -> None:
    pending = PendingClarifications(engine)
    old = pending.save(question="a?", user_id="U1", channel_id="C1", options=OPTIONS, now=NOON - timedelta(hours=1))
    live = pending.save(question="b?", user_id="U1", channel_id="C1", options=OPTIONS, now=NOON)
    assert pending.purge_expired(NOON + timedelta(minutes=1)) == 1
    assert pending.take(old.id, NOON + timedelta(minutes=1)) is None
    assert pending.take(live.id, NOON + timedelta(minutes=1)) == live
