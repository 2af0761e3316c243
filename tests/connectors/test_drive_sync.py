"""Google Drive, end to end: the real `google-api-python-client` (its bundled discovery document, a service
account whose key signs the token request) against a fake Drive on loopback, a scripted workspace changed
between syncs; after each change one sync makes the answers reflect it (issue 30). Shipped defaults."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.connectors.drive import DriveConnector
from tests.connectors.fake_drive import ACCOUNT, DOC, DOCX, SHEET, DriveWorkspace, FakeDrive, docx
from tests.connectors.workbench import answered_with, application, ask, cited_documents, person, sync

pytest.importorskip("googleapiclient", reason="the connectors extra is not installed")

MEALS = "What is the meal allowance per day?"
ROTA = "Who leads the support rota?"
REVIEW = "When are performance reviews held?"


@pytest.fixture(scope="module")
def key_pair() -> tuple[bytes, bytes]:
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: PLC0415

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public


@pytest.fixture
def workspace() -> DriveWorkspace:
    found = DriveWorkspace()
    found.groups["people@example.com"] = {"alice@example.com"}
    found.drives["d-ops"] = [{"type": "user", "role": "reader", "emailAddress": ACCOUNT},
                             {"type": "domain", "role": "reader", "domain": "example.com"}]
    return found


@pytest.fixture
def fake(workspace: DriveWorkspace, key_pair: tuple[bytes, bytes]) -> Iterator[FakeDrive]:
    server = FakeDrive(workspace, key_pair[1])
    server.start()
    yield server
    server.stop()


def connector(fake: FakeDrive, key_file: Path, **options: object) -> DriveConnector:
    return DriveConnector(name="drive", key_file=str(key_file), subject="admin@example.com", api_url=fake.base,
                          retries=2, **options)  # type: ignore[arg-type]


def travel(allowance: str) -> bytes:
    return docx(("Title", "Travel policy"), ("Heading1", "Meals"),
                (None, f"The meal allowance is {allowance} EUR per day for staff on a business trip."))


def test_each_scripted_change_is_answered_after_one_sync(tmp_path: Path, workspace: DriveWorkspace, fake: FakeDrive,
                                                         key_pair: tuple[bytes, bytes]) -> None:
    key_file = fake.key_file(tmp_path, key_pair[0])
    doc = workspace.add("Travel policy", DOC, travel("45"), shared_with=[
        {"type": "domain", "role": "reader", "domain": "example.com", "allowFileDiscovery": True}])
    rota = workspace.add("Support rota.md", "text/markdown", b"# Support rota\n\nThe support rota is led by "
                         b"Dana Whitfield this quarter.\n", drive="d-ops")
    review = workspace.add("Reviews.docx", DOCX, docx(("Heading1", "Reviews"), (
        None, "Performance reviews are held every March and September.")), shared_with=[
        {"type": "group", "role": "commenter", "emailAddress": "people@example.com"}])
    sourced = application(tmp_path / "db")
    assert len(sync(sourced, connector(fake, key_file)).added) == 3
    alice, bob = person(sourced, "alice@example.com"), person(sourced, "bob@example.com")
    outsider = person(sourced, "carol@partner.example")

    assert answered_with(ask(sourced, MEALS, bob), ["45 EUR"])
    assert answered_with(ask(sourced, ROTA, bob), ["Dana Whitfield"])  # a shared drive's members, inherited
    assert ask(sourced, ROTA, outsider)["view"]["outcome"] == "refused"
    assert answered_with(ask(sourced, REVIEW, alice), ["March"])  # shared with a group alice is in
    assert ask(sourced, REVIEW, bob)["view"]["outcome"] == "refused"
    assert ask(sourced, REVIEW, alice, bob)["view"]["outcome"] == "refused"  # a channel bob is in

    workspace.edit(doc, travel("52"))
    assert sync(sourced, connector(fake, key_file)).updated == [f"drive:{doc}"]
    reply = ask(sourced, MEALS, bob)
    assert answered_with(reply, ["52 EUR"]) and "45" not in reply["view"]["text"]

    workspace.share(review, [{"type": "anyone", "role": "reader", "allowFileDiscovery": True}])  # public
    sync(sourced, connector(fake, key_file))
    assert answered_with(ask(sourced, REVIEW, bob), ["March"])
    assert answered_with(ask(sourced, REVIEW, outsider), ["March"])

    workspace.unshare_from_account(doc)  # the account may no longer read it: a removed change
    report = sync(sourced, connector(fake, key_file))
    assert report.removed == [f"drive:{doc}"]
    assert f"drive:{doc}" not in cited_documents(ask(sourced, MEALS, bob))

    workspace.trash(rota)
    assert sync(sourced, connector(fake, key_file)).removed == [f"drive:{rota}"]
    assert ask(sourced, ROTA, bob)["view"]["outcome"] == "refused"


def test_a_file_shared_only_with_whoever_has_the_link_is_answered_to_no_one_unless_the_operator_opts_in(
        tmp_path: Path, workspace: DriveWorkspace, fake: FakeDrive, key_pair: tuple[bytes, bytes]) -> None:
    key_file = fake.key_file(tmp_path, key_pair[0])
    workspace.add("Reviews.docx", DOCX, docx(("Heading1", "Reviews"), (
        None, "Performance reviews are held every March and September.")), shared_with=[
        {"type": "anyone", "role": "reader"},  # "anyone with the link", Drive's default for anyone
        {"type": "domain", "role": "reader", "domain": "example.com"},  # and "anyone at example.com with the link"
        {"type": "user", "role": "reader", "emailAddress": "alice@example.com"}])
    sourced = application(tmp_path / "db")
    sync(sourced, connector(fake, key_file))
    alice, bob = person(sourced, "alice@example.com"), person(sourced, "bob@example.com")
    assert answered_with(ask(sourced, REVIEW, alice), ["March"])  # named in the file's sharing
    assert ask(sourced, REVIEW, bob)["view"]["outcome"] == "refused"
    assert ask(sourced, REVIEW, person(sourced, "carol@partner.example"))["view"]["outcome"] == "refused"

    opted_in = application(tmp_path / "opted-in")
    sync(opted_in, connector(fake, key_file, link_sharing=True))
    assert answered_with(ask(opted_in, REVIEW, person(opted_in, "bob@example.com")), ["March"])


def test_a_second_sync_with_no_changes_lists_once(tmp_path: Path, workspace: DriveWorkspace, fake: FakeDrive,
                                                  key_pair: tuple[bytes, bytes]) -> None:
    key_file = fake.key_file(tmp_path, key_pair[0])
    for number in range(25):
        workspace.add(f"Note {number}.csv", SHEET, f"Topic,Owner\nNote {number},Team {number}\n".encode(),
                      drive="d-ops")
    sourced = application(tmp_path / "db")
    sync(sourced, connector(fake, key_file, page_size=10))
    fake.reset_calls()
    second = sync(sourced, connector(fake, key_file, page_size=10))
    assert not second.added and not second.updated
    listing = [call.path for call in fake.calls if call.path.startswith("/drive/")]
    assert listing == ["/drive/v3/changes"]


def test_an_expired_page_token_starts_a_full_pass(tmp_path: Path, workspace: DriveWorkspace, fake: FakeDrive,
                                                  key_pair: tuple[bytes, bytes]) -> None:
    key_file = fake.key_file(tmp_path, key_pair[0])
    rota = workspace.add("Support rota", SHEET, b"Team,Lead\nSupport,Dana Whitfield\n", drive="d-ops")
    sourced = application(tmp_path / "db")
    sync(sourced, connector(fake, key_file))
    sourced.connector_state.save_cursor("drive", '{"token": "0"}')
    del workspace.files[rota]  # gone without a change the feed could give
    report = sync(sourced, connector(fake, key_file))
    assert report.full_pass and report.removed == [f"drive:{rota}"]


def test_rate_limits_are_backed_off_and_a_refused_key_is_said_without_secrets(
        tmp_path: Path, workspace: DriveWorkspace, fake: FakeDrive, key_pair: tuple[bytes, bytes]) -> None:
    key_file = fake.key_file(tmp_path, key_pair[0])
    workspace.add("Support rota", SHEET, b"Team,Lead\nSupport,Dana Whitfield\n", drive="d-ops")
    fake.fail("/drive/v3/files", 429, times=1, retry_after_s=0)
    fake.fail("/drive/v3/changes", 503, times=1)
    sourced = application(tmp_path / "db")
    assert len(sync(sourced, connector(fake, key_file)).added) == 1
    (tmp_path / "other").mkdir()
    other_key = fake.key_file(tmp_path / "other", _other_key())  # a key Google does not know for the account
    failed = sourced.syncer.sync(connector(fake, other_key))
    assert not failed.ok and "token was refused" in (failed.failure or "")
    assert "PRIVATE KEY" not in (failed.failure or "")


def _other_key() -> bytes:
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: PLC0415

    return rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def test_a_person_removed_from_a_shared_drive_loses_its_files_at_the_next_full_pass(
        tmp_path: Path, workspace: DriveWorkspace, fake: FakeDrive, key_pair: tuple[bytes, bytes]) -> None:
    key_file = fake.key_file(tmp_path, key_pair[0])
    workspace.drives["d-board"] = [{"type": "user", "role": "reader", "emailAddress": ACCOUNT}]
    workspace.add_drive_member("d-board", "carol@example.com")
    workspace.add_drive_member("d-board", "erin@example.com")
    minutes = workspace.add("Board budget", DOCX, docx(("Title", "Board budget"), ("Heading1", "Travel"), (
        None, "The travel budget of the board is 12,000 EUR per year.")), drive="d-board")
    question = "What is the travel budget of the board?"
    sourced = application(tmp_path / "db")
    sync(sourced, connector(fake, key_file))
    carol, erin = person(sourced, "carol@example.com"), person(sourced, "erin@example.com")
    assert answered_with(ask(sourced, question, carol), ["12,000"])
    workspace.remove_drive_member("d-board", "carol@example.com")  # no file changed, nothing in the feed
    workspace.add_drive_member("d-board", "frank@example.com")
    report = sync(sourced, connector(fake, key_file), full=True)
    assert report.full_pass and report.updated == [f"drive:{minutes}"]
    assert not answered_with(ask(sourced, question, person(sourced, "carol@example.com")), ["12,000"])
    assert answered_with(ask(sourced, question, erin), ["12,000"])
    assert answered_with(ask(sourced, question, person(sourced, "frank@example.com")), ["12,000"])
    unchanged = sync(sourced, connector(fake, key_file), full=True)
    assert not unchanged.updated and not unchanged.added  # the permissions read again, and the same: no download


@pytest.mark.parametrize("key", [None, b"{not json", b'{"type": "service_account"}'])
def test_a_missing_or_malformed_key_file_is_one_line_and_a_failed_sync_doctor_reports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], key: bytes | None) -> None:
    import argparse  # noqa: PLC0415

    from bot.commands import sync as sync_command  # noqa: PLC0415
    from core.diagnosis import connector_check  # noqa: PLC0415

    key_file = tmp_path / "drive-key.json"
    if key is not None:
        key_file.write_bytes(key)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
    sourced = application(tmp_path / "db", config={"connectors": [{"name": "drive", "kind": "drive"}]})
    monkeypatch.setattr(sync_command, "application", lambda _args: sourced)
    assert sync_command.run(argparse.Namespace(name=None, full=False, check=False)) == 1
    said = capsys.readouterr()
    assert said.out.count("\n") == 1 and "FAILED" in said.out and "key file" in said.out
    assert "Traceback" not in said.err
    check = connector_check(sourced.config.connectors[0], sourced.connector_state.status("drive"), None)
    assert check.status == "error" and "key file" in check.detail
