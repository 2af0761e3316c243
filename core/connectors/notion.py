"""Notion: the pages shared with an integration, through `notion-client`, their blocks read into the document
model directly (headings make sections, lists keep their nesting, tables their header row, links their targets).

The change feed is the search of pages sorted by `last_edited_time`, newest first, read until a page older than
the last sync (less a margin: Notion rounds the time to the minute); what it lists again is skipped (same
version). A page unshared from the integration or deleted is no longer listed at all, so the full pass
(`full_sync_every`) is what removes it. The full pass also walks every page up to its root, so a page moved to
another root (which need not change its `last_edited_time`) is read again with its new audience.

Notion tells an integration nothing of who may read a page. Each shared root is mapped to an audience in
sourced.yml (`roots:`, as `sources:` rules do for folders), and a page has its nearest root's. The walk up goes
through pages, blocks, databases and (Notion-Version 2025-09-03) data sources: a database row's parent is a data
source, whose parent is its database, whose parent is a page. A page whose walk reaches the workspace under no
listed root gets the connector's `audience`, or is not ingested; one whose walk stops short (an ancestor the
integration may not read, or of a kind it does not know) is stored for no one, since its root is not known. The
mapping is part of a page's version, so a changed mapping re-reads the pages at the next full pass.

Credentials: the integration's token, from the environment; the library backs off on 429 and 5xx.
"""

import hashlib
import json
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final
from urllib.parse import urlsplit

from core.config import NotionEntry
from core.connectors.port import Access, Changes, ConnectorError, Item, ItemRef
from core.documents.model import (
    Block,
    Code,
    Document,
    Link,
    ListBlock,
    ListItem,
    Paragraph,
    Quote,
    Section,
    Table,
    Text,
)
from core.install import install_command

PAGE_SIZE: Final = 100
DEFAULT_API_URL: Final = "https://api.notion.com"
"""notion-client's own API root, used unless `api_url` names another."""
OVERLAP: Final = timedelta(minutes=5)
_ID: Final = re.compile(r"([0-9a-f]{32})(?:[?#].*)?$")
_HEADINGS: Final = {"heading_1": 1, "heading_2": 2, "heading_3": 3}
_LISTS: Final = {"bulleted_list_item": False, "numbered_list_item": True, "to_do": False}


def page_id(text: str) -> str:
    """A page's id, from a URL or an id with or without dashes, as 32 lower-case hex digits."""
    plain = text.strip().lower().replace("-", "")
    match = _ID.search(plain)
    if match is None:
        raise ValueError(f"{text!r} is not a Notion page id or URL")
    return match.group(1)


