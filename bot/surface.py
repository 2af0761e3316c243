"""Everything the app shows Slack, in one place: the events, the command, the button ids, the API methods
and their scopes. The listeners register from these constants and `tests/integration/test_manifest.py`
holds `manifest.yml` to them, so a listener or an API call cannot be added without the manifest noticing.
"""

import re
from enum import StrEnum
from typing import Final


class Event(StrEnum):
    """Bot events as the manifest names them (`message.im` is a `message` event in a DM)."""

    MENTION = "app_mention"
    DIRECT_MESSAGE = "message.im"
    ASSISTANT_THREAD_STARTED = "assistant_thread_started"
    ASSISTANT_CONTEXT_CHANGED = "assistant_thread_context_changed"
    HOME_OPENED = "app_home_opened"
    # who reads a channel, or who someone is, changed: the cached audience is dropped (bot.membership)
    MEMBER_JOINED = "member_joined_channel"
    MEMBER_LEFT = "member_left_channel"
    CHANNEL_SHARED = "channel_shared"
    CHANNEL_UNSHARED = "channel_unshared"
    USER_CHANGED = "user_change"
    TEAM_JOINED = "team_join"
    GROUP_MEMBERS_CHANGED = "subteam_members_changed"


class Command(StrEnum):
    ASK = "/ask"


class Action(StrEnum):
    """`action_id`s of the buttons Sourced renders (`block_actions`)."""

    PASSAGE = "sourced_passage"
    HELPFUL = "sourced_feedback_helpful"
    NOT_HELPFUL = "sourced_feedback_not_helpful"
    ANSWERED_IT = "sourced_feedback_answered_it"
    """"This answered it" on one of a refusal's closest passages."""
    SHARE = "sourced_share"
    CLARIFY = "sourced_clarify"


class Shortcut(StrEnum):
    ASK_ABOUT_MESSAGE = "sourced_ask_about_message"
    """The message shortcut "Ask Sourced": a modal prefilled with the message's text."""


class View(StrEnum):
    ASK = "sourced_ask_view"
    """The shortcut's modal; its submission is answered ephemerally to whoever submitted it."""


CLARIFY_ACTION: Final = re.compile(rf"^{Action.CLARIFY}_\d+$")
"""One clarify button per reading; Slack wants action ids unique within a block, hence the suffix."""


def clarify_action_id(index: int) -> str:
    return f"{Action.CLARIFY}_{index}"


EVENT_SCOPES: Final[dict[Event, frozenset[str]]] = {
    Event.MENTION: frozenset({"app_mentions:read"}),
    Event.DIRECT_MESSAGE: frozenset({"im:history"}),
    Event.ASSISTANT_THREAD_STARTED: frozenset({"assistant:write"}),
    Event.ASSISTANT_CONTEXT_CHANGED: frozenset({"assistant:write"}),
    Event.HOME_OPENED: frozenset(),
    # Slack sends each of these for public channels with channels:read, for private ones with groups:read
    Event.MEMBER_JOINED: frozenset({"channels:read", "groups:read"}),
    Event.MEMBER_LEFT: frozenset({"channels:read", "groups:read"}),
    Event.CHANNEL_SHARED: frozenset({"channels:read", "groups:read"}),
    Event.CHANNEL_UNSHARED: frozenset({"channels:read", "groups:read"}),
    Event.USER_CHANGED: frozenset({"users:read"}),
    Event.TEAM_JOINED: frozenset({"users:read"}),
    Event.GROUP_MEMBERS_CHANGED: frozenset({"usergroups:read"}),
}
COMMAND_SCOPE: Final = "commands"
"""`/ask`, and the message shortcut too."""

API_SCOPES: Final[dict[str, frozenset[str]]] = {
    "auth.test": frozenset(),
    # the profile's e-mail, matched to what the connectors' sources share (users:read.email)
    "users.info": frozenset({"users:read", "users:read.email"}),
    "users.list": frozenset({"users:read", "users:read.email"}),
    "usergroups.list": frozenset({"usergroups:read"}),
    "usergroups.users.list": frozenset({"usergroups:read"}),
    # public and private channels; a DM is never looked up (its audience is the asker) and an unreadable
    # group DM falls back to the narrowest audience, so im:read and mpim:read are not needed
    "conversations.info": frozenset({"channels:read", "groups:read"}),
    "conversations.members": frozenset({"channels:read", "groups:read"}),
    "chat.postMessage": frozenset({"chat:write"}),
    "chat.postEphemeral": frozenset({"chat:write"}),
    "chat.update": frozenset({"chat:write"}),
    # slack_sdk's ChatStream: chat.startStream, chat.appendStream, chat.stopStream
    "chat.stream": frozenset({"chat:write"}),
    "views.publish": frozenset(),
    "views.open": frozenset(),
    "chat.delete": frozenset({"chat:write"}),
    # a mention inside a channel thread reads the thread's earlier messages (the question it was called into);
    # in a DM or assistant thread our own turns are kept, so nothing of it is read back
    "conversations.replies": frozenset({"channels:history", "groups:history"}),
}
"""Every Web API method the bot calls, with the bot scopes it needs."""

BOLT_API_SCOPES: Final[dict[str, frozenset[str]]] = {
    "assistant.threads.setStatus": frozenset({"assistant:write"}),
    "assistant.threads.setTitle": frozenset({"assistant:write"}),
    "assistant.threads.setSuggestedPrompts": frozenset({"assistant:write"}),
    # the assistant thread's context (the channel the person is looking at) is kept in the metadata of the
    # bot's first message of the thread, which Bolt's default context store reads back
    "conversations.replies": frozenset({"im:history"}),
}
"""Web API methods Bolt's assistant utilities (`set_status`, `set_title`, `set_suggested_prompts`, `say`,
`get_thread_context`) call for the bot."""


def bot_scopes() -> frozenset[str]:
    """The bot scopes the manifest must declare: no more, no fewer."""
    scopes = {COMMAND_SCOPE}
    for needed in [*EVENT_SCOPES.values(), *API_SCOPES.values(), *BOLT_API_SCOPES.values()]:
        scopes |= needed
    return frozenset(scopes)
