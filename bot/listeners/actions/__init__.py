"""`block_actions`: the buttons on Sourced's replies (passage, feedback, share, clarify)."""

from typing import Any

from slack_bolt import Ack, App, BoltContext, Respond

from bot.identity import signed_ids
from bot.replies import Replies
from bot.replies.buttons import Place, Verdict
from bot.surface import CLARIFY_ACTION, Action


def register(app: App) -> None:
    app.action(Action.PASSAGE)(show_passage)
    app.action(Action.HELPFUL)(record_feedback)
    app.action(Action.NOT_HELPFUL)(record_feedback)
    app.action(Action.ANSWERED_IT)(record_answered_it)
    app.action(Action.SHARE)(share_answer)
    app.action(CLARIFY_ACTION)(choose_reading)


def show_passage(ack: Ack, action: dict[str, Any], context: BoltContext, respond: Respond,
                 replies: Replies) -> None:
    ack()
    ids = signed_ids(context)
    if ids is not None:
        value = str(action.get("value") or "")
        replies.submit("passage", lambda: replies.buttons.passage(ids, value=value, respond=respond),
                       respond=respond)


def record_feedback(ack: Ack, body: dict[str, Any], context: BoltContext, respond: Respond,
                    replies: Replies) -> None:
    ack()
    ids = signed_ids(context)
    if ids is not None:
        action_id, correlation_id, place = clicked(body)
        verdict: Verdict = "helpful" if action_id == Action.HELPFUL else "not_helpful"
        replies.submit("feedback", lambda: replies.buttons.feedback(
            ids, correlation_id=correlation_id, verdict=verdict, place=place, respond=respond),
            respond=respond)


def record_answered_it(ack: Ack, body: dict[str, Any], context: BoltContext, respond: Respond,
                       replies: Replies) -> None:
    ack()
    ids = signed_ids(context)
    if ids is not None:
        _, value, place = clicked(body)
        replies.submit("feedback", lambda: replies.buttons.answered_it(
            ids, value=value, place=place, respond=respond), respond=respond)


def share_answer(ack: Ack, body: dict[str, Any], context: BoltContext, respond: Respond,
                 replies: Replies) -> None:
    ack()
    ids = signed_ids(context)
    if ids is not None:
        _, question, place = clicked(body)
        replies.submit("share", lambda: replies.buttons.share(
            ids, question=question, place=place, respond=respond), respond=respond)


def choose_reading(ack: Ack, body: dict[str, Any], context: BoltContext, respond: Respond,
                   replies: Replies) -> None:
    ack()
    ids = signed_ids(context)
    if ids is not None:
        _, value, place = clicked(body)
        replies.submit("clarify", lambda: replies.buttons.clarify(
            ids, value=value, place=place, respond=respond), respond=respond)


def clicked(body: dict[str, Any]) -> tuple[str, str, Place]:
    """The clicked button's action id and value, and where it was clicked."""
    actions = body.get("actions")
    action = _object(actions[0] if isinstance(actions, list) and actions else None)
    return str(action.get("action_id") or ""), str(action.get("value") or ""), clicked_place(body)


def clicked_place(body: dict[str, Any]) -> Place:
    """Where the click happened, from the signed payload. Found by fuzzing: a field of another shape than
    Slack's (`"message": true`, a block that is not an object) raised, and the clicker heard nothing or got
    "I can't answer right now"; such a field now counts as absent."""
    container = _object(body.get("container"))
    message = _object(body.get("message"))
    channel = _object(body.get("channel"))
    shown = message.get("blocks")
    text = message.get("text")
    return Place(channel_id=_id(channel.get("id")) or _id(container.get("channel_id")),
                 message_ts=_id(container.get("message_ts")) or _id(message.get("ts")),
                 is_ephemeral=container.get("is_ephemeral") is True,
                 blocks=tuple(block for block in shown if isinstance(block, dict)) if isinstance(shown, list) else (),
                 text=text if isinstance(text, str) else "")


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _id(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
