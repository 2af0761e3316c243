"""Confluence Cloud: the pages, blog posts and attachments of some spaces, through `atlassian-python-api`.

The change feed is a CQL search of the spaces' content modified since the last sync (`lastmodified >= now("-Nm")`,
relative to Confluence's own clock, so neither the API user's time zone nor our clock's drift moves it), ordered
by `lastmodified` ascending; pages moved to the trash are listed from each space's trash. A page is read in its
storage format (`core.documents.confluence_storage`), with its space and ancestors as the root of its heading
paths; an attachment is read by its file's format.

Who may read a page, as Confluence decides it: the space's read permission (users and groups), narrowed by the
page's own read restriction and by every ancestor's, each restriction a set of users and groups. A user is a
reader when every one of these levels names the user or a group of the user's; a group every level names stays
a group (its members are read at each sync), and the other readers are listed by e-mail. Confluence shows a
user's e-mail only where the user's profile allows it: a reader whose address is hidden cannot be matched to
Slack, and sees nothing that is not open to a group of theirs. Restrictions do not change a page's
`lastmodified`, so the full pass (`full_sync_every`) is what finds a restriction set or lifted; a change of the
space's permissions is found at the next sync, and starts a full pass.

Credentials: the account's e-mail and an API token, read from the environment by the caller; the library sends
them as basic auth, and backs off on 429 and 5xx (honouring `Retry-After`). Every kind of retry is bounded: the
library's own retries only statuses and would try a host that does not resolve, or refuses the connection,
for ever; here a connection is tried `CONNECT_RETRIES` more times, `CONNECT_TIMEOUT_S` each, so such a sync ends
within a minute with one line naming the host.
"""

import hashlib
import json
import math
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import PurePosixPath
from typing import Any, Final
from urllib.parse import quote

from core.config import ConfluenceEntry
from core.connectors.port import Access, Changes, ConnectorError, Item, ItemRef
from core.documents.formats import CONFLUENCE_STORAGE
from core.install import install_command

PAGE_SIZE: Final = 50
OVERLAP_MINUTES: Final = 10
"""How far before the last sync's start the feed looks again: Confluence's clock and ours may differ, and an edit
being saved as the last sync listed may show a moment later. What it lists again is skipped (same version)."""
CONTENT_TYPES: Final = ("page", "blogpost", "attachment")
_LISTING_EXPAND: Final = "version,ancestors,container,space"
_PASS_EXPAND: Final = _LISTING_EXPAND + ",restrictions.read.restrictions.user,restrictions.read.restrictions.group"
RETRIED_STATUSES: Final = (429, 500, 502, 503, 504)
CONNECT_RETRIES: Final = 2
CONNECT_TIMEOUT_S: Final = 10.0
READ_TIMEOUT_S: Final = 60.0


@dataclass(frozen=True, kw_only=True)
class _Level:
    """One level of who may read: a space's readers, or one page's read restriction."""

    users: frozenset[str]
    groups: frozenset[str]


