"""A source of our own port held in memory (`core.connectors.port.Connector`): pages of Markdown, each with the
access a real source would report, and groups with their members. The property tests draw such sources by the
hundred; the HTTP fakes beside it test the real clients."""

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field

from core.connectors.port import Access, Changes, Item, ItemRef


@dataclass
class MemoryPage:
    title: str
    text: str
    access: Access
    version: int = 1


@dataclass
class MemorySource:
    name: str = "mem"
    pages: dict[str, MemoryPage] = field(default_factory=dict)
    groups: dict[str, set[str]] = field(default_factory=dict)

    def changes(self, cursor: str | None) -> Iterator[Changes]:
        refs = tuple(ItemRef(item_id=item_id, version=str(page.version))
                     for item_id, page in sorted(self.pages.items()))
        yield Changes(refs=refs, cursor="now")

    def fetch(self, ref: ItemRef) -> Item | None:
        page = self.pages.get(ref.item_id)
        if page is None:
            return None
        return Item(item_id=ref.item_id, title=page.title, access=page.access, version=str(page.version),
                    content=page.text.encode(), suffix=".md")

    def existing(self) -> Iterator[ItemRef]:
        for item_id, page in sorted(self.pages.items()):
            yield ItemRef(item_id=item_id, version=str(page.version), access=page.access)

    def members(self, groups: Collection[str]) -> Mapping[str, frozenset[str]]:
        return {group: frozenset(self.groups.get(group, ())) for group in groups}

    def may_read(self, email: str, access: Access) -> bool:
        """The source's own rule, independent of Sourced's principals: what the oracle of the tests says."""
        return (access.anyone or email.split("@")[1] in access.domains or email in access.users
                or any(email in self.groups.get(group, ()) for group in access.groups))
