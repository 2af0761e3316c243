"""Membership, sharing, user and user-group events: the cached audience they change is dropped (`bot.membership`).

Handled before the acknowledgement, not on the reply pool: the mark is one small write, and a question asked
right after the event must not find the pool busy and the old audience still cached."""

from typing import Any

from slack_bolt import App

from bot.membership import CHANNEL_EVENTS, USER_EVENTS, AudienceFollower
from bot.surface import Event


def register(app: App) -> None:
    for kind in sorted([*CHANNEL_EVENTS, *USER_EVENTS, Event.GROUP_MEMBERS_CHANGED]):
        app.event(kind)(audience_changed)


def audience_changed(event: dict[str, Any], membership: AudienceFollower) -> None:
    membership.heard(event)