class ConfluenceConnector:
    def __init__(self, *, name: str, url: str, spaces: Sequence[str], user: str, token: str,
                 retries: int = 5, backoff_s: float = 1.0, page_size: int = PAGE_SIZE, client: Any = None) -> None:
        self._name = name
        self._url = url.rstrip("/")
        self._spaces = tuple(spaces)
        self._page_size = page_size
        self._client = client if client is not None else _client(self._url, user, token, retries, backoff_s)
        self._readers: dict[str, _Level] = {}
        self._space_ids: dict[str, str] = {}
        self._restrictions: dict[str, _Level | None] = {}
        self._groups: dict[str, frozenset[str]] = {}
        self._emails: dict[str, str | None] = {}

    @property
    def name(self) -> str:
        return self._name

    # -- the port ---------------------------------------------------------------------------------------

    def changes(self, cursor: str | None) -> Iterator[Changes]:
        self._reset()
        started = datetime.now(UTC)
        state = json.loads(cursor) if cursor else {}
        permissions = self._space_fingerprint()
        query = f"{self._scope()} order by lastmodified asc"
        if "since" in state:
            since = datetime.fromisoformat(state["since"])
            minutes = max(1, math.ceil((started - since).total_seconds() / 60)) + OVERLAP_MINUTES
            query = f'{self._scope()} and lastmodified >= now("-{minutes}m") order by lastmodified asc'
        batch: list[ItemRef] = []
        for result in self._search(query, _LISTING_EXPAND):
            batch.append(ItemRef(item_id=str(result["id"]), version=_version(result)))
            if len(batch) == self._page_size:
                yield Changes(refs=tuple(batch), cursor=json.dumps({**state, "since": state.get("since")
                                                                    or started.isoformat()}))
                batch = []
        trashed = tuple(ItemRef(item_id=item_id, deleted=True) for item_id in self._trashed())
        changed = state.get("permissions") is not None and state["permissions"] != permissions
        yield Changes(refs=(*batch, *trashed), cursor=json.dumps({"since": started.isoformat(),
                                                                  "permissions": permissions}), full=changed)

    def fetch(self, ref: ItemRef) -> Item | None:
        content = self._get_or_none(f"rest/api/content/{quote(ref.item_id)}",
                                    {"expand": "body.storage,version,ancestors,space,container"})
        if content is None or content.get("status", "current") != "current":
            return None
        if content.get("type") == "attachment":
            return self._attachment(content)
        access = self._access_of(content)
        body = ((content.get("body") or {}).get("storage") or {}).get("value") or ""
        title = str(content.get("title") or ref.item_id)
        return Item(item_id=str(content["id"]), title=title, access=access, version=_version(content),
                    url=self._web_url(content), updated=_day(content), trail=self._trail(content),
                    content=body.encode("utf-8"), suffix=CONFLUENCE_STORAGE)

    def existing(self) -> Iterator[ItemRef]:
        """Every page, blog post and attachment of the spaces with its version and access, from one listing:
        each page's own read restriction comes with it, and its ancestors are in the listing too."""
        self._reset()
        listed = list(self._search(self._scope(), _PASS_EXPAND))
        by_id = {str(result["id"]): result for result in listed}
        for result in listed:
            self._restrictions.setdefault(str(result["id"]), _restriction(result))
        for result in listed:
            page = by_id.get(str((result.get("container") or {}).get("id"))) if result.get("type") == "attachment" \
                else result
            access = self._access_of(page) if page is not None else None
            yield ItemRef(item_id=str(result["id"]), version=_version(result), access=access)

    def members(self, groups: Collection[str]) -> Mapping[str, frozenset[str]]:
        return {group: self._group_members(group) for group in groups}

    # -- permissions ------------------------------------------------------------------------------------

    def _access_of(self, content: Mapping[str, Any]) -> Access:
        """The page's readers: the space's, narrowed by its ancestors' and its own read restrictions."""
        space = str((content.get("space") or {}).get("key") or "")
        levels = [self._space_readers(space)]
        for page_id in [str(ancestor["id"]) for ancestor in content.get("ancestors") or ()] + [str(content["id"])]:
            restriction = self._restriction_of(page_id)
            if restriction is not None:
                levels.append(restriction)
        return self._intersect(levels)

    def _intersect(self, levels: Sequence[_Level]) -> Access:
        """Those every level lets read. A group every level names stays a group, so a member removed from it in
        Confluence loses the page at the next sync; the others are listed by e-mail: each user whom every level
        names, or holds in one of its other groups."""
        common = frozenset.intersection(*(level.groups for level in levels))
        admitted = [level.users | self._members_of(level.groups - common) for level in levels]
        return Access(groups=common, users=frozenset.intersection(*admitted))

    def _members_of(self, groups: Collection[str]) -> frozenset[str]:
        return frozenset().union(*(self._group_members(group) for group in groups))

    def _space_readers(self, space: str) -> _Level:
        if space not in self._readers:
            users: set[str] = set()
            groups: set[str] = set()
            for permission in self._pages(f"api/v2/spaces/{self._space_id(space)}/permissions", {}):
                operation = permission.get("operation") or {}
                principal = permission.get("principal") or {}
                if operation.get("key") != "read" or operation.get("targetType") != "space":
                    continue
                if principal.get("type") == "group":
                    groups.add(str(principal["id"]))
                elif principal.get("type") == "user":
                    email = self._email(str(principal["id"]))
                    if email:
                        users.add(email)
            self._readers[space] = _Level(users=frozenset(users), groups=frozenset(groups))
        return self._readers[space]

    def _space_fingerprint(self) -> str:
        readers = {space: [sorted(self._space_readers(space).users), sorted(self._space_readers(space).groups)]
                   for space in self._spaces}
        return hashlib.sha256(json.dumps(readers, sort_keys=True).encode()).hexdigest()

    def _space_id(self, space: str) -> str:
        if not self._space_ids:
            found = self._pages("api/v2/spaces", {"keys": ",".join(self._spaces), "limit": 250})
            self._space_ids = {str(entry["key"]): str(entry["id"]) for entry in found}
        if space not in self._space_ids:
            raise ConnectorError(f"Confluence has no space {space!r} that this account may read")
        return self._space_ids[space]

    def _restriction_of(self, page_id: str) -> _Level | None:
        if page_id not in self._restrictions:
            found = self._get_or_none(f"rest/api/content/{quote(page_id)}/restriction/byOperation/read",
                                      {"expand": "restrictions.user,restrictions.group"})
            self._restrictions[page_id] = _level(found.get("restrictions") or {}) if found else None
        return self._restrictions[page_id]

    def _group_members(self, group: str) -> frozenset[str]:
        if group not in self._groups:
            emails: set[str] = set()
            start = 0
            while True:
                page = self._get(f"rest/api/group/{quote(group, safe='')}/membersByGroupId",
                                 {"start": start, "limit": 200})
                results = page.get("results") or []
                emails.update(str(user["email"]).casefold() for user in results if user.get("email"))
                if len(results) < int(page.get("limit") or 200) or not results:
                    break
                start += len(results)
            self._groups[group] = frozenset(emails)
        return self._groups[group]

    def _email(self, account_id: str) -> str | None:
        if account_id not in self._emails:
            user = self._get_or_none("rest/api/user", {"accountId": account_id})
            email = (user or {}).get("email")
            self._emails[account_id] = str(email).casefold() if email else None
        return self._emails[account_id]

    # -- reading ----------------------------------------------------------------------------------------

    def _attachment(self, content: Mapping[str, Any]) -> Item | None:
        container = content.get("container") or {}
        page = self._get_or_none(f"rest/api/content/{quote(str(container.get('id')))}",
                                 {"expand": "ancestors,space"}) if container.get("id") else None
        if page is None:
            return None
        download = (content.get("_links") or {}).get("download")
        suffix = PurePosixPath(str(content.get("title") or "")).suffix.lower()
        if not download or not suffix:
            return None
        data = self._download(download)
        title = str(content.get("title"))
        return Item(item_id=str(content["id"]), title=title, access=self._access_of(page), version=_version(content),
                    url=self._web_url(content), updated=_day(content), content=data, suffix=suffix,
                    trail=(*self._trail(page), str(page.get("title") or "")))

    def _trail(self, content: Mapping[str, Any]) -> tuple[str, ...]:
        space = (content.get("space") or {}).get("name")
        ancestors = tuple(str(ancestor.get("title") or "") for ancestor in content.get("ancestors") or ())
        return tuple(part for part in ((str(space) if space else ""), *ancestors) if part)

    def _web_url(self, content: Mapping[str, Any]) -> str | None:
        links = content.get("_links") or {}
        webui = links.get("webui")
        return f"{links.get('base') or self._url}{webui}" if webui else None

    def _scope(self) -> str:
        spaces = ", ".join(f'"{space}"' for space in self._spaces)
        return f"space in ({spaces}) and type in ({', '.join(CONTENT_TYPES)})"

    def _search(self, cql: str, expand: str) -> Iterator[Mapping[str, Any]]:
        yield from self._pages("rest/api/content/search", {"cql": cql, "expand": expand, "limit": self._page_size})

    def _trashed(self) -> Iterator[str]:
        for space in self._spaces:
            for kind in ("page", "blogpost"):
                for entry in self._pages("rest/api/content", {"spaceKey": space, "type": kind, "status": "trashed",
                                                              "limit": 200}):
                    yield str(entry["id"])

    def _pages(self, path: str, params: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
        """Every result of a paged listing, following its `_links.next` (v1's and v2's both carry one)."""
        page = self._get(path, dict(params))
        while True:
            yield from page.get("results") or ()
            following = (page.get("_links") or {}).get("next")
            if not following:
                return
            page = self._get(self._absolute(str(following)), None, absolute=True)

    def _absolute(self, link: str) -> str:
        """A `_links.next`: v1's is relative to the `/wiki` context, v2's starts with it."""
        site = self._url.removesuffix("/wiki")
        return f"{site}{link}" if link.startswith("/wiki/") else f"{self._url}{link}"

    def _get(self, path: str, params: Mapping[str, Any] | None, *, absolute: bool = False) -> Mapping[str, Any]:
        found = self._request(path, params, absolute=absolute)
        if found is None:
            raise ConnectorError(f"Confluence answered 404 for {path.partition('?')[0]}")
        return found

    def _get_or_none(self, path: str, params: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        return self._request(path, params, absolute=False)

    def _request(self, path: str, params: Mapping[str, Any] | None, *, absolute: bool) -> Mapping[str, Any] | None:
        from requests import RequestException  # noqa: PLC0415  # the connectors extra is optional

        try:
            found = self._client.get(path, params=dict(params) if params else None, absolute=absolute)
        except RequestException as error:
            status = getattr(getattr(error, "response", None), "status_code", None)
            if status == 404:
                return None
            raise ConnectorError(f"Confluence at {self._url}: {_describe(error, status)}") from None
        if not isinstance(found, Mapping):
            raise ConnectorError(f"Confluence at {self._url} answered {path.partition('?')[0]} with no JSON object")
        return found

    def _download(self, link: str) -> bytes:
        from requests import RequestException  # noqa: PLC0415

        try:
            data = self._client.get(f"{self._url}{link}", not_json_response=True, absolute=True)
        except RequestException as error:
            status = getattr(getattr(error, "response", None), "status_code", None)
            raise ConnectorError(f"Confluence at {self._url}: {_describe(error, status)}") from None
        return bytes(data or b"")

    def _reset(self) -> None:
        """Permissions, groups and e-mail addresses are read afresh by every sync, once each."""
        self._readers = {}
        self._space_ids = {}
        self._restrictions = {}
        self._groups = {}
        self._emails = {}


def _client(url: str, user: str, token: str, retries: int, backoff_s: float) -> Any:
    try:
        from atlassian import Confluence  # noqa: PLC0415  # the connectors extra is optional
    except ImportError:
        raise ConnectorError("the Confluence connector needs atlassian-python-api: "
                             + install_command([r for _, r in ConfluenceEntry.libraries])) from None
    from requests.adapters import HTTPAdapter  # noqa: PLC0415
    from urllib3.util.retry import Retry  # noqa: PLC0415

    client = Confluence(  # type: ignore[no-untyped-call]  # the library has no annotations here
        url=url, username=user, password=token, cloud=True, backoff_and_retry=True,
        retry_status_codes=list(RETRIED_STATUSES), max_backoff_retries=retries, max_backoff_seconds=60,
        backoff_factor=backoff_s, backoff_jitter=0.0, timeout=int(READ_TIMEOUT_S))
    # The library's `Retry(total=None, status=...)` bounds statuses alone: a refused or unresolvable host was
    # retried for ever. The same retries, every kind bounded, replace it.
    bounded = Retry(total=retries + CONNECT_RETRIES, connect=CONNECT_RETRIES, read=CONNECT_RETRIES, other=0,
                    status=retries, allowed_methods=None, status_forcelist=list(RETRIED_STATUSES),
                    backoff_factor=backoff_s, backoff_jitter=0.0, backoff_max=60, respect_retry_after_header=True)

    class ShortConnect(HTTPAdapter):
        """The library takes one timeout for connecting and reading: connecting gets `CONNECT_TIMEOUT_S`."""

        def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
            timeout = kwargs.get("timeout")
            if isinstance(timeout, int | float):
                kwargs["timeout"] = (min(CONNECT_TIMEOUT_S, timeout), timeout)
            return super().send(request, *args, **kwargs)

    client.session.mount(client.url, ShortConnect(max_retries=bounded))
    return client


def _level(restrictions: Mapping[str, Any]) -> _Level | None:
    """A read restriction's users (by e-mail) and groups (by id); None when it restricts nothing. A user whose
    e-mail Confluence hides is still a restriction: the level then admits nobody Sourced can name."""
    users = (restrictions.get("user") or {}).get("results") or []
    groups = (restrictions.get("group") or {}).get("results") or []
    if not users and not groups:
        return None
    return _Level(users=frozenset(str(user["email"]).casefold() for user in users if user.get("email")),
                  groups=frozenset(str(group.get("id") or group.get("name")) for group in groups))


def _restriction(result: Mapping[str, Any]) -> _Level | None:
    read = ((result.get("restrictions") or {}).get("read") or {}).get("restrictions") or {}
    return _level(read)


def _version(content: Mapping[str, Any]) -> str:
    """The version number and the parent: a page moved under another parent is read again (its trail and its
    inherited restrictions changed) though its text did not."""
    number = (content.get("version") or {}).get("number")
    ancestors = content.get("ancestors") or ()
    parent = (content.get("container") or {}).get("id") if content.get("type") == "attachment" else (
        ancestors[-1].get("id") if ancestors else None)
    return f"{number}@{parent or '-'}"


def _day(content: Mapping[str, Any]) -> date | None:
    when = (content.get("version") or {}).get("when")
    if not when:
        return None
    try:
        return datetime.fromisoformat(str(when).replace("Z", "+00:00")).date()
    except ValueError:
        return None


def _describe(error: Exception, status: int | None) -> str:
    if status in (401, 403):
        return f"HTTP {status}: the account's e-mail or API token was refused, or it may not read this"
    if status is not None:
        return f"HTTP {status} after retries"
    exhausted = re.search(r"too many (\d{3}) error responses", str(error))
    if exhausted:  # urllib3 gave up retrying a status
        return f"HTTP {exhausted.group(1)} after retries"
    return f"{type(error).__name__} (unreachable, or no answer after retries)"


def connect(entry: ConfluenceEntry, credential: str) -> ConfluenceConnector:
    """The connector of a `kind: confluence` entry; `credential` is its API token."""
    return ConfluenceConnector(name=entry.name, url=entry.url, spaces=entry.spaces, user=entry.user, token=credential)
