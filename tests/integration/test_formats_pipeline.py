"""What must hold for a company's exports (issue: formats): a folder of a PDF, a Word file, a deck, an HTML page,
a Confluence export and a Notion export, none with front matter, plus a `sources:` block, ingests every file;
a question answered from a PDF table row and one from a Word list item each cite the page or the heading path,
in `sourced ask --json`, in the Slack blocks and in the audit record. Shipped defaults (the MiniLM embedder)."""

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.blocks import answer_message
from bot.cli import main
from core.application.orchestrator import Question
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, load_config
from core.domain import Answered, Audience, Principal
from tests.unit.fakes import FixedClock

pytest.importorskip("pdfplumber", reason="the formats extra is not installed")

FIXTURES = Path(__file__).parents[1] / "fixtures" / "formats"
STAFF = Principal(user_id="U1", roles=frozenset({"everyone"}))
CONFIG = """default_owner: "#help-desk"
stale_after_days: 365
sources:
  - path: "hr/**"
    owner: "#people-ops"
    url: "https://wiki.example.com/hr/{stem}"
  - path: "*.pdf"
    owner: "#finance-ops"
    url: "https://files.example.com/{name}"
  - path: "**"
    owner: "#help-desk"
"""
PDF_QUESTION = "What is the nightly hotel cap in Oslo?"
WORD_QUESTION = "How much does the company pay for a desk chair for my home office?"


@pytest.fixture(scope="module")
def company(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("company")
    kb = root / "kb"
    (kb / "hr").mkdir(parents=True)
    (kb / "decks").mkdir()
    shutil.copy(FIXTURES / "files" / "travel-policy.pdf", kb)
    shutil.copy(FIXTURES / "files" / "google-docs-handbook.docx", kb / "hr")
    shutil.copy(FIXTURES / "files" / "benefits.html", kb / "hr")
    shutil.copy(FIXTURES / "files" / "quarterly-review.pptx", kb / "decks")
    shutil.copytree(FIXTURES / "confluence", kb / "confluence")
    shutil.copytree(FIXTURES / "notion", kb / "notion")
    (root / "sourced.yml").write_text(CONFIG, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def ingested(company: Path) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{company / 'sourced.db'}")
        assert main(["ingest", str(company / "kb"), "--config", str(company / "sourced.yml")]) == 0
        yield company


@pytest.fixture(scope="module")
def sourced(ingested: Path) -> Iterator[Sourced]:
    app = bootstrap(Settings(database_url=f"sqlite:///{ingested / 'sourced.db'}"),
                    config=load_config(ingested / "sourced.yml"), progress=False,
                    clock=FixedClock(at=datetime(2026, 12, 4, 9, 0, tzinfo=UTC)))
    yield app
    app.engine.dispose()


def ask_json(company: Path, question: str, capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{company / 'sourced.db'}")
    capsys.readouterr()
    assert main(["ask", question, "--json", "--config", str(company / "sourced.yml")]) == 0
    return dict(json.loads(capsys.readouterr().out))


def answered(sourced: Sourced, question: str) -> Answered:
    outcome = sourced.orchestrator.ask(Question(text=question, principal=STAFF, audience=Audience.only(STAFF)))
    assert isinstance(outcome, Answered), outcome
    return outcome


def test_every_file_of_the_folder_is_ingested(ingested: Path, sourced: Sourced) -> None:
    files = [p for p in (ingested / "kb").rglob("*") if p.suffix in (".pdf", ".docx", ".pptx", ".html", ".md",
                                                                       ".csv") and not p.name.endswith("_all.csv")]
    with sourced.engine.connect() as connection:
        stored = connection.exec_driver_sql("SELECT source_path, owner, format, title FROM documents").all()
    assert len(stored) == len(files) == 11
    owners = {path: owner for path, owner, _, _ in stored}
    assert owners["travel-policy.pdf"] == "#finance-ops" and owners["hr/benefits.html"] == "#people-ops"
    assert owners["decks/quarterly-review.pptx"] == "#help-desk"
    assert {kind for _, _, kind, _ in stored} == {"pdf", "docx", "pptx", "html", "notion"}
    titles = {title for _, _, _, title in stored}
    assert {"Remote Work Handbook", "Parental leave", "Laptop refresh", "Software catalogue"} <= titles


def test_ask_json_cites_the_pdf_page_of_a_table_row(ingested: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    view = ask_json(ingested, PDF_QUESTION, capsys, monkeypatch)
    assert view["outcome"] == "answered" and "210 EUR" in view["text"]
    citation = view["citations"][0]
    assert citation["heading"] == "Travel Policy > Hotel caps"
    assert (citation["page"], citation["place"]) == (1, "page 1")
    assert citation["link"] == "https://files.example.com/travel-policy.pdf#page=1"
    assert citation["age"].startswith("updated ")


def test_ask_json_cites_the_heading_of_a_word_list_item(ingested: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    view = ask_json(ingested, WORD_QUESTION, capsys, monkeypatch)
    assert view["outcome"] == "answered" and "250 EUR" in view["text"]
    citation = view["citations"][0]
    assert citation["heading"] == "Remote Work Handbook > Working from home > Home office setup"
    assert citation["page"] is None and citation["link"] == "https://wiki.example.com/hr/google-docs-handbook"


def test_slack_blocks_name_the_page_link_to_it_and_say_a_stale_source_is(sourced: Sourced) -> None:
    pdf = answer_message(answered(sourced, PDF_QUESTION)).block_dicts()
    source = next(block for block in pdf if block.get("block_id") == "source_1")["text"]["text"]
    assert "*Travel Policy* \u203a Hotel caps · page 1" in source
    assert "<https://files.example.com/travel-policy.pdf#page=1|open page 1>" in source
    word = answer_message(answered(sourced, WORD_QUESTION)).block_dicts()
    source = next(block for block in word if block.get("block_id") == "source_1")["text"]["text"]
    assert "Working from home \u203a Home office setup" in source
    assert ":warning: updated 13 months ago, may be out of date" in source  # 2025-11-03, 396 days before


def test_the_audit_record_keeps_the_locator(sourced: Sourced) -> None:
    outcome = answered(sourced, PDF_QUESTION)
    record = sourced.audit_log.get(outcome.correlation_id)
    assert record is not None
    cited = record.cited[0]
    assert (cited.heading, cited.page, cited.link) == (
        "Travel Policy > Hotel caps", 1, "https://files.example.com/travel-policy.pdf#page=1")


def test_dry_run_prints_each_file_and_what_it_could_not_read(company: Path, capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    shutil.copytree(company / "kb", kb)
    shutil.copy(FIXTURES / "files" / "scanned.pdf", kb)
    capsys.readouterr()
    assert main(["ingest", "--dry-run", str(kb), "--config", str(company / "sourced.yml")]) == 1
    captured = capsys.readouterr()
    assert "travel-policy.pdf" in captured.out and "#finance-ops" in captured.out and "Remote Work Handbook" in \
        captured.out
    assert ("error: scanned.pdf: has no text layer (scanned?); Sourced does not OCR: give it a text layer first "
            "(e.g. ocrmypdf) and ingest that") in captured.err
    assert "11 documents would be ingested; 1 file could not be read; nothing was stored" in captured.out
    assert not (tmp_path / "sourced.db").exists()
