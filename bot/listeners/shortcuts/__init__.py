"""The message shortcut "Ask Sourced": a modal prefilled with the message's text; its submission is answered
privately to whoever submitted it, in the channel the message is in."""

from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient

from bot import views
from bot.identity import signed_ids
from bot.replies import Replies
from bot.surface import Shortcut, View


def register(app: App) -> None:
    app.shortcut(Shortcut.ASK_ABOUT_MESSAGE)(open_question)
    app.view(View.ASK)(ask_question)


def open_question(ack: Ack, shortcut: dict[str, Any], client: WebClient, replies: Replies) -> None:
    """`views.open` within the trigger's 3 seconds, on the pool: the acknowledgement does not wait for it."""
    ack()
    message = shortcut.get("message") or {}
    channel = (shortcut.get("channel") or {}).get("id")
    modal = views.ask_modal(str(message.get("text") or ""), channel_id=channel)
    trigger = str(shortcut.get("trigger_id") or "")
    replies.submit("shortcut", lambda: client.views_open(trigger_id=trigger, view=modal.to_dict()))


def ask_question(ack: Ack, view: dict[str, Any], context: BoltContext, replies: Replies) -> None:
    ack()
    ids = signed_ids(context)
    state = view.get("state", {}).get("values", {})
    text = str(state.get(views.QUESTION_BLOCK, {}).get(views.QUESTION_INPUT, {}).get("value") or "")
    if ids is None:
        return
    channel = str(view.get("private_metadata") or "") or None
    replies.submit("shortcut_answer", lambda: replies.private.about_message(ids, channel_id=channel, text=text))
