"""A small thread-safe TTL memo with one computation in flight per key.

A burst of mentions by one person, or in one channel, then costs Slack one call, not one per mention, which
keeps the bot inside the Web API's rate-limit tiers.
"""

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from cachetools import TTLCache

V = TypeVar("V")


class TtlMemo(Generic[V]):
    def __init__(self, *, ttl_s: float, maxsize: int = 10_000,
                 timer: Callable[[], float] = time.monotonic) -> None:
        self._cache: TTLCache[Hashable, V] = TTLCache(maxsize=maxsize, ttl=ttl_s, timer=timer)
        self._guard = threading.Lock()
        self._in_flight: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The cached value, or `compute()`'s; concurrent callers for one key wait for the first."""
        with self._guard:
            if key in self._cache:
                return self._cache[key]
            key_lock = self._in_flight.setdefault(key, threading.Lock())
        with key_lock:
            with self._guard:
                if key in self._cache:
                    return self._cache[key]
            try:
                value = compute()
                with self._guard:
                    self._cache[key] = value
                return value
            finally:
                with self._guard:
                    self._in_flight.pop(key, None)
