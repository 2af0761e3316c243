"""A connector taken out of sourced.yml, or renamed, leaves nothing answerable (issue 55, medium 4): its
documents, its groups' members and its state are purged at the next `sourced sync` or serve start, with one line
saying so, and `sourced doctor` names it until then."""

import argparse
from pathlib import Path

import pytest

from bot.commands import serve as serve_command
from bot.commands import sync as sync_command
from core.bootstrap import Sourced
from core.connectors import sync as syncing
from core.connectors.port import Access
from core.diagnosis import connectors as doctor_connectors
from core.domain import group_principal
from tests.connectors.memory_source import MemoryPage, MemorySource
from tests.connectors.workbench import answered_with, application, ask, person

ROSTER = "What is the access code of the boiler room?"
ROSTER_WORDS = ["4417"]
ORCHARD = "What is the budget of the orchard?"


def boiler_room(name: str) -> MemorySource:
    """A source of our own: one page for a group, one for the domain."""
    return MemorySource(name=name, groups={"facilities": {"ines@example.com"}}, pages={
        "roster": MemoryPage(title="Boiler room roster", text="# Boiler room roster\n\nThe access code of the "
                             "boiler room is 4417.\n", access=Access(groups=frozenset({"facilities"}))),
        "orchard": MemoryPage(title="Orchard", text="# Orchard\n\nThe budget of the orchard is 41 EUR a year.\n",
                              access=Access(domains=frozenset({"example.com"})))})


def synced_then_removed(tmp_path: Path, name: str = "plant", *,
                        now: list[dict[str, str]] | None = None) -> Sourced:
    """A database `name` synced into, reopened with sourced.yml's connectors now `now` (none by default)."""
    before = application(tmp_path / "db", config={"connectors": [{"name": name, "kind": "notion"}]})
    assert before.syncer.sync(boiler_room(name)).ok
    ines = person(before, "ines@example.com")
    assert answered_with(ask(before, ROSTER, ines), ROSTER_WORDS)
    assert answered_with(ask(before, ORCHARD, ines), ["41"])
    before.engine.dispose()
    return application(tmp_path / "db", config={"connectors": now or []})


def test_sourced_sync_purges_a_removed_connectors_documents_and_group_members_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    after = synced_then_removed(tmp_path)
    monkeypatch.setattr(sync_command, "application", lambda _args: after)
    # nothing left to sync, still purged
    assert sync_command.run(argparse.Namespace(name=None, full=False, check=False)) == 2
    said = capsys.readouterr().err.splitlines()
    purge_lines = [line for line in said if "'plant'" in line]
    assert len(purge_lines) == 1 and "2 documents" in purge_lines[0] and "purged" in purge_lines[0]
    ines = person(after, "ines@example.com")
    assert group_principal("plant", "facilities") not in ines.roles
    assert not answered_with(ask(after, ROSTER, ines), ROSTER_WORDS)
    assert not answered_with(ask(after, ORCHARD, ines), ["41"])
    assert after.syncer.purge_unconfigured([]) == []  # said once: nothing is left to purge


def test_a_renamed_connector_keeps_only_what_its_new_name_syncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    after = synced_then_removed(tmp_path, now=[{"name": "plant-2", "kind": "notion"}])
    renamed = boiler_room("plant-2")
    renamed.groups["facilities"] = set()  # in the source, ines left the group since
    monkeypatch.setattr(sync_command, "application", lambda _args: after)
    monkeypatch.setattr(syncing, "build_connector", lambda _entry: renamed)
    assert sync_command.run(argparse.Namespace(name=None, full=False, check=False)) == 0
    assert "'plant' is no longer in sourced.yml" in capsys.readouterr().err
    assert after.ingestor.stored_items("plant") == {}
    assert set(after.ingestor.stored_items("plant-2")) == {"plant-2:orchard", "plant-2:roster"}
    assert not answered_with(ask(after, ROSTER, person(after, "ines@example.com")), ROSTER_WORDS)


def test_doctor_names_a_removed_connector_until_it_is_purged_and_serve_purges_it_at_start(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    after = synced_then_removed(tmp_path)

    class Installation:
        config = after.config
        ready_engine = after.engine

    checks = doctor_connectors(Installation())  # type: ignore[arg-type]
    assert [(check.name, check.status) for check in checks] == [("connector plant", "error")]
    assert "2 of its documents are still answered" in checks[0].detail
    serve_command.purge_removed_connectors(after)
    assert "'plant' is no longer in sourced.yml" in capsys.readouterr().err
    assert doctor_connectors(Installation()) == []  # type: ignore[arg-type]
