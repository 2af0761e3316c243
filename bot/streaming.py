"""A reply in a conversation (a DM or an assistant thread): streamed when a generative model answered, else
posted once.

The whole envelope is parsed and every claim checked by the core before the first word is shown: `found`, the
text and the citations are all known when streaming starts, so a refusal is never streamed (it is posted once,
from code) and the guard cannot reject anything after a word is visible. What streaming adds is the feel of a
reply being written; the answer's sources and buttons arrive with the last call (`chat.stopStream`'s blocks).

What can still fail after the first word is Slack itself (a stop refused, a connection dropped): the message
would then show prose without its sources, so it is replaced by a notice from code (`chat.update`) and the
caller records that in the audit. Where Slack will not stream at all (an error before anything is visible, e.g.
`not_allowed` or `unknown_method`), the reply is posted with `chat.postMessage` instead.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from bot import blocks
from bot.blocks import Message
from core.domain import Answered, Outcome

log = logging.getLogger(__name__)

STREAM_PIECE_CHARS: Final = 60
"""About a short line per `chat.appendStream`: a visible stream, with few calls for the answers we give."""

Delivery = Literal["streamed", "posted", "replaced"]


@dataclass(frozen=True, kw_only=True)
class Conversation:
    """Where a reply goes, and who reads it (Slack's streaming methods want the recipient)."""

    channel_id: str
    thread_ts: str
    user_id: str
    team_id: str | None


def deliver(client: WebClient, conversation: Conversation, outcome: Outcome, message: Message, *,
            stream: bool, replaced: Callable[[str], None]) -> Delivery:
    """Stream an answer when `stream` (a generative model), else post `message`. `replaced(reason)` is called
    when a stream that had started was replaced by a notice."""
    if stream and isinstance(outcome, Answered):
        return _stream(client, conversation, outcome, message, replaced)
    _post(client, conversation, message)
    return "posted"


def _stream(client: WebClient, conversation: Conversation, outcome: Answered, message: Message,
            replaced: Callable[[str], None]) -> Delivery:
    footer = [block.to_dict() for block in blocks.answer_footer(outcome)]  # built (and validated) up front
    streamer = client.chat_stream(channel=conversation.channel_id, thread_ts=conversation.thread_ts,
                                  recipient_user_id=conversation.user_id,
                                  recipient_team_id=conversation.team_id, buffer_size=1)
    reading = blocks.reading_markdown(outcome)
    try:
        if reading is not None:  # the reading first: it says which question the words that follow answer
            streamer.append(markdown_text=reading + "\n\n")
        for piece in blocks.answer_pieces(outcome, size=STREAM_PIECE_CHARS):
            streamer.append(markdown_text=piece)
        streamer.stop(blocks=footer)
    except (SlackClientError, OSError) as error:
        reason = _reason(error)
        if streamer.ts is None:
            log.info("streaming unavailable in %s (%s); posting the reply", conversation.channel_id, reason)
            _post(client, conversation, message)
            return "posted"
        log.warning("stream %s failed after it started (%s); replacing it", outcome.correlation_id, reason)
        notice = blocks.notice(blocks.UNAVAILABLE)
        client.chat_update(channel=conversation.channel_id, ts=streamer.ts, text=notice.text,
                           blocks=notice.block_dicts())
        replaced(reason)
        return "replaced"
    return "streamed"


def _post(client: WebClient, conversation: Conversation, message: Message) -> None:
    client.chat_postMessage(channel=conversation.channel_id, thread_ts=conversation.thread_ts,
                            text=message.text, blocks=message.block_dicts())


def _reason(error: Exception) -> str:
    if isinstance(error, SlackApiError) and error.response is not None:
        return str(error.response.get("error"))
    return type(error).__name__
