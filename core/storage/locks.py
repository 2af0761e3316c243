"""One ingestion at a time per database, across processes and hosts.

Each document is replaced in a transaction of its own, so readers never see half of one; but two ingestions
running at once would each decide from their own reading of what is stored (which documents are new, which
are gone) and undo each other's work. The second one is therefore refused at once, with a line saying who holds
the lock, rather than queued behind an ingestion that may take an hour.

PostgreSQL: a session-level advisory lock, held by a connection of its own for the whole ingestion; the server
releases it when that connection ends, however the process ends. SQLite: an exclusive `flock` on a file beside
the database (`<database>.ingest-lock`), which the kernel releases when the process ends; the file names the
holder. An in-memory SQLite database belongs to one process: a lock in memory.
"""

import fcntl
import os
import socket
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from sqlalchemy import Connection, Engine, text

from core.domain.errors import OperatorError

INGEST_LOCK_KEY: Final = 0x53_6F_75_72_49_6E  # any constant; the migration lock uses another
_MEMORY_LOCKS: "weakref.WeakKeyDictionary[Engine, threading.Lock]" = weakref.WeakKeyDictionary()
_MEMORY_GUARD = threading.Lock()


class IngestBusy(OperatorError, RuntimeError):
    """Another ingestion holds the database. The message is one line naming the holder."""


def holder_name() -> str:
    return f"{socket.gethostname()} pid {os.getpid()}"


@contextmanager
def ingest_lock(engine: Engine) -> Iterator[None]:
    """Hold the database's ingestion lock for the duration of the block, or raise `IngestBusy`."""
    if engine.dialect.name == "postgresql":
        with _advisory_lock(engine):
            yield
        return
    database = engine.url.database
    if not database or database == ":memory:":
        with _memory_lock(engine):
            yield
        return
    with _file_lock(Path(f"{database}.ingest-lock")):
        yield


@contextmanager
def _advisory_lock(engine: Engine) -> Iterator[None]:
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("SELECT set_config('application_name', :name, false)"),
                           {"name": f"sourced ingest ({holder_name()})"[:63]})
        if not connection.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": INGEST_LOCK_KEY}).scalar():
            raise IngestBusy(f"another ingestion is running on this database ({_advisory_holder(connection)}); "
                             "wait for it to finish, then run this again")
        try:
            yield
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": INGEST_LOCK_KEY})


def _advisory_holder(connection: Connection) -> str:
    """Who holds the lock, as PostgreSQL knows it (a bigint key is split into classid and objid)."""
    row = connection.execute(text("""
        SELECT a.application_name, a.pid, a.client_addr, a.backend_start
        FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.classid = (:key >> 32)::oid AND l.objid = (:key & 4294967295)::oid
    """), {"key": INGEST_LOCK_KEY}).first()
    if row is None:
        return "its holder has just let go"
    since = row.backend_start.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    origin = f" from {row.client_addr}" if row.client_addr else ""
    return f"{row.application_name or 'a session'}, server pid {row.pid}{origin}, connected since {since}"


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with path.open("a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise IngestBusy(f"another ingestion is running on this database ({holder}); "
                             "wait for it to finish, then run this again") from None
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"{holder_name()}, since {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC\n")
            handle.flush()
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _memory_lock(engine: Engine) -> Iterator[None]:
    with _MEMORY_GUARD:
        lock = _MEMORY_LOCKS.setdefault(engine, threading.Lock())
    if not lock.acquire(blocking=False):
        raise IngestBusy("another ingestion is running on this in-memory database; wait for it to finish")
    try:
        yield
    finally:
        lock.release()
