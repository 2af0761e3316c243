"""`sourced doctor`'s checks of the installation, through the core's own seam (`core.diagnosis.diagnose`): plain
findings, with no Slack in them, about a database of the test's own and an embedder of our own (`BagOfWords`)."""

from pathlib import Path

import pytest

from core.bootstrap import bootstrap
from core.config import Settings
from core.diagnosis import Check, diagnose
from tests.fake_embedders import BagOfWords

PARKING = """---
title: Parking
owner: "#facilities"
---
# Parking

## Spaces
Visitors park in the spaces marked with a blue sign by the north entrance.
"""
CONFIG = "roles:\n  hr: ['@hr-team']\nconnectors:\n  - name: wiki\n    kind: notion\n"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(database_url=f"sqlite:///{tmp_path / 'sourced.db'}", embedder="none")


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("SOURCED_NOTION_TOKEN", raising=False)
    written = tmp_path / "sourced.yml"
    written.write_text(CONFIG, encoding="utf-8")
    return written


def ingested(settings: Settings, tmp_path: Path) -> None:
    """The parking page, in the database `settings` name, with vectors of `BagOfWords`."""
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "parking.md").write_text(PARKING, encoding="utf-8")
    sourced = bootstrap(settings, embedder=BagOfWords(), progress=False)
    try:
        assert not sourced.ingestor.ingest(tmp_path / "kb").errors
    finally:
        sourced.engine.dispose()


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {check.name: check for check in checks}


def test_an_ingested_installation_is_ok_line_by_line_with_what_each_line_found(
        settings: Settings, config_file: Path, tmp_path: Path) -> None:
    ingested(settings, tmp_path)
    found = diagnose(settings, config_file=config_file, embedder=BagOfWords())
    checks = by_name(found.installation)
    assert list(checks) == ["configuration", "database", "index", "instructions", "retrieval", "embedder", "reader",
                            "answerability", "answer model", "audit"]
    assert {check.status for check in found.installation} == {"ok"}
    assert checks["index"].detail.startswith("1 document, 1 chunk, last ingest ")
    embedder = checks["embedder"].facts
    assert (embedder["name"], embedder["dim"], embedder["vectors"], embedder["chunks"]) == ("bag-of-words@1", 64, 1, 1)
    assert checks["retrieval"].detail == "hybrid (full text and bag-of-words@1): given by the caller"
    assert found.config is not None and found.config.roles == {"hr": ["@hr-team"]}


def test_an_embedder_whose_vectors_were_never_stored_is_a_warning_with_the_command_that_stores_them(
        settings: Settings, config_file: Path, tmp_path: Path) -> None:
    ingested(settings, tmp_path)
    embedder = by_name(diagnose(settings, config_file=config_file, embedder=BagOfWords("bag-of-words@2")
                                ).installation)["embedder"]
    assert (embedder.status, embedder.fix) == ("warning", "`sourced ingest PATH` embeds the chunks without a vector")
    assert "vectors for 0 of 1 chunk" in embedder.detail


def test_a_database_never_migrated_is_an_error_and_the_lines_that_read_it_are_left_out(
        settings: Settings, config_file: Path) -> None:
    checks = by_name(diagnose(settings, config_file=config_file).installation)
    assert checks["database"].status == "error" and "schema at nothing" in checks["database"].detail
    assert checks["database"].fix == "any other command migrates it, e.g. `sourced ingest PATH`"
    assert "index" not in checks and "instructions" not in checks


def test_a_connector_without_its_credential_is_an_error_naming_the_variable(
        settings: Settings, config_file: Path) -> None:
    [wiki] = diagnose(settings, config_file=config_file).connectors
    assert (wiki.name, wiki.status) == ("connector wiki", "error")
    assert wiki.fix == "put its credential in SOURCED_NOTION_TOKEN"


def test_an_unreadable_sourced_yml_is_the_configuration_line_and_leaves_no_configuration_to_read(
        settings: Settings, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("roles: [not, a, mapping]\n", encoding="utf-8")
    found = diagnose(settings, config_file=broken)
    configuration = by_name(found.installation)["configuration"]
    assert configuration.status == "error" and configuration.fix == "correct sourced.yml (format: docs/documents.md)"
    assert found.config is None and found.connectors == []
