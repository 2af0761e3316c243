"""`sourced ask` shows the kind the reply presents, as the asker would see it; the audit's true kind, for the
operator, only on a line of its own that says what it means (issue 56: a `not_permitted` headline read as "this
role is refused an answer someone else gets", when the hidden document did not answer either)."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from tests.cli_runs import ingested_workspace

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
    yield ingested_workspace(tmp_path, {"parking.md": PARKING, "pension.md": PENSION}, monkeypatch, capsys)


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
