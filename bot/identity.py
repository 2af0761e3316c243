"""Who is asking, from trusted sources only: the ids of the signed payload, resolved through the Slack API.

Nothing a person types, and nothing a button carries, reaches a `Principal`: the user id comes from the
payload Slack signed, guest/bot/deleted flags and the verified e-mail from `users.info`, roles from the `roles`
map of `sourced.yml` through the members of Slack user groups, and what the connectors' sources share with the
e-mail (the address, its domain, the source groups that list it: `SourcePrincipals`). A guest gets nothing from
the sources: what guests see stays what the `guests` role opens. Lookups are cached with a TTL.
"""

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.cache import TtlMemo
from bot.changes import Changes, changed_since, group_key, user_key
from core.domain import EVERYONE, Principal

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class SignedIds:
    """The ids Bolt read from the verified request body (its context), never from message text."""

    user_id: str
    team_id: str | None = None
    enterprise_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class SlackUser:
    user_id: str
    is_guest: bool
    is_bot: bool
    deleted: bool
    email: str | None = None
    """The profile's e-mail (`users:read.email`), which Slack has the user confirm."""


SourcePrincipals = Callable[[str | None], frozenset[str]]
"""The audience roles the connectors' sources grant a verified e-mail address
(`core.storage.connectors.SqlSourcePrincipals.principals`)."""


def no_sources(_email: str | None) -> frozenset[str]:
    return frozenset()


@dataclass(frozen=True, kw_only=True)
class Home:
    """The installing workspace: a member of another organisation (Slack Connect) is a guest here."""

    team_id: str | None
    enterprise_id: str | None = None


class IdentityResolver:
    def __init__(self, client: WebClient, *, roles: Mapping[str, Sequence[str]], home: Home,
                 ttl_s: float, sources: SourcePrincipals = no_sources, changes: Changes | None = None) -> None:
        self._client = client
        self._changes = changes
        """`user_change` and `subteam_members_changed` any worker received; None: the cache lasts its TTL."""
        self._sources = sources
        self._roles = {role: tuple(groups) for role, groups in roles.items()}
        self._home = home
        self._users: TtlMemo[SlackUser] = TtlMemo(ttl_s=ttl_s)
        self._groups: TtlMemo[frozenset[str]] = TtlMemo(ttl_s=ttl_s)
        self._handles: TtlMemo[dict[str, str]] = TtlMemo(ttl_s=ttl_s, maxsize=1)

    def principal(self, ids: SignedIds) -> Principal | None:
        """The asker as a Principal; None for bots and deleted users, who get no answer."""
        user = self.user(ids.user_id)
        if user.is_bot or user.deleted:
            log.info("no answer for %s: bot or deleted user", ids.user_id)
            return None
        roles = self._roles_of(ids.user_id)
        if not user.is_guest:
            roles |= {EVERYONE} | self._sources(user.email)
        return Principal(user_id=ids.user_id, team_id=ids.team_id, enterprise_id=ids.enterprise_id,
                         roles=roles, is_guest=user.is_guest)

    def user(self, user_id: str) -> SlackUser:
        return self._users.get(user_id, lambda: self._fetch_user(user_id),
                               changed_since=changed_since(self._changes, user_key(user_id)))

    def forget(self, *, user_id: str | None = None, group_id: str | None = None) -> None:
        """Drop this worker's cached user or user group (the event's own worker; others see `changes`)."""
        if user_id is not None:
            self._users.forget(user_id)
        if group_id is not None:
            self._groups.forget(group_id)

    def _fetch_user(self, user_id: str) -> SlackUser:
        data = self._client.users_info(user=user_id)["user"]
        return SlackUser(user_id=user_id, is_guest=self._is_guest(data), is_bot=bool(data.get("is_bot")),
                         deleted=bool(data.get("deleted")), email=profile_email(data))

    def _is_guest(self, user: Mapping[str, object]) -> bool:
        """Single- and multi-channel guests, and anyone whose home is another organisation."""
        if user.get("is_restricted") or user.get("is_ultra_restricted") or user.get("is_stranger"):
            return True
        team = user.get("team_id")
        enterprise = user.get("enterprise_user", {}) or {}
        same_org = bool(self._home.enterprise_id) and (
            isinstance(enterprise, Mapping) and enterprise.get("enterprise_id") == self._home.enterprise_id)
        return bool(team and self._home.team_id and team != self._home.team_id and not same_org)

    def _roles_of(self, user_id: str) -> frozenset[str]:
        return frozenset(role for role, groups in self._roles.items()
                         if any(user_id in self._members(group) for group in groups))

    def _members(self, group: str) -> frozenset[str]:
        group_id = self._group_id(group)
        if group_id is None:
            return frozenset()
        return self._groups.get(group_id, lambda: self._fetch_members(group_id),
                                changed_since=changed_since(self._changes, group_key(group_id)))

    def _fetch_members(self, group_id: str) -> frozenset[str]:
        try:
            response = self._client.usergroups_users_list(usergroup=group_id)
        except SlackApiError as error:
            log.warning("user group %s: usergroups.users.list failed (%s); nobody holds its role",
                        group_id, error.response.get("error") if error.response is not None else error)
            return frozenset()
        return frozenset(response.get("users") or ())

    def _group_id(self, group: str) -> str | None:
        """`@handle` or a bare handle resolves through `usergroups.list`; an `S...` id is used as it is."""
        if not group.startswith("@") and group[:1] == "S" and group.isupper():
            return group
        handle = group.removeprefix("@")
        found = self._handles.get("handles", self._fetch_handles).get(handle)
        if found is None:
            log.warning("sourced.yml roles: no Slack user group with handle @%s", handle)
        return found

    def _fetch_handles(self) -> dict[str, str]:
        groups = self._client.usergroups_list()["usergroups"] or []
        return {str(group["handle"]): str(group["id"]) for group in groups}


def profile_email(user: Mapping[str, Any]) -> str | None:
    profile = user.get("profile") or {}
    email = profile.get("email") if isinstance(profile, Mapping) else None
    return str(email).strip().casefold() if email else None


def signed_ids(context: Mapping[str, Any]) -> SignedIds | None:
    """The asker's ids from Bolt's context, which Bolt filled from the verified request body."""
    user_id = context.get("user_id")
    if not user_id:
        return None
    return SignedIds(user_id=str(user_id), team_id=context.get("team_id"),
                     enterprise_id=context.get("enterprise_id"))
