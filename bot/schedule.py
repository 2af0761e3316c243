"""`sync_every` (sourced.yml): `sourced serve` syncs every connector on a schedule, in a thread of each process.

One sync runs at a time per database across processes and hosts (the ingestion lock, `core.storage.locks`): a
worker whose turn finds another sync running skips that turn, so with four HTTP workers each connector is still
synced once per period, by whichever worker came first. A sync that fails is recorded (doctor, the Home tab)
and tried again at the next turn; nothing it does stops the bot.
"""

import logging
import threading
from datetime import timedelta

from core.bootstrap import Sourced
from core.config import parse_duration
from core.storage.locks import IngestBusy

log = logging.getLogger(__name__)
FIRST_TURN_S = 5.0
"""After start, so the bot is answering before the first sync's downloads begin."""


class SyncSchedule:
    def __init__(self, sourced: Sourced, every: timedelta, *, first_s: float = FIRST_TURN_S) -> None:
        self._sourced = sourced
        self._every = every.total_seconds()
        self._first = first_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sourced-sync", daemon=True)

    @classmethod
    def of(cls, sourced: Sourced) -> "SyncSchedule | None":
        """The schedule sourced.yml asks for; None without `sync_every` or connectors."""
        if not sourced.config.sync_every or not sourced.config.connectors:
            return None
        every = parse_duration(sourced.config.sync_every)
        return cls(sourced, every) if every.total_seconds() > 0 else None

    def start(self) -> "SyncSchedule":
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        wait = self._first
        while not self._stop.wait(wait):
            self.turn()
            wait = self._every

    def turn(self) -> None:
        for entry in self._sourced.config.connectors:
            if self._stop.is_set():
                return
            try:
                report = self._sourced.syncer.sync_configured(entry)
            except IngestBusy:
                log.info("sync of %s skipped: another worker is syncing or ingesting", entry.name)
                continue
            except Exception:  # a turn must never end the thread: the next one tries again
                log.exception("sync of %s failed", entry.name)
                continue
            level = logging.INFO if report.ok else logging.WARNING
            log.log(level, "%s", report.summary())
