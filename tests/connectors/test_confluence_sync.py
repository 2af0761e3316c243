"""Confluence Cloud, end to end: the real `atlassian-python-api` client against a fake Confluence on loopback,
a scripted site changed between syncs, and after each change one sync makes the answers reflect it (issue 30):
an edit is answered with its new value, a page moved to the trash or purged is no longer cited, a page
restricted to a group is answered for a member in a DM and refused, exactly as if it did not exist, for a
non-member and in a channel where one member lacks access. Shipped defaults (the MiniLM embedder)."""

import json
import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from benchmarks.restricted_absence import first_difference
from bot.cli import main
from core.bootstrap import Sourced
from core.connectors.confluence import ConfluenceConnector
from tests.connectors.fake_confluence import TOKEN, USER, ConfluenceSite, FakeConfluence
from tests.connectors.workbench import answered_with, application, ask, cited_documents, person, sync

pytest.importorskip("atlassian", reason="the connectors extra is not installed")

LAPTOP = "What is the laptop budget for engineers?"
SALARY = "What is the salary band for a senior engineer?"
VPN = "Which VPN client do we use?"


def handbook(site: ConfluenceSite) -> dict[str, str]:
    site.add_user("alice", "alice@example.com")
    site.add_user("bob", "bob@example.com")
    site.add_user("hidden", None)  # an account whose e-mail Confluence does not show
    site.add_group("g-all", "confluence-users", {"alice", "bob", "hidden"})
    site.add_group("g-people", "people-team", {"alice"})
    site.add_space("ENG", "Engineering", groups={"g-all"})
    root = site.create("ENG", "Engineering Handbook", "<p>Everything engineers need to know.</p>")
    laptops = site.create("ENG", "Laptops", (
        "<h2>Budget</h2><p>The laptop budget for engineers is 2000 EUR, approved by the team lead.</p>"
        "<ac:structured-macro ac:name=\"info\"><ac:parameter ac:name=\"title\">Replacement</ac:parameter>"
        "<ac:rich-text-body><p>Laptops are replaced every three years.</p></ac:rich-text-body>"
        "</ac:structured-macro>"), parent=root)
    vpn = site.create("ENG", "Remote access", "<h2>VPN</h2><p>We use the WireGuard VPN client on every laptop.</p>",
                      parent=root)
    salaries = site.create("ENG", "Salary bands", (
        "<h2>Senior engineer</h2><table><tbody><tr><th>Level</th><th>Band</th></tr>"
        "<tr><td>Senior engineer</td><td>85,000 to 98,000 EUR</td></tr></tbody></table>"), parent=root)
    return {"root": root, "laptops": laptops, "vpn": vpn, "salaries": salaries}


@pytest.fixture
def site() -> ConfluenceSite:
    return ConfluenceSite()


@pytest.fixture
def fake(site: ConfluenceSite) -> Iterator[FakeConfluence]:
    server = FakeConfluence(site)
    server.start()
    yield server
    server.stop()


def connector(fake: FakeConfluence, *, page_size: int = 50) -> ConfluenceConnector:
    return ConfluenceConnector(name="wiki", url=fake.url, spaces=["ENG"], user=USER, token=TOKEN, page_size=page_size,
                               backoff_s=0.01)


def test_each_scripted_change_is_answered_after_one_sync(tmp_path: Path, site: ConfluenceSite,
                                                         fake: FakeConfluence) -> None:
    scripted_changes(application(tmp_path / "db"), site, fake)


def test_on_postgresql_each_scripted_change_is_answered_after_one_sync(
        tmp_path: Path, site: ConfluenceSite, fake: FakeConfluence, pgvector_url: str) -> None:
    scripted_changes(application(tmp_path / "db", database_url=pgvector_url), site, fake)


