"""The `sourced` command line run in-process over a small knowledge base of a test's own: the set-up the CLI
tests share (a clean environment, a database in the test's folder, the folder ingested)."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.cli import main

SLACK_AND_CONFIG = ("SOURCED_CONFIG", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET")


def ingested_workspace(folder: Path, documents: dict[str, str], monkeypatch: pytest.MonkeyPatch,
                       capsys: pytest.CaptureFixture[str]) -> Path:
    """`folder` as the working folder, full text only, its own sourced.db, `documents` (name: text) ingested
    from `folder/kb`; what the ingest printed is read away."""
    monkeypatch.chdir(folder)
    for variable in SLACK_AND_CONFIG:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("SOURCED_EMBEDDER", "none")
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{folder / 'sourced.db'}")
    kb = folder / "kb"
    kb.mkdir()
    for name, text in documents.items():
        (kb / name).write_text(text)
    assert main(["ingest", str(kb)]) == 0
    capsys.readouterr()
    return folder


def ingested_company(root: Path, config: str, fill: Callable[[Path], None]) -> Path:
    """`root/kb`, filled by `fill`, ingested with `config` as sourced.yml into `root/sourced.db`."""
    (root / "kb").mkdir()
    fill(root / "kb")
    (root / "sourced.yml").write_text(config, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{root / 'sourced.db'}")
        assert main(["ingest", str(root / "kb"), "--config", str(root / "sourced.yml")]) == 0
    return root


def ask_json(company: Path, question: str, capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> dict:
    """`sourced ask --json` against a company `ingested_company` made."""
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{company / 'sourced.db'}")
    capsys.readouterr()
    main(["ask", question, "--json", "--config", str(company / "sourced.yml")])
    return dict(json.loads(capsys.readouterr().out))
