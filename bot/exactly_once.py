"""Each Slack event is answered once, across threads, processes and hosts, and none is lost with a worker.

Slack redelivers an event it believes failed (`x-slack-retry-num`, or `retry_attempt` in Socket Mode). The
first delivery of an `event_id` claims it in the database (`ProcessedEvents.claim`: the primary key decides);
any later one finds it claimed and is dropped before any identity lookup, retrieval or reply.

The claim is the first step of the reply job, not of the acknowledgement: every delivery is acknowledged at
once (so Slack stops retrying), and no database write sits in the path Slack waits on. Measured on two cores
with SQLite, a claim in the acknowledgement path waited up to 220 ms for the write lock under 20 concurrent
mentions (SQLite's busy handler sleeps in steps of up to 100 ms); a claim in the job costs the person nothing.

A claim is leased. Its holder renews the lease while the answer is computed (`LeaseKeeper`, one thread per
process) and finishes the claim once the reply has gone. A worker that dies mid-question (killed, out of memory,
its host gone) leaves a claim unfinished whose lease runs out; the claim keeps what answering needs (the question
and the signed ids, cleared when finished). Then whichever comes first takes it over, exactly one of them: a
redelivery of the event by Slack, or the sweep every worker runs (`Sweeper`), which also covers the death of a
worker after Slack had its acknowledgement and so will not redeliver. A claim abandoned longer than
`GIVE_UP_AFTER` is finished unanswered: a reply that late would answer a question the person has moved on from.
"""

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from prometheus_client import Counter

from core.storage.repositories import ProcessedEvents

log = logging.getLogger(__name__)

KEEP_EVENT_IDS: Final = timedelta(days=1)
"""Slack stops retrying an event within the hour; a day leaves a wide margin."""
PURGE_EVERY_S: Final = 3600.0
GIVE_UP_AFTER: Final = timedelta(minutes=15)
FINISH_PATIENCE_S: Final = 60.0
"""How long a worker keeps trying to record an event as answered (the database refusing writes) before it
lets the claim go; a question is rarely answered twice, but a claim never finished would be."""
FINISH_RETRY_S: Final = 0.5

DUPLICATES: Final = Counter("sourced_slack_duplicate_events_total",
                            "Redelivered events acknowledged and dropped")
RESUMED: Final = Counter("sourced_slack_resumed_events_total",
                         "Events another worker claimed and never finished, taken over and answered here")
ABANDONED: Final = Counter("sourced_slack_abandoned_events_total",
                           "Events whose worker died and that were not taken over in time")

Resume = Callable[[str, dict[str, Any]], None]
"""Answer an event taken over, from the payload its first claim stored."""


