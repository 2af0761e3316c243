"""Sourced on PostgreSQL end to end: with pgvector and the shipped default embedder the pipeline answers and
refuses as on SQLite; without pgvector, an embedder is refused at start (and by `sourced doctor`) in one line,
and full text alone works."""

import subprocess
import sys
from pathlib import Path

import pytest

from bot.commands.doctor import diagnose
from bot.settings import SlackSettings
from core.application.orchestrator import Question
from core.bootstrap import bootstrap
from core.config import Settings
from core.domain import EVERYONE, Answered, Audience, Principal, Refused
from core.storage import make_engine, migrate
from tests.e2e.conftest import CONFIG, write_kb
from tests.integration.conftest import POSTGRES_URL

ROOT = Path(__file__).resolve().parents[2]
STAFF = Principal(user_id="U1", roles=frozenset({EVERYONE}))
HR = Principal(user_id="U2", roles=frozenset({EVERYONE, "hr"}))
machine_postgres = pytest.mark.skipif(not POSTGRES_URL, reason="SOURCED_TEST_POSTGRES_URL is not set")


def ask(sourced: object, question: str, asker: Principal) -> object:
    return sourced.orchestrator.ask(  # type: ignore[attr-defined]
        Question(text=question, principal=asker, audience=Audience.only(asker)))


def test_the_pipeline_answers_and_refuses_on_postgres_with_the_default_embedder(pgvector_url: str,
                                                                                tmp_path: Path) -> None:
    sourced = bootstrap(Settings(database_url=pgvector_url, embedder="auto"), config=CONFIG, progress=False)
    try:
        assert sourced.embedder is not None, "the semantic extra is part of the test install"
        assert not sourced.ingestor.ingest(write_kb(tmp_path / "kb")).errors
        refund = ask(sourced, "How many days do customers have to return items for a refund?", STAFF)
        assert isinstance(refund, Answered) and refund.citations[0].passage.doc_id == "refund-policy"
        hidden = ask(sourced, "What is the salary band for a Senior Engineer?", STAFF)
        assert isinstance(hidden, Refused) and hidden.kind == "not_permitted"
        assert hidden.shown_as == "not_in_corpus"
        allowed = ask(sourced, "What is the salary band for a Senior Engineer?", HR)
        assert isinstance(allowed, Answered) and "150,000" in allowed.text
    finally:
        sourced.engine.dispose()


@machine_postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_an_embedder_on_a_postgresql_without_pgvector_stops_the_start_with_one_line(database_url: str) -> None:
    done = subprocess.run([sys.executable, "-m", "bot.cli", "ask", "anything"], cwd=ROOT, text=True,
                          capture_output=True, timeout=120, check=False,
                          env={"SOURCED_DATABASE_URL": database_url, "SOURCED_EMBEDDER": "minilm",
                               "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("sourced: postgresql+psycopg://") and "has no pgvector" in line
    assert line.endswith("or set SOURCED_EMBEDDER=none for full-text search alone")


@machine_postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_doctor_names_the_missing_pgvector_in_the_same_words(database_url: str) -> None:
    engine = make_engine(database_url)
    migrate(engine)
    engine.dispose()
    checks = {check.name: check for check in diagnose(Settings(database_url=database_url, embedder="minilm"),
                                                       SlackSettings())}
    assert checks["database"].status == "ok"
    assert checks["vectors"].status == "error" and "has no pgvector" in checks["vectors"].detail
    plain = {check.name: check for check in diagnose(Settings(database_url=database_url, embedder="none"),
                                                      SlackSettings())}
    assert "vectors" not in plain and plain["database"].status == "ok"


def test_doctor_reports_pgvector_and_the_stored_vectors(pgvector_url: str) -> None:
    checks = {check.name: check for check in diagnose(Settings(database_url=pgvector_url, embedder="minilm"),
                                                       SlackSettings())}
    assert checks["vectors"].status == "ok" and checks["vectors"].detail.startswith("pgvector 0.8")
    memory = checks["memory"]
    assert memory.status != "error" and memory.detail.startswith("index ") and " MB, shared_buffers " in memory.detail


@machine_postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_full_text_alone_works_on_a_postgresql_without_pgvector(database_url: str, tmp_path: Path) -> None:
    sourced = bootstrap(Settings(database_url=database_url, embedder="none"), config=CONFIG, progress=False)
    try:
        assert not sourced.ingestor.ingest(write_kb(tmp_path / "kb")).errors
        answer = ask(sourced, "What is the daily meal limit when travelling?", STAFF)
        assert isinstance(answer, Answered) and "50 dollars" in answer.text
    finally:
        sourced.engine.dispose()
