"""`/ask` and the message shortcut "Ask Sourced": replies only the asker reads, so each uses everything the
asker may see."""

import logging

from slack_sdk.errors import SlackApiError

from bot import blocks
from bot.audience import AudiencePolicy
from bot.identity import SignedIds
from bot.replies.posting import ReplyKit, Respond, ephemeral, error_code
from bot.still_working import StillWorking

log = logging.getLogger(__name__)


class PrivateReplies:
    def __init__(self, kit: ReplyKit, *, working_after_s: float) -> None:
        self._kit = kit
        self._working_after_s = working_after_s

    def command(self, ids: SignedIds, *, channel_id: str | None, text: str, respond: Respond) -> None:
        """`/ask`: an ephemeral reply through `respond`, after a notice if it takes a while."""
        kit = self._kit
        principal = kit.identity.principal(ids)
        if principal is None:
            return
        audience = AudiencePolicy.private(principal)

        def say_still_working() -> bool:
            respond(**ephemeral(blocks.notice(blocks.STILL_WORKING)))
            return True

        with StillWorking(after_s=self._working_after_s, say=say_still_working) as working:
            outcome = kit.ask(text, principal, audience, ids=ids, channel_id=channel_id)
        shareable = channel_id is not None and not channel_id.startswith("D")
        message = kit.render(outcome, text, principal, channel_id, shareable=shareable)
        respond(text=message.text, blocks=message.block_dicts(), response_type="ephemeral",
                replace_original=working.said is not None)

    def about_message(self, ids: SignedIds, *, channel_id: str | None, text: str) -> None:
        """The message shortcut's question: privately, in the channel the message is in, else as a DM."""
        kit = self._kit
        principal = kit.identity.principal(ids)
        if principal is None:
            return
        outcome = kit.ask(text, principal, AudiencePolicy.private(principal), ids=ids, channel_id=channel_id)
        message = kit.render(outcome, text, principal, channel_id)
        if channel_id is not None:
            try:
                kit.client.chat_postEphemeral(channel=channel_id, user=ids.user_id, text=message.text,
                                              blocks=message.block_dicts())
                return
            except SlackApiError as error:  # e.g. not_in_channel: the app's own DM still reaches the person
                log.info("shortcut reply in %s failed (%s); sending it as a DM", channel_id, error_code(error))
        kit.client.chat_postMessage(channel=ids.user_id, text=message.text, blocks=message.block_dicts())
