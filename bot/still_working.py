"""A "still working" notice for a reply that takes longer than a few seconds (a slow model endpoint).

The notice is posted once, by a timer, only if the reply is not ready after `after_s`; the reply then takes its
place instead of arriving as a second message. Leaving the `with` block stops the timer, and waits for a notice
being posted at that very moment, so `said` is final there.
"""

import logging
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Generic, Self, TypeVar

log = logging.getLogger(__name__)

Handle = TypeVar("Handle")
"""Whatever finds the notice again: a message ts, or the response_url it went to."""


class StillWorking(Generic[Handle]):
    def __init__(self, *, after_s: float, say: Callable[[], Handle]) -> None:
        self._say = say
        self._said: Handle | None = None
        self._finished = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(after_s, self._notice)
        self._timer.daemon = True

    @property
    def said(self) -> Handle | None:
        """The notice, if it was posted: the reply replaces it."""
        return self._said

    def __enter__(self) -> Self:
        self._timer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._timer.cancel()
        with self._lock:
            self._finished = True

    def _notice(self) -> None:
        with self._lock:
            if self._finished:
                return
            try:
                self._said = self._say()
            except Exception:  # the notice is a courtesy: failing it must not fail the reply
                log.warning("still-working notice not posted", exc_info=True)
