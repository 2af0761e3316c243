"""A fake Notion API on loopback: `POST /v1/search` (pages shared with the integration, sorted by
`last_edited_time`, cursor paging), `GET /v1/pages/{id}`, `GET /v1/blocks/{id}` and `GET /v1/blocks/{id}/children`,
with the page, block and rich-text shapes of Notion's reference, over a scripted workspace whose pages a test
creates, edits, moves, shares, unshares and deletes."""

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


class NotionWorkspace:
    def __init__(self) -> None:
        self.pages: dict[str, NotionPage] = {}
        self.shared: set[str] = set()
        """Pages shared with the integration (it reads their sub-pages too)."""
        self._ids = itertools.count(1)

    def create(self, title: str, blocks: list[Spec], *, parent: str | None = None, share: bool = False) -> str:
        page_id = str(uuid.UUID(int=next(self._ids)))
        self.pages[page_id] = NotionPage(id=page_id, title=title, blocks=blocks, parent=parent)
        if share:
            self.shared.add(page_id)
        return page_id

    def edit(self, page_id: str, blocks: list[Spec]) -> None:
        self.pages[page_id].blocks = blocks
        self.pages[page_id].edited = datetime.now(UTC)

    def delete(self, page_id: str) -> None:
        self.pages[page_id].archived = True
        self.pages[page_id].edited = datetime.now(UTC)

    def readable(self, page: NotionPage) -> bool:
        current: NotionPage | None = page
        while current is not None:
            if current.archived:
                return False
            if current.id in self.shared:
                return True
            current = self.pages.get(current.parent or "")
        return False


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

    def authorised(self, headers: Any) -> bool:
        return headers.get("Authorization") == f"Bearer {TOKEN}" and bool(headers.get("Notion-Version"))

    def _page_json(self, page: NotionPage) -> dict[str, Any]:
        parent: dict[str, Any] = ({"type": "page_id", "page_id": page.parent} if page.parent
                                  else {"type": "workspace", "workspace": True})
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
        page = self._find(block_id)
        if page is None:
            return self._not_found(block_id)
        parent: dict[str, Any] = ({"type": "page_id", "page_id": page.parent} if page.parent
                                  else {"type": "workspace", "workspace": True})
        return Answer(body={"object": "block", "id": page.id, "parent": parent, "type": "child_page",
                            "has_children": True, "child_page": {"title": page.title}})

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
