"""Everything the app shows Slack, in one place: the events, the command, the button ids, the API methods
and their scopes. The listeners register from these constants and `tests/integration/test_manifest.py`
holds `manifest.yml` to them, so a listener or an API call cannot be added without the manifest noticing.
"""

import re
from enum import StrEnum
from typing import Final


class Event(StrEnum):
    MENTION = "app_mention"


class Command(StrEnum):
    ASK = "/ask"


class Action(StrEnum):
    """`action_id`s of the buttons Sourced renders (`block_actions`)."""

    PASSAGE = "sourced_passage"
    HELPFUL = "sourced_feedback_helpful"
    NOT_HELPFUL = "sourced_feedback_not_helpful"
    SHARE = "sourced_share"
    CLARIFY = "sourced_clarify"


CLARIFY_ACTION: Final = re.compile(rf"^{Action.CLARIFY}_\d+$")
"""One clarify button per reading; Slack wants action ids unique within a block, hence the suffix."""


def clarify_action_id(index: int) -> str:
    return f"{Action.CLARIFY}_{index}"


EVENT_SCOPES: Final[dict[Event, str]] = {Event.MENTION: "app_mentions:read"}
COMMAND_SCOPE: Final = "commands"

API_SCOPES: Final[dict[str, frozenset[str]]] = {
    "auth.test": frozenset(),
    "users.info": frozenset({"users:read"}),
    "users.list": frozenset({"users:read"}),
    "usergroups.list": frozenset({"usergroups:read"}),
    "usergroups.users.list": frozenset({"usergroups:read"}),
    # public and private channels; a DM is never looked up (its audience is the asker) and an unreadable
    # group DM falls back to the narrowest audience, so im:read and mpim:read are not needed
    "conversations.info": frozenset({"channels:read", "groups:read"}),
    "conversations.members": frozenset({"channels:read", "groups:read"}),
    "chat.postMessage": frozenset({"chat:write"}),
    "chat.postEphemeral": frozenset({"chat:write"}),
    "chat.update": frozenset({"chat:write"}),
    "chat.delete": frozenset({"chat:write"}),
}
"""Every Web API method the bot calls, with the bot scopes it needs."""


def bot_scopes() -> frozenset[str]:
    """The bot scopes the manifest must declare: no more, no fewer."""
    scopes = set(EVENT_SCOPES.values()) | {COMMAND_SCOPE}
    for needed in API_SCOPES.values():
        scopes |= needed
    return frozenset(scopes)
