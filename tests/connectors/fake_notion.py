"""A fake Notion API on loopback: `POST /v1/search` (pages shared with the integration, sorted by
`last_edited_time`, cursor paging), `GET /v1/pages/{id}`, `GET /v1/blocks/{id}`, `GET /v1/blocks/{id}/children`,
`GET /v1/databases/{id}` and `GET /v1/data_sources/{id}`, with the page, block, database, data source and rich-text
shapes of Notion's reference at Notion-Version 2025-09-03, over a scripted workspace whose pages a test creates,
edits, moves, shares, unshares and deletes.

As in that version, a database is a container of data sources, and a database's rows are pages whose parent is a
data source (`{"type": "data_source_id", "data_source_id": ..., "database_id": ...}`); a data source's parent is
its database, and a database's parent a page. A data source is no block: `GET /v1/blocks/{id}` does not find it."""

import itertools
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tests.connectors.loopback import Answer, LoopbackServer

TOKEN = "ntn_fake_integration_token"
Spec = tuple[str, str] | tuple[str, str, list[Any]]
"""A block: (type, text) or (type, text, children); a table is ("table", "", [[cells], ...])."""


@dataclass
class NotionPage:
    id: str
    title: str
    blocks: list[Spec]
    parent: str | None = None
    edited: datetime = field(default_factory=lambda: datetime.now(UTC))
    archived: bool = False


@dataclass
class NotionDatabase:
    id: str
    title: str
    parent: str
    data_source: str
    """Its one data source (the rows' parent)."""


class NotionWorkspace:
    def __init__(self) -> None:
        self.pages: dict[str, NotionPage] = {}
        self.databases: dict[str, NotionDatabase] = {}
        self.data_sources: dict[str, str] = {}
        """Data source id -> its database's id."""
        self.shared: set[str] = set()
        """Pages (or databases) shared with the integration (it reads what is under them too)."""
        self._ids = itertools.count(1)

    def create_database(self, title: str, *, parent: str) -> tuple[str, str]:
        """A full-page database under `parent` with one data source: (database id, data source id)."""
        database_id = str(uuid.UUID(int=next(self._ids)))
        data_source_id = str(uuid.UUID(int=next(self._ids)))
        self.databases[database_id] = NotionDatabase(id=database_id, title=title, parent=parent,
                                                     data_source=data_source_id)
        self.data_sources[data_source_id] = database_id
        return database_id, data_source_id

    def create(self, title: str, blocks: list[Spec], *, parent: str | None = None, share: bool = False) -> str:
        page_id = str(uuid.UUID(int=next(self._ids)))
        self.pages[page_id] = NotionPage(id=page_id, title=title, blocks=blocks, parent=parent)
        if share:
            self.shared.add(page_id)
        return page_id

    def edit(self, page_id: str, blocks: list[Spec]) -> None:
        self.pages[page_id].blocks = blocks
        self.pages[page_id].edited = datetime.now(UTC)

    def move(self, page_id: str, parent: str) -> None:
        """A page dragged under another, as Notion may move one: its `last_edited_time` stays as it was."""
        self.pages[page_id].parent = parent

    def delete(self, page_id: str) -> None:
        self.pages[page_id].archived = True
        self.pages[page_id].edited = datetime.now(UTC)

    def above(self, item_id: str) -> str | None:
        """What an item (page, database or data source) sits under; None at the workspace."""
        if item_id in self.pages:
            return self.pages[item_id].parent
        if item_id in self.databases:
            return self.databases[item_id].parent
        return self.data_sources.get(item_id)

    def readable(self, page: NotionPage) -> bool:
        return self.readable_id(page.id)

    def readable_id(self, item_id: str) -> bool:
        current: str | None = item_id
        while current is not None:
            if current in self.pages and self.pages[current].archived:
                return False
            if current in self.shared:
                return True
            current = self.above(current)
        return False

    def parent_json(self, parent: str | None) -> dict[str, Any]:
        if parent is None:
            return {"type": "workspace", "workspace": True}
        if parent in self.data_sources:
            return {"type": "data_source_id", "data_source_id": parent, "database_id": self.data_sources[parent]}
        if parent in self.databases:
            return {"type": "database_id", "database_id": parent}
        return {"type": "page_id", "page_id": parent}


