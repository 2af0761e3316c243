"""An in-memory stand-in for the few `slack_sdk.WebClient` methods identity and audience call.

It answers from a small workspace model and counts calls, so tests can see what was cached.
"""

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.errors import SlackApiError


@dataclass
class FakeSlackApi:
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    groups: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    """group id -> (handle, member ids)"""
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    members: dict[str, list[str]] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)

    def users_info(self, *, user: str) -> dict[str, Any]:
        self.calls["users.info"] += 1
        if user not in self.users:
            raise SlackApiError("user_not_found", {"ok": False, "error": "user_not_found"})
        return {"ok": True, "user": {"id": user, **self.users[user]}}

    def users_list(self, *, limit: int, cursor: str | None = None) -> dict[str, Any]:
        self.calls["users.list"] += 1
        everyone = [{"id": uid, **data} for uid, data in self.users.items()]
        start = int(cursor or 0)
        page = everyone[start:start + limit]
        more = start + limit < len(everyone)
        next_cursor = str(start + limit) if more else ""
        return {"ok": True, "members": page, "response_metadata": {"next_cursor": next_cursor}}

    def usergroups_list(self) -> dict[str, Any]:
        self.calls["usergroups.list"] += 1
        groups = [{"id": gid, "handle": handle} for gid, (handle, _) in self.groups.items()]
        return {"ok": True, "usergroups": groups}

    def usergroups_users_list(self, *, usergroup: str) -> dict[str, Any]:
        self.calls["usergroups.users.list"] += 1
        if usergroup not in self.groups:
            raise SlackApiError("no_such_subteam", {"ok": False, "error": "no_such_subteam"})
        return {"ok": True, "users": list(self.groups[usergroup][1])}

    def conversations_info(self, *, channel: str) -> dict[str, Any]:
        self.calls["conversations.info"] += 1
        if channel not in self.channels:
            raise SlackApiError("channel_not_found", {"ok": False, "error": "channel_not_found"})
        return {"ok": True, "channel": {"id": channel, **self.channels[channel]}}

    def conversations_members(self, *, channel: str, limit: int, cursor: str | None = None) -> dict[str, Any]:
        self.calls["conversations.members"] += 1
        members = list(self.members.get(channel, []))
        return {"ok": True, "members": members, "response_metadata": {"next_cursor": ""}}
