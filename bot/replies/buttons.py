"""`block_actions`: the buttons on Sourced's replies. A clarifying question's reading, sharing an answer into the
channel, a reader's verdict, the passage behind a citation.

A button's value is a claim the request carries, never a fact: each is checked against what the core holds (a
live clarification, the decision's audience, what the clicker may see).
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from slack_sdk.errors import SlackApiError

from bot import blocks
from bot.audience import AudiencePolicy
from bot.blocks import Message
from bot.identity import SignedIds
from bot.replies.posting import ReplyKit, Respond, ephemeral, error_code, log_reply
from core.application.service import Choice
from core.domain import Refused, presented_kind

log = logging.getLogger(__name__)

Verdict = Literal["helpful", "not_helpful"]
"""A reader's verdict on a whole reply; a closest passage's button says `answered_it`."""


@dataclass(frozen=True, kw_only=True)
class Place:
    """The message a button was clicked on, from the action payload (`container`, `channel`, `message`)."""

    channel_id: str | None
    message_ts: str | None
    is_ephemeral: bool
    blocks: Sequence[dict[str, Any]] = field(default_factory=tuple)
    text: str = ""


class Buttons:
    def __init__(self, kit: ReplyKit) -> None:
        self._kit = kit

    def clarify(self, ids: SignedIds, *, value: str, place: Place, respond: Respond) -> None:
        """Answer the chosen reading for whoever clicked, with their roles and the message's audience, in
        place of the clarifying question. Only a live clarification makes a click count."""
        choice = self._chosen(value)
        if choice is None:
            respond(**ephemeral(blocks.notice(blocks.EXPIRED)))
            return
        kit = self._kit
        principal = kit.identity.principal(ids)
        if principal is None:
            return
        in_channel = self._in_channel(place)
        audience = (kit.audience.for_channel(principal, place.channel_id) if in_channel and place.channel_id
                    else AudiencePolicy.private(principal))
        question = kit.question(choice.question, principal, audience, ids=ids, channel_id=place.channel_id)
        outcome = kit.service.answer_choice(question, choice, message_id=place.message_ts)
        log_reply(outcome, place.channel_id)
        message = kit.render(outcome, choice.question, principal, place.channel_id, in_channel=in_channel)
        self._replace(place, message, respond)

    def share(self, ids: SignedIds, *, question: str, place: Place, respond: Respond) -> None:
        """Ask again for the channel's audience; post only an answer that audience may see."""
        kit = self._kit
        principal = kit.identity.principal(ids)
        if principal is None or place.channel_id is None:
            return
        audience = kit.audience.for_channel(principal, place.channel_id)
        outcome = kit.ask(question, principal, audience, ids=ids, channel_id=place.channel_id)
        if isinstance(outcome, Refused) and outcome.kind == "invalid_query":  # a tampered button: say what
            respond(**ephemeral(blocks.notice(outcome.text)))  # was wrong, not that the channel may not see it
            return
        if outcome.kind != "answered":
            log.info("share withheld in %s: %s for the channel's audience (correlation %s)",
                     place.channel_id, presented_kind(outcome), outcome.correlation_id)
            respond(**ephemeral(blocks.notice(blocks.NOT_SHARED)))
            return
        message = kit.render(outcome, question, principal, place.channel_id, in_channel=True)
        try:
            kit.client.chat_postMessage(channel=place.channel_id, text=message.text, blocks=message.block_dicts())
        except SlackApiError as error:
            log.warning("share into %s failed: %s", place.channel_id, error_code(error))
            respond(**ephemeral(blocks.notice(blocks.SHARE_FAILED)))
            return
        self._note(place, blocks.SHARE_BLOCK, blocks.SHARED, respond)

    def feedback(self, ids: SignedIds, *, correlation_id: str, verdict: Verdict, place: Place,
                 respond: Respond) -> None:
        """Store the verdict against the decision the button names, and thank the clicker."""
        self._kit.service.rate(correlation_id, verdict, clicker=ids.user_id, channel_id=place.channel_id,
                               ephemeral=place.is_ephemeral)
        self._thank(place, respond)

    def answered_it(self, ids: SignedIds, *, value: str, place: Place, respond: Respond) -> None:
        """"This answered it" on a closest passage: stored against the decision with the chunk it names. The
        clicker is thanked either way, so a forged click learns nothing about which decisions exist."""
        named = blocks.parse_answered_it(value)
        if named is None:
            log.warning("feedback ignored: an unreadable button value")
        else:
            self._kit.service.rate(named.correlation_id, "answered_it", clicker=ids.user_id,
                                   channel_id=place.channel_id, ephemeral=place.is_ephemeral,
                                   chunk_id=named.chunk_id)
        self._thank(place, respond)

    def passage(self, ids: SignedIds, *, value: str, respond: Respond) -> None:
        """Show a cited passage to the clicker alone, and only if the clicker may see its document."""
        principal = self._kit.identity.principal(ids)
        if principal is None:
            return
        chunk_id = blocks.passage_chunk_id(value)
        found = (self._kit.service.passage(chunk_id, AudiencePolicy.private(principal)) if chunk_id is not None
                 else None)
        message = blocks.passage_message(found) if found else blocks.notice(blocks.PASSAGE_GONE)
        respond(**ephemeral(message), replace_original=False)

    def _chosen(self, value: str) -> Choice | None:
        """The reading a clarify button chose, if its clarification is live and agrees with the button."""
        choice = blocks.parse_clarify_value(value)
        if choice is None:
            return None
        return self._kit.service.take_choice(choice.clarification_id, choice.index, choice.question)

    def _thank(self, place: Place, respond: Respond) -> None:
        """On a message the clicker alone reads, the feedback buttons become the thanks; on one a channel reads,
        they stay for its other readers and the clicker is thanked privately."""
        if self._in_channel(place):
            respond(**ephemeral(blocks.notice(blocks.THANKS)), replace_original=False)
            return
        self._note(place, blocks.FEEDBACK_BLOCK, blocks.THANKS, respond)

    def _in_channel(self, place: Place) -> bool:
        """Whether the clicked message is read by a channel (not ephemeral, not a DM)."""
        if place.is_ephemeral or place.channel_id is None:
            return False
        return not self._kit.audience.is_direct(place.channel_id)

    def _replace(self, place: Place, message: Message, respond: Respond) -> None:
        """The clicked message becomes `message`: in place in the channel, or through `response_url`."""
        if place.is_ephemeral or place.channel_id is None or place.message_ts is None:
            respond(text=message.text, blocks=message.block_dicts(), replace_original=True)
            return
        self._kit.client.chat_update(channel=place.channel_id, ts=place.message_ts, text=message.text,
                                     blocks=message.block_dicts())

    def _note(self, place: Place, block_id: str, note: str, respond: Respond) -> None:
        """Replace one block of the clicked message by a short note (thanks, shared)."""
        if not place.blocks:
            respond(**ephemeral(blocks.notice(note)), replace_original=place.is_ephemeral)
            return
        updated = blocks.replace_block(place.blocks, block_id, note)
        text = place.text or note
        if place.is_ephemeral or place.channel_id is None or place.message_ts is None:
            respond(text=text, blocks=updated, replace_original=True)
            return
        self._kit.client.chat_update(channel=place.channel_id, ts=place.message_ts, text=text, blocks=updated)
