"""Who will read a reply, decided once per reply: the same value scopes retrieval and picks where it goes.

- an ephemeral reply or a DM: the asker only;
- a channel reply: the channel's party (its `channels` entry in `sourced.yml`, else `everyone`) and the asker;
  a channel shared with another organisation, or with a guest in it, also has a guest party, so only what
  guests may see is used. A channel Slack will not describe is treated the same way: the narrowest audience.
"""

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.cache import TtlMemo
from core.domain import EVERYONE, Audience, Party, Principal

log = logging.getLogger(__name__)

GUEST_PARTY = Party(is_guest=True)
PAGE_SIZE = 200


@dataclass(frozen=True, kw_only=True)
class ChannelFacts:
    is_direct: bool
    reaches_guests: bool


class GuestDirectory:
    """The workspace's guests (`is_restricted` / `is_ultra_restricted`), from `users.list`, cached.

    One paginated scan per TTL instead of one `users.info` per channel member: a 2,000-member channel
    costs ten calls, once, not two thousand."""

    def __init__(self, client: WebClient, *, ttl_s: float) -> None:
        self._client = client
        self._memo: TtlMemo[frozenset[str]] = TtlMemo(ttl_s=ttl_s, maxsize=1)

    def guest_ids(self) -> frozenset[str]:
        return self._memo.get("guests", self._scan)

    def _scan(self) -> frozenset[str]:
        found: set[str] = set()
        for page in _pages(lambda cursor: self._client.users_list(limit=PAGE_SIZE, cursor=cursor)):
            found.update(str(user["id"]) for user in page.get("members") or ()
                         if user.get("is_restricted") or user.get("is_ultra_restricted"))
        return frozenset(found)


class AudiencePolicy:
    def __init__(self, client: WebClient, *, channels: Mapping[str, Sequence[str]], guests: GuestDirectory,
                 ttl_s: float) -> None:
        self._client = client
        self._channels = {channel: frozenset(roles) for channel, roles in channels.items()}
        self._guests = guests
        self._facts: TtlMemo[ChannelFacts] = TtlMemo(ttl_s=ttl_s)

    @staticmethod
    def private(principal: Principal) -> Audience:
        """An ephemeral reply, a DM, or anything else only the asker will read."""
        return Audience.only(principal)

    def is_direct(self, channel_id: str) -> bool:
        """A DM with the bot: its only reader is the asker."""
        return self.channel(channel_id).is_direct

    def for_channel(self, principal: Principal, channel_id: str) -> Audience:
        """Everyone who can read a message posted in `channel_id`, the asker included."""
        facts = self.channel(channel_id)
        if facts.is_direct:
            return Audience.only(principal)
        parties = [Party(roles=self._channels.get(channel_id, frozenset({EVERYONE}))), principal.party]
        if facts.reaches_guests:
            parties.append(GUEST_PARTY)
        return Audience(parties=tuple(dict.fromkeys(parties)), posted_in=channel_id)

    def narrowed_to(self, principal: Principal, channel_id: str) -> Audience:
        """A reply the asker alone reads, using only what the readers of `channel_id` may see as well (the
        assistant thread's channel in view)."""
        return replace(self.for_channel(principal, channel_id), posted_in=None)

    def channel(self, channel_id: str) -> ChannelFacts:
        if channel_id.startswith("D"):
            return ChannelFacts(is_direct=True, reaches_guests=False)
        return self._facts.get(channel_id, lambda: self._fetch(channel_id))

    def _fetch(self, channel_id: str) -> ChannelFacts:
        try:
            channel = self._client.conversations_info(channel=channel_id)["channel"]
            if channel.get("is_im"):
                return ChannelFacts(is_direct=True, reaches_guests=False)
            shared = any(channel.get(flag) for flag in ("is_ext_shared", "is_shared", "is_org_shared",
                                                         "is_pending_ext_shared"))
            return ChannelFacts(is_direct=False, reaches_guests=shared or self._has_guests(channel_id))
        except SlackApiError as error:
            reason = error.response.get("error") if error.response is not None else error
            log.warning("channel %s: cannot read it (%s); answering for the narrowest audience",
                        channel_id, reason)
            return ChannelFacts(is_direct=False, reaches_guests=True)

    def _has_guests(self, channel_id: str) -> bool:
        guests = self._guests.guest_ids()
        if not guests:
            return False
        pages = _pages(lambda cursor: self._client.conversations_members(channel=channel_id, limit=1000,
                                                                         cursor=cursor))
        return any(guests.intersection(page.get("members") or ()) for page in pages)


def _pages(call: Callable[[str | None], Any]) -> Iterator[Any]:
    """Each page of a cursor-paginated Web API method."""
    cursor: str | None = None
    while True:
        page = call(cursor)
        yield page
        cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
        if not cursor:
            return
