"""Who will read a reply, decided once per reply: the same value scopes retrieval and picks where it goes.

- an ephemeral reply or a DM: the asker only;
- a channel reply: the channel's party (its `channels` entry in `sourced.yml`, else `everyone`) and the asker;
  a channel shared with another organisation, or with a guest in it, also has a guest party, so only what
  guests may see is used. A channel Slack will not describe is treated the same way: the narrowest audience.
- with connectors, the channel's party is each member of it: the channel's roles and what the sources share with
  the member's e-mail, so a document is used only if every member may read it in its source. Members the sources
  grant the same are one reader (`Audience.of`), so a large channel costs a few parties, not thousands.

What Slack says of a channel is cached for the TTL, and dropped before it when Slack says who reads it changed:
a member joined or left, the channel was shared or unshared, a user became a guest (`bot.listeners.membership`
marks it in the database, so every worker of every host reads the channel again before its next reply). A
member the guest directory does not know (someone new) makes it read `users.list` again, and one still unknown
counts as a guest.
"""

import logging
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.cache import TtlMemo
from bot.changes import WORKSPACE_KEY, Changes, changed_since, channel_key
from bot.identity import SourcePrincipals, profile_email
from core.domain import EVERYONE, Audience, Party, Principal

log = logging.getLogger(__name__)

GUEST_PARTY = Party(is_guest=True)
PAGE_SIZE = 200


@dataclass(frozen=True, kw_only=True)
class ChannelFacts:
    is_direct: bool
    reaches_guests: bool
    members: tuple[str, ...] = ()
    """Staff members (not guests), read only when connectors need them."""


@dataclass(frozen=True, kw_only=True)
class _Directory:
    guests: frozenset[str]
    emails: Mapping[str, str]
    bots: frozenset[str]
    """Apps (this bot among them) are in channels but read nothing: they are no reader of a reply."""
    known: frozenset[str] = frozenset()
    """Every user `users.list` returned: a channel member outside it is someone new, or from elsewhere."""


RESCAN_AFTER_S: Final = 10.0
"""A channel member the directory does not know makes it read `users.list` again, at most this often."""


class GuestDirectory:
    """The workspace's guests (`is_restricted` / `is_ultra_restricted`) and members' e-mails, from `users.list`,
    cached.

    One paginated scan per TTL instead of one `users.info` per channel member: a 2,000-member channel
    costs ten calls, once, not two thousand. Read again when a guest's profile changes (`WORKSPACE_KEY`), and
    when a channel has a member it does not know."""

    def __init__(self, client: WebClient, *, ttl_s: float, changes: Changes | None = None) -> None:
        self._client = client
        self._changes = changes
        self._memo: TtlMemo[_Directory] = TtlMemo(ttl_s=ttl_s, maxsize=1)

    def read(self, members: Collection[str] = ()) -> _Directory:
        """The directory; read again (at most every `RESCAN_AFTER_S`) when it does not know one of `members`."""
        directory = self._memo.get("directory", self._scan, changed_since=changed_since(self._changes, WORKSPACE_KEY))
        if set(members) <= directory.known:
            return directory
        return self._memo.get("directory", self._scan,
                              changed_since=lambda started: started < time.time() - RESCAN_AFTER_S)

    def _scan(self) -> _Directory:
        guests: set[str] = set()
        emails: dict[str, str] = {}
        bots: set[str] = set()
        known: set[str] = set()
        for page in _pages(lambda cursor: self._client.users_list(limit=PAGE_SIZE, cursor=cursor)):
            for user in page.get("members") or ():
                known.add(str(user["id"]))
                if user.get("is_restricted") or user.get("is_ultra_restricted"):
                    guests.add(str(user["id"]))
                if user.get("is_bot") or user.get("id") == "USLACKBOT":
                    bots.add(str(user["id"]))
                email = profile_email(user)
                if email and not user.get("is_bot") and not user.get("deleted"):
                    emails[str(user["id"])] = email
        return _Directory(guests=frozenset(guests), emails=emails, bots=frozenset(bots), known=frozenset(known))


