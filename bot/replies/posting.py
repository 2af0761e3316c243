"""What every reply surface shares: the door and the Slack pieces a reply uses (`ReplyKit`), asking and rendering,
and the small helpers that post (an ephemeral body, the apology, Slack's error code).

The surface decides who asks (the signed ids, resolved) and who will read the reply (the audience), once; the
same audience scopes the question and the place the reply goes. Logs name ids, kinds and correlation ids, never
what the person typed.
"""

import logging
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import blocks
from bot.audience import AudiencePolicy
from bot.blocks import Message
from bot.identity import IdentityResolver, SignedIds
from core.application.conversation import ThreadMessage
from core.application.orchestrator import Question
from core.application.service import InThread, Service
from core.domain import Audience, Clarify, Outcome, Principal, presented_kind

log = logging.getLogger(__name__)

Respond = Callable[..., Any]
"""Bolt's `respond`: posts to the request's `response_url` (ephemeral by default)."""


@dataclass(frozen=True, kw_only=True)
class Delivery:
    """One delivery of an event: its id, and Slack's retry number when it is a redelivery."""

    event_id: str
    retry: str | None = None


@dataclass(frozen=True, kw_only=True)
class ReplyKit:
    """What every surface's replies use: the front door, the Web API client, who asks (`identity`) and who
    reads a reply where (`audience`)."""

    service: Service
    client: WebClient
    identity: IdentityResolver
    audience: AudiencePolicy

    def question(self, text: str, principal: Principal, audience: Audience, *, ids: SignedIds,
                 channel_id: str | None) -> Question:
        return Question(text=text, principal=principal, audience=audience, workspace_id=ids.team_id,
                        channel_id=channel_id)

    def ask(self, text: str, principal: Principal, audience: Audience, *, ids: SignedIds, channel_id: str | None,
            in_thread: InThread | None = None, unanswered: Sequence[ThreadMessage] = ()) -> Outcome:
        """Ask the door for `audience`; a turn of a conversation goes `in_thread`."""
        question = self.question(text, principal, audience, ids=ids, channel_id=channel_id)
        outcome = self.service.ask(question, in_thread=in_thread, unanswered=unanswered)
        log_reply(outcome, channel_id)
        return outcome

    def render(self, outcome: Outcome, question: str, principal: Principal, channel_id: str | None, *,
               in_channel: bool = False, shareable: bool = False, in_thread: InThread | None = None) -> Message:
        """Render; a clarifying question is first kept until its asker chooses, and its buttons carry its id
        (and the thread, whose next turn the choice becomes)."""
        clarification_id = None
        if isinstance(outcome, Clarify):
            clarification_id = self.service.await_choice(
                outcome, question=question, asker=principal.user_id, channel_id=channel_id,
                thread_id=in_thread.thread.thread_id if in_thread is not None else None)
        return blocks.render(outcome, question=question, clarification_id=clarification_id,
                             shareable=shareable and outcome.kind == "answered", in_channel=in_channel)


def log_reply(outcome: Outcome, channel_id: str | None) -> None:
    """One line per reply: its decision, where, and the kind it presents."""
    log.info("reply %s in %s: %s%s", outcome.correlation_id, channel_id or "-", presented_kind(outcome),
             " (read as a follow-up)" if outcome.reading else "")


def apologise(respond: Respond) -> None:
    with suppress(Exception):  # the reply already failed; a failed apology must not hide why
        respond(**ephemeral(blocks.notice(blocks.UNAVAILABLE)), replace_original=False)


def ephemeral(message: Message) -> dict[str, Any]:
    return {"text": message.text, "blocks": message.block_dicts(), "response_type": "ephemeral"}


def error_code(error: SlackApiError) -> str:
    return str(error.response.get("error")) if error.response is not None else str(error)
