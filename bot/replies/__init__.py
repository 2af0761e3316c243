"""What happens after a listener has acknowledged: identity, audience, the core's door, rendering, delivery.

One module per surface, as `bot.listeners` has one package per kind of request: `mentions` (channel mentions),
`conversations` (DMs and the assistant panel), `private` (`/ask` and the message shortcut), `buttons` (block
actions), `home` (the App Home tab); what they share is in `posting`. Each asks `core.application.service`,
the one door into the core, and nothing else of it. `Replies` holds them all, with the reply pool and the
exactly-once claims of events.
"""

from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient

from bot.audience import AudiencePolicy
from bot.exactly_once import EventClaims
from bot.identity import IdentityResolver, SignedIds
from bot.replies.buttons import Buttons
from bot.replies.conversations import Conversations
from bot.replies.home import HomeTab
from bot.replies.mentions import Mentions
from bot.replies.posting import Delivery, ReplyKit, Respond, apologise
from bot.replies.private import PrivateReplies
from bot.streaming import Conversation
from bot.work import ReplyWorkers
from core.application.service import InThread, Service
from core.domain import Thread


class Replies:
    def __init__(self, *, service: Service, client: WebClient, identity: IdentityResolver,
                 audience: AudiencePolicy, workers: ReplyWorkers, claims: EventClaims,
                 working_after_s: float, bot_user_id: str | None = None) -> None:
        kit = ReplyKit(service=service, client=client, identity=identity, audience=audience)
        self._workers = workers
        self._events = claims
        self.mentions = Mentions(kit, claims=claims, working_after_s=working_after_s, bot_user_id=bot_user_id)
        self.conversations = Conversations(kit, claims=claims)
        self.private = PrivateReplies(kit, working_after_s=working_after_s)
        self.buttons = Buttons(kit)
        self.home = HomeTab(kit)

    def submit(self, job: str, work: Callable[[], object], *, respond: Respond | None = None) -> None:
        """Hand work to the reply pool; the listener returns, and Slack gets its acknowledgement.

        If the work fails (Slack or the database down), the person is told so through `respond`."""

        def guarded() -> None:
            try:
                work()
            except Exception:
                if respond is not None:
                    apologise(respond)
                raise

        self._workers.submit(job, guarded)

    def once(self, event: Delivery, kind: str, work: Callable[[], None]) -> None:
        """Run `work` for the first delivery of an event only. Its claim keeps no question: an event of this
        kind whose worker died is not resumed (a greeting or a saved context matters less than a duplicate)."""
        if self._events.claim(event.event_id, payload={"kind": kind}, retry=event.retry):
            with self._events.holding(event.event_id):
                work()

    def resume(self, event_id: str, payload: dict[str, Any]) -> None:
        """Answer an event whose first worker died before replying (`bot.exactly_once.Sweeper`), on the pool."""
        kind = payload.get("kind")
        if kind not in ("mention", "conversation"):
            self._events.give_up(event_id)
            return
        ids = SignedIds(user_id=str(payload["user_id"]), team_id=payload.get("team_id"),
                        enterprise_id=payload.get("enterprise_id"))
        channel_id, thread_ts, text = str(payload["channel_id"]), str(payload["thread_ts"]), str(payload["text"])
        message_ts = str(payload.get("message_ts") or thread_ts)  # claims made before follow-ups have none

        def work() -> None:
            with self._events.holding(event_id):
                if kind == "mention":
                    self.mentions.answer_or_apologise(ids, channel_id=channel_id, thread_ts=thread_ts, text=text,
                                                      message_ts=message_ts)
                    return
                place = Conversation(channel_id=channel_id, thread_ts=thread_ts, user_id=ids.user_id,
                                     team_id=ids.team_id)
                in_thread = InThread(thread=Thread(workspace_id=ids.team_id, channel_id=channel_id,
                                                   thread_id=str(payload.get("conversation") or "")),
                                     message_id=message_ts)
                # the channel in view was never looked up (or the lookup died with the worker): the asker's own
                # audience, as when the lookup fails, is what only the asker reads
                self.conversations.answer_or_apologise(
                    ids, place=place, text=text, context_channel=payload.get("context"),
                    in_thread=in_thread if "conversation" in payload else None)

        self._workers.submit("resume", work)