def scripted_changes(sourced: Sourced, site: ConfluenceSite, fake: FakeConfluence) -> None:
    pages = handbook(site)
    first = sync(sourced, connector(fake))
    assert len(first.added) == 4 and not first.errors
    alice, bob = person(sourced, "alice@example.com"), person(sourced, "bob@example.com")

    reply = ask(sourced, LAPTOP, bob)
    assert answered_with(reply, ["2000 EUR"]), reply["view"]
    assert reply["view"]["citations"][0]["heading"].startswith("Engineering > Engineering Handbook > Laptops")

    site.edit(pages["laptops"], "<h2>Budget</h2><p>The laptop budget for engineers is 2400 EUR, approved by the "
                                "team lead.</p>")
    report = sync(sourced, connector(fake))
    assert report.updated == [f"wiki:{pages['laptops']}"]
    reply = ask(sourced, LAPTOP, bob)
    assert answered_with(reply, ["2400 EUR"]) and "2000" not in reply["view"]["text"]

    site.trash(pages["vpn"])
    sync(sourced, connector(fake))
    assert f"wiki:{pages['vpn']}" not in cited_documents(ask(sourced, VPN, bob))
    assert ask(sourced, VPN, bob)["view"]["outcome"] == "refused"

    site.restrict(pages["salaries"], groups={"g-people"})
    sync(sourced, connector(fake), full=True)  # restrictions change no `lastmodified`: the full pass reads them
    assert answered_with(ask(sourced, SALARY, alice), ["85,000"])
    refused_to_bob = ask(sourced, SALARY, bob)
    channel = ask(sourced, SALARY, alice, bob)
    assert refused_to_bob["view"]["outcome"] == channel["view"]["outcome"] == "refused"
    assert f"wiki:{pages['salaries']}" not in cited_documents(refused_to_bob) | cited_documents(channel)

    site.spaces["ENG"].groups = {"g-people"}  # the space is narrowed to the people team: found at the next sync
    report = sync(sourced, connector(fake))
    assert report.full_pass
    alice, bob = person(sourced, "alice@example.com"), person(sourced, "bob@example.com")  # as at each question
    assert ask(sourced, LAPTOP, bob)["view"]["outcome"] == "refused"
    assert answered_with(ask(sourced, LAPTOP, alice), ["2400 EUR"])


def test_a_restricted_page_is_refused_to_others_exactly_as_if_it_did_not_exist(
        tmp_path: Path, site: ConfluenceSite, fake: FakeConfluence) -> None:
    pages = handbook(site)
    site.restrict(pages["salaries"], groups={"g-people"})
    restricted = application(tmp_path / "restricted")
    sync(restricted, connector(fake))
    site.purge(pages["salaries"])
    absent = application(tmp_path / "absent")
    sync(absent, connector(fake))
    for number, question in enumerate((SALARY, "salary band senior", "What does a senior engineer earn?")):
        bob_restricted = ask(restricted, question, person(restricted, "bob@example.com"), correlation=2 * number)
        bob_absent = ask(absent, question, person(absent, "bob@example.com"), correlation=2 * number)
        assert bob_restricted == bob_absent, first_difference(bob_restricted, bob_absent)
        in_channel = ask(restricted, question, person(restricted, "alice@example.com"),
                         person(restricted, "bob@example.com"), correlation=2 * number + 1)
        in_channel_absent = ask(absent, question, person(absent, "alice@example.com"),
                                person(absent, "bob@example.com"), correlation=2 * number + 1)
        assert in_channel == in_channel_absent, first_difference(in_channel, in_channel_absent)


def test_a_member_removed_from_the_group_loses_the_page_at_the_next_sync(
        tmp_path: Path, site: ConfluenceSite, fake: FakeConfluence) -> None:
    pages = handbook(site)
    site.restrict(pages["salaries"], groups={"g-people"})
    site.spaces["ENG"].groups.add("g-people")  # the group reads the space too: it stays a group in the audience
    sourced = application(tmp_path / "db")
    sync(sourced, connector(fake))
    assert answered_with(ask(sourced, SALARY, person(sourced, "alice@example.com")), ["85,000"])
    site.groups["g-people"][1].discard("alice")
    site.groups["g-people"][1].add("bob")
    report = sync(sourced, connector(fake))
    assert not report.full_pass and report.groups >= 1
    assert ask(sourced, SALARY, person(sourced, "alice@example.com"))["view"]["outcome"] == "refused"
    assert answered_with(ask(sourced, SALARY, person(sourced, "bob@example.com")), ["85,000"])


def test_a_user_the_source_does_not_know_sees_only_what_is_shared_with_everyone(
        tmp_path: Path, site: ConfluenceSite, fake: FakeConfluence) -> None:
    handbook(site)
    sourced = application(tmp_path / "db")
    sync(sourced, connector(fake))
    stranger = person(sourced, "stranger@elsewhere.example")
    assert ask(sourced, LAPTOP, stranger)["view"]["outcome"] == "refused"
    assert ask(sourced, LAPTOP, person(sourced, None))["view"]["outcome"] == "refused"
    hidden = person(sourced, "hidden@example.com")  # in the group, but Confluence never showed the address
    assert ask(sourced, LAPTOP, hidden)["view"]["outcome"] == "refused"


