"""`/ask TEXT`: an ephemeral answer through `respond`; `/ask` alone replies with usage."""

from typing import Any

from slack_bolt import Ack, App, BoltContext, Respond

from bot import blocks
from bot.identity import signed_ids
from bot.replies import Replies
from bot.surface import Command


def register(app: App) -> None:
    app.command(Command.ASK)(ask)


def ask(ack: Ack, command: dict[str, Any], context: BoltContext, respond: Respond, replies: Replies) -> None:
    text = str(command.get("text") or "").strip()
    ids = signed_ids(context)
    if not text or ids is None:
        usage = blocks.notice(blocks.USAGE)
        ack(text=usage.text, blocks=usage.block_dicts(), response_type="ephemeral")
        return
    ack()
    channel_id = command.get("channel_id")
    replies.submit("ask", lambda: replies.private.command(ids, channel_id=channel_id, text=text, respond=respond),
                   respond=respond)
