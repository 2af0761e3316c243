"""An event taken over from a dead worker is answered once, even when the reply waits in a backlog longer than
the lease: the claim is held (renewed) from the take-over on, by this process's sweep and against others'."""

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine

from bot.exactly_once import EventClaims, Sweeper
from core.storage import ProcessedEvents

LEASE = timedelta(seconds=0.6)


def sweeper(events: ProcessedEvents, holder: str, resumed: list[str]) -> tuple[Sweeper, EventClaims]:
    claims = EventClaims(events, lease=LEASE, holder=holder)

    def queue_without_starting(event_id: str, payload: dict[str, Any]) -> None:  # a reply pool's backlog
        resumed.append(event_id)

    return Sweeper(events, claims, resume=queue_without_starting, lease=LEASE), claims


def test_an_event_taken_over_is_not_taken_over_again_while_its_reply_waits(engine: Engine) -> None:
    events = ProcessedEvents(engine)
    long_ago = datetime.now(UTC) - timedelta(minutes=1)
    assert events.claim("EvDead", holder="dead-worker", lease=LEASE, payload={"kind": "mention"}, at=long_ago)
    resumed: list[str] = []
    here, here_claims = sweeper(events, "this-worker", resumed)
    there, _ = sweeper(events, "other-worker", resumed)

    assert here.sweep() == 1
    time.sleep(LEASE.total_seconds() * 2)  # the backlog outlasts the lease; the claim is renewed meanwhile
    assert here.sweep() == 0 and there.sweep() == 0
    assert resumed == ["EvDead"]
    assert here_claims.holds("EvDead")

    here_claims.give_up("EvDead")
    assert not here_claims.holds("EvDead") and events.abandoned() == []
