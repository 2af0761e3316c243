"""Big and broken files: each is refused with one line naming the file and the reason, the others still load.
Peak memory on these files is measured by benchmarks/ingest_formats.py (a benchmark, not a timed test)."""

import shutil
import zipfile
from pathlib import Path

import pytest

from bot.cli import main
from core.documents.formats import MAX_BINARY_BYTES
from core.documents.limits import MAX_UNPACKED_BYTES
from core.retrieval import load_knowledge_base

pytest.importorskip("pdfplumber", reason="the formats extra is not installed")

FILES = Path(__file__).parents[1] / "fixtures" / "formats" / "files"


def zip_bomb(path: Path, unpacked: int) -> None:
    """A `.docx` whose document part is `unpacked` bytes of zeros, packed to a few hundred kilobytes."""
    block = b"\0" * 1_000_000
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            for _ in range(unpacked // len(block)):
                part.write(block)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    shutil.copy(FILES / "travel-policy.pdf", tmp_path / "good.pdf")
    shutil.copy(FILES / "encrypted.pdf", tmp_path / "locked.pdf")
    shutil.copy(FILES / "scanned.pdf", tmp_path / "scan.pdf")
    zip_bomb(tmp_path / "bomb.docx", MAX_UNPACKED_BYTES + 50_000_000)
    (tmp_path / "broken.docx").write_bytes((FILES / "travel-policy.docx").read_bytes()[:3000])
    (tmp_path / "renamed.pptx").write_bytes(b"%PDF-1.7 not a deck at all")
    with (tmp_path / "huge.pdf").open("wb") as huge:  # sparse: 200 MB on paper, nothing on disk
        huge.truncate(200 * 1024 * 1024)
    (tmp_path / "garbage.pdf").write_bytes(b"%PDF-1.4\n" + b"\x93\x00junk" * 200)
    return tmp_path


def test_each_hostile_file_is_refused_with_one_line_and_the_good_one_loads(hostile: Path) -> None:
    result = load_knowledge_base(hostile)
    assert [document.doc_id for document in result.documents] == ["good.pdf"]
    reasons = {error.path.as_posix(): error.reason for error in result.errors}
    assert sorted(reasons) == ["bomb.docx", "broken.docx", "garbage.pdf", "huge.pdf", "locked.pdf",
                               "renamed.pptx", "scan.pdf"]
    assert all("\n" not in reason for reason in reasons.values())
    assert reasons["locked.pdf"] == "is encrypted (password-protected); save a copy without a password"
    assert reasons["scan.pdf"] == ("has no text layer (scanned?); Sourced does not OCR: give it a text layer first "
                                   "(e.g. ocrmypdf) and ingest that")
    assert "zip bomb" in reasons["bomb.docx"]
    assert "damaged or truncated" in reasons["broken.docx"] and "damaged or truncated" in reasons["renamed.pptx"]
    assert reasons["huge.pdf"] == (f"is 209,715,200 bytes, over the {MAX_BINARY_BYTES:,}-byte limit for one .pdf "
                                   f"document; split it into smaller files")
    assert reasons["garbage.pdf"].startswith(("could not be read as a PDF", "has no text layer"))


def test_sourced_ingest_names_each_failed_file_and_exits_1(hostile: Path, tmp_path_factory: pytest.TempPathFactory,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    database = tmp_path_factory.mktemp("db") / "sourced.db"
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{database}")
    monkeypatch.setenv("SOURCED_EMBEDDER", "none")  # what is checked is the refusals, not retrieval
    assert main(["ingest", str(hostile)]) == 1
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 7 and any(line.startswith("error: locked.pdf: is encrypted") for line in errors)
    assert "1 document: 1 added" in captured.out and "7 files failed" in captured.out


def test_a_page_nested_hundreds_deep_is_refused_and_the_other_files_are_ingested(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "deep.html").write_text("<html><body><h1>Deep</h1>" + "<div><ul><li>" * 300 + "<p>Deep text.</p>"
                                      + "</li></ul></div>" * 300 + "</body></html>", encoding="utf-8")
    (folder / "good.html").write_text("<html><head><title>Good</title></head><body><h1>Good</h1>"
                                      "<p>The good page reads as it always has.</p></body></html>", encoding="utf-8")
    (folder / "notes.md").write_text("# Notes\n\nThe notes read too.\n", encoding="utf-8")
    result = load_knowledge_base(folder)
    assert sorted(document.path.as_posix() for document in result.documents) == ["good.html", "notes.md"]
    assert [(error.path.as_posix(), "nests its elements" in error.reason) for error in result.errors] == [
        ("deep.html", True)]
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{tmp_path / 'sourced.db'}")
    monkeypatch.setenv("SOURCED_EMBEDDER", "none")
    assert main(["ingest", str(folder)]) == 1  # one file failed, said, and the run finished
    captured = capsys.readouterr()
    assert any(line.startswith("error: deep.html: nests its elements") for line in captured.err.splitlines())
    assert "2 documents: 2 added" in captured.out and "1 file failed" in captured.out
