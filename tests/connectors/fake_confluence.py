"""A fake Confluence Cloud on loopback: the REST endpoints the connector calls, with the JSON shapes of Atlassian's
reference (v1 content search with CQL and `_links.next` paging, content with `body.storage`, read restrictions,
the trash, group members, users; v2 spaces and space permissions with cursor paging), over a scripted site
whose pages a test creates, edits, moves, restricts, trashes and purges between syncs."""

import base64
import itertools
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode

from tests.connectors.loopback import Answer, LoopbackServer

USER = "sourced-bot@example.com"
TOKEN = "confluence-api-token-for-tests"


@dataclass
class Content:
    id: str
    space: str
    title: str
    type: str = "page"
    body: str = ""
    parent: str | None = None
    version: int = 1
    when: datetime = field(default_factory=lambda: datetime.now(UTC))
    status: str = "current"
    read_users: set[str] = field(default_factory=set)
    """Account ids of the page's own read restriction (with `read_groups`: empty both, no restriction)."""
    read_groups: set[str] = field(default_factory=set)
    data: bytes = b""
    media_type: str = ""


@dataclass
class Space:
    key: str
    id: str
    name: str
    users: set[str] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)


class ConfluenceSite:
    """The scripted workspace: users (account id -> e-mail, None when hidden), groups, spaces and content."""

    def __init__(self) -> None:
        self.users: dict[str, str | None] = {}
        self.groups: dict[str, tuple[str, set[str]]] = {}
        self.spaces: dict[str, Space] = {}
        self.content: dict[str, Content] = {}
        self._ids = itertools.count(1001)

    def add_user(self, account_id: str, email: str | None) -> str:
        self.users[account_id] = email
        return account_id

    def add_group(self, group_id: str, name: str, members: set[str]) -> str:
        self.groups[group_id] = (name, set(members))
        return group_id

    def add_space(self, key: str, name: str, *, users: set[str] = frozenset(), groups: set[str] = frozenset()) -> None:
        self.spaces[key] = Space(key=key, id=str(next(self._ids)), name=name, users=set(users), groups=set(groups))

    def create(self, space: str, title: str, body: str, *, parent: str | None = None, kind: str = "page") -> str:
        content_id = str(next(self._ids))
        self.content[content_id] = Content(id=content_id, space=space, title=title, body=body, parent=parent,
                                           type=kind)
        return content_id

    def attach(self, page: str, filename: str, data: bytes, media_type: str) -> str:
        content_id = str(next(self._ids))
        self.content[content_id] = Content(id=content_id, space=self.content[page].space, title=filename,
                                           type="attachment", parent=page, data=data, media_type=media_type)
        return content_id

    def edit(self, content_id: str, body: str, *, title: str | None = None) -> None:
        page = self.content[content_id]
        page.body, page.title = body, title or page.title
        page.version += 1
        page.when = datetime.now(UTC)

    def move(self, content_id: str, parent: str | None) -> None:
        """Confluence records a move as a change of the page (it shows in `lastmodified`), not a new version."""
        page = self.content[content_id]
        page.parent = parent
        page.when = datetime.now(UTC)

    def restrict(self, content_id: str, *, users: set[str] = frozenset(), groups: set[str] = frozenset()) -> None:
        """Set the page's read restriction; as in Confluence, no new version and no `lastmodified` change."""
        page = self.content[content_id]
        page.read_users, page.read_groups = set(users), set(groups)

    def trash(self, content_id: str) -> None:
        self.content[content_id].status = "trashed"

    def purge(self, content_id: str) -> None:
        del self.content[content_id]

    def ancestors(self, content: Content) -> list[Content]:
        chain: list[Content] = []
        parent = content.parent if content.type != "attachment" else None
        while parent is not None:
            chain.insert(0, self.content[parent])
            parent = self.content[parent].parent
        return chain


