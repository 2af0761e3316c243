"""Running syncs: `sync_every` in `sourced serve`, one sync at a time per database, and what doctor and the
operators' Home tab say about each connector (its last sync, its lag, its last error)."""

import threading
from collections.abc import Collection, Iterator, Mapping
from datetime import timedelta
from pathlib import Path

import pytest

from bot.schedule import SyncSchedule
from bot.views import home_view
from core.config import ConfluenceEntry
from core.connectors.build import build_connector
from core.connectors.confluence import ConfluenceConnector
from core.connectors.port import Access, Changes, Item, ItemRef
from core.diagnosis import connector_check
from core.storage.locks import IngestBusy
from tests.connectors.fake_confluence import TOKEN, USER, ConfluenceSite, FakeConfluence
from tests.connectors.memory_source import MemoryPage, MemorySource
from tests.connectors.workbench import answered_with, application, ask, person

pytest.importorskip("atlassian", reason="the connectors extra is not installed")


@pytest.fixture
def fake() -> Iterator[FakeConfluence]:
    site = ConfluenceSite()
    site.add_user("bob", "bob@example.com")
    site.add_group("g-all", "confluence-users", {"bob"})
    site.add_space("ENG", "Engineering", groups={"g-all"})
    site.create("ENG", "Laptops", "<p>The laptop budget for engineers is 2000 EUR.</p>")
    server = FakeConfluence(site)
    server.start()
    yield server
    server.stop()


def config(fake: FakeConfluence) -> dict[str, object]:
    return {"sync_every": "1s", "connectors": [{"name": "wiki", "kind": "confluence", "url": fake.url,
                                                 "spaces": ["ENG"], "user": USER}]}


def test_serve_syncs_on_its_schedule_until_it_stops(tmp_path: Path, fake: FakeConfluence,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCED_CONFLUENCE_TOKEN", TOKEN)
    sourced = application(tmp_path / "db", config=config(fake))
    schedule = SyncSchedule(sourced, timedelta(seconds=0.3), first_s=0.0).start()
    try:
        for _ in range(200):
            if sourced.connector_state.status("wiki").succeeded_at is not None:
                break
            threading.Event().wait(0.05)
        laptop = next(c for c in fake.site.content.values() if c.title == "Laptops")
        fake.site.edit(laptop.id, "<p>The laptop budget for engineers is 2600 EUR.</p>")
        for _ in range(200):
            if answered_with(ask(sourced, "What is the laptop budget?", person(sourced, "bob@example.com")),
                             ["2600 EUR"]):
                break
            threading.Event().wait(0.05)
        else:
            raise AssertionError("the scheduled sync never picked the edit up")
    finally:
        schedule.close()
    fake.reset_calls()
    threading.Event().wait(0.6)
    assert fake.calls == []  # stopped: no more turns
    assert SyncSchedule.of(sourced) is not None


class Holding:
    """A connector whose feed waits until released: a sync in progress."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    @property
    def name(self) -> str:
        return "slow"

    def changes(self, cursor: str | None) -> Iterator[Changes]:
        self.entered.set()
        self.release.wait(10)
        yield Changes(refs=(), cursor="done")

    def fetch(self, ref: ItemRef) -> Item | None:
        return None

    def existing(self) -> Iterator[ItemRef]:
        return iter(())

    def members(self, groups: Collection[str]) -> Mapping[str, frozenset[str]]:
        return {}


def test_one_sync_at_a_time_per_database(tmp_path: Path) -> None:
    first = application(tmp_path / "db")
    second = application(tmp_path / "db")  # another process's view of the same database
    holding = Holding()
    worker = threading.Thread(target=first.syncer.sync, args=(holding,))
    worker.start()
    try:
        assert holding.entered.wait(10)
        with pytest.raises(IngestBusy):
            second.syncer.sync(Holding())
        with pytest.raises(IngestBusy):
            second.ingestor.ingest(tmp_path)
    finally:
        holding.release.set()
        worker.join(10)
    assert second.connector_state.status("slow").error is None  # a sync refused for the lock is no failure
    freed = Holding()
    freed.release.set()
    assert second.syncer.sync(freed).ok  # free again


def test_doctor_and_the_home_tab_say_when_a_connector_failed_and_what_it_left(
        tmp_path: Path, fake: FakeConfluence, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCED_CONFLUENCE_TOKEN", TOKEN)
    sourced = application(tmp_path / "db", config=config(fake))
    entry = sourced.config.connectors[0]
    assert isinstance(entry, ConfluenceEntry)
    assert connector_check(entry, sourced.connector_state.status("wiki"), None).status == "warning"  # never
    assert sourced.syncer.sync(build_connector(entry)).ok
    healthy = connector_check(entry, sourced.connector_state.status("wiki"), timedelta(minutes=15))
    assert healthy.status == "ok" and "1 document; last sync" in healthy.detail
    fake.fail("/wiki/", 503, times=100)
    quick = ConfluenceConnector(name="wiki", url=fake.url, spaces=["ENG"], user=USER, token=TOKEN, backoff_s=0.01)
    assert not sourced.syncer.sync(quick).ok  # the retries back off for milliseconds, not the default seconds
    status = sourced.connector_state.status("wiki")
    failing = connector_check(entry, status, None)
    assert failing.status == "warning" and "HTTP 503" in failing.detail and "answers use the index" in failing.detail
    view = home_view([], None, [status]).to_dict()
    text = view["blocks"][-1]["text"]["text"]
    assert "wiki" in text and "HTTP 503" in text and "last good sync" in text
    monkeypatch.delenv("SOURCED_CONFLUENCE_TOKEN")
    assert connector_check(entry, status, None).status == "error"


def test_a_folders_ingest_and_a_connectors_sync_never_remove_each_others_documents(tmp_path: Path) -> None:
    sourced = application(tmp_path / "db")
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "travel.md").write_text("# Travel\n\nMeals are paid up to 40 EUR a day.\n", encoding="utf-8")
    source = MemorySource(name="mem", pages={"p1": MemoryPage(title="Parking", text="# Parking\n\nThe garage has "
                                                              "12 spaces.\n", access=Access(anyone=True))})
    assert sourced.syncer.sync(source).ok
    assert sourced.ingestor.ingest(folder).added == ("travel",)
    (folder / "travel.md").unlink()
    assert sourced.ingestor.ingest(folder).removed == ("travel",)  # the folder's own, not the connector's
    (folder / "travel.md").write_text("# Travel\n\nMeals are paid up to 40 EUR a day.\n", encoding="utf-8")
    sourced.ingestor.ingest(folder)
    source.pages.clear()
    report = sourced.syncer.sync(source, full=True)
    assert report.removed == ["mem:p1"]
    assert sourced.ingestor.stored_items("mem") == {} and sourced.index.document_count() == 1
