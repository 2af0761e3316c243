"""Bounded work per document (issue 55): a kilobyte that costs minutes of CPU, or gigabytes of memory, to read
is stopped at its limit in the reading process and refused alone, with one line naming it and the limit; the
other files load, and the same process goes on reading the next document."""

import shutil
import time
from pathlib import Path

import pytest

from bot.cli import main
from core.documents.bounded import MEGABYTE, ReadingProcess, ReadLimits
from core.documents.formats import read_file
from core.retrieval import load_knowledge_base
from tests.pdf_bombs import cpu_bomb, memory_bomb

pytest.importorskip("pdfplumber", reason="the formats extra is not installed")

FILES = Path(__file__).parents[1] / "fixtures" / "formats" / "files"
CPU_LIMIT = "takes more than the 2 s of CPU time one document may take to read"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "garage.pdf").write_bytes(cpu_bomb())
    shutil.copy(FILES / "travel-policy.pdf", kb / "travel-policy.pdf")
    (kb / "notes.md").write_text("# Notes\n\nThe notes read too.\n", encoding="utf-8")
    return kb


def test_a_pdf_that_costs_minutes_of_cpu_is_stopped_at_its_limit_and_the_others_load(folder: Path) -> None:
    process = ReadingProcess(ReadLimits(cpu_seconds=2))
    started = time.monotonic()
    result = load_knowledge_base(folder, process=process)
    assert time.monotonic() - started < 120  # unbounded, the one PDF alone reads for minutes of CPU
    assert [document.doc_id for document in result.documents] == ["notes", "travel-policy.pdf"]
    assert [(error.path.as_posix(), error.reason) for error in result.errors] == [("garage.pdf", CPU_LIMIT)]
    assert read_file(FILES / "leave-policy.pdf", process=process).sections  # the reading goes on
    process.close()


def test_a_pdf_that_unpacks_past_the_memory_limit_is_refused_naming_the_limit(tmp_path: Path) -> None:
    (tmp_path / "blank.pdf").write_bytes(memory_bomb(megabytes=500))
    shutil.copy(FILES / "leave-policy.pdf", tmp_path / "leave-policy.pdf")
    process = ReadingProcess(ReadLimits(memory_bytes=100 * MEGABYTE))
    result = load_knowledge_base(tmp_path, process=process)
    assert [document.doc_id for document in result.documents] == ["leave-policy.pdf"]
    assert [error.path.as_posix() for error in result.errors] == ["blank.pdf"]
    assert "100 MB of memory one document may take to read" in result.errors[0].reason
    process.close()


def test_sourced_ingest_names_the_file_over_its_limit_and_ingests_the_rest(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{tmp_path / 'sourced.db'}")
    monkeypatch.setenv("SOURCED_EMBEDDER", "none")  # what is checked is the limit, not retrieval
    monkeypatch.setenv("SOURCED_READ_CPU_S", "2")
    assert main(["ingest", str(folder)]) == 1
    captured = capsys.readouterr()
    assert [line for line in captured.err.splitlines() if line.startswith("error: ")] == [
        f"error: garage.pdf: {CPU_LIMIT}"]
    assert "2 documents: 2 added" in captured.out and "1 file failed" in captured.out
