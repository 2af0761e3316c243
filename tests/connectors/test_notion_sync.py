"""Notion, end to end: the real `notion-client` against a fake Notion API on loopback; blocks read into the
document model (headings, nested lists, tables, links); each shared root's audience named in sourced.yml;
edits answered after one sync, deleted and unshared pages gone after the full pass. Shipped defaults."""

import socket
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.cli import main
from core.connectors.notion import NotionConnector
from tests.connectors.fake_notion import TOKEN, FakeNotion, NotionWorkspace
from tests.connectors.workbench import answered_with, application, ask, cited_documents, person, sync

pytest.importorskip("notion_client", reason="the connectors extra is not installed")

PARKING = "How many parking spaces does the Oslo office have?"
BONUS = "When is the annual bonus paid?"


@pytest.fixture
def workspace() -> NotionWorkspace:
    return NotionWorkspace()


@pytest.fixture
def fake(workspace: NotionWorkspace) -> Iterator[FakeNotion]:
    server = FakeNotion(workspace)
    server.start()
    yield server
    server.stop()


def connector(fake: FakeNotion, roots: dict[str, list[str]], **options: object) -> NotionConnector:
    return NotionConnector(name="notion", token=TOKEN, roots=roots, api_url=fake.base, retries=2,
                           **options)  # type: ignore[arg-type]


def office(spaces: int) -> list[tuple[str, str] | tuple[str, str, list[object]]]:
    return [("heading_1", "Oslo office"), ("paragraph", "The Oslo office is on the fourth floor."),
            ("heading_2", "Parking"),
            ("bulleted_list_item", "Parking", [("bulleted_list_item", f"The Oslo office has {spaces} parking "
                                                                      f"spaces for staff.")]),
            ("table", "", [["Day", "Cleaning"], ["Friday", "Evening"]])]


def test_pages_follow_their_roots_audience_and_each_change_after_a_sync(tmp_path: Path, workspace: NotionWorkspace,
                                                                         fake: FakeNotion) -> None:
    wiki = workspace.create("Company wiki", [("paragraph", "Start here.")], share=True)
    offices = workspace.create("Offices", office(12), parent=wiki)
    people = workspace.create("People team", [("paragraph", "Private to the people team.")], share=True)
    bonus = workspace.create("Bonus", [("heading_1", "Bonus"), ("paragraph", "The annual bonus is paid in March.")],
                             parent=people)
    stray = workspace.create("Scratch", [("paragraph", "The annual bonus is paid in July, says a draft.")],
                             share=True)  # shared with the integration, under no root sourced.yml names
    roots = {wiki: ["everyone"], people: ["user:alice@example.com"]}
    sourced = application(tmp_path / "db")
    report = sync(sourced, connector(fake, roots))
    assert len(report.added) == 4 and f"notion:{stray.replace('-', '')}" not in report.added
    alice, bob = person(sourced, "alice@example.com"), person(sourced, "bob@example.com")

    reply = ask(sourced, PARKING, bob)
    assert answered_with(reply, ["12 parking spaces"]), reply["view"]
    assert answered_with(ask(sourced, BONUS, alice), ["March"])
    assert ask(sourced, BONUS, bob)["view"]["outcome"] == "refused"
    assert ask(sourced, BONUS, alice, bob)["view"]["outcome"] == "refused"

    workspace.edit(offices, office(15))
    assert sync(sourced, connector(fake, roots)).updated == [f"notion:{offices.replace('-', '')}"]
    assert answered_with(ask(sourced, PARKING, bob), ["15 parking spaces"])

    workspace.delete(bonus)
    workspace.shared.discard(wiki)  # the wiki is no longer shared with the integration
    report = sync(sourced, connector(fake, roots), full=True)
    assert set(report.removed) == {f"notion:{page.replace('-', '')}" for page in (wiki, offices, bonus)}
    assert f"notion:{offices.replace('-', '')}" not in cited_documents(ask(sourced, PARKING, bob))


def test_pages_moved_under_a_restricted_root_take_its_audience_at_the_full_pass_though_none_was_edited(
        tmp_path: Path, workspace: NotionWorkspace, fake: FakeNotion) -> None:
    wiki = workspace.create("Company wiki", [("paragraph", "Start here.")], share=True)
    people = workspace.create("People team", [("paragraph", "Private to the people team.")], share=True)
    team = workspace.create("Team notes", [("paragraph", "Notes of the team.")], parent=wiki)
    bonus = workspace.create("Bonus", [("heading_1", "Bonus"), ("paragraph", "The annual bonus is paid in March.")],
                             parent=team)
    roots = {wiki: ["everyone"], people: ["user:alice@example.com"]}
    sourced = application(tmp_path / "db")
    sync(sourced, connector(fake, roots))
    bob = person(sourced, "bob@example.com")
    assert answered_with(ask(sourced, BONUS, bob), ["March"])

    workspace.move(team, people)  # the bonus page's own parent and edit time stay as they were
    report = sync(sourced, connector(fake, roots), full=True)
    assert {f"notion:{page.replace('-', '')}" for page in (team, bonus)} <= set(report.updated)
    assert ask(sourced, BONUS, bob)["view"]["outcome"] == "refused"
    assert answered_with(ask(sourced, BONUS, person(sourced, "alice@example.com")), ["March"])