class NotionConnector:
    def __init__(self, *, name: str, token: str, roots: Mapping[str, Sequence[str]],
                 audience: Sequence[str] | None = None, api_url: str | None = None, retries: int = 5,
                 page_size: int = PAGE_SIZE, client: Any = None) -> None:
        self._name = name
        self._roots = {page_id(root): tuple(roles) for root, roles in roots.items()}
        self._audience = tuple(audience) if audience else None
        self._page_size = page_size
        self._mapping = hashlib.sha256(json.dumps([sorted(self._roots.items()), self._audience]).encode()
                                       ).hexdigest()[:12]
        self._client = client if client is not None else _client(token, api_url, retries)
        self._host = urlsplit(api_url or DEFAULT_API_URL).netloc or api_url or DEFAULT_API_URL
        """Named in every failure, so a sync that cannot reach Notion says which host it tried."""
        self._parents: dict[_Node, _Node | _Lost | None] = {}

    @property
    def name(self) -> str:
        return self._name

    def changes(self, cursor: str | None) -> Iterator[Changes]:
        started = datetime.now(UTC)
        since = datetime.fromisoformat(json.loads(cursor)["since"]) - OVERLAP if cursor else None
        refs: list[ItemRef] = []
        for page in self._pages(ascending=False):
            if since is not None and _edited(page) < since:
                break
            refs.append(self._ref(page))
        # Newest first cannot be resumed half-way: the cursor moves once the whole feed is in.
        yield Changes(refs=tuple(reversed(refs)), cursor=json.dumps({"since": started.isoformat()}))

    def fetch(self, ref: ItemRef) -> Item | None:
        self._parents = {}
        page = self._call(lambda: self._client.pages.retrieve(page_id=ref.item_id), missing_ok=True)
        if page is None or page.get("archived") or page.get("in_trash"):
            return None
        roles = self._audience_of(page)
        title = _title(page) or "Untitled"
        blocks = self._children(str(page["id"]))
        document = _document(title, blocks)
        return Item(item_id=_plain(page["id"]), title=title, access=Access(roles=frozenset(roles or ())),
                    version=self._version(page), url=page.get("url"), updated=_edited(page).date(),
                    document=document, suffix=".md")

    def existing(self) -> Iterator[ItemRef]:
        """Every shared page with its audience as it is now: a page moved (or under an ancestor moved) to another
        root keeps its `last_edited_time`, so the sync tells the move by the audience. The listing gives each
        page's parent; only blocks and databases on the way up are asked for, once each per pass."""
        pages = list(self._pages(ascending=True))
        self._parents = {("page", _plain(page["id"])): _above(page.get("parent") or {}) for page in pages}
        for page in pages:
            yield replace(self._ref(page), access=Access(roles=frozenset(self._audience_of(page) or ())))

    def members(self, groups: Collection[str]) -> Mapping[str, frozenset[str]]:
        return {group: frozenset() for group in groups}  # Notion names no groups to an integration

    # -- reading ----------------------------------------------------------------------------------------

    def _ref(self, page: Mapping[str, Any]) -> ItemRef:
        return ItemRef(item_id=_plain(page["id"]), version=self._version(page),
                       deleted=bool(page.get("archived") or page.get("in_trash")))

    def _version(self, page: Mapping[str, Any]) -> str:
        return f"{page.get('last_edited_time')}|{self._mapping}"

    def _pages(self, *, ascending: bool) -> Iterator[Mapping[str, Any]]:
        start: str | None = None
        while True:
            body: dict[str, Any] = {"filter": {"property": "object", "value": "page"}, "page_size": self._page_size,
                                    "sort": {"direction": "ascending" if ascending else "descending",
                                             "timestamp": "last_edited_time"}}
            if start:
                body["start_cursor"] = start
            found = self._call(lambda body=body: self._client.search(**body))
            yield from (result for result in found.get("results") or () if result.get("object") == "page")
            start = found.get("next_cursor") if found.get("has_more") else None
            if not start:
                return

    def _children(self, block_id: str) -> list[Mapping[str, Any]]:
        blocks: list[Mapping[str, Any]] = []
        start: str | None = None
        while True:
            found = self._call(lambda start=start: self._client.blocks.children.list(
                block_id=block_id, page_size=self._page_size, **({"start_cursor": start} if start else {})))
            for block in found.get("results") or ():
                nested = block.get("has_children") and block.get("type") not in ("child_page", "child_database")
                blocks.append({**block, "children": self._children(str(block["id"]))} if nested else block)
            start = found.get("next_cursor") if found.get("has_more") else None
            if not start:
                return blocks

    def _audience_of(self, page: Mapping[str, Any]) -> tuple[str, ...] | None:
        """The audience of the nearest listed root at or above the page; the connector's when the walk reaches the
        workspace under none; None (no one) when it cannot reach the workspace."""
        node: _Node | None = ("page", _plain(page["id"]))
        parent = page.get("parent") or {}
        seen: set[_Node] = set()
        while node is not None:
            if node[1] in self._roots:
                return self._roots[node[1]]
            if node in seen:
                return None  # a loop: no root can be told
            seen.add(node)
            above = self._parent_of(node, parent)
            parent = {}
            if isinstance(above, _Lost):
                return None
            node = above
        return self._audience

    def _parent_of(self, node: "_Node", known: Mapping[str, Any]) -> "_Node | _Lost | None":
        """The page, block, database or data source above an item; None at the workspace, `_LOST` when it cannot
        be read (not shared with the integration, or gone)."""
        if not known:
            if node in self._parents:
                return self._parents[node]
            kind, item_id = node
            if kind == "data_source":
                found = self._call(lambda: self._client.data_sources.retrieve(data_source_id=item_id),
                                   missing_ok=True)
            elif kind == "database":
                found = self._call(lambda: self._client.databases.retrieve(database_id=item_id), missing_ok=True)
            else:
                found = self._call(lambda: self._client.blocks.retrieve(block_id=item_id), missing_ok=True)
            if found is None:
                self._parents[node] = _LOST
                return _LOST
            known = found.get("parent") or {}
        above = _above(known)
        self._parents[node] = above
        return above

    def _call(self, request: Any, *, missing_ok: bool = False) -> Any:
        try:
            from httpx import TransportError  # noqa: PLC0415  # notion-client's transport, not an OSError
            from notion_client.errors import APIResponseError, HTTPResponseError, RequestTimeoutError  # noqa: PLC0415
        except ImportError:
            raise ConnectorError(_library_missing()) from None
        try:
            return request()
        except APIResponseError as error:
            if missing_ok and error.status == 404:
                return None
            reason = "the integration's token was refused" if error.status == 401 else str(error.code)
            raise ConnectorError(f"Notion at {self._host}: HTTP {error.status} ({reason})") from None
        except (HTTPResponseError, RequestTimeoutError) as error:
            raise ConnectorError(f"Notion at {self._host}: {type(error).__name__} after retries") from None
        except (TransportError, OSError) as error:  # a host that does not resolve, a refused connection
            raise ConnectorError(f"Notion at {self._host}: unreachable ({_first_line(error)})") from None


def _library_missing() -> str:
    return "the Notion connector needs notion-client: " + install_command([r for _, r in NotionEntry.libraries])


_Node = tuple[str, str]
"""An item on the walk up: its kind (`page`, `block`, `database`, `data_source`) and its plain id."""


class _Lost:
    """A walk that cannot go on: an ancestor the integration may not read, or of a kind it does not know."""


