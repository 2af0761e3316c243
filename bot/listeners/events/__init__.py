"""`app_mention`: a question asked in a channel, answered in its thread."""

from typing import Any

from slack_bolt import App, BoltContext, BoltRequest

from bot.identity import signed_ids
from bot.mentions import strip_mention
from bot.replies import Replies
from bot.replies.posting import Delivery
from bot.surface import Event


def register(app: App) -> None:
    app.event(Event.MENTION)(answer_mention)


def answer_mention(body: dict[str, Any], request: BoltRequest, context: BoltContext,
                   replies: Replies) -> None:
    """Bolt acknowledges events before calling this; the answer (and the exactly-once claim of the event id)
    runs on the reply pool."""
    ids = signed_ids(context)
    if ids is None:
        return
    event = body["event"]
    text = strip_mention(str(event.get("text") or ""), context.bot_user_id)
    channel_id = str(event["channel"])
    thread_ts = str(event.get("thread_ts") or event["ts"])
    delivery = Delivery(event_id=str(body.get("event_id") or f"{channel_id}/{event['ts']}"),
                        retry=request.headers.get("x-slack-retry-num", [""])[0] or None)
    message_ts = str(event["ts"])
    replies.submit("mention", lambda: replies.mentions.mention(ids, event=delivery, channel_id=channel_id,
                                                               thread_ts=thread_ts, text=text, message_ts=message_ts))
