"""What happens after a listener has acknowledged: identity, audience, the core, rendering, delivery.

One method per kind of request. Each resolves the person from the signed ids, decides the audience once,
asks the core with that audience, and delivers the rendered outcome where that audience reads it. Logs name
ids, kinds and correlation ids, never what the person typed.
"""

import logging
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import blocks, views
from bot.audience import AudiencePolicy
from bot.blocks import Message
from bot.exactly_once import EventClaims
from bot.identity import IdentityResolver, SignedIds
from bot.mentions import strip_mention
from bot.still_working import StillWorking
from bot.streaming import Conversation, deliver
from bot.work import ReplyWorkers
from core.application.audit import user_reference
from core.application.conversation import ThreadMessage
from core.application.feedback import Click, why_not_counted
from core.application.language.shape import MAX_QUESTION_LENGTH
from core.application.orchestrator import Question
from core.application.ports import PendingClarification
from core.bootstrap import Sourced
from core.domain import Audience, Clarify, Outcome, Passage, Principal, Refused, Thread, presented_kind

log = logging.getLogger(__name__)

Respond = Callable[..., Any]
"""Bolt's `respond`: posts to the request's `response_url` (ephemeral by default)."""
Verdict = Literal["helpful", "not_helpful"]
"""A reader's verdict on a whole reply; a closest passage's button says `answered_it`."""
THREAD_MESSAGES: Final = 5
"""Messages of a thread Sourced is called into that it reads: the thread's first, and the latest before the
mention."""
THREAD_PAGE: Final = 100


@dataclass(frozen=True, kw_only=True)
class Delivery:
    """One delivery of an event: its id, and Slack's retry number when it is a redelivery."""

    event_id: str
    retry: str | None = None


@dataclass(frozen=True, kw_only=True)
class AssistantThread:
    """Bolt's utilities for the assistant thread a message came in (`set_status`, `set_title`)."""

    set_status: Callable[[str], Any]
    set_title: Callable[[str], Any]


@dataclass(frozen=True, kw_only=True)
class Turned:
    """Where a question is a turn of a conversation: its thread, and the id of the message that asked it."""

    thread: Thread
    message_id: str


@dataclass(frozen=True, kw_only=True)
class Place:
    """The message a button was clicked on, from the action payload (`container`, `channel`, `message`)."""

    channel_id: str | None
    message_ts: str | None
    is_ephemeral: bool
    blocks: Sequence[dict[str, Any]] = field(default_factory=tuple)
    text: str = ""


