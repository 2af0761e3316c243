"""The database failing during an ingestion, on the default deployment's SQLite file: the version stored before
keeps serving, whole, and nothing half-written is ever read. (Readers racing a successful ingestion, and a second
ingestion, are `test_ingest_transaction.py`.)

- a document's transaction failing midway (its old chunks deleted, some new ones written) is rolled back;
- the database refusing writes for the whole run: the command says so in one line and stores nothing;
- the ingesting process killed between two documents: each document is its old version or its new one.
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, text

from core.domain import Audience, Principal
from core.retrieval.embeddings import EmbeddingIngestor
from core.retrieval.index import SqliteIndex
from core.storage import make_engine, migrate
from tests.e2e.test_faults import bag_of_words, writes_refused
from tests.fake_embedders import BagOfWords

pytestmark = pytest.mark.slow  # ingestions in child processes, killed and refused

ROOT = Path(__file__).resolve().parents[2]
STAFF = Audience.only(Principal(user_id="U1", roles=frozenset({"everyone"})))


def policy(name: str, version: str, sections: int) -> str:
    body = "".join(f"\n## Rule {n}\n\nRule {n} of the {name} policy, version {version}.\n" for n in range(sections))
    return f"---\nid: {name}\ntitle: {name.title()} Policy\n---\n# {name.title()} Policy\n{body}"


def stored(engine: Engine, doc_id: str) -> tuple[frozenset[str], int, int, int]:
    """One snapshot of a document: the versions its chunks state, and its chunks, full-text rows and vectors."""
    with engine.begin() as connection:
        texts = connection.execute(text("SELECT text FROM chunks WHERE doc_id = :d"), {"d": doc_id}).scalars().all()
        full_text = connection.execute(text(
            "SELECT count(*) FROM chunks_fts AS f JOIN chunks AS c ON c.fts_rowid = f.rowid WHERE c.doc_id = :d"),
            {"d": doc_id}).scalar_one()
        vectors = connection.execute(text(
            "SELECT count(*) FROM chunk_embeddings AS e JOIN chunks AS c ON c.chunk_id = e.chunk_id "
            "WHERE c.doc_id = :d"), {"d": doc_id}).scalar_one()
    return frozenset(t.rsplit(" ", 1)[-1] for t in texts), len(texts), int(full_text), int(vectors)


def served_versions(engine: Engine, name: str) -> set[str]:
    """The versions a question about the document is answered from (full-text search, scoped)."""
    found = SqliteIndex(engine).search(f"{name} policy rule version", audience=STAFF, limit=20)
    return {chunk.text.rsplit(" ", 1)[-1] for chunk in found if chunk.doc_id == name}


@pytest.fixture
def database(tmp_path: Path) -> Iterator[tuple[str, Engine]]:
    url = f"sqlite:///{tmp_path / 'sourced.db'}"
    engine = make_engine(url)
    migrate(engine)
    yield url, engine
    engine.dispose()


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "alpha.md").write_text(policy("alpha", "A", 3))
    (root / "zeta.md").write_text(policy("zeta", "A", 3))
    return root


def edit_both(kb: Path) -> None:
    (kb / "alpha.md").write_text(policy("alpha", "B", 5))
    (kb / "zeta.md").write_text(policy("zeta", "B", 5))


FAIL_ZETA_MIDWAY = """
CREATE TRIGGER scripted_fault BEFORE INSERT ON chunks
WHEN NEW.doc_id = 'zeta' AND (SELECT count(*) FROM chunks WHERE doc_id = 'zeta') >= 2
BEGIN SELECT RAISE(ABORT, 'disk I/O error (scripted)'); END
"""


def test_a_document_whose_transaction_fails_midway_keeps_its_previous_version_whole(
        database: tuple[str, Engine], kb: Path) -> None:
    _, engine = database
    ingestor = EmbeddingIngestor(engine, BagOfWords(), progress=False)
    ingestor.ingest(kb)
    edit_both(kb)
    with engine.begin() as connection:
        connection.exec_driver_sql(FAIL_ZETA_MIDWAY)  # its third new chunk fails, after the old ones are gone
    report = ingestor.ingest(kb)
    [error] = report.errors
    assert error.path.name == "zeta.md" and "could not be stored" in error.reason
    assert report.updated == ("alpha",)  # the other document is its own transaction
    assert stored(engine, "zeta") == (frozenset({"A."}), 3, 3, 3)
    assert served_versions(engine, "zeta") == {"A."}
    assert stored(engine, "alpha") == (frozenset({"B."}), 5, 5, 5)
    with engine.begin() as connection:
        connection.exec_driver_sql("DROP TRIGGER scripted_fault")
    assert ingestor.ingest(kb).updated == ("zeta",)  # the next run picks it up
    assert stored(engine, "zeta") == (frozenset({"B."}), 5, 5, 5)


def ingest_command(url: str, kb: Path, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "bot.cli", "ingest", str(kb)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            env={"SOURCED_DATABASE_URL": url, "SOURCED_EMBEDDER": "none", "PATH": "/usr/bin:/bin",
                                 "PYTHONPATH": str(ROOT), **env})


def test_an_ingestion_while_the_database_refuses_writes_says_so_in_one_line_and_changes_nothing(
        database: tuple[str, Engine], kb: Path, tmp_path: Path) -> None:
    url, engine = database
    ingest_command(url, kb).communicate(timeout=120)
    edit_both(kb)
    with writes_refused(tmp_path / "sourced.db"):
        done = ingest_command(url, kb)
        _, stderr = done.communicate(timeout=120)
    assert done.returncode == 1
    [line] = stderr.strip().splitlines()
    assert line.startswith("sourced ingest: the database is unavailable") and "locked" in line
    for name in ("alpha", "zeta"):
        assert stored(engine, name)[:3] == (frozenset({"A."}), 3, 3)
        assert served_versions(engine, name) == {"A."}


class HangingEmbeddings:
    """An embeddings endpoint on loopback that never answers a request about `hang_on` (until stopped)."""

    def __init__(self, hang_on: str) -> None:
        self.hanging = threading.Event()
        self._release = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                inputs = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["input"]
                if any(hang_on in text for text in inputs):
                    owner.hanging.set()
                    owner._release.wait(60)
                    return
                data = [{"object": "embedding", "index": i, "embedding": bag_of_words(t)} for i, t in enumerate(inputs)]
                payload = json.dumps({"object": "list", "model": "bow", "data": data}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()


def test_an_ingestion_killed_between_two_documents_leaves_each_whole_old_or_new(
        database: tuple[str, Engine], kb: Path) -> None:
    url, engine = database
    endpoint = HangingEmbeddings(hang_on="zeta policy, version B")
    embedding = {"SOURCED_EMBEDDER": "openai", "SOURCED_EMBEDDING_BASE_URL": endpoint.url,
                 "SOURCED_EMBEDDING_MODEL": "bow", "SOURCED_EMBEDDING_TIMEOUT_S": "60"}
    try:
        first = ingest_command(url, kb, **embedding)
        assert first.wait(timeout=120) == 0
        edit_both(kb)
        doomed = ingest_command(url, kb, **embedding)
        assert endpoint.hanging.wait(60), "the ingestion never reached the second document"
        os.killpg(doomed.pid, signal.SIGKILL)
        doomed.wait(timeout=30)
    finally:
        endpoint.stop()
    assert stored(engine, "alpha") == (frozenset({"B."}), 5, 5, 5)
    assert stored(engine, "zeta") == (frozenset({"A."}), 3, 3, 3)
    assert served_versions(engine, "zeta") == {"A."}
    with sqlite3.connect(engine.url.database or "") as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
