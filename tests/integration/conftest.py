"""Databases for integration tests: SQLite in a temporary file and PostgreSQL with pgvector (the suite's own
server, `tests/conftest.py`) always, and the machine's PostgreSQL (without pgvector) when configured.

Set SOURCED_TEST_POSTGRES_URL (e.g. postgresql+psycopg://postgres@127.0.0.1:5432/test) to run those cases; each
test then gets a schema of its own, dropped afterwards.
"""

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from sqlalchemy import Engine, text

from core.storage import make_engine, migrate

POSTGRES_URL = os.environ.get("SOURCED_TEST_POSTGRES_URL")

DATABASES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=[
        pytest.mark.postgres,
        pytest.mark.skipif(not POSTGRES_URL, reason="SOURCED_TEST_POSTGRES_URL is not set"),
    ]),
    pytest.param("pgvector", id="pgvector", marks=[pytest.mark.postgres]),
]


@pytest.fixture(params=DATABASES)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database: a SQLite file, a fresh schema on the machine's PostgreSQL, or a fresh database on the
    suite's PostgreSQL with pgvector; each is removed after the test."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'sourced.db'}"
        return
    if request.param == "pgvector":
        yield request.getfixturevalue("pgvector_empty_url")
        return
    assert POSTGRES_URL is not None
    schema = f"test_{uuid.uuid4().hex[:12]}"
    admin = make_engine(POSTGRES_URL)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    separator = "&" if "?" in POSTGRES_URL else "?"
    try:
        yield f"{POSTGRES_URL}{separator}options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """A migrated engine on each configured database."""
    engine = make_engine(database_url)
    migrate(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> Iterator[Engine]:
    """A migrated SQLite engine, for what only SQLite has (the full-text index)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'index.db'}")
    migrate(engine)
    yield engine
    engine.dispose()
