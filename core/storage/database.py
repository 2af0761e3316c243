"""Engines, migrations and sessions: the one place that knows how each database is set up.

SQLite gets foreign keys (off by default there), WAL for file databases so readers never wait for the
ingestor, a busy timeout so concurrent writers queue instead of failing, and SQLAlchemy-controlled
transactions so DDL is transactional too (a half-applied migration is rolled back). An in-memory database
uses a single shared connection, or every session would see its own empty database.
"""

import logging
import sqlite3
import time
from pathlib import Path
from typing import Any, Final

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from core.log_privacy import drop_records_up_to

MIGRATIONS_DIR: Final = Path(__file__).with_name("migrations")
BUSY_TIMEOUT_MS: Final = 5000
WRITE_INTENT: Final = "sourced_write_intent"
"""Execution option: on SQLite, take the write lock when the transaction begins (BEGIN IMMEDIATE), so a
transaction that reads before it writes waits its turn instead of failing on a stale snapshot."""
MIGRATION_LOCK_KEY: Final = 0x50_75_72_63_65_64  # any constant; serialises workers migrating PostgreSQL


def supports_full_text(dialect_name: str) -> bool:
    """Whether the built-in full-text index (SQLite FTS5) exists on this backend. The one dialect check."""
    return dialect_name == "sqlite"


# SQLAlchemy logs every result row at DEBUG: an event claim's question, a pending clarification
drop_records_up_to(logging.DEBUG, "sqlalchemy.engine.Engine")


def make_engine(url: str) -> Engine:
    """An engine for `url`, configured for Sourced's access pattern (see the module docstring).

    `hide_parameters`: with SQL logging on (`sourced -v`), SQLAlchemy logged every statement's parameters, and
    an error's message quoted them; they hold questions (event claims, pending clarifications) and previews."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed)
    # No server-side prepared statements: psycopg prepares a query after five runs, and PostgreSQL may then plan
    # it once for any parameters, where the full-text search needs each question's terms planned as themselves.
    return create_engine(parsed, pool_pre_ping=True, hide_parameters=True,
                         connect_args={"prepare_threshold": None})


def _sqlite_engine(url: URL) -> Engine:
    in_memory = url.database in (None, "", ":memory:")
    if in_memory:
        engine = create_engine(url, poolclass=StaticPool, hide_parameters=True,
                               connect_args={"check_same_thread": False})
    else:
        engine = create_engine(url, hide_parameters=True, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})

    def on_connect(dbapi_connection: Any, _record: object) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN itself, see on_begin
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not in_memory:
            _enable_wal(cursor)
            cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    def on_begin(connection: Connection) -> None:
        immediate = connection.get_execution_options().get(WRITE_INTENT, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    event.listen(engine, "connect", on_connect)
    event.listen(engine, "begin", on_begin)
    return engine


def _enable_wal(cursor: Any) -> None:
    """Switch a file database to WAL (a setting stored in the file, so once is enough). The switch needs the
    file to itself and SQLite does not call the busy handler for it: when several workers open a new database
    at once, the losers retry here until the busy timeout, as their other statements would wait."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def alembic_config(connection: Connection) -> Config:
    """An Alembic configuration built in code: no alembic.ini is needed where Sourced is installed."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    config.attributes["connection"] = connection
    return config


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest revision. Idempotent; safe when several workers start at once."""
    with engine.connect() as connection, connection.execution_options(**{WRITE_INTENT: True}).begin():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
        command.upgrade(alembic_config(connection), "head")


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None before the first migration (for `doctor`)."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str | None:
    """The newest revision this installation ships."""
    return ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions whose objects stay readable after commit: rows are converted to values right away."""
    return sessionmaker(bind=engine, expire_on_commit=False)
