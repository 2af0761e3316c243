"""A list's heading is its lead-in (issue 56): items straight under a heading that denies ("What the perk budget
does not cover") are answered with that negation, or refused, never as if the budget covered them; a list under a
heading that does not deny answers as before. Through `sourced ask --json` with the shipped defaults (the
extractive model)."""

from pathlib import Path

import pytest

from tests.cli_runs import ask_json, ingested_company

CONFIG = """default_owner: "#people-ops"
sources:
  - path: "**"
    owner: "#people-ops"
"""
PERKS = """# Team perks

Every team gets a perk budget each quarter. Team leads spend it and file the receipts in the expense tool.

## What the perk budget covers

- Team lunches and offsite dinners
- Board games and books for the team room

## What the perk budget does not cover

- Concert tickets and festival passes
- Personal phone contracts
- Taxi rides home after a late shift
"""
DEVICES = """# Devices

Every employee gets a laptop on the first day. The service desk sets it up.

## Lost devices

Report a lost laptop to the service desk within one hour, so that it can be locked remotely.
"""


@pytest.fixture(scope="module")
def company(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def fill(kb: Path) -> None:
        (kb / "perks.md").write_text(PERKS, encoding="utf-8")
        (kb / "devices.md").write_text(DEVICES, encoding="utf-8")

    return ingested_company(tmp_path_factory.mktemp("perks"), CONFIG, fill)


@pytest.mark.parametrize(("question", "item"), [
    ("Can the perk budget pay for concert tickets?", "Concert tickets and festival passes"),
    ("Does the perk budget cover my phone contract?", "Personal phone contracts"),
])
def test_an_item_under_a_heading_that_denies_is_answered_with_the_negation_or_refused(
        company: Path, question: str, item: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    view = ask_json(company, question, capsys, monkeypatch)
    if view["outcome"] != "answered":
        return
    lead = "What the perk budget does not cover:"
    claims = [claim["text"] for claim in view["claims"]]
    assert f"{lead} {item}" in claims, view  # each claim is its item read after the heading
    assert all(claim.startswith(lead) for claim in claims if item in claim)
    text = view["text"]  # the answer says the heading once, before the run of items read after it
    assert lead in text and text.index(lead) < text.index(item), view


def test_an_item_under_a_heading_that_does_not_deny_is_answered_as_written(
        company: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    view = ask_json(company, "Can the perk budget pay for board games?", capsys, monkeypatch)
    assert view["outcome"] == "answered", view
    assert "Board games and books for the team room" in view["text"]
    assert "What the perk budget covers:" not in view["text"]
    assert all("does not cover" not in claim["text"] for claim in view["claims"])
