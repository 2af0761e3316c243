"""A connector's sync: what changed since the stored cursor, downloaded, read and ingested one document at a time;
what the source no longer has or shares, removed; the sources' groups re-read.

Nothing is lost or doubled by a crash. Each document is written in a transaction of its own (`Ingestor.writing`)
and the cursor is saved after each batch of the change feed is in, so a sync that dies mid-batch redoes that
batch at its next run, where what it had already stored is found unchanged (same version) and skipped. Removals
are idempotent too. A full pass (`Connector.existing`) runs on the first sync, every `full_every`, when the
connector asks for one (its permissions above the items changed, its cursor expired) or when told; it removes
what is no longer listed and re-reads items whose access or version the listing shows changed. A pass that dies
is run again at the next sync, since its time is recorded only once it is done; one the source asked for is
recorded as due before the cursor that asked is saved, since the feed asks only once.

A connector that fails (`ConnectorError`, or any error of its library) while listing leaves the index as the last
run left it; the failure is recorded for `sourced doctor` and the operators' Home view until a run succeeds. One
sync runs at a time per database, across processes (`core.storage.locks`), beside ingestion.

One item fails alone, and closed. Any error fetching, reading or storing one item (a page nested too deep to
read, a file over the source's export limit, a timeout, bad bytes, a reader's bug) takes that item out of the
index, is logged and reported with the connector and the item's id, and is recorded; the sync goes on, so the
deletions and permission changes after it still apply. Every later sync tries the recorded items again, and one
that reads stands again. Only a source that stops answering stops the sync: `MAX_FAILURES_IN_A_ROW` fetches in a
row failing on the source's side (not the item's) fail the run as a listing failure would.

A connector taken out of sourced.yml (or renamed) has its documents, its groups' members and its state purged
at the next `sourced sync` or `sourced serve` start (`Syncer.purge_unconfigured`): nothing keeps them current.

Permissions. A document's audience is its access as principals; an item whose access names nobody is removed,
so an unshared item leaves the index at the sync that sees it. The members of every group some document names
are read at each sync, before the documents: a member removed from a group loses its documents at once.
"""

import logging
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

from rich.progress import MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn

from core.config import ConfigError, ConnectorEntry
from core.connectors.build import build_connector
from core.connectors.convert import document_id, to_source_document
from core.connectors.port import Connector, ConnectorError, ItemRef, ItemUnreadable
from core.documents.limits import Unreadable
from core.domain.errors import SourceError
from core.progress import progress_bar
from core.retrieval.ingest import Ingestor, StoredItem, Writer
from core.retrieval.knowledge_base import LoadError
from core.storage.connectors import SqlConnectorState
from core.storage.locks import IngestBusy

log = logging.getLogger(__name__)

FULL_EVERY: Final = timedelta(hours=1)
"""How often a full pass runs by default: the longest a page restriction changed in Confluence, or an item
unshared from Notion, stays in the index after the change (a change feed does not report them)."""
MAX_FAILURES_IN_A_ROW: Final = 10
"""Fetches in a row that may fail on the source's side (`ConnectorError`: unreachable, 5xx after retries) before
the sync takes the source for down and stops, rather than take every item out of the index one by one."""


@dataclass(kw_only=True)
class SyncReport:
    """What one sync of one connector did."""

    name: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    full_pass: bool = False
    groups: int = 0
    failure: str | None = None
    """Why the sync stopped (the source could not be read): the index keeps what the last good run left."""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.failure is None

    def summary(self) -> str:
        """One line for the console, the logs, doctor and the Home view."""
        line = (f"{self.name}: {len(self.added)} added, {len(self.updated)} updated, {self.unchanged} unchanged, "
                f"{len(self.removed)} removed")
        if self.full_pass:
            line += "; full pass"
        if self.groups:
            line += f"; {self.groups} {'group' if self.groups == 1 else 'groups'} read"
        if self.errors:
            line += f"; {len(self.errors)} {'item' if len(self.errors) == 1 else 'items'} could not be read"
        if self.failure:
            line += f"; FAILED: {self.failure}"
        return f"{line} ({self.seconds:.1f} s)"


