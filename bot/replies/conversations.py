"""A DM, or the assistant panel's thread: only the asker reads the reply, so it uses what the asker may see,
narrowed to the audience of the channel the person is looking at when the assistant thread has one.

Each message is a turn of its conversation: the top level of a DM is one, each thread in it another, and an
assistant thread another; a follow-up is read against the turns before it. A generative model's answer is
streamed once it is checked (`bot.streaming`). The assistant thread's greeting is here too.
"""

import logging
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError

from bot import blocks, views
from bot.audience import AudiencePolicy
from bot.exactly_once import EventClaims
from bot.identity import SignedIds
from bot.replies.posting import Delivery, ReplyKit
from bot.streaming import Conversation, deliver
from core.application.service import InThread
from core.domain import Thread

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class AssistantThread:
    """Bolt's utilities for the assistant thread a message came in (`set_status`, `set_title`)."""

    set_status: Callable[[str], Any]
    set_title: Callable[[str], Any]


class Conversations:
    def __init__(self, kit: ReplyKit, *, claims: EventClaims) -> None:
        self._kit = kit
        self._events = claims

    def conversation(self, ids: SignedIds, *, event: Delivery, place: Conversation, text: str,
                     channel_in_view: Callable[[], str | None] | None = None,
                     assistant: AssistantThread | None = None, message_ts: str | None = None,
                     conversation_ts: str = "") -> None:
        """Answer the message once per event id: the claim comes before any Web API call, so a redelivery
        repeats none of them. `channel_in_view`: the assistant thread's channel, a Web API lookup.
        `conversation_ts`: the message's thread ("" for the top level of a DM); `message_ts`: its own id."""
        message_ts = message_ts or place.thread_ts
        in_thread = InThread(thread=Thread(workspace_id=ids.team_id, channel_id=place.channel_id,
                                           thread_id=conversation_ts), message_id=message_ts)
        payload = {"kind": "conversation", "user_id": ids.user_id, "team_id": ids.team_id,
                   "enterprise_id": ids.enterprise_id, "channel_id": place.channel_id,
                   "thread_ts": place.thread_ts, "text": text, "message_ts": message_ts,
                   "conversation": conversation_ts}
        try:
            mine = self._events.claim(event.event_id, payload=payload, retry=event.retry)
        except Exception:
            self._post_unavailable(place)
            raise
        if mine:
            with self._events.holding(event.event_id):
                self.answer_or_apologise(ids, place=place, text=text,
                                         context_channel=_looked_up(channel_in_view, place),
                                         assistant=assistant, in_thread=in_thread)

    def answer_or_apologise(self, ids: SignedIds, *, place: Conversation, text: str, context_channel: str | None,
                            assistant: AssistantThread | None = None, in_thread: InThread | None = None) -> None:
        """The answer, or (when it fails) the word that none is coming; also for a resumed event."""
        try:
            self._answer(ids, place=place, text=text, context_channel=context_channel, assistant=assistant,
                         in_thread=in_thread)
        except Exception:
            self._post_unavailable(place)
            raise

    def greet(self, ids: SignedIds, *, say: Callable[..., Any], set_suggested_prompts: Callable[..., Any]) -> None:
        """An assistant thread starts: greet, and suggest questions about the newest documents the asker may
        see."""
        principal = self._kit.identity.principal(ids)
        if principal is None:
            return
        documents = self._kit.service.documents(AudiencePolicy.private(principal))
        say(text=views.greeting(documents))
        prompts = views.suggested_prompts(documents)
        if prompts:
            set_suggested_prompts(prompts=prompts, title=views.PROMPTS_TITLE)

    def _answer(self, ids: SignedIds, *, place: Conversation, text: str, context_channel: str | None,
                assistant: AssistantThread | None, in_thread: InThread | None) -> None:
        kit = self._kit
        principal = kit.identity.principal(ids)
        if principal is None:
            return
        if assistant is not None:
            assistant.set_status(views.READING_STATUS)
            assistant.set_title(views.thread_title(text))
        audience = (kit.audience.narrowed_to(principal, context_channel) if context_channel
                    else AudiencePolicy.private(principal))
        outcome = kit.ask(text, principal, audience, ids=ids, channel_id=place.channel_id, in_thread=in_thread)
        message = kit.render(outcome, text, principal, place.channel_id, in_thread=in_thread)

        def replaced(reason: str) -> None:
            kit.service.streamed_answer_replaced(outcome.correlation_id, reason)

        deliver(kit.client, place, outcome, message, stream=kit.service.streams_answers, replaced=replaced)

    def _post_unavailable(self, place: Conversation) -> None:
        unavailable = blocks.notice(blocks.UNAVAILABLE)
        with suppress(SlackApiError, OSError):
            self._kit.client.chat_postMessage(channel=place.channel_id, thread_ts=place.thread_ts,
                                              text=unavailable.text, blocks=unavailable.block_dicts())


def _looked_up(channel_in_view: Callable[[], str | None] | None, place: Conversation) -> str | None:
    """The channel an assistant thread is looking at; None when there is none, or the lookup failed: the reply
    then uses the asker's own audience (only the asker reads it) rather than leaving the question unanswered."""
    if channel_in_view is None:
        return None
    try:
        return channel_in_view()
    except Exception as error:  # a Web API call (conversations.replies) that may fail in any way
        log.warning("thread context of %s unreadable (%s); answering for the asker alone", place.channel_id,
                    type(error).__name__)
        return None