def _rich(text: str, href: str | None = None) -> list[dict[str, Any]]:
    if not text:
        return []
    return [{"type": "text", "text": {"content": text, "link": {"url": href} if href else None},
             "annotations": {"bold": False, "italic": False, "strikethrough": False, "underline": False,
                             "code": False, "color": "default"}, "plain_text": text, "href": href}]


class FakeNotion(LoopbackServer):
    def __init__(self, workspace: NotionWorkspace) -> None:
        super().__init__()
        self.workspace = workspace
        self._blocks: dict[str, tuple[str, Spec]] = {}
        self.route("POST", r"/v1/search", self._search)
        self.route("GET", r"/v1/pages/([0-9a-f-]+)", self._page)
        self.route("GET", r"/v1/blocks/([0-9a-f-]+)", self._block)
        self.route("GET", r"/v1/blocks/([0-9a-f-]+)/children", self._children)
        self.route("GET", r"/v1/databases/([0-9a-f-]+)", self._database)
        self.route("GET", r"/v1/data_sources/([0-9a-f-]+)", self._data_source)

    def authorised(self, headers: Any) -> bool:
        return headers.get("Authorization") == f"Bearer {TOKEN}" and bool(headers.get("Notion-Version"))

    def _page_json(self, page: NotionPage) -> dict[str, Any]:
        parent = self.workspace.parent_json(page.parent)
        return {"object": "page", "id": page.id, "created_time": "2026-01-05T09:00:00.000Z",
                "last_edited_time": page.edited.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "archived": page.archived, "in_trash": page.archived, "parent": parent,
                "url": f"https://www.notion.so/{page.title.replace(' ', '-')}-{page.id.replace('-', '')}",
                "properties": {"title": {"id": "title", "type": "title", "title": _rich(page.title)}}}

    def _find(self, page_id: str) -> NotionPage | None:
        plain = page_id.replace("-", "")
        page = next((p for p in self.workspace.pages.values() if p.id.replace("-", "") == plain), None)
        return page if page is not None and self.workspace.readable(page) else None

    def _not_found(self, item_id: str) -> Answer:
        return Answer(status=404, body={"object": "error", "status": 404, "code": "object_not_found",
                                        "message": f"Could not find block with ID: {item_id}."})

    def _search(self, _query: dict[str, str], body: Any) -> Answer:
        pages = [p for p in self.workspace.pages.values() if self.workspace.readable(p)]
        descending = (body.get("sort") or {}).get("direction") == "descending"
        pages.sort(key=lambda p: (p.edited, p.id), reverse=descending)
        start = int(body.get("start_cursor") or 0)
        size = int(body.get("page_size") or 100)
        chunk = pages[start:start + size]
        more = start + size < len(pages)
        return Answer(body={"object": "list", "results": [self._page_json(p) for p in chunk],
                            "next_cursor": str(start + size) if more else None, "has_more": more,
                            "type": "page_or_data_source", "page_or_data_source": {}})

    def _page(self, _query: dict[str, str], _body: Any, page_id: str) -> Answer:
        page = self._find(page_id)
        return Answer(body=self._page_json(page)) if page is not None else self._not_found(page_id)

    def _block(self, _query: dict[str, str], _body: Any, block_id: str) -> Answer:
        database = self._find_database(block_id)
        if database is not None:  # a database is a block too (`child_database`); a data source is not
            return Answer(body={"object": "block", "id": database.id, "type": "child_database",
                                "parent": self.workspace.parent_json(database.parent), "has_children": False,
                                "child_database": {"title": database.title}})
        page = self._find(block_id)
        if page is None:
            return self._not_found(block_id)
        return Answer(body={"object": "block", "id": page.id, "parent": self.workspace.parent_json(page.parent),
                            "type": "child_page", "has_children": True, "child_page": {"title": page.title}})

    def _find_database(self, database_id: str) -> NotionDatabase | None:
        plain = database_id.replace("-", "")
        found = next((d for d in self.workspace.databases.values() if d.id.replace("-", "") == plain), None)
        return found if found is not None and self.workspace.readable_id(found.id) else None

    def _database(self, _query: dict[str, str], _body: Any, database_id: str) -> Answer:
        database = self._find_database(database_id)
        if database is None:
            return Answer(status=404, body={"object": "error", "status": 404, "code": "object_not_found",
                                            "message": f"Could not find database with ID: {database_id}."})
        return Answer(body={"object": "database", "id": database.id, "title": _rich(database.title),
                            "parent": self.workspace.parent_json(database.parent), "is_inline": False,
                            "in_trash": False, "created_time": "2026-01-05T09:00:00.000Z",
                            "data_sources": [{"id": database.data_source, "name": database.title}]})

    def _data_source(self, _query: dict[str, str], _body: Any, data_source_id: str) -> Answer:
        plain = data_source_id.replace("-", "")
        found = next((d for d in self.workspace.data_sources if d.replace("-", "") == plain), None)
        database = self._find_database(self.workspace.data_sources[found]) if found is not None else None
        if found is None or database is None:
            return Answer(status=404, body={"object": "error", "status": 404, "code": "object_not_found",
                                            "message": f"Could not find data source with ID: {data_source_id}."})
        return Answer(body={"object": "data_source", "id": found, "title": _rich(database.title),
                            "parent": {"type": "database_id", "database_id": database.id},
                            "database_parent": self.workspace.parent_json(database.parent),
                            "properties": {"Name": {"id": "title", "name": "Name", "type": "title", "title": {}}},
                            "in_trash": False, "created_time": "2026-01-05T09:00:00.000Z"})

    def _block_json(self, block_id: str, parent: str, spec: Spec) -> dict[str, Any]:
        kind, text = spec[0], spec[1]
        children = spec[2] if len(spec) == 3 else []  # type: ignore[misc]
        content: dict[str, Any] = {"rich_text": _rich(text), "color": "default"}
        if kind == "to_do":
            content["checked"] = False
        if kind == "code":
            content = {"rich_text": _rich(text), "language": "plain text", "caption": []}
        if kind == "table":
            content = {"table_width": len(children[0]) if children else 0, "has_column_header": True,
                       "has_row_header": False}
        if kind == "child_page":
            content = {"title": text}
        return {"object": "block", "id": block_id, "parent": {"type": "page_id", "page_id": parent},
                "type": kind, "has_children": bool(children) and kind != "child_page",
                "created_time": "2026-01-05T09:00:00.000Z", "archived": False, "in_trash": False, kind: content}

    def _children(self, query: dict[str, str], _body: Any, block_id: str) -> Answer:
        page = self._find(block_id)
        if page is not None:
            specs, parent = page.blocks, page.id
        elif block_id in self._blocks:
            parent, spec = self._blocks[block_id]
            kind = spec[0]
            rows = spec[2] if len(spec) == 3 else []  # type: ignore[misc]
            specs = [("table_row", "", cells) for cells in rows] if kind == "table" else list(rows)
        else:
            return self._not_found(block_id)
        results = []
        for index, spec in enumerate(specs):
            child_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{block_id}/{index}"))
            self._blocks[child_id] = (parent, spec)
            if spec[0] == "table_row":
                cells = spec[2]  # type: ignore[misc]
                results.append({"object": "block", "id": child_id, "type": "table_row", "has_children": False,
                                "parent": {"type": "block_id", "block_id": block_id},
                                "table_row": {"cells": [_rich(str(cell)) for cell in cells]}})
            else:
                results.append(self._block_json(child_id, parent, spec))
        start = int(query.get("start_cursor") or 0)
        size = int(query.get("page_size") or 100)
        more = start + size < len(results)
        return Answer(body={"object": "list", "results": results[start:start + size],
                            "next_cursor": str(start + size) if more else None, "has_more": more,
                            "type": "block", "block": {}})