def test_purged_and_moved_pages_and_attachments_follow_the_source(tmp_path: Path, site: ConfluenceSite,
                                                                  fake: FakeConfluence) -> None:
    pages = handbook(site)
    attachment = site.attach(pages["laptops"], "models.csv", b"Model,Price\nThinkPad X1,1900 EUR\n", "text/csv")
    sourced = application(tmp_path / "db")
    sync(sourced, connector(fake))
    reply = ask(sourced, "What does the ThinkPad X1 cost?", person(sourced, "bob@example.com"))
    assert answered_with(reply, ["1900"]), reply["view"]
    assert f"wiki:{attachment}" in cited_documents(reply)

    archive = site.create("ENG", "Archive", "<p>Old pages.</p>")
    site.move(pages["laptops"], archive)
    sync(sourced, connector(fake))
    reply = ask(sourced, LAPTOP, person(sourced, "bob@example.com"))
    assert reply["view"]["citations"][0]["heading"].startswith("Engineering > Archive > Laptops")

    site.purge(pages["vpn"])  # gone for good: no feed says so, the full pass does
    report = sync(sourced, connector(fake), full=True)
    assert f"wiki:{pages['vpn']}" in report.removed


def test_a_second_sync_with_no_changes_lists_a_constant_number_of_times(tmp_path: Path, site: ConfluenceSite,
                                                                         fake: FakeConfluence) -> None:
    pages = handbook(site)
    for number in range(60):
        site.create("ENG", f"Note {number}", f"<p>Note {number} says the rota has {number} people.</p>",
                    parent=pages["root"])
    for content in site.content.values():
        content.when -= timedelta(hours=1)  # written an hour ago, before the feed's margin
    sourced = application(tmp_path / "db")
    sync(sourced, connector(fake, page_size=10))
    assert len(fake.calls_to(r"/content/search")) == 7  # 64 pages, 10 a page
    fake.reset_calls()
    second = sync(sourced, connector(fake, page_size=10))
    assert not second.added and not second.updated and not second.full_pass
    # One search, whatever the site's size, beside the space's id and permissions, its trash (pages and blog
    # posts) and the one group the documents name; nothing downloaded.
    assert len(fake.calls_to(r"/content/search")) == 1
    assert not fake.calls_to(r"/rest/api/content/\d+")
    assert len(fake.calls) == 1 + 1 + 1 + 2 + 1