def holder_name() -> str:
    """This process, for the claims it holds: host and pid, and a nonce (a pid is reused after a restart)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class EventClaims:
    """The exactly-once gate, with leases kept alive while this process holds them."""

    def __init__(self, events: ProcessedEvents, *, lease: timedelta, holder: str | None = None,
                 finish_patience_s: float = FINISH_PATIENCE_S) -> None:
        self._events = events
        self._finish_patience_s = finish_patience_s
        self._lease = lease
        self._holder = holder or holder_name()
        self._keeper = LeaseKeeper(events, holder=self._holder, lease=lease)
        self._purge = EventLogPurge(events)

    def claim(self, event_id: str, *, payload: dict[str, Any], retry: str | None = None) -> bool:
        """True for exactly one delivery of the event, whose caller then answers it inside `holding`; False for
        the others. Raises when the database refuses the claim (the caller tells the person)."""
        if not self._events.claim(event_id, holder=self._holder, lease=self._lease, payload=payload):
            DUPLICATES.inc()
            log.info("event %s already claimed; redelivery (retry %s) acknowledged and dropped", event_id,
                     retry or "-")
            return False
        try:
            self._purge.maybe_purge()
        except Exception:  # housekeeping; the claim is held and the question must still be answered
            log.warning("could not forget old event ids; trying again later", exc_info=True)
        return True

    def holds(self, event_id: str) -> bool:
        """Whether this process holds the claim right now (answering it, or finishing it)."""
        return self._keeper.holds(event_id)

    def take_over(self, event_id: str) -> dict[str, Any] | None:
        """Claim an event whose holder died; its payload when the claim is now this process's. The claim is held
        (its lease renewed) from here on, not only once a reply thread starts on it: a backlog longer than the
        lease would otherwise let a sweep, this process's or another's, take it over a second time."""
        if not self._events.claim(event_id, holder=self._holder, lease=self._lease):
            return None
        payload = self._events.payload(event_id)
        if payload is None:  # claimed before payloads were kept: nothing to answer from
            self._events.finish(event_id)
            return None
        self._keeper.hold(event_id)
        return payload

    @contextmanager
    def holding(self, event_id: str) -> Iterator[None]:
        """Keep the lease alive during the block (already held after `take_over`); finish the claim after it,
        however the block ended."""
        self._keeper.hold(event_id)
        try:
            yield
        finally:
            try:
                self._finish(event_id)
            finally:
                self._keeper.release(event_id)

    def _finish(self, event_id: str) -> None:
        """Finish the claim, trying again while the database refuses writes: an unfinished claim whose lease
        runs out is taken over and answered a second time. Until then the claim stays held here, so this
        process's own sweep leaves it alone."""
        deadline = time.monotonic() + self._finish_patience_s
        while True:
            try:
                self._events.finish(event_id)
                return
            except Exception:
                if time.monotonic() > deadline:
                    log.error("could not record event %s as answered for %.0f s; another worker may answer "
                              "it again", event_id, self._finish_patience_s)
                    raise
                log.warning("could not record event %s as answered yet; trying again", event_id)
                time.sleep(FINISH_RETRY_S)

    def give_up(self, event_id: str) -> None:
        try:
            self._events.finish(event_id)
        finally:
            self._keeper.release(event_id)


class LeaseKeeper:
    """Renews the leases of the claims this process holds, a third of a lease apart, on one daemon thread."""

    def __init__(self, events: ProcessedEvents, *, holder: str, lease: timedelta) -> None:
        self._events = events
        self._holder = holder
        self._lease = lease
        self._held: set[str] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def hold(self, event_id: str) -> None:
        with self._lock:
            self._held.add(event_id)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sourced-leases", daemon=True)
                self._thread.start()

    def release(self, event_id: str) -> None:
        with self._lock:
            self._held.discard(event_id)

    def holds(self, event_id: str) -> bool:
        with self._lock:
            return event_id in self._held

    def _run(self) -> None:
        while True:
            time.sleep(self._lease.total_seconds() / 3)
            with self._lock:
                held = sorted(self._held)
            try:
                self._events.renew(held, holder=self._holder, lease=self._lease)
            except Exception:  # the database may be briefly away; the next round tries again
                log.warning("could not renew %d event leases", len(held), exc_info=True)


class Sweeper:
    """Takes over the events whose worker died, on one daemon thread per process, every half lease."""

    def __init__(self, events: ProcessedEvents, claims: EventClaims, *, resume: Resume, lease: timedelta,
                 give_up_after: timedelta = GIVE_UP_AFTER) -> None:
        self._events = events
        self._claims = claims
        self._resume = resume
        self._every_s = lease.total_seconds() / 2
        self._give_up_after = give_up_after
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sourced-sweep", daemon=True)

    def start(self) -> "Sweeper":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def sweep(self) -> int:
        """One pass; returns how many events were taken over."""
        taken = 0
        for event_id, received_at in self._events.abandoned():
            if self._claims.holds(event_id):  # alive here, its lease only lapsed while the database was away
                continue
            if datetime.now(UTC) - received_at > self._give_up_after:
                ABANDONED.inc()
                log.warning("event %s abandoned by its worker %s ago; not answered", event_id,
                            datetime.now(UTC) - received_at)
                self._claims.give_up(event_id)
                continue
            payload = self._claims.take_over(event_id)
            if payload is not None:
                RESUMED.inc()
                log.info("event %s taken over from a worker that did not finish it", event_id)
                self._resume(event_id, payload)
                taken += 1
        return taken

    def _run(self) -> None:
        while not self._stop.wait(self._every_s):
            try:
                self.sweep()
            except Exception:  # the database may be briefly away; the next round tries again
                log.warning("the sweep for abandoned events failed", exc_info=True)


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
