"""Each Slack event is processed once, across threads and workers.

Slack redelivers an event it believes failed (`x-slack-retry-num`, or `retry_attempt` in Socket Mode). The
first delivery of an `event_id` inserts a row whose primary key is the id; any later one loses that race in
the database and is dropped before any identity lookup, retrieval or reply.

The claim is the first step of the reply job, not of the acknowledgement: every delivery is acknowledged at
once (so Slack stops retrying), and no database write sits in the path Slack waits on. Measured on two cores
with SQLite, a claim in the acknowledgement path waited up to 220 ms for the write lock under 20 concurrent
mentions (SQLite's busy handler sleeps in steps of up to 100 ms); a claim in the job costs the person nothing.
"""

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Final

from prometheus_client import Counter

from core.storage.repositories import ProcessedEvents

log = logging.getLogger(__name__)

KEEP_EVENT_IDS: Final = timedelta(days=1)
"""Slack stops retrying an event within the hour; a day leaves a wide margin."""
PURGE_EVERY_S: Final = 3600.0

DUPLICATES: Final = Counter("sourced_slack_duplicate_events_total",
                            "Redelivered events acknowledged and dropped")


class EventClaims:
    """The exactly-once gate: `first_time` is true for exactly one delivery of each event id."""

    def __init__(self, events: ProcessedEvents) -> None:
        self._events = events
        self._purge = EventLogPurge(events)

    def first_time(self, event_id: str, *, retry: str | None = None) -> bool:
        if self._events.first_time(event_id):
            self._purge.maybe_purge()
            return True
        DUPLICATES.inc()
        log.info("event %s already processed; redelivery (retry %s) acknowledged and dropped",
                 event_id, retry or "-")
        return False


class EventLogPurge:
    """Forgets processed event ids once Slack can no longer redeliver them, at most once per interval.

    Run from reply jobs, never from the acknowledgement path."""

    def __init__(self, events: ProcessedEvents, *, keep: timedelta = KEEP_EVENT_IDS,
                 every_s: float = PURGE_EVERY_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._events = events
        self._keep = keep
        self._every_s = every_s
        self._clock = clock
        self._lock = threading.Lock()
        self._last: float | None = None

    def maybe_purge(self) -> int:
        with self._lock:
            now = self._clock()
            if self._last is not None and now - self._last < self._every_s:
                return 0
            self._last = now
        removed = self._events.purge_older_than(datetime.now(UTC) - self._keep)
        if removed:
            log.info("forgot %d processed event ids older than %s", removed, self._keep)
        return removed
