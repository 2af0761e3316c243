"""A circuit breaker for a remote endpoint (an OpenAI-compatible model or embeddings server).

Closed, calls go through. After `failures` failed calls in a row it opens: for `cool_down_s` every call is
refused at once with `CircuitOpen`, instead of holding a Slack reply thread for a full deadline on an endpoint
that is down. After the cool-down one call is let through as a probe (the others are still refused while it
runs): its success closes the breaker, its failure opens it for another cool-down. The orchestrator turns
`CircuitOpen`, like any model failure, into `model_unavailable`.
"""

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from core.domain.errors import ModelError

T = TypeVar("T")


class CircuitOpen(ModelError, RuntimeError):
    """Refused without calling: the endpoint failed too often and its cool-down is not over."""


class CircuitBreaker:
    def __init__(self, *, name: str, failures: int, cool_down_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if failures < 1:
            raise ValueError(f"failures must be at least 1, not {failures}")
        self._name = name
        self._threshold = failures
        self._cool_down_s = cool_down_s
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._probing = False

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._opened_at is not None

    def call(self, attempt: Callable[[], T]) -> T:
        """`attempt()`, unless the breaker refuses it; its exception, if any, counts as a failure."""
        self._admit()
        try:
            result = attempt()
        except BaseException:
            self._record(succeeded=False)
            raise
        self._record(succeeded=True)
        return result

    def _admit(self) -> None:
        with self._lock:
            if self._opened_at is None:
                return
            if self._probing:
                raise CircuitOpen(f"{self._name}: open; a probe call is under way")
            left = self._cool_down_s - (self._clock() - self._opened_at)
            if left > 0:
                raise CircuitOpen(f"{self._name}: open after {self._failures} failures in a row; "
                                  f"next try in {left:.1f} s")
            self._probing = True

    def _record(self, *, succeeded: bool) -> None:
        with self._lock:
            self._probing = False
            if succeeded:
                self._failures, self._opened_at = 0, None
                return
            self._failures += 1
            if self._opened_at is not None or self._failures >= self._threshold:
                self._opened_at = self._clock()
