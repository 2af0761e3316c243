"""Connectors: where the documents live (Confluence, Google Drive, Notion), kept in sync with their permissions.

Each source is one file behind the `Connector` port (`core.connectors.port`); `core.connectors.sync` runs one:
it stores the connector's cursor, downloads what changed, reads it through the formats' readers
(`core.connectors.convert`) and ingests it one document at a time, and removes what the source no longer has
or no longer shares. A document's audience is what the source says may read it, as principals
(`core.domain.principal`): users by e-mail, groups (whose members each sync reads), the domain, anyone.
"""

from core.connectors.port import Access, Changes, Connector, ConnectorError, Item, ItemRef, ItemUnreadable

__all__ = ["Access", "Changes", "Connector", "ConnectorError", "Item", "ItemRef", "ItemUnreadable"]
