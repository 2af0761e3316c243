"""One remote call within a deadline: attempts with the time left as their timeout, retried while time is left.

The `openai` client's own retries are off (`max_retries=0` on the client): they honour a server's Retry-After
up to a minute, which would hold a Slack reply thread far past any budget. Here every attempt, and every pause
between attempts, fits in what is left of the call's deadline; when the next try cannot, the last failure is
raised at once.
"""

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

MIN_ATTEMPT_S = 0.05
"""An attempt with less time than this left is not started: it could only time out."""


def within_deadline(attempt: Callable[[float], T], *, deadline_s: float, timeout_s: float, retries: int,
                    pause_before_retry: Callable[[Exception, int], float | None],
                    clock: Callable[[], float] = time.monotonic,
                    sleep: Callable[[float], None] = time.sleep) -> T:
    """`attempt(timeout)` with `timeout = min(timeout_s, time left)`; after a failure, the pause
    `pause_before_retry(error, retry_number)` says (None: not retryable), at most `retries` times."""
    deadline = clock() + deadline_s
    retry = 0
    while True:
        try:
            return attempt(min(timeout_s, deadline - clock()))
        except Exception as error:
            pause = pause_before_retry(error, retry)
            if pause is None or retry >= retries or deadline - clock() - pause < MIN_ATTEMPT_S:
                raise
        sleep(pause)
        retry += 1