def test_the_cli_syncs_from_sourced_yml_with_the_token_from_the_environment(
        tmp_path: Path, site: ConfluenceSite, fake: FakeConfluence, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    handbook(site)
    config = tmp_path / "sourced.yml"
    config.write_text(f"default_owner: \"#help-desk\"\nconnectors:\n  - name: wiki\n    kind: confluence\n"
                      f"    url: {fake.url}\n    spaces: [ENG]\n    user: {USER}\n    owner: \"#eng-wiki\"\n",
                      encoding="utf-8")
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    assert main(["sync", "--config", str(config)]) == 1  # no token in the environment: a failed sync, said
    assert "SOURCED_CONFLUENCE_TOKEN" in capsys.readouterr().out
    monkeypatch.setenv("SOURCED_CONFLUENCE_TOKEN", TOKEN)
    assert main(["sync", "wiki", "--config", str(config)]) == 0
    assert "wiki: 4 added" in capsys.readouterr().out
    assert main(["ask", "--email", "bob@example.com", "--json", "--config", str(config), LAPTOP]) == 0
    view = json.loads(capsys.readouterr().out)
    assert view["outcome"] == "answered" and "2000 EUR" in view["text"]
    assert view["citations"][0]["link"].startswith(f"{fake.url}/spaces/ENG/pages/")
    assert main(["ask", "--json", "--config", str(config), LAPTOP]) == 0  # no e-mail: nothing the source shares
    assert json.loads(capsys.readouterr().out)["outcome"] == "refused"
    monkeypatch.setenv("SOURCED_CONFLUENCE_TOKEN", "a-wrong-token")
    assert main(["sync", "--config", str(config)]) == 1
    out = capsys.readouterr().out
    assert "HTTP 401" in out and "a-wrong-token" not in out and TOKEN not in out


def test_sync_check_tests_the_credentials_without_syncing(tmp_path: Path, site: ConfluenceSite,
                                                         fake: FakeConfluence, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """`sourced sync --check`: the first page of the listing, read with the credential, in one line per
    connector; nothing stored, so the next sync is still the first."""
    handbook(site)
    config = tmp_path / "sourced.yml"
    config.write_text(f"connectors:\n  - name: wiki\n    kind: confluence\n    url: {fake.url}\n    spaces: [ENG]\n"
                      f"    user: {USER}\n", encoding="utf-8")
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    monkeypatch.setenv("SOURCED_CONFLUENCE_TOKEN", "a-wrong-token")
    assert main(["sync", "--check", "--config", str(config)]) == 1
    [line] = capsys.readouterr().out.splitlines()
    assert line.startswith("wiki (confluence): failed: ") and "401" in line and "a-wrong-token" not in line

    monkeypatch.setenv("SOURCED_CONFLUENCE_TOKEN", TOKEN)
    assert main(["sync", "--check", "--config", str(config)]) == 0
    assert capsys.readouterr().out == ("wiki (confluence): ok: credentials accepted; the first page lists 4 items "
                                       "(nothing stored)\n")
    assert main(["sync", "--config", str(config)]) == 0
    assert "wiki: 4 added" in capsys.readouterr().out


def test_sync_help_names_the_connectors_where_they_are_configured_and_their_secrets(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["sync", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for named in ("`connectors:` in sourced.yml", "kind: confluence", "kind: drive", "kind: notion",
                  "SOURCED_CONFLUENCE_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS", "SOURCED_NOTION_TOKEN",
                  "docs/connectors.md", "--check"):
        assert named in help_text


def test_a_verbose_sync_logs_no_response_of_the_site(tmp_path: Path, site: ConfluenceSite, fake: FakeConfluence,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    """`sourced -v sync` is our debug details: the HTTP libraries' DEBUG records (atlassian-python-api logs each
    response whole: restricted pages' text, people's e-mail addresses) stay out, whatever -v asks."""
    pages = handbook(site)
    site.restrict(pages["salaries"], groups={"g-people"})
    config = tmp_path / "sourced.yml"
    config.write_text(f"default_owner: \"#help-desk\"\nconnectors:\n  - name: wiki\n    kind: confluence\n"
                      f"    url: {fake.url}\n    spaces: [ENG]\n    user: {USER}\n", encoding="utf-8")
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    monkeypatch.setenv("SOURCED_CONFLUENCE_TOKEN", TOKEN)
    caplog.set_level(logging.DEBUG)  # everything that reaches the root, as -v's handler would write it
    assert main(["-v", "sync", "wiki", "--config", str(config)]) == 0
    libraries = [record for record in caplog.records if record.name.split(".")[0] in ("atlassian", "urllib3",
                                                                                       "requests")]
    assert [record.getMessage() for record in libraries if record.levelno < logging.INFO] == []
    assert "85,000" not in caplog.text and "alice@example.com" not in caplog.text

def test_rate_limits_and_server_errors_are_retried(tmp_path: Path, site: ConfluenceSite,
                                                    fake: FakeConfluence) -> None:
    handbook(site)
    fake.fail("/wiki/rest/api/content/search", 429, times=2, retry_after_s=0)
    fake.fail("/wiki/rest/api/content/", 503, times=1)
    sourced = application(tmp_path / "db")
    assert len(sync(sourced, connector(fake)).added) == 4


def test_a_source_that_fails_leaves_the_last_good_index_and_says_so(tmp_path: Path, site: ConfluenceSite,
                                                                     fake: FakeConfluence) -> None:
    handbook(site)
    sourced: Sourced = application(tmp_path / "db")
    sync(sourced, connector(fake))
    fake.fail("/wiki/", 500, times=50)
    failed = sourced.syncer.sync(connector(fake))
    assert not failed.ok and "HTTP 500" in (failed.failure or "")
    status = sourced.connector_state.status("wiki")
    assert status.error == failed.failure and status.succeeded_at is not None and status.documents == 4
    assert answered_with(ask(sourced, LAPTOP, person(sourced, "bob@example.com")), ["2000 EUR"])


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "sourced-test-host.invalid"])
def test_a_host_that_refuses_or_does_not_resolve_fails_the_sync_within_a_minute_in_one_line(
        tmp_path: Path, host: str) -> None:
    import socket  # noqa: PLC0415
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    with socket.socket() as probe:  # a port nothing listens on: the connection is refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://{host.format(port=port)}/wiki"
    sourced = application(tmp_path / "db")
    reports = []
    started = time.monotonic()
    worker = threading.Thread(target=lambda: reports.append(sourced.syncer.sync(ConfluenceConnector(
        name="wiki", url=url, spaces=["ENG"], user=USER, token=TOKEN, backoff_s=0.5))), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "the sync was still retrying after 60 s"
    assert time.monotonic() - started < 60
    failure = reports[0].failure or ""
    assert not reports[0].ok and f"Confluence at {url}" in failure and "\n" not in failure
    assert "wiki" in reports[0].summary() and TOKEN not in failure