@dataclass(frozen=True, kw_only=True)
class Purged:
    """A connector no longer configured (taken out of sourced.yml, or renamed), and what its syncs had left."""

    name: str
    documents: int
    groups: int

    def summary(self) -> str:
        plural = "document" if self.documents == 1 else "documents"
        return (f"connector {self.name!r} is no longer in sourced.yml: its {self.documents} {plural} and the "
                f"members of its {self.groups} {'group' if self.groups == 1 else 'groups'} were purged and are no "
                "longer answered")


class Syncer:
    """Runs connectors against one database's index."""

    def __init__(self, ingestor: Ingestor, state: SqlConnectorState, *, full_every: timedelta = FULL_EVERY,
                 owners: dict[str, str | None] | None = None, progress: bool = True,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self._ingestor = ingestor
        self._state = state
        self._full_every = full_every
        self._owners = owners or {}
        self._progress = progress
        self._now = now

    def sync(self, connector: Connector, *, full: bool = False) -> SyncReport:
        """One incremental sync (a full pass too when due or `full`). Raises `IngestBusy` when another sync or
        ingestion holds the database; every other failure is in the report and the stored state."""
        report = SyncReport(name=connector.name)
        started = self._now()
        try:
            with self._ingestor.writing() as writer:
                self._state.started(connector.name, started)
                _Run(self, connector, writer, report).run(full=full, started=started)
        except IngestBusy:
            raise  # not this connector's failure: another sync or ingestion is running
        except (ConnectorError, Unreadable) as error:
            report.failure = _one_line(error)
        except Exception as error:  # a library's own error (a timeout, a bad answer): the sync's, not the process's
            log.warning("%s: sync failed", connector.name, exc_info=True)
            report.failure = f"{type(error).__name__}: {_one_line(error)}"
        report.seconds = (self._now() - started).total_seconds()
        if report.failure is None:
            self._state.succeeded(connector.name, self._now(), report.summary())
        else:
            self._state.failed(connector.name, report.failure)
        return report

    def sync_configured(self, entry: ConnectorEntry, *, full: bool = False) -> SyncReport:
        """One connector of sourced.yml, built from its entry and synced. One that cannot even be built (a
        credential missing, a key file missing or unreadable) is a failed sync too, in one line, recorded for
        doctor and the Home view. Raises `IngestBusy` as `sync` does."""
        try:
            connector = build_connector(entry)
        except (ConfigError, ConnectorError) as error:  # ConnectorError: a key file missing or unreadable
            self._state.started(entry.name, self._now())
            self._state.failed(entry.name, str(error))
            return SyncReport(name=entry.name, failure=str(error))
        return self.sync(connector, full=full)

    def purge_unconfigured(self, configured: Collection[str]) -> list[Purged]:
        """Take the documents of every connector not among `configured` out of the index, with its groups'
        members (who held its `group:` roles) and its state: what the source no longer vouches for is not
        answered. Raises `IngestBusy` when another sync or ingestion holds the database."""
        stale = self._state.unconfigured(configured)
        if not stale:
            return []
        purged = []
        with self._ingestor.writing() as writer:
            for name in stale:
                groups = self._state.group_count(name)
                removed = sum(writer.remove(doc_id, origin=name) for doc_id in self._ingestor.stored_items(name))
                self._state.forget(name)
                purged.append(Purged(name=name, documents=removed, groups=groups))
                log.warning("%s", purged[-1].summary())
        return purged

    def _full_due(self, name: str, started: datetime) -> bool:
        last = self._state.status(name).full_pass_at
        return last is None or started - last >= self._full_every


class _Run:
    """One sync's work, with what is stored kept current as it goes."""

    def __init__(self, syncer: Syncer, connector: Connector, writer: Writer, report: SyncReport) -> None:
        self._syncer = syncer
        self._connector = connector
        self._name = connector.name
        self._writer = writer
        self._report = report
        self._stored: dict[str, StoredItem] = {}
        self._refreshed: set[str] = set()
        self._unreadable: dict[str, str] = {}
        self._handled: set[str] = set()
        """Items this run read, removed or found unreadable: not tried again at its end."""
        self._failed: set[str] = set()
        self._failures_in_a_row = 0

    def run(self, *, full: bool, started: datetime) -> None:
        state = self._syncer._state
        status = state.status(self._name)
        self._stored = self._syncer._ingestor.stored_items(self._name)
        self._unreadable = state.unreadable_items(self._name)
        self._refresh_groups(state.referenced_groups(self._name))
        full = full or self._syncer._full_due(self._name, started)
        listed_everything = status.cursor is None and not self._stored  # a first feed lists all there is
        with self._bar("syncing " + self._name) as advance:
            for batch in self._connector.changes(status.cursor):
                for ref in batch.refs:
                    self._apply(ref)
                    advance()
                if batch.full:  # stored before the cursor that asks: the feed will not ask again
                    state.full_pass_due(self._name)
                state.save_cursor(self._name, batch.cursor)
                full = full or batch.full
            if full and not listed_everything:
                self._full_pass(advance)
            self._retry_unreadable(advance)
        if full:
            state.full_pass_done(self._name, started)
            self._report.full_pass = True
        new_groups = state.referenced_groups(self._name) - self._refreshed
        if new_groups:
            self._refresh_groups(new_groups, keep_others=True)

    def _apply(self, ref: ItemRef) -> None:
        doc_id = document_id(self._name, ref.item_id)
        if ref.item_id in self._failed and not ref.deleted:
            return  # listed again in this run after it failed: the next sync tries it again
        if ref.deleted:
            self._remove(doc_id)
            self._read(ref.item_id)
            return
        stored = self._stored.get(doc_id)
        if (stored is not None and ref.version is not None and stored.source_version == ref.version
                and (ref.access is None or ref.access.principals(self._name) == stored.audience)):
            self._report.unchanged += 1
            self._read(ref.item_id)
            return
        self._fetch_and_store(ref, doc_id)

    def _fetch_and_store(self, ref: ItemRef, doc_id: str) -> None:
        """Read one item into the index; whatever fails, fails for this item alone (see the module's text)."""
        try:
            self._read_and_store(ref, doc_id)
        except Exception as error:  # any error reading one item is that item's, not the sync's
            self._item_failed(ref, doc_id, error)
        else:
            self._failures_in_a_row = 0
            self._read(ref.item_id)

    def _read_and_store(self, ref: ItemRef, doc_id: str) -> None:
        item = self._connector.fetch(ref)
        if item is None:
            self._remove(doc_id)
            return
        audience = item.access.principals(self._name)
        if not audience:  # shared with nobody Sourced can name: as if it were gone
            self._remove(doc_id)
            return
        document = to_source_document(self._name, item, audience=audience, owner=self._syncer._owners.get(
            self._name), process=self._syncer._ingestor.process)
        outcome = self._writer.put(document)
        if isinstance(outcome, LoadError):
            raise _NotStored(outcome.reason)
        if outcome == "unchanged":
            self._report.unchanged += 1
        else:
            (self._report.added if outcome == "added" else self._report.updated).append(doc_id)
        self._stored[doc_id] = StoredItem(doc_id=doc_id, source_version=item.version, audience=audience)

    def _item_failed(self, ref: ItemRef, doc_id: str, error: Exception) -> None:
        """Out of the index until it reads again, said with the connector and the item, and recorded so the next
        sync tries it again."""
        known = isinstance(error, (ConnectorError, Unreadable, _NotStored))
        reason = _one_line(error) if known else f"{type(error).__name__}: {_one_line(error)}"
        log.warning("%s: item %s could not be read, and is not answered until it reads again: %s", self._name,
                    ref.item_id, reason, exc_info=not known)
        self._report.errors.append(LoadError(path=_item_path(self._name, ref), reason=reason))
        self._remove(doc_id)  # fails closed, as a file that no longer loads does
        self._syncer._state.item_unreadable(self._name, ref.item_id, reason, self._syncer._now())
        self._handled.add(ref.item_id)
        self._failed.add(ref.item_id)
        source_side = isinstance(error, ConnectorError) and not isinstance(error, ItemUnreadable)
        self._failures_in_a_row = self._failures_in_a_row + 1 if source_side else 0
        if self._failures_in_a_row >= MAX_FAILURES_IN_A_ROW:
            raise ConnectorError(f"{self._failures_in_a_row} items in a row could not be fetched, the last "
                                 f"({ref.item_id}): {reason}")

    def _read(self, item_id: str) -> None:
        """The item read (or is gone): no longer one that could not be read."""
        self._handled.add(item_id)
        if item_id in self._unreadable:
            self._syncer._state.item_read(self._name, [item_id])
            self._unreadable.pop(item_id)

    def _retry_unreadable(self, advance: Callable[[], None]) -> None:
        """The items earlier syncs could not read, and this one has not read yet: tried again."""
        for item_id in sorted(set(self._unreadable) - self._handled):
            self._fetch_and_store(ItemRef(item_id=item_id), document_id(self._name, item_id))
            advance()

    def _remove(self, doc_id: str) -> None:
        if self._writer.remove(doc_id, origin=self._name):
            self._report.removed.append(doc_id)
        self._stored.pop(doc_id, None)

    def _full_pass(self, advance: Callable[[], None]) -> None:
        listed: dict[str, ItemRef] = {}
        for ref in self._connector.existing():
            listed[document_id(self._name, ref.item_id)] = ref
        for doc_id in sorted(self._stored.keys() - listed.keys()):
            self._remove(doc_id)
            advance()
        listed_ids = {ref.item_id for ref in listed.values()}
        for item_id in sorted(set(self._unreadable) - listed_ids):  # gone from the source: nothing to read again
            self._read(item_id)
        for doc_id, ref in sorted(listed.items()):
            if ref.item_id in self._failed:
                continue  # could not be read a moment ago in this run: the next sync tries it again
            stored = self._stored.get(doc_id)
            changed = (stored is None or ref.version is None or stored.source_version != ref.version
                       or (ref.access is not None and ref.access.principals(self._name) != stored.audience))
            if changed:
                self._fetch_and_store(replace(ref, deleted=False), doc_id)
                advance()

    def _refresh_groups(self, groups: frozenset[str], *, keep_others: bool = False) -> None:
        if not groups and keep_others:
            return
        members = self._connector.members(sorted(groups)) if groups else {}
        self._syncer._state.replace_members(self._name, {group: members.get(group, frozenset())
                                                         for group in groups}, keep_others=keep_others)
        self._report.groups += len(groups)
        self._refreshed.update(groups)

    @contextmanager
    def _bar(self, doing: str) -> Iterator[Callable[[], None]]:
        """A transient counter on stderr (a change feed does not say how long it is)."""
        columns = (SpinnerColumn(), TextColumn(doing), MofNCompleteColumn(), TimeElapsedColumn())
        with progress_bar(*columns, shown=self._syncer._progress) as progress:
            task = progress.add_task("sync", total=None)
            yield lambda: progress.advance(task)


class _NotStored(SourceError):
    """The index refused an item's document (the writer's `LoadError`)."""


def _item_path(connector: str, ref: ItemRef) -> Path:
    return Path(connector) / ref.item_id


def _one_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:300]
