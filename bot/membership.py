"""Slack's word that who reads a channel, or who someone is, changed: the cached audience is dropped at once.

A membership or sharing event names its channel; `user_change` and `team_join` name a user, and a guest among
them (a member turned guest, a guest invited) changes who is a guest in every channel; `subteam_members_changed`
names a user group, whose members hold roles. Each is marked in the database for every worker and host
(`bot.changes`), and dropped from this worker's caches. Nothing in the event is believed about the change
itself: the next reply reads the channel, the user or the group from the Web API again.
"""

import logging
from collections.abc import Mapping
from typing import Any

from bot.audience import AudiencePolicy
from bot.changes import WORKSPACE_KEY, Changes, channel_key, group_key, user_key
from bot.identity import IdentityResolver
from bot.surface import Event

log = logging.getLogger(__name__)

CHANNEL_EVENTS = frozenset({Event.MEMBER_JOINED, Event.MEMBER_LEFT, Event.CHANNEL_SHARED, Event.CHANNEL_UNSHARED})
USER_EVENTS = frozenset({Event.USER_CHANGED, Event.TEAM_JOINED})
GUEST_FLAGS = ("is_restricted", "is_ultra_restricted", "is_stranger")


class AudienceFollower:
    def __init__(self, changes: Changes, *, audience: AudiencePolicy, identity: IdentityResolver) -> None:
        self._changes = changes
        self._audience = audience
        self._identity = identity

    def heard(self, event: Mapping[str, Any]) -> None:
        """Mark what the event changed. A database that refuses raises, so Slack is answered 500 and
        delivers the event again."""
        kind = str(event.get("type") or "")
        if kind in CHANNEL_EVENTS:
            channel_id = str(event["channel"])
            self._changes.mark([channel_key(channel_id)])
            self._audience.forget(channel_id)
            log.info("%s in %s: its audience is read again", kind, channel_id)
        elif kind in USER_EVENTS:
            user = event["user"]
            user_id = str(user["id"] if isinstance(user, Mapping) else user)
            keys = [user_key(user_id)]
            if kind == Event.TEAM_JOINED or (isinstance(user, Mapping) and any(user.get(flag) for flag in GUEST_FLAGS)):
                keys.append(WORKSPACE_KEY)
            self._changes.mark(keys)
            self._identity.forget(user_id=user_id)
            if WORKSPACE_KEY in keys:
                log.info("%s for %s: every channel's audience is read again", kind, user_id)
        elif kind == Event.GROUP_MEMBERS_CHANGED:
            group_id = str(event["subteam_id"])
            self._changes.mark([group_key(group_id)])
            self._identity.forget(group_id=group_id)