class AudiencePolicy:
    def __init__(self, client: WebClient, *, channels: Mapping[str, Sequence[str]], guests: GuestDirectory,
                 ttl_s: float, sources: SourcePrincipals | None = None, changes: Changes | None = None) -> None:
        self._client = client
        self._channels = {channel: frozenset(roles) for channel, roles in channels.items()}
        self._guests = guests
        self._sources = sources
        """None without connectors: members are not listed, the channel's roles stand for them all."""
        self._changes = changes
        """Membership and sharing events any worker received; None: the cache lasts its TTL."""
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
        roles = self._channels.get(channel_id, frozenset({EVERYONE}))
        parties = [*self._member_parties(roles, facts), principal.party]
        if facts.reaches_guests:
            parties.append(GUEST_PARTY)
        return Audience.of(parties, posted_in=channel_id)

    def _member_parties(self, roles: frozenset[str], facts: ChannelFacts) -> list[Party]:
        """The channel's readers: each member with the channel's roles and what the sources grant the member's
        e-mail, or, without connectors (or members to read), one reader holding the channel's roles."""
        if self._sources is None or not facts.members:
            return [Party(roles=roles)]
        directory = self._guests.read()
        return [Party(roles=roles | self._sources(directory.emails.get(member))) for member in facts.members]

    def narrowed_to(self, principal: Principal, channel_id: str) -> Audience:
        """A reply the asker alone reads, using only what the readers of `channel_id` may see as well (the
        assistant thread's channel in view)."""
        return replace(self.for_channel(principal, channel_id), posted_in=None)

    def channel(self, channel_id: str) -> ChannelFacts:
        """What Slack says of the channel, cached until the TTL or until a membership or sharing event for it
        (or a guest's change anywhere) was received by any worker."""
        if channel_id.startswith("D"):
            return ChannelFacts(is_direct=True, reaches_guests=False)
        return self._facts.get(channel_id, lambda: self._fetch(channel_id),
                               changed_since=changed_since(self._changes, channel_key(channel_id), WORKSPACE_KEY))

    def forget(self, channel_id: str) -> None:
        """Drop this worker's facts about the channel (the event's own worker; others see `changes`)."""
        self._facts.forget(channel_id)

    def _fetch(self, channel_id: str) -> ChannelFacts:
        try:
            channel = self._client.conversations_info(channel=channel_id)["channel"]
            if channel.get("is_im"):
                return ChannelFacts(is_direct=True, reaches_guests=False)
            shared = any(channel.get(flag) for flag in ("is_ext_shared", "is_shared", "is_org_shared",
                                                         "is_pending_ext_shared"))
            members = self._members(channel_id)
            directory = self._guests.read(() if shared else members)
            # a member the directory does not know, even read again, is no known member of staff: a guest
            guests = directory.guests | (frozenset(members) - directory.known)
            reaches_guests = shared or bool(guests.intersection(members))
            if self._sources is None:
                return ChannelFacts(is_direct=False, reaches_guests=reaches_guests)
            return ChannelFacts(is_direct=False, reaches_guests=reaches_guests,
                                members=tuple(member for member in members if member not in guests | directory.bots))
        except SlackApiError as error:
            reason = error.response.get("error") if error.response is not None else error
            log.warning("channel %s: cannot read it (%s); answering for the narrowest audience",
                        channel_id, reason)
            return ChannelFacts(is_direct=False, reaches_guests=True)

    def _members(self, channel_id: str) -> list[str]:
        pages = _pages(lambda cursor: self._client.conversations_members(channel=channel_id, limit=1000,
                                                                         cursor=cursor))
        return [str(member) for page in pages for member in page.get("members") or ()]


def _pages(call: Callable[[str | None], Any]) -> Iterator[Any]:
    """Each page of a cursor-paginated Web API method."""
    cursor: str | None = None
    while True:
        page = call(cursor)
        yield page
        cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
        if not cursor:
            return
