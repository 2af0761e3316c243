"""A small thread-safe TTL memo with one computation in flight per key.

A burst of mentions by one person, or in one channel, then costs Slack one call, not one per mention, which
keeps the bot inside the Web API's rate-limit tiers. A value may also be dropped before its TTL: `forget`, or a
`changed_since` check that says its source changed after the value was read (`bot.audience`, from Slack's
membership events, which another worker or host may have received).
"""

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from cachetools import TTLCache

V = TypeVar("V")

ChangedSince = Callable[[float], bool]
"""Given the wall-clock time (`time.time()`) a value's computation started, whether its source changed since."""


class TtlMemo(Generic[V]):
    def __init__(self, *, ttl_s: float, maxsize: int = 10_000,
                 timer: Callable[[], float] = time.monotonic, clock: Callable[[], float] = time.time) -> None:
        self._cache: TTLCache[Hashable, tuple[V, float]] = TTLCache(maxsize=maxsize, ttl=ttl_s, timer=timer)
        self._clock = clock
        self._guard = threading.Lock()
        self._in_flight: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, compute: Callable[[], V], *, changed_since: ChangedSince | None = None) -> V:
        """The cached value, or `compute()`'s; concurrent callers for one key wait for the first. A cached value
        whose source `changed_since` it was read is computed again."""
        if (fresh := self._fresh(key, changed_since)) is not None:
            return fresh[0]
        with self._guard:
            key_lock = self._in_flight.setdefault(key, threading.Lock())
        with key_lock:
            with self._guard:
                cached = self._cache.get(key)
            if cached is not None and (changed_since is None or not changed_since(cached[1])):
                return cached[0]
            try:
                started = self._clock()
                value = compute()
                with self._guard:
                    self._cache[key] = (value, started)
                return value
            finally:
                with self._guard:
                    self._in_flight.pop(key, None)

    def forget(self, key: Hashable) -> None:
        with self._guard:
            self._cache.pop(key, None)

    def _fresh(self, key: Hashable, changed_since: ChangedSince | None) -> tuple[V] | None:
        with self._guard:
            cached = self._cache.get(key)
        if cached is None or (changed_since is not None and changed_since(cached[1])):
            return None
        return (cached[0],)
