"""The `Connector` port: what a sync asks of a source, and what the source answers.

Three questions, each cheap where the source allows it: what changed since a cursor (`changes`), one item with
its content and permissions (`fetch`), and every item that still exists (`existing`, the periodic pass that
finds what was deleted or unshared, which a change feed may not say). `members` resolves the source's groups to
e-mail addresses. A connector raises `ConnectorError` (one line, never a credential) when the source cannot be
read; the sync then leaves the last good index in place. From `fetch`, any error is that item's alone: the sync
takes the item out of the index and goes on (`ItemUnreadable` says the source refuses this one item, such as a
file too large to export, and is no sign that the source itself is failing).
"""

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Protocol

from core.documents.model import Document
from core.domain import EVERYONE, domain_principal, group_principal, user_principal
from core.domain.errors import SourceError


class ConnectorError(SourceError, RuntimeError):
    """The source could not be read (unreachable, refused the credentials, failed after the retries). The message
    is one line an operator can act on, and never holds a secret."""


class ItemUnreadable(ConnectorError):
    """The source will not hand over this one item (too large to export, of a kind it cannot export), whatever
    the rest of it does. The message says why, in one line."""


@dataclass(frozen=True, kw_only=True)
class Access:
    """Who may read an item, as the source says: anyone, every address at some domains, some users (e-mail
    addresses) and some groups (the source's ids). Nobody at all is a valid answer: the item is then stored
    for no one, exactly as if it were absent."""

    anyone: bool = False
    domains: frozenset[str] = frozenset()
    users: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()
    roles: frozenset[str] = frozenset()
    """Roles an operator named for the item in sourced.yml (a Notion root's audience), as they are."""

    def principals(self, source: str) -> frozenset[str]:
        """The audience roles of a document with this access (`core.domain.principal`)."""
        found = {EVERYONE} if self.anyone else set()
        found.update(domain_principal(domain) for domain in self.domains)
        found.update(user_principal(user) for user in self.users)
        found.update(group_principal(source, group) for group in self.groups)
        found.update(self.roles)
        return frozenset(found)


@dataclass(frozen=True, kw_only=True)
class ItemRef:
    """An item as a listing names it: its id in the source, its version, and, where the listing carries it
    cheaply, its access (a full pass compares it with what is stored)."""

    item_id: str
    version: str | None = None
    deleted: bool = False
    access: Access | None = None


@dataclass(frozen=True, kw_only=True)
class Changes:
    """One batch of a change feed, and the cursor that resumes after it. `full` asks for a full pass now (the
    source's permissions above the items changed, or the feed's cursor expired)."""

    refs: tuple[ItemRef, ...]
    cursor: str
    full: bool = False


@dataclass(frozen=True, kw_only=True)
class Item:
    """An item downloaded: its content (a file's bytes with its suffix, or a `Document` the connector built),
    where it is and who may read it."""

    item_id: str
    title: str
    access: Access
    version: str | None = None
    url: str | None = None
    updated: date | None = None
    content: bytes | None = None
    suffix: str | None = None
    """How to read `content`: a suffix of the format table (`core.documents.formats`): `.html`, `.docx`, `.pptx`,
    `.csv`, `.pdf`, `.md`, `.txt`, or Confluence's storage format (`CONFLUENCE_STORAGE`)."""
    document: Document | None = None
    trail: tuple[str, ...] = ()
    """Where the item is in its source (a space, a page's ancestors), the root of its heading paths."""
    owner: str | None = None


class Connector(Protocol):
    @property
    def name(self) -> str:
        """The connector's name in sourced.yml: the prefix of its documents' ids."""

    def changes(self, cursor: str | None) -> Iterator[Changes]:
        """What changed since `cursor` (None: everything there is), in batches, oldest first."""

    def fetch(self, ref: ItemRef) -> Item | None:
        """One item, with its content and access; None when it is gone, not readable, or of no readable kind."""

    def existing(self) -> Iterator[ItemRef]:
        """Every item that still exists and is shared with the connector, with its version and, where the
        listing says it, its access."""

    def members(self, groups: Collection[str]) -> Mapping[str, frozenset[str]]:
        """The members' e-mail addresses of each of these groups (a group the source does not know: none)."""