def test_a_page_under_no_root_takes_the_connectors_audience(tmp_path: Path, workspace: NotionWorkspace,
                                                            fake: FakeNotion) -> None:
    workspace.create("Scratch", [("paragraph", "The annual bonus is paid in July.")], share=True)
    sourced = application(tmp_path / "db")
    sync(sourced, connector(fake, {}, audience=["everyone"]))
    assert answered_with(ask(sourced, BONUS, person(sourced, "bob@example.com")), ["July"])


def test_a_second_sync_with_no_changes_searches_once(tmp_path: Path, workspace: NotionWorkspace,
                                                      fake: FakeNotion) -> None:
    wiki = workspace.create("Company wiki", [("paragraph", "Start here.")], share=True)
    for number in range(30):
        workspace.create(f"Note {number}", [("paragraph", f"Note {number} is about topic {number}.")], parent=wiki)
    for page in workspace.pages.values():
        page.edited -= timedelta(hours=1)  # written an hour ago, before the last sync's margin
    sourced = application(tmp_path / "db")
    sync(sourced, connector(fake, {wiki: ["everyone"]}, page_size=10))
    assert len(fake.calls_to(r"/v1/search")) == 4  # 31 pages, 10 a page
    fake.reset_calls()
    second = sync(sourced, connector(fake, {wiki: ["everyone"]}, page_size=10))
    assert not second.added and not second.updated
    assert [call.path for call in fake.calls] == ["/v1/search"]


def test_a_database_row_takes_the_audience_of_the_restricted_page_above_its_database(
        tmp_path: Path, workspace: NotionWorkspace, fake: FakeNotion) -> None:
    people = workspace.create("People team", [("paragraph", "Private to the people team.")], share=True)
    _, ledger = workspace.create_database("Bonus ledger", parent=people)
    row = workspace.create("Bonus", [("heading_1", "Bonus"), ("paragraph", "The annual bonus is paid in March.")],
                           parent=ledger)  # a row: its parent is the database's data source
    sourced = application(tmp_path / "db")
    report = sync(sourced, connector(fake, {people: ["user:alice@example.com"]}, audience=["everyone"]))
    assert f"notion:{row.replace('-', '')}" in report.added
    alice, bob = person(sourced, "alice@example.com"), person(sourced, "bob@example.com")
    assert answered_with(ask(sourced, BONUS, alice), ["March"])
    assert ask(sourced, BONUS, bob)["view"]["outcome"] == "refused"  # not the connector's `[everyone]`
    assert ask(sourced, BONUS, alice, bob)["view"]["outcome"] == "refused"


def test_a_page_whose_walk_up_stops_short_of_the_workspace_is_stored_for_no_one(
        tmp_path: Path, workspace: NotionWorkspace, fake: FakeNotion) -> None:
    board = workspace.create("Board", [("paragraph", "Board only.")])  # not shared with the integration
    minutes = workspace.create("Board minutes", [("paragraph", "The annual bonus is paid in July.")],
                               parent=board, share=True)  # shared alone: its root cannot be told
    sourced = application(tmp_path / "db")
    report = sync(sourced, connector(fake, {}, audience=["everyone"]))
    assert f"notion:{minutes.replace('-', '')}" not in report.added
    assert ask(sourced, BONUS, person(sourced, "bob@example.com"))["view"]["outcome"] == "refused"


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "sourced-test-host.invalid"])
def test_a_host_that_does_not_resolve_or_refuses_is_one_line_naming_notion_and_the_host(
        tmp_path: Path, host: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    """It was httpx's ConnectError, logged with an 80-line traceback naming neither."""
    with socket.socket() as probe:  # a port nothing listens on: the connection is refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    named = host.format(port=port)
    config = tmp_path / "sourced.yml"
    config.write_text(f"default_owner: \"#help-desk\"\nconnectors:\n  - name: pages\n    kind: notion\n"
                      f"    api_url: http://{named}/v1\n    audience: [everyone]\n", encoding="utf-8")
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    monkeypatch.setenv("SOURCED_NOTION_TOKEN", TOKEN)
    assert main(["sync", "--config", str(config)]) == 1
    captured = capsys.readouterr()
    printed = [line for line in (captured.out + captured.err).splitlines() if named in line]
    assert len(printed) == 1 and "Notion" in printed[0] and "unreachable" in printed[0]
    assert "Traceback" not in captured.out + captured.err and TOKEN not in captured.out + captured.err
    assert not [record for record in caplog.records if record.exc_info]