_LOST: Final = _Lost()
_PARENT_KINDS: Final = {"page_id": "page", "block_id": "block", "database_id": "database",
                        "data_source_id": "data_source"}


def _above(parent: Mapping[str, Any]) -> _Node | _Lost | None:
    """The item a parent object names: None for the workspace. A data source parent names its database too
    (2025-09-03), which is where the walk goes on: a data source has no sharing of its own."""
    kind = parent.get("type")
    if kind == "workspace":
        return None
    if kind == "data_source_id" and parent.get("database_id"):
        return ("database", _plain(parent["database_id"]))
    if kind in _PARENT_KINDS and parent.get(kind):
        return (_PARENT_KINDS[str(kind)], _plain(parent[kind]))
    return _LOST


def _client(token: str, api_url: str | None, retries: int) -> Any:
    try:
        from notion_client import Client  # noqa: PLC0415  # the connectors extra is optional
        from notion_client.client import ClientOptions, RetryOptions  # noqa: PLC0415
    except ImportError:
        raise ConnectorError(_library_missing()) from None
    options = ClientOptions(auth=token, retry=RetryOptions(max_retries=retries))
    if api_url:
        options.base_url = api_url.rstrip("/")
    return Client(options=options)


def _first_line(error: Exception) -> str:
    """An error's own words on one line (httpx's DNS failure is "[Errno -2] Name or service not known")."""
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _plain(item_id: object) -> str:
    return str(item_id).replace("-", "").lower()


def _edited(page: Mapping[str, Any]) -> datetime:
    return datetime.fromisoformat(str(page.get("last_edited_time") or "1970-01-01T00:00:00Z").replace("Z", "+00:00"))


def _title(page: Mapping[str, Any]) -> str:
    for value in (page.get("properties") or {}).values():
        if isinstance(value, Mapping) and value.get("type") == "title":
            return _rich(value.get("title") or []).text.strip()
    return ""


def _rich(parts: Sequence[Mapping[str, Any]]) -> Text:
    """Rich text as words, a link's target kept beside its words."""
    text = ""
    links: list[Link] = []
    for part in parts:
        words = str(part.get("plain_text") or "")
        target = part.get("href")
        if target and words:
            links.append(Link(start=len(text), end=len(text) + len(words), target=str(target)))
        text += words
    collapsed = " ".join(text.split())
    return Text(text=collapsed, links=tuple(links) if collapsed == text else ())


def _document(title: str, blocks: Sequence[Mapping[str, Any]]) -> Document:
    sections: list[Section] = []
    path: list[str] = []
    current: list[Block] = []

    def close() -> None:
        if current:
            sections.append(Section(headings=tuple(path), blocks=tuple(current)))

    for block in blocks:
        kind = block.get("type")
        if kind in _HEADINGS:
            close()
            current = []
            level = _HEADINGS[str(kind)]
            path = [*path[: level - 1], _rich((block.get(kind) or {}).get("rich_text") or []).text]
            continue
        current.extend(_blocks([block]))
    close()
    return Document(sections=tuple(sections), title=title)


def _blocks(blocks: Sequence[Mapping[str, Any]]) -> list[Block]:
    """Blocks in order, a run of list items of one kind made one list."""
    found: list[Block] = []
    run: list[ListItem] = []
    run_kind: str | None = None

    def flush() -> None:
        nonlocal run, run_kind
        if run:
            found.append(ListBlock(items=tuple(run), ordered=bool(_LISTS.get(run_kind or ""))))
        run, run_kind = [], None

    for block in blocks:
        kind = str(block.get("type"))
        content = block.get(kind) or {}
        text = _rich(content.get("rich_text") or [])
        children = _blocks(block.get("children") or [])
        if kind in _LISTS:
            if run_kind != kind:
                flush()
                run_kind = kind
            run.append(ListItem(text=text, children=tuple(children),
                                checked=bool(content.get("checked")) if kind == "to_do" else None))
            continue
        flush()
        if kind in ("paragraph", "callout", "toggle") and (text or children):
            if text:
                found.append(Paragraph(text=text))
            found.extend(children)
        elif kind == "quote":
            found.append(Quote(blocks=(Paragraph(text=text), *children)))
        elif kind == "code":
            found.append(Code(text="".join(str(p.get("plain_text") or "") for p in content.get("rich_text") or []),
                              language=str(content.get("language") or "")))
        elif kind == "table":
            rows = [tuple(_rich(cell) for cell in (row.get("table_row") or {}).get("cells") or [])
                    for row in block.get("children") or ()]
            if rows:
                header = rows[0] if content.get("has_column_header", True) else ()
                found.append(Table(header=header, rows=tuple(rows[1:] if header else rows)))
    flush()
    return found


def connect(entry: NotionEntry, credential: str) -> NotionConnector:
    """The connector of a `kind: notion` entry; `credential` is its integration token."""
    return NotionConnector(name=entry.name, token=credential,
                           roots={root.page: tuple(root.audience) for root in entry.roots},
                           audience=tuple(entry.audience) if entry.audience else None, api_url=entry.api_url)
