"""Replies are computed off the request thread, on a fixed pool of our own.

Slack wants an acknowledgement within 3 seconds and retries otherwise; an answer may take longer. So a
listener only acknowledges and submits; the work runs here, on threads separate from the ones Bolt and the
HTTP server use to acknowledge, so a queue of long answers never delays the next acknowledgement.
"""

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Final

from prometheus_client import Counter, Gauge

log = logging.getLogger(__name__)

IN_FLIGHT: Final = Gauge("sourced_slack_replies_in_flight", "Replies submitted and not yet finished")
FAILED: Final = Counter("sourced_slack_reply_failures_total", "Reply jobs that raised", ["job"])


class ReplyWorkers:
    def __init__(self, *, workers: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sourced-reply")
        self._idle = threading.Condition()
        self._pending = 0
        prestart(self._pool, workers)

    def submit(self, job: str, work: Callable[[], None]) -> Future[None]:
        """Run `work` later; an exception is logged with the job's name (never the question) and counted."""
        with self._idle:
            self._pending += 1
        IN_FLIGHT.inc()
        return self._pool.submit(self._run, job, work)

    def _run(self, job: str, work: Callable[[], None]) -> None:
        try:
            work()
        except Exception:
            FAILED.labels(job=job).inc()
            log.exception("reply job %r failed", job)
        finally:
            IN_FLIGHT.dec()
            with self._idle:
                self._pending -= 1
                self._idle.notify_all()

    def wait_idle(self, timeout_s: float) -> bool:
        """True once nothing is pending (shutdown, tests and the benchmark); False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout=timeout_s)

    def shutdown(self) -> None:
        """Finish what was accepted: each job is a person waiting for a reply."""
        self._pool.shutdown(wait=True)


def prestart(pool: ThreadPoolExecutor, threads: int) -> None:
    """Start all of a pool's threads now rather than one per submit.

    A ThreadPoolExecutor starts a thread inside `submit` and waits for it to run; under load that wait is
    spent queueing for the GIL behind busy threads, and it lands on the acknowledgement path. Measured: it
    made the first burst of acknowledgements after a start several times slower than the next."""
    ready = threading.Barrier(threads + 1)
    for _ in range(threads):
        pool.submit(ready.wait)
    ready.wait()
