"""Ingestion as a transaction: a reader sees a document whole, old or new, never a mixture of chunks and vectors;
and a second ingestion while one runs is refused with a line that names the first."""

import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from sqlalchemy import Connection, Engine, text

from core.retrieval.embeddings import EmbeddingIngestor
from core.retrieval.ingest import Ingestor
from core.retrieval.postgres_index import snapshot
from core.storage import make_engine, migrate
from core.storage.locks import IngestBusy, ingest_lock
from tests.fake_embedders import BagOfWords

ROOT = Path(__file__).resolve().parents[2]


def policy(version: str, sections: int) -> str:
    body = "".join(f"\n## Rule {n}\n\nRule {n} of the travel policy, version {version}.\n" for n in range(sections))
    return f"---\nid: policy\ntitle: Travel Policy\n---\n# Travel Policy\n{body}"


@pytest.fixture
def vector_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """The databases that store vectors: SQLite, and PostgreSQL with pgvector."""
    url = (f"sqlite:///{tmp_path / 'sourced.db'}" if request.param == "sqlite"
           else request.getfixturevalue("pgvector_url"))
    engine = make_engine(url)
    migrate(engine)
    yield engine
    engine.dispose()


def read_snapshot(engine: Engine) -> AbstractContextManager[Connection]:
    if engine.dialect.name == "postgresql":
        return snapshot(engine)
    return engine.begin()  # a read transaction in WAL mode: one snapshot from its first read


def observe(engine: Engine) -> tuple[frozenset[str], int, int]:
    """The document as one snapshot shows it: the versions its chunks state, its chunks, its vectors."""
    with read_snapshot(engine) as connection:
        texts = connection.execute(text("SELECT text FROM chunks WHERE doc_id = 'policy'")).scalars().all()
        vectors = connection.execute(text(
            "SELECT count(*) FROM chunk_embeddings AS e JOIN chunks AS c ON c.chunk_id = e.chunk_id "
            "WHERE c.doc_id = 'policy'")).scalar_one()
    return frozenset(line.rsplit(" ", 1)[-1] for line in texts), len(texts), int(vectors)


@pytest.mark.parametrize("vector_database", ["sqlite", pytest.param("pgvector", marks=pytest.mark.postgres)],
                         indirect=True)
def test_a_reader_sees_a_document_whole_while_it_is_ingested_again_and_again(vector_database: Engine,
                                                                             tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    versions = (("A.", 3), ("B.", 5))
    (kb / "policy.md").write_text(policy("A", 3))
    ingestor = EmbeddingIngestor(vector_database, BagOfWords(), progress=False)
    ingestor.ingest(kb)
    seen: set[tuple[frozenset[str], int, int]] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            seen.add(observe(vector_database))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for round_ in range(12):
            label, sections = versions[(round_ + 1) % 2]
            (kb / "policy.md").write_text(policy(label.rstrip("."), sections))
            ingestor.ingest(kb)
    finally:
        stop.set()
        reader.join()
    whole = {(frozenset({label}), sections, sections) for label, sections in versions}
    assert seen and seen <= whole, f"a reader saw a document half written: {seen - whole}"


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "policy.md").write_text(policy("A", 2))
    return root


def test_a_second_ingestion_while_one_runs_is_refused_naming_the_first(engine: Engine, kb: Path) -> None:
    with ingest_lock(engine), pytest.raises(IngestBusy) as refused:
        Ingestor(engine, progress=False).ingest(kb)
    message = str(refused.value)
    assert message.startswith("another ingestion is running on this database (")
    assert "pid" in message and message.endswith("wait for it to finish, then run this again")
    assert "\n" not in message
    report = Ingestor(engine, progress=False).ingest(kb)
    assert report.added == ("policy",)


@pytest.mark.slow  # two processes of the command line
def test_the_command_line_says_so_in_one_line_and_exits_1(tmp_path: Path, kb: Path) -> None:
    database_url = f"sqlite:///{tmp_path / 'cli.db'}"
    engine = make_engine(database_url)
    migrate(engine)
    with ingest_lock(engine):
        done = subprocess.run([sys.executable, "-m", "bot.cli", "ingest", str(kb)], cwd=ROOT, text=True,
                              capture_output=True, timeout=120, check=False,
                              env={"SOURCED_DATABASE_URL": database_url, "SOURCED_EMBEDDER": "none",
                                   "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("sourced ingest: another ingestion is running on this database")


HOLD_THE_LOCK = textwrap.dedent("""
    import sys, time
    from core.storage import make_engine
    from core.storage.locks import ingest_lock
    with ingest_lock(make_engine(sys.argv[1])):
        print("held", flush=True)
        time.sleep(600)
""")


def test_the_lock_of_an_ingestion_that_died_is_free_at_once(database_url: str, engine: Engine, kb: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD_THE_LOCK, database_url], cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(IngestBusy):
            Ingestor(engine, progress=False).ingest(kb)
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        deadline = time.monotonic() + 10  # PostgreSQL ends the dead client's session when it sees the socket close
        while True:
            try:
                assert Ingestor(engine, progress=False).ingest(kb).added == ("policy",)
                break
            except IngestBusy:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
    finally:
        holder.kill()
        holder.wait(timeout=30)
