"""`message.im`: a direct message to Sourced outside an assistant thread, answered like `/ask` (the asker alone
reads it), in the message's thread. Edits, deletions, bot messages and the bot's own are not questions.
The top level of the DM is one conversation, and each thread in it another: a follow-up is read against the
turns before it in the same one."""

from typing import Any

from slack_bolt import App, BoltContext, BoltRequest

from bot.identity import signed_ids
from bot.replies import Replies
from bot.replies.posting import Delivery
from bot.streaming import Conversation


def register(app: App) -> None:
    app.event({"type": "message", "channel_type": "im"})(answer_direct_message)


def answer_direct_message(body: dict[str, Any], request: BoltRequest, context: BoltContext,
                          replies: Replies) -> None:
    event = body["event"]
    ids = signed_ids(context)
    if ids is None or not is_question(event, bot_user_id=context.bot_user_id):
        return
    place = Conversation(channel_id=str(event["channel"]), thread_ts=str(event.get("thread_ts") or event["ts"]),
                         user_id=ids.user_id, team_id=ids.team_id)
    text = str(event.get("text") or "")
    message_ts, conversation_ts = str(event["ts"]), str(event.get("thread_ts") or "")
    replies.submit("direct_message", lambda: replies.conversations.conversation(
        ids, event=delivery_of(body, request), place=place, text=text, message_ts=message_ts,
        conversation_ts=conversation_ts))


def is_question(event: dict[str, Any], *, bot_user_id: str | None) -> bool:
    """A person's new message: no subtype (edits and deletions have one), from no bot, not from Sourced."""
    return (event.get("subtype") is None and event.get("bot_id") is None and bool(event.get("user"))
            and event.get("user") != bot_user_id)


def delivery_of(body: dict[str, Any], request: BoltRequest) -> Delivery:
    """The event's id (Slack always sends one; else where and when it happened) and its retry number."""
    event = body["event"]
    fallback = f"{event.get('channel') or event.get('assistant_thread', {}).get('channel_id')}/{event.get('event_ts')}"
    return Delivery(event_id=str(body.get("event_id") or fallback),
                    retry=request.headers.get("x-slack-retry-num", [""])[0] or None)