class Replies:
    def __init__(self, *, sourced: Sourced, client: WebClient, identity: IdentityResolver,
                 audience: AudiencePolicy, workers: ReplyWorkers, claims: EventClaims,
                 working_after_s: float, bot_user_id: str | None = None) -> None:
        self._sourced = sourced
        self._bot_user_id = bot_user_id
        self._working_after_s = working_after_s
        self._events = claims
        self._client = client
        self._identity = identity
        self._audience = audience
        self._workers = workers
        key = sourced.settings.user_hash_key
        self._user_hash_key = key.get_secret_value().encode() if key else None

    def submit(self, job: str, work: Callable[[], object], *, respond: Respond | None = None) -> None:
        """Hand work to the reply pool; the listener returns, and Slack gets its acknowledgement.

        If the work fails (Slack or the database down), the person is told so through `respond`."""

        def guarded() -> None:
            try:
                work()
            except Exception:
                if respond is not None:
                    _apologise(respond)
                raise

        self._workers.submit(job, guarded)

    # -- questions -------------------------------------------------------------------------------------

    def mention(self, ids: SignedIds, *, event: Delivery, channel_id: str, thread_ts: str, text: str,
                message_ts: str | None = None) -> None:
        """Answer in the thread, for everyone who can read the channel; say so privately if that fails.
        A redelivered event is dropped here, before any work. `message_ts`: the mention's own message (the
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
                self._mention_or_apologise(ids, channel_id=channel_id, thread_ts=thread_ts, text=text,
                                           message_ts=message_ts)

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
                    self._mention_or_apologise(ids, channel_id=channel_id, thread_ts=thread_ts, text=text,
                                               message_ts=message_ts)
                    return
                place = Conversation(channel_id=channel_id, thread_ts=thread_ts, user_id=ids.user_id,
                                     team_id=ids.team_id)
                turned = Turned(thread=Thread(workspace_id=ids.team_id, channel_id=channel_id,
                                              thread_id=str(payload.get("conversation") or "")),
                                message_id=message_ts)
                # the channel in view was never looked up (or the lookup died with the worker): the asker's own
                # audience, as when the lookup fails, is what only the asker reads
                self._converse_or_apologise(ids, place=place, text=text, context_channel=payload.get("context"),
                                            turned=turned if "conversation" in payload else None)

        self._workers.submit("resume", work)

    def _mention_or_apologise(self, ids: SignedIds, *, channel_id: str, thread_ts: str, text: str,
                              message_ts: str) -> None:
        try:
            self._answer_mention(ids, channel_id=channel_id, thread_ts=thread_ts, text=text, message_ts=message_ts)
        except Exception:
            self._tell_unavailable(ids, channel_id=channel_id, thread_ts=thread_ts)
            raise

    def _tell_unavailable(self, ids: SignedIds, *, channel_id: str, thread_ts: str) -> None:
        """Privately, in the thread: the question will not be answered now."""
        unavailable = blocks.notice(blocks.UNAVAILABLE)
        with suppress(SlackApiError, OSError):
            self._client.chat_postEphemeral(channel=channel_id, user=ids.user_id, thread_ts=thread_ts,
                                            text=unavailable.text, blocks=unavailable.block_dicts())

    def _answer_mention(self, ids: SignedIds, *, channel_id: str, thread_ts: str, text: str,
                        message_ts: str) -> None:
        """A mention inside a thread is asked with the thread: its earlier messages that Sourced did not answer
        (read from Slack) and its turns that Sourced did (from our records); the mention's words refine them."""
        principal = self._identity.principal(ids)
        if principal is None:
            return
        audience = self._audience.for_channel(principal, channel_id)
        turned = Turned(thread=Thread(workspace_id=ids.team_id, channel_id=channel_id, thread_id=thread_ts),
                        message_id=message_ts)
        unanswered = self._thread_messages(channel_id, thread_ts, before=message_ts) if message_ts != thread_ts else []
        notice = blocks.notice(blocks.STILL_WORKING)

        def say_still_working() -> str:
            posted = self._client.chat_postMessage(channel=channel_id, thread_ts=thread_ts, text=notice.text,
                                                   blocks=notice.block_dicts())
            return str(posted["ts"])

        with StillWorking(after_s=self._working_after_s, say=say_still_working) as working:
            outcome = self._ask(text, principal, audience, ids=ids, channel_id=channel_id, turned=turned,
                                unanswered=unanswered)
        message = self._message(outcome, text, principal, channel_id,
                                in_channel=not self._audience.is_direct(channel_id), turned=turned)
        if isinstance(outcome, Refused) and outcome.kind == "invalid_query":
            if working.said is not None:  # the notice is public; this message is for the asker alone
                self._client.chat_delete(channel=channel_id, ts=working.said)
            self._client.chat_postEphemeral(channel=channel_id, user=ids.user_id, thread_ts=thread_ts,
                                            text=message.text, blocks=message.block_dicts())
            return
        if working.said is not None:
            self._client.chat_update(channel=channel_id, ts=working.said, text=message.text,
                                     blocks=message.block_dicts())
            return
        self._client.chat_postMessage(channel=channel_id, thread_ts=thread_ts, text=message.text,
                                      blocks=message.block_dicts())

    def conversation(self, ids: SignedIds, *, event: Delivery, place: Conversation, text: str,
                     channel_in_view: Callable[[], str | None] | None = None,
                     assistant: AssistantThread | None = None, message_ts: str | None = None,
                     conversation_ts: str = "") -> None:
        """A DM, or a message in an assistant thread: only the asker reads the reply, so it uses what the asker
        may see, narrowed to the audience of the channel the person is looking at when the assistant thread has
        one (`channel_in_view`, a Web API lookup). Once per event id, as for mentions: the claim comes before
        any Web API call, so a redelivery repeats none of them. The message is a turn of its conversation:
        `conversation_ts`, its thread ("" for the top level of a DM), and `message_ts`, its own id; follow-ups
        are read against the turns before it."""
        message_ts = message_ts or place.thread_ts
        turned = Turned(thread=Thread(workspace_id=ids.team_id, channel_id=place.channel_id,
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
                self._converse_or_apologise(ids, place=place, text=text,
                                            context_channel=_looked_up(channel_in_view, place),
                                            assistant=assistant, turned=turned)

    def once(self, event: Delivery, kind: str, work: Callable[[], None]) -> None:
        """Run `work` for the first delivery of an event only. Its claim keeps no question: an event of this
        kind whose worker died is not resumed (a greeting or a saved context matters less than a duplicate)."""
        if self._events.claim(event.event_id, payload={"kind": kind}, retry=event.retry):
            with self._events.holding(event.event_id):
                work()

    def _converse_or_apologise(self, ids: SignedIds, *, place: Conversation, text: str,
                               context_channel: str | None, assistant: AssistantThread | None = None,
                               turned: Turned | None = None) -> None:
        try:
            self._converse(ids, place=place, text=text, context_channel=context_channel, assistant=assistant,
                           turned=turned)
        except Exception:
            self._post_unavailable(place)
            raise

    def _converse(self, ids: SignedIds, *, place: Conversation, text: str, context_channel: str | None,
                  assistant: AssistantThread | None, turned: Turned | None) -> None:
        principal = self._identity.principal(ids)
        if principal is None:
            return
        if assistant is not None:
            assistant.set_status(views.READING_STATUS)
            assistant.set_title(views.thread_title(text))
        audience = (self._audience.narrowed_to(principal, context_channel) if context_channel
                    else AudiencePolicy.private(principal))
        outcome = self._ask(text, principal, audience, ids=ids, channel_id=place.channel_id, turned=turned)
        message = self._message(outcome, text, principal, place.channel_id, turned=turned)

        def replaced(reason: str) -> None:
            self._sourced.audit_log.note(outcome.correlation_id, f"streamed answer replaced: {reason}")

        deliver(self._client, place, outcome, message, stream=self._sourced.settings.model != "extractive",
                replaced=replaced)

    def _post_unavailable(self, place: Conversation) -> None:
        unavailable = blocks.notice(blocks.UNAVAILABLE)
        with suppress(SlackApiError, OSError):
            self._client.chat_postMessage(channel=place.channel_id, thread_ts=place.thread_ts,
                                          text=unavailable.text, blocks=unavailable.block_dicts())

    def about_message(self, ids: SignedIds, *, channel_id: str | None, text: str) -> None:
        """The message shortcut's question: privately to the person who asked, from what they may see."""
        principal = self._identity.principal(ids)
        if principal is None:
            return
        outcome = self._ask(text, principal, AudiencePolicy.private(principal), ids=ids, channel_id=channel_id)
        message = self._message(outcome, text, principal, channel_id)
        if channel_id is not None:
            try:
                self._client.chat_postEphemeral(channel=channel_id, user=ids.user_id, text=message.text,
                                                blocks=message.block_dicts())
                return
            except SlackApiError as error:  # e.g. not_in_channel: the app's own DM still reaches the person
                log.info("shortcut reply in %s failed (%s); sending it as a DM", channel_id, _code(error))
        self._client.chat_postMessage(channel=ids.user_id, text=message.text, blocks=message.block_dicts())

    # -- the assistant thread and the Home tab ---------------------------------------------------------

    def thread_started(self, ids: SignedIds, *, say: Callable[..., Any],
                       set_suggested_prompts: Callable[..., Any]) -> None:
        """Greet, and suggest questions about the newest documents the asker may see."""
        principal = self._identity.principal(ids)
        if principal is None:
            return
        documents = self._sourced.catalog.documents(AudiencePolicy.private(principal))
        say(text=views.greeting(documents))
        prompts = views.suggested_prompts(documents)
        if prompts:
            set_suggested_prompts(prompts=prompts, title=views.PROMPTS_TITLE)

    def publish_home(self, ids: SignedIds) -> None:
        """The Home tab for this person: what they may ask about, and for operators last week's decisions."""
        principal = self._identity.principal(ids)
        if principal is None:
            return
        documents = self._sourced.catalog.documents(AudiencePolicy.private(principal))
        operators = set(self._sourced.config.operators)
        is_operator = bool(operators & principal.roles)
        activity = self._sourced.activity.since(views.activity_start()) if is_operator else None
        sources = self._sourced.connector_state.statuses(
            [entry.name for entry in self._sourced.config.connectors]) if is_operator else []
        self._client.views_publish(user_id=ids.user_id,
                                   view=views.home_view(documents, activity, sources).to_dict())

    def command(self, ids: SignedIds, *, channel_id: str | None, text: str, respond: Respond) -> None:
        """`/ask`: an ephemeral reply only the asker reads, so it uses everything the asker may see."""
        principal = self._identity.principal(ids)
        if principal is None:
            return
        audience = AudiencePolicy.private(principal)

        def say_still_working() -> bool:
            respond(**_ephemeral(blocks.notice(blocks.STILL_WORKING)))
            return True

        with StillWorking(after_s=self._working_after_s, say=say_still_working) as working:
            outcome = self._ask(text, principal, audience, ids=ids, channel_id=channel_id)
        shareable = channel_id is not None and not channel_id.startswith("D")
        message = self._message(outcome, text, principal, channel_id, shareable=shareable)
        respond(text=message.text, blocks=message.block_dicts(), response_type="ephemeral",
                replace_original=working.said is not None)

    # -- buttons ---------------------------------------------------------------------------------------

    def clarify(self, ids: SignedIds, *, value: str, place: Place, respond: Respond) -> None:
        """Answer the chosen reading for whoever clicked, with their roles and the message's audience, in
        place of the clarifying question. Only a live pending record makes a click count."""
        taken = self._take_reading(value)
        if taken is None:
            respond(**_ephemeral(blocks.notice(blocks.EXPIRED)))
            return
        refined, pending = taken
        principal = self._identity.principal(ids)
        if principal is None:
            return
        in_channel = self._in_channel(place)
        audience = (self._audience.for_channel(principal, place.channel_id) if in_channel and place.channel_id
                    else AudiencePolicy.private(principal))
        outcome = self._ask(refined, principal, audience, ids=ids, channel_id=place.channel_id)
        if pending.thread_ts is not None and pending.channel_id is not None:  # the choice is the thread's next turn
            thread = Thread(workspace_id=ids.team_id, channel_id=pending.channel_id, thread_id=pending.thread_ts)
            self._sourced.conversations.remember(thread, message_id=place.message_ts or pending.id, question=refined,
                                                 outcome=outcome)
        message = self._message(outcome, refined, principal, place.channel_id, in_channel=in_channel)
        self._replace(place, message, respond)

    def share(self, ids: SignedIds, *, question: str, place: Place, respond: Respond) -> None:
        """Ask again for the channel's audience; post only an answer that audience may see."""
        principal = self._identity.principal(ids)
        if principal is None or place.channel_id is None:
            return
        audience = self._audience.for_channel(principal, place.channel_id)
        outcome = self._ask(question, principal, audience, ids=ids, channel_id=place.channel_id)
        if isinstance(outcome, Refused) and outcome.kind == "invalid_query":  # a tampered button: say what
            respond(**_ephemeral(blocks.notice(outcome.text)))  # was wrong, not that the channel may not see it
            return
        if outcome.kind != "answered":
            log.info("share withheld in %s: %s for the channel's audience (correlation %s)",
                     place.channel_id, presented_kind(outcome), outcome.correlation_id)
            respond(**_ephemeral(blocks.notice(blocks.NOT_SHARED)))
            return
        message = self._message(outcome, question, principal, place.channel_id, in_channel=True)
        try:
            self._client.chat_postMessage(channel=place.channel_id, text=message.text,
                                          blocks=message.block_dicts())
        except SlackApiError as error:
            log.warning("share into %s failed: %s", place.channel_id, _code(error))
            respond(**_ephemeral(blocks.notice(blocks.SHARE_FAILED)))
            return
        self._note(place, blocks.SHARE_BLOCK, blocks.SHARED, respond)

    def feedback(self, ids: SignedIds, *, correlation_id: str, verdict: Verdict, place: Place,
                 respond: Respond) -> None:
        """Store the verdict against the decision the button names, and thank the clicker."""
        self._rate(ids, correlation_id=correlation_id, verdict=verdict, chunk_id=None, place=place)
        self._thank(place, respond)

    def answered_it(self, ids: SignedIds, *, value: str, place: Place, respond: Respond) -> None:
        """"This answered it" on a closest passage: stored against the decision with the chunk it names."""
        named = blocks.parse_answered_it(value)
        if named is None:
            log.warning("feedback ignored: an unreadable button value")
        else:
            self._rate(ids, correlation_id=named.correlation_id, verdict="answered_it", chunk_id=named.chunk_id,
                       place=place)
        self._thank(place, respond)

    def _rate(self, ids: SignedIds, *, correlation_id: str, verdict: Verdict | Literal["answered_it"],
              chunk_id: str | None, place: Place) -> None:
        """A click counts only from a reader of the reply, about a chunk it showed, once per reader
        (`core.application.feedback`); anything else is ignored and logged (ids only). The clicker is thanked
        either way, so a forged click learns nothing about which decisions exist."""
        click = Click(reader=user_reference(ids.user_id, self._user_hash_key), channel_id=place.channel_id,
                      ephemeral=place.is_ephemeral)
        refused = why_not_counted(correlation_id, click, decisions=self._sourced.audit_log, chunk_id=chunk_id)
        if refused is not None:
            log.warning("feedback ignored: %s", refused)
        elif self._sourced.feedback.record(correlation_id, click.reader, verdict, chunk_id=chunk_id) is None:
            log.info("feedback ignored: decision %s already rated by this reader", correlation_id)

    def _thank(self, place: Place, respond: Respond) -> None:
        """On a message the clicker alone reads, the feedback buttons become the thanks; on one a channel reads,
        they stay for its other readers and the clicker is thanked privately."""
        if self._in_channel(place):
            respond(**_ephemeral(blocks.notice(blocks.THANKS)), replace_original=False)
            return
        self._note(place, blocks.FEEDBACK_BLOCK, blocks.THANKS, respond)

    def passage(self, ids: SignedIds, *, value: str, respond: Respond) -> None:
        """Show a cited passage to the clicker alone, and only if the clicker may see its document."""
        principal = self._identity.principal(ids)
        if principal is None:
            return
        found = self._find_passage(value, AudiencePolicy.private(principal))
        message = blocks.passage_message(found) if found else blocks.notice(blocks.PASSAGE_GONE)
        respond(**_ephemeral(message), replace_original=False)

    # -- steps -----------------------------------------------------------------------------------------

    def _ask(self, text: str, principal: Principal, audience: Audience, *, ids: SignedIds,
             channel_id: str | None, turned: Turned | None = None,
             unanswered: Sequence[ThreadMessage] = ()) -> Outcome:
        """Ask the core; a turn of a conversation goes with its thread's earlier turns, and is kept."""
        question = Question(text=text, principal=principal, audience=audience, workspace_id=ids.team_id,
                            channel_id=channel_id)
        if turned is None:
            outcome = self._sourced.orchestrator.ask(question)
        else:
            outcome = self._sourced.conversations.ask(question, thread=turned.thread, message_id=turned.message_id,
                                                      unanswered=unanswered)
        log.info("reply %s in %s: %s%s", outcome.correlation_id, channel_id or "-", presented_kind(outcome),
                 " (read as a follow-up)" if outcome.reading else "")
        return outcome

    def _thread_messages(self, channel_id: str, thread_ts: str, *, before: str) -> list[ThreadMessage]:
        """The messages of the thread before `before` that neither Sourced nor another bot wrote, read with
        `conversations.replies`: the thread's first and the latest few, each within the question's length. The
        reply goes to this same thread, so its readers are theirs. Unreadable (a scope the workspace did not
        grant, a channel Sourced is not in): the mention is read alone."""
        try:
            page = self._client.conversations_replies(channel=channel_id, ts=thread_ts, latest=before,
                                                      inclusive=False, limit=THREAD_PAGE)
        except SlackApiError as error:
            log.info("thread %s in %s: cannot read it (%s); reading the mention alone", thread_ts, channel_id,
                     _code(error))
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

    def _message(self, outcome: Outcome, question: str, principal: Principal, channel_id: str | None, *,
                 in_channel: bool = False, shareable: bool = False, turned: Turned | None = None) -> Message:
        """Render; a clarifying question first stores its pending record, whose id its buttons carry (and
        the thread, whose next turn the choice becomes)."""
        clarification_id = None
        if isinstance(outcome, Clarify):
            self._sourced.pending.purge_expired()
            clarification_id = self._sourced.pending.save(
                question=question, user_id=principal.user_id, channel_id=channel_id, options=outcome.options,
                thread_ts=turned.thread.thread_id if turned is not None else None).id
        return blocks.render(outcome, question=question, clarification_id=clarification_id,
                             shareable=shareable and outcome.kind == "answered", in_channel=in_channel)

    def _take_reading(self, value: str) -> tuple[str, PendingClarification] | None:
        """The refined question of a clarify click and its pending record, if that is live and matches the
        button."""
        choice = blocks.parse_clarify_value(value)
        if choice is None:
            return None
        self._sourced.pending.purge_expired()
        pending = self._sourced.pending.take(choice.clarification_id)
        if pending is None or not 0 <= choice.index < len(pending.options):
            return None
        refine = pending.options[choice.index].refine
        if choice.question is not None and choice.question != refine:
            log.warning("clarify click %s: button and pending record disagree", choice.clarification_id)
            return None
        return refine, pending

    def _in_channel(self, place: Place) -> bool:
        """Whether the clicked message is read by a channel (not ephemeral, not a DM)."""
        if place.is_ephemeral or place.channel_id is None:
            return False
        return not self._audience.is_direct(place.channel_id)

    def _find_passage(self, value: str, audience: Audience) -> Passage | None:
        """Through the index, scoped to `audience`: a passage the clicker may not see is never found."""
        reference = blocks.passage_chunk_id(value)
        if reference is None:
            return None
        return self._sourced.index.passage(reference, audience=audience)

    def _replace(self, place: Place, message: Message, respond: Respond) -> None:
        """The clicked message becomes `message`: in place in the channel, or through `response_url`."""
        if place.is_ephemeral or place.channel_id is None or place.message_ts is None:
            respond(text=message.text, blocks=message.block_dicts(), replace_original=True)
            return
        self._client.chat_update(channel=place.channel_id, ts=place.message_ts, text=message.text,
                                 blocks=message.block_dicts())

    def _note(self, place: Place, block_id: str, note: str, respond: Respond) -> None:
        """Replace one block of the clicked message by a short note (thanks, shared)."""
        if not place.blocks:
            respond(**_ephemeral(blocks.notice(note)), replace_original=place.is_ephemeral)
            return
        updated = blocks.replace_block(place.blocks, block_id, note)
        text = place.text or note
        if place.is_ephemeral or place.channel_id is None or place.message_ts is None:
            respond(text=text, blocks=updated, replace_original=True)
            return
        self._client.chat_update(channel=place.channel_id, ts=place.message_ts, text=text, blocks=updated)


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


def _written_by_a_person(message: dict[str, Any], bot_user_id: str | None) -> bool:
    """A person's own message: no bot wrote it, no subtype (joins, edits, bot posts), not Sourced's."""
    return (not message.get("bot_id") and message.get("subtype") is None and bool(message.get("user"))
            and message.get("user") != bot_user_id)


def _earlier(ts: str, than: str) -> bool:
    try:
        return float(ts) < float(than)
    except ValueError:
        return False


def _apologise(respond: Respond) -> None:
    with suppress(Exception):  # the reply already failed; a failed apology must not hide why
        respond(**_ephemeral(blocks.notice(blocks.UNAVAILABLE)), replace_original=False)


def _ephemeral(message: Message) -> dict[str, Any]:
    return {"text": message.text, "blocks": message.block_dicts(), "response_type": "ephemeral"}


def _code(error: SlackApiError) -> str:
    return str(error.response.get("error")) if error.response is not None else str(error)

