"""Slack's assistant panel, through Bolt's `Assistant`: a thread starts, its context changes, the person writes.

Bolt acknowledges each event before calling these; each only hands its work to the reply pool, so no Web API
call sits in the path Slack waits on. There each event is claimed first (`Replies.once`,
`replies.conversations.conversation`), before any Web API call: a redelivered event greets, saves or looks up
nothing a second time.
"""

import logging
from typing import Any

from slack_bolt import App, Assistant, BoltContext, BoltRequest
from slack_bolt.context.get_thread_context import GetThreadContext
from slack_bolt.context.save_thread_context import SaveThreadContext

from bot.identity import SignedIds, signed_ids
from bot.listeners.messages import delivery_of
from bot.replies import Replies
from bot.replies.conversations import AssistantThread
from bot.streaming import Conversation

log = logging.getLogger(__name__)


def register(app: App) -> None:
    assistant = Assistant(logger=log)
    assistant.thread_started(start_thread)
    assistant.thread_context_changed(remember_context)
    assistant.user_message(answer_in_thread)
    app.assistant(assistant)


def start_thread(body: dict[str, Any], request: BoltRequest, context: BoltContext, replies: Replies) -> None:
    """The greeting and suggested prompts (Bolt's `say` and `set_suggested_prompts` for the thread are in the
    context). The person is the thread's `user_id` in the signed event (Bolt's context has no user for it)."""
    thread = body["event"]["assistant_thread"]
    ids = SignedIds(user_id=str(thread["user_id"]), team_id=context.team_id, enterprise_id=context.enterprise_id)
    say, set_suggested_prompts = context["say"], context["set_suggested_prompts"]
    delivery = delivery_of(body, request)
    replies.submit("assistant_thread", lambda: replies.once(delivery, "assistant_thread_started", lambda: (
        replies.conversations.greet(ids, say=say, set_suggested_prompts=set_suggested_prompts))))


def remember_context(body: dict[str, Any], request: BoltRequest, save_thread_context: SaveThreadContext,
                     replies: Replies) -> None:
    """Bolt's default store keeps the context in the metadata of the thread's first bot message: two Web API
    calls, so they run on the pool rather than before the acknowledgement. Once per event: a late redelivery
    must not put back a context the person has since changed."""
    thread_context = dict(body["event"]["assistant_thread"].get("context") or {})
    delivery = delivery_of(body, request)
    replies.submit("assistant_context", lambda: replies.once(delivery, "assistant_thread_context_changed",
                                                             lambda: save_thread_context(thread_context)))


def answer_in_thread(body: dict[str, Any], request: BoltRequest, context: BoltContext, replies: Replies) -> None:
    """Bolt's `Assistant` put `set_status`, `set_title` and `get_thread_context` in the context."""
    ids = signed_ids(context)
    if ids is None:
        return
    event = body["event"]
    place = Conversation(channel_id=str(event["channel"]), thread_ts=str(event["thread_ts"]), user_id=ids.user_id,
                         team_id=ids.team_id)
    text = str(event.get("text") or "")
    tools = AssistantThread(set_status=context["set_status"], set_title=context["set_title"])
    get_thread_context: GetThreadContext = context["get_thread_context"]

    def channel_in_view() -> str | None:
        thread_context = get_thread_context()
        return thread_context.channel_id if thread_context else None

    delivery = delivery_of(body, request)
    replies.submit("assistant_message", lambda: replies.conversations.conversation(
        ids, event=delivery, place=place, text=text, channel_in_view=channel_in_view, assistant=tools,
        message_ts=str(event["ts"]), conversation_ts=place.thread_ts))