class FakeConfluence(LoopbackServer):
    def __init__(self, site: ConfluenceSite) -> None:
        super().__init__()
        self.site = site
        self.full_listing_down = False
        """While set, every listing with the pages' restrictions (a full pass's) answers 503: the site failing
        after a sync's change feed has read."""
        self.route("GET", r"/wiki/rest/api/content/search", self._search)
        self.route("GET", r"/wiki/rest/api/content", self._content_list)
        self.route("GET", r"/wiki/rest/api/content/(\d+)", self._content)
        self.route("GET", r"/wiki/rest/api/content/(\d+)/restriction/byOperation/read", self._restriction)
        self.route("GET", r"/wiki/rest/api/group/([^/]+)/membersByGroupId", self._members)
        self.route("GET", r"/wiki/rest/api/user", self._user)
        self.route("GET", r"/wiki/api/v2/spaces", self._spaces)
        self.route("GET", r"/wiki/api/v2/spaces/(\d+)/permissions", self._permissions)
        self.route("GET", r"/wiki/download/attachments/(\d+)/([^/]+)", self._download)

    @property
    def url(self) -> str:
        return f"{self.base}/wiki"

    def authorised(self, headers: Any) -> bool:
        expected = "Basic " + base64.b64encode(f"{USER}:{TOKEN}".encode()).decode()
        return headers.get("Authorization") == expected

    # -- JSON shapes ------------------------------------------------------------------------------------

    def _user_json(self, account_id: str) -> dict[str, Any]:
        user = {"type": "known", "accountId": account_id, "displayName": account_id.title(), "publicName": account_id}
        email = self.site.users.get(account_id)
        if email:
            user["email"] = email
        return user

    def _restrictions_json(self, content: Content) -> dict[str, Any]:
        users = [self._user_json(user) for user in sorted(content.read_users)]
        groups = [{"type": "group", "name": self.site.groups[g][0], "id": g} for g in sorted(content.read_groups)]
        return {"operation": "read", "restrictions": {
            "user": {"results": users, "start": 0, "limit": 200, "size": len(users)},
            "group": {"results": groups, "start": 0, "limit": 200, "size": len(groups)}}}

    def _content_json(self, content: Content, expand: str) -> dict[str, Any]:
        expanded = set(expand.split(",")) if expand else set()
        space = self.site.spaces[content.space]
        found: dict[str, Any] = {
            "id": content.id, "type": content.type, "status": content.status, "title": content.title,
            "_links": {"webui": f"/spaces/{space.key}/pages/{content.id}", "self": f"{self.url}/rest/api/content/"
                                                                                  f"{content.id}",
                       "base": self.url, "context": "/wiki"},
            "_expandable": {},
        }
        if "version" in expanded:
            found["version"] = {"number": content.version, "when": content.when.isoformat().replace("+00:00", "Z"),
                                "minorEdit": False}
        if "space" in expanded:
            found["space"] = {"id": int(space.id), "key": space.key, "name": space.name, "type": "global"}
        if "ancestors" in expanded:
            found["ancestors"] = [{"id": a.id, "type": a.type, "title": a.title, "status": a.status}
                                  for a in self.site.ancestors(content)]
        if "container" in expanded:
            container = self.site.content.get(content.parent or "") if content.type == "attachment" else None
            found["container"] = ({"id": container.id, "type": container.type, "title": container.title}
                                  if container else {"id": space.id, "key": space.key, "type": "space"})
        if "body.storage" in expanded and content.type != "attachment":
            found["body"] = {"storage": {"value": content.body, "representation": "storage"}}
        if any(item.startswith("restrictions.read") for item in expanded):
            found["restrictions"] = {"read": self._restrictions_json(content)}
        if content.type == "attachment":
            found["extensions"] = {"mediaType": content.media_type, "fileSize": len(content.data)}
            found["_links"]["download"] = (f"/download/attachments/{content.parent}/{quote(content.title)}"
                                           f"?version={content.version}&api=v2")
        return found

    # -- routes -----------------------------------------------------------------------------------------

    def _search(self, query: dict[str, str], _body: Any) -> Answer:
        if self.full_listing_down and "restrictions" in query.get("expand", ""):
            return Answer(status=503, body={"message": "scripted outage"})
        matches = self._cql(query["cql"])
        start, limit = int(query.get("start", 0)), min(int(query.get("limit", 25)), 100)
        page = matches[start:start + limit]
        links: dict[str, Any] = {"base": self.url, "context": "/wiki"}
        if start + limit < len(matches):
            following = {**query, "start": str(start + limit), "cursor": f"c{start + limit}", "next": "true"}
            links["next"] = f"/rest/api/content/search?{urlencode(following)}"
        return Answer(body={"results": [self._content_json(c, query.get("expand", "")) for c in page],
                            "start": start, "limit": limit, "size": len(page), "_links": links})

    def _cql(self, cql: str) -> list[Content]:
        spaces = set(re.findall(r'"([^"]+)"', re.search(r"space in \(([^)]*)\)", cql).group(1)))  # type: ignore[union-attr]
        types = {t.strip() for t in re.search(r"type in \(([^)]*)\)", cql).group(1).split(",")}  # type: ignore[union-attr]
        since = None
        relative = re.search(r'lastmodified >= now\("-(\d+)m"\)', cql)
        if relative:
            since = datetime.now(UTC) - timedelta(minutes=int(relative.group(1)))
        found = [c for c in self.site.content.values() if c.space in spaces and c.type in types
                 and c.status == "current" and (since is None or c.when >= since)
                 and (c.type != "attachment" or self.site.content[c.parent or ""].status == "current")]
        return sorted(found, key=lambda c: (c.when, int(c.id)))

    def _content_list(self, query: dict[str, str], _body: Any) -> Answer:
        status = query.get("status", "current")
        found = [c for c in self.site.content.values() if c.space == query.get("spaceKey")
                 and c.type == query.get("type", "page") and c.status == status]
        found.sort(key=lambda c: int(c.id))
        return Answer(body={"results": [self._content_json(c, "") for c in found], "start": 0,
                            "limit": int(query.get("limit", 25)), "size": len(found),
                            "_links": {"base": self.url, "context": "/wiki"}})

    def _content(self, query: dict[str, str], _body: Any, content_id: str) -> Answer:
        content = self.site.content.get(content_id)
        if content is None or (query.get("status") is None and content.status != "current"):
            return Answer(status=404, body={"statusCode": 404, "message": f"No content found with id {content_id}"})
        return Answer(body=self._content_json(content, query.get("expand", "")))

    def _restriction(self, _query: dict[str, str], _body: Any, content_id: str) -> Answer:
        content = self.site.content.get(content_id)
        if content is None:
            return Answer(status=404, body={"statusCode": 404})
        return Answer(body=self._restrictions_json(content))

    def _members(self, query: dict[str, str], _body: Any, group_id: str) -> Answer:
        members = sorted(self.site.groups.get(group_id, ("", set()))[1])
        start, limit = int(query.get("start", 0)), int(query.get("limit", 200))
        page = members[start:start + limit]
        return Answer(body={"results": [self._user_json(user) for user in page], "start": start, "limit": limit,
                            "size": len(page), "_links": {"base": self.url}})

    def _user(self, query: dict[str, str], _body: Any) -> Answer:
        if query.get("accountId") not in self.site.users:
            return Answer(status=404, body={"statusCode": 404})
        return Answer(body=self._user_json(query["accountId"]))

    def _spaces(self, query: dict[str, str], _body: Any) -> Answer:
        keys = set(query.get("keys", "").split(","))
        found = [{"id": s.id, "key": s.key, "name": s.name, "type": "global", "status": "current"}
                 for s in self.site.spaces.values() if s.key in keys]
        return Answer(body={"results": found, "_links": {"base": self.url}})

    def _permissions(self, query: dict[str, str], _body: Any, space_id: str) -> Answer:
        space = next(s for s in self.site.spaces.values() if s.id == space_id)
        assignments = [{"id": f"p-u-{u}", "principal": {"type": "user", "id": u},
                        "operation": {"key": "read", "targetType": "space"}} for u in sorted(space.users)]
        assignments += [{"id": f"p-g-{g}", "principal": {"type": "group", "id": g},
                         "operation": {"key": "read", "targetType": "space"}} for g in sorted(space.groups)]
        assignments += [{"id": f"p-c-{g}", "principal": {"type": "group", "id": g},
                         "operation": {"key": "create", "targetType": "page"}} for g in sorted(space.groups)]
        start = int(query.get("cursor", "0") or 0)
        page = assignments[start:start + 2]  # v2's small pages, so the cursor is followed
        links: dict[str, Any] = {"base": self.url}
        if start + 2 < len(assignments):
            links["next"] = f"/wiki/api/v2/spaces/{space_id}/permissions?cursor={start + 2}"
        return Answer(body={"results": page, "_links": links})

    def _download(self, _query: dict[str, str], _body: Any, page: str, filename: str) -> Answer:
        from urllib.parse import unquote  # noqa: PLC0415

        found = next((c for c in self.site.content.values() if c.type == "attachment" and c.parent == page
                      and c.title == unquote(filename)), None)
        if found is None:
            return Answer(status=404, body={"statusCode": 404})
        return Answer(raw=found.data, content_type=found.media_type)
