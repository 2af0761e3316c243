"""`app_mention`: a question asked in a channel, answered in its thread for everyone who can read the channel.

Once per event id: a redelivered event is dropped before any work. A mention inside a thread is asked with the
thread: its earlier messages that Sourced did not answer (read from Slack) and its turns that Sourced did (from
our records); the mention's words refine them.
"""

import logging
from contextlib import suppress
from typing import Any, Final

from slack_sdk.errors import SlackApiError

from bot import blocks
from bot.exactly_once import EventClaims
from bot.identity import SignedIds
from bot.mentions import strip_mention
from bot.replies.posting import Delivery, ReplyKit, error_code
from bot.still_working import StillWorking
from core.application.conversation import ThreadMessage
from core.application.language.shape import MAX_QUESTION_LENGTH
from core.application.service import InThread
from core.domain import Refused, Thread

log = logging.getLogger(__name__)

THREAD_MESSAGES: Final = 5
"""Messages of a thread Sourced is called into that it reads: the thread's first, and the latest before the
mention."""
THREAD_PAGE: Final = 100


class Mentions:
    def __init__(self, kit: ReplyKit, *, claims: EventClaims, working_after_s: float,
                 bot_user_id: str | None) -> None:
        self._kit = kit
        self._events = claims
        self._working_after_s = working_after_s
        self._bot_user_id = bot_user_id

    def mention(self, ids: SignedIds, *, event: Delivery, channel_id: str, thread_ts: str, text: str,
                message_ts: str | None = None) -> None:
        """Answer in the thread; say so privately if that fails. `message_ts`: the mention's own message (the
        thread's first when it is `thread_ts`)."""
        message_ts = message_ts or thread_ts
        payload = {"kind": "mention", "user_id": ids.user_id, "team_id": ids.team_id,
                   "enterprise_id": ids.enterprise_id, "channel_id": channel_id, "thread_ts": thread_ts, "text": text,
                   "message_ts": message_ts}
        try:
            mine = self._events.claim(event.event_id, payload=payload, retry=event.retry)
        except Exception:  # the database refuses the claim: no answer can be promised, so say so now
            self._tell_unavailable(ids, channel_id=channel_id, thread_ts=thread_ts)
            raise
        if mine:
            with self._events.holding(event.event_id):
                self.answer_or_apologise(ids, channel_id=channel_id, thread_ts=thread_ts, text=text,
                                         message_ts=message_ts)

    def answer_or_apologise(self, ids: SignedIds, *, channel_id: str, thread_ts: str, text: str,
                            message_ts: str) -> None:
        """The answer, or (when it fails) the private word that none is coming; also for a resumed event."""
        try:
            self._answer(ids, channel_id=channel_id, thread_ts=thread_ts, text=text, message_ts=message_ts)
        except Exception:
            self._tell_unavailable(ids, channel_id=channel_id, thread_ts=thread_ts)
            raise

    def _tell_unavailable(self, ids: SignedIds, *, channel_id: str, thread_ts: str) -> None:
        """Privately, in the thread: the question will not be answered now."""
        unavailable = blocks.notice(blocks.UNAVAILABLE)
        with suppress(SlackApiError, OSError):
            self._kit.client.chat_postEphemeral(channel=channel_id, user=ids.user_id, thread_ts=thread_ts,
                                                text=unavailable.text, blocks=unavailable.block_dicts())

    def _answer(self, ids: SignedIds, *, channel_id: str, thread_ts: str, text: str, message_ts: str) -> None:
        kit, client = self._kit, self._kit.client
        principal = kit.identity.principal(ids)
        if principal is None:
            return
        audience = kit.audience.for_channel(principal, channel_id)
        in_thread = InThread(thread=Thread(workspace_id=ids.team_id, channel_id=channel_id, thread_id=thread_ts),
                             message_id=message_ts)
        unanswered = self._thread_messages(channel_id, thread_ts, before=message_ts) if message_ts != thread_ts else []
        notice = blocks.notice(blocks.STILL_WORKING)

        def say_still_working() -> str:
            posted = client.chat_postMessage(channel=channel_id, thread_ts=thread_ts, text=notice.text,
                                             blocks=notice.block_dicts())
            return str(posted["ts"])

        with StillWorking(after_s=self._working_after_s, say=say_still_working) as working:
            outcome = kit.ask(text, principal, audience, ids=ids, channel_id=channel_id, in_thread=in_thread,
                              unanswered=unanswered)
        message = kit.render(outcome, text, principal, channel_id, in_channel=not kit.audience.is_direct(channel_id),
                             in_thread=in_thread)
        if isinstance(outcome, Refused) and outcome.kind == "invalid_query":
            if working.said is not None:  # the notice is public; this message is for the asker alone
                client.chat_delete(channel=channel_id, ts=working.said)
            client.chat_postEphemeral(channel=channel_id, user=ids.user_id, thread_ts=thread_ts,
                                      text=message.text, blocks=message.block_dicts())
            return
        if working.said is not None:
            client.chat_update(channel=channel_id, ts=working.said, text=message.text, blocks=message.block_dicts())
            return
        client.chat_postMessage(channel=channel_id, thread_ts=thread_ts, text=message.text,
                                blocks=message.block_dicts())

    def _thread_messages(self, channel_id: str, thread_ts: str, *, before: str) -> list[ThreadMessage]:
        """The messages of the thread before `before` that neither Sourced nor another bot wrote, read with
        `conversations.replies`: the thread's first and the latest few, each within the question's length. The
        reply goes to this same thread, so its readers are theirs. Unreadable (a scope the workspace did not
        grant, a channel Sourced is not in): the mention is read alone."""
        try:
            page = self._kit.client.conversations_replies(channel=channel_id, ts=thread_ts, latest=before,
                                                          inclusive=False, limit=THREAD_PAGE)
        except SlackApiError as error:
            log.info("thread %s in %s: cannot read it (%s); reading the mention alone", thread_ts, channel_id,
                     error_code(error))
            return []
        found = []
        for message in page.get("messages") or []:
            if not isinstance(message, dict) or not _written_by_a_person(message, self._bot_user_id):
                continue
            ts = str(message.get("ts") or "")
            text = strip_mention(str(message.get("text") or ""), self._bot_user_id)[:MAX_QUESTION_LENGTH]
            if ts and _earlier(ts, before) and text:
                found.append(ThreadMessage(message_id=ts, text=text))
        return found[:1] + found[1:][-(THREAD_MESSAGES - 1):]


def _written_by_a_person(message: dict[str, Any], bot_user_id: str | None) -> bool:
    """A person's own message: no bot wrote it, no subtype (joins, edits, bot posts), not Sourced's."""
    return (not message.get("bot_id") and message.get("subtype") is None and bool(message.get("user"))
            and message.get("user") != bot_user_id)


def _earlier(ts: str, than: str) -> bool:
    try:
        return float(ts) < float(than)
    except ValueError:
        return False
