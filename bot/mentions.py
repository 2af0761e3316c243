"""Mentions in message text: Sourced's own is not part of a question; other people's may be."""

import re
from typing import Final

_MENTION: Final = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")


def strip_mention(text: str, bot_user_id: str | None) -> str:
    """The question without the bot's own mention; other mentions stay, they may be part of it."""
    return _MENTION.sub(lambda m: "" if m.group(1) == bot_user_id else m.group(0), text).strip()
