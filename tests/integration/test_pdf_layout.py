"""PDFs read as they are laid out (issue 56): a two-column bulletin and a leave policy whose borderless table has
a wrapped header cell and headings close below it, both written by LibreOffice (tests/fixtures/formats/
make_fixtures.py), answer their questions through `sourced ask --json` with the shipped defaults (the MiniLM
embedder, the extractive reader)."""

import shutil
from pathlib import Path

import pytest

from tests.cli_runs import ask_json, ingested_company

pytest.importorskip("pdfplumber", reason="the formats extra is not installed")

FILES = Path(__file__).parents[1] / "fixtures" / "formats" / "files"
CONFIG = """default_owner: "#help-desk"
sources:
  - path: "**"
    owner: "#help-desk"
"""


@pytest.fixture(scope="module")
def company(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def fill(kb: Path) -> None:
        for name in ("security-bulletin.pdf", "leave-policy.pdf", "travel-policy.pdf"):
            shutil.copy(FILES / name, kb)

    return ingested_company(tmp_path_factory.mktemp("layout"), CONFIG, fill)


@pytest.mark.parametrize("case", [
    ("How quickly must I report a lost laptop?", "Security Bulletin > Lost or stolen devices", "within one hour"),
    ("What is the minimum length of a password?", "Security Bulletin > Passwords", "at least 14 characters"),
    ("When do I return a loaner laptop after travelling?", "Security Bulletin > Travelling abroad",
     "within five working days"),
])
def test_each_column_of_a_two_column_pdf_answers_its_question(
        company: Path, case: tuple[str, str, str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    question, heading, says = case
    view = ask_json(company, question, capsys, monkeypatch)
    assert view["outcome"] == "answered", view
    assert says in view["text"] and view["citations"][0]["heading"] == heading


def test_a_wrapped_header_cell_is_read_whole_in_the_answer(company: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    view = ask_json(company, "How many paid days per year of sick leave do I get?", capsys, monkeypatch)
    assert view["outcome"] == "answered", view
    assert "Leave type: Sick leave; Paid days per year: 10 days" in view["text"]


def test_the_headings_after_a_borderless_table_keep_their_own_sections(
        company: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    view = ask_json(company, "Can unused leave days carry over into the next year?", capsys, monkeypatch)
    assert view["outcome"] == "answered", view
    assert "five unused days" in view["text"]
    assert view["citations"][0]["heading"] == "Leave Policy > Leave entitlements > Carry-over"
