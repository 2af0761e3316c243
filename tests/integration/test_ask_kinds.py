"""`sourced ask` shows the kind the reply presents, as the asker would see it; the audit's true kind, for the
operator, only on a line of its own that says what it means (issue 56: a `not_permitted` headline read as "this
role is refused an answer someone else gets", when the hidden document did not answer either)."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main

PARKING = """---
title: Parking
owner: "#facilities"
---
# Parking

## Spaces
Visitors park in the spaces marked with a blue sign by the north entrance.
"""
PENSION = """---
title: Pension Scheme
owner: "#people-ops"
audience: [hr]
---
# Pension Scheme

## Employer contribution
The company adds 4% of salary to the pension scheme of every employee who contributes at least 3%.
"""
QUESTION = "How much does the company add to the pension scheme?"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    for variable in ("SOURCED_CONFIG", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("SOURCED_EMBEDDER", "none")
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{tmp_path / 'sourced.db'}")
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "parking.md").write_text(PARKING)
    (kb / "pension.md").write_text(PENSION)
    assert main(["ingest", str(kb)]) == 0
    capsys.readouterr()
    yield tmp_path


def asked(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["ask", *args]) == 0
    return capsys.readouterr().out


def test_a_hidden_match_is_shown_as_the_absence_the_asker_sees_with_the_audit_kind_on_its_own_line(
        workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    headline, *lines = asked(capsys, QUESTION).splitlines()
    absent_headline, *absent_reply = asked(capsys, "How much does the company add to the bicycle scheme?").splitlines()
    assert headline == absent_headline == "refused (not_in_corpus)"
    audit, reply = lines[:-len(absent_reply)], lines[-len(absent_reply):]
    assert " ".join(audit).startswith("audit: not_permitted (a document this asker may not see matches the question")
    assert reply == absent_reply  # the reply itself: the one absence gives

    view = json.loads(asked(capsys, QUESTION, "--json"))
    assert (view["kind"], view["presented_as"]) == ("not_permitted", "not_in_corpus")


def test_an_outcome_whose_kinds_agree_has_no_audit_line(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = asked(capsys, QUESTION, "--roles", "hr")
    assert "audit:" not in out
    assert not out.startswith("refused (not_permitted)")
