"""Slack surfaces besides replies, through `slack_sdk.models`: the assistant thread's greeting, title and
suggested prompts, the App Home tab, and the message shortcut's modal.

Everything about documents here comes from `Catalog.documents` for the person's own audience, so a document
they may not see is in no title, prompt or count.
"""

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Final

from slack_sdk.models.blocks import (
    Block,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    InputBlock,
    MarkdownTextObject,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

from bot.blocks import owner_link
from bot.escaping import mrkdwn, plain
from bot.surface import View as ViewId
from core.application.catalog import (
    Activity,
    ConnectorStatus,
    DocumentSummary,
    counts_by_owner,
    last_ingest,
    newest_titles,
)
from core.application.language.shape import MAX_QUESTION_LENGTH
from core.connectors.convert import ID_SEPARATOR
from core.retrieval.ingest import plural

READING_STATUS: Final = "is reading the documents..."
PROMPTS_TITLE: Final = "Ask about your newest documents"
SUGGESTED_PROMPTS: Final = 3
TITLE_WORDS: Final = 8
TITLE_CHARS: Final = 60
ACTIVITY_DAYS: Final = 7
OWNERS_SHOWN: Final = 20
"""Owner lines on the Home tab; the rest are summed in one line, keeping the view within Slack's 100 blocks."""
QUESTION_BLOCK: Final = "question"
QUESTION_INPUT: Final = "text"
HOW_TO_ASK: Final = (
    "*How to ask*\n"
    "• Open the assistant panel (or message me here) and ask in your own words.\n"
    "• Mention @Sourced in a channel: the reply uses only documents everyone there may see.\n"
    "• `/ask your question` answers privately, from everything you may see.\n"
    "• On any message, *More actions → Ask Sourced* asks about that message.\n"
    "Every answer cites its sources. When the documents don't say, I tell you so and who can help."
)


# -- the assistant thread -----------------------------------------------------------------------------------

def greeting(documents: Sequence[DocumentSummary]) -> str:
    """What Sourced answers from, for this person: their document count and the owning channels."""
    if not documents:
        return ("Hi! I answer questions from your company's documents, with sources, but none are available "
                "to you yet.")
    owners = [owner_link(owner) for owner, _ in counts_by_owner(documents) if owner][:5]
    from_whom = f", owned by {', '.join(owners)} and others" if owners else ""
    return (f"Hi! I answer from {len(documents)} company documents you may see{from_whom}. Every answer cites "
            "its sources; when the documents don't say, I tell you so and who can help.")


def suggested_prompts(documents: Sequence[DocumentSummary]) -> list[dict[str, str]]:
    """Plain text: a prompt's message is posted as the person's own message when they choose it."""
    return [{"title": plain(title), "message": f"What does {plain(title)} say?"}
            for title in newest_titles(documents, limit=SUGGESTED_PROMPTS)]


def thread_title(question: str) -> str:
    """The thread's title, in plain text: the question's first words."""
    words = plain(question).split()
    title = " ".join(words[:TITLE_WORDS])
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1].rstrip()
    return title + ("…" if len(words) > TITLE_WORDS or len(title) < len(" ".join(words)) else "")


# -- the Home tab --------------------------------------------------------------------------------------------

def activity_start(now: datetime | None = None) -> datetime:
    return (now or datetime.now(UTC)) - timedelta(days=ACTIVITY_DAYS)


def home_view(documents: Sequence[DocumentSummary], activity: Activity | None,
              sources: Sequence[ConnectorStatus] = ()) -> View:
    """The Home tab; `activity` (operators only) adds last week's two-error view, and `sources` (operators only)
    each connector's last sync and what failed."""
    blocks: list[Block] = [HeaderBlock(text="What Sourced answers from"), _knowledge(documents),
                           DividerBlock(), SectionBlock(text=MarkdownTextObject(text=HOW_TO_ASK))]
    if activity is not None:
        blocks += [DividerBlock(), HeaderBlock(text=f"Last {ACTIVITY_DAYS} days (operators)"),
                   SectionBlock(block_id="operators", text=MarkdownTextObject(text=_activity_text(activity)))]
    if sources:
        text = _sources_text(sources, documents)[:3000]
        blocks += [SectionBlock(block_id="sources", text=MarkdownTextObject(text=text))]
    return View(type="home", blocks=blocks)


def _sources_text(sources: Sequence[ConnectorStatus], documents: Sequence[DocumentSummary]) -> str:
    """Each connector's documents counted among those the viewer may see: an operator is told no more of what a
    source holds than any other reader (`doctor`, run by whoever holds the database, counts them all)."""
    visible = Counter(summary.doc_id.split(ID_SEPARATOR, 1)[0] for summary in documents
                      if ID_SEPARATOR in summary.doc_id)
    lines = ["*Sources (connectors)*"]
    for status in sources:
        synced = f"last sync {status.succeeded_at:%Y-%m-%d %H:%M} UTC" if status.succeeded_at else "never synced"
        line = f"• `{mrkdwn(status.name)}`: {plural(visible[status.name], 'document')}, {synced}"
        if status.error and status.succeeded_at:
            line += (f"\n   :warning: the last sync failed: {mrkdwn(status.error)}. Answers use the index the "
                     "last good sync left")
        elif status.error:
            line += f"\n   :warning: failing: {mrkdwn(status.error)}"
        lines.append(line)
    return "\n".join(lines)


def _knowledge(documents: Sequence[DocumentSummary]) -> SectionBlock:
    if not documents:
        return SectionBlock(text=MarkdownTextObject(text="No documents are available to you yet."))
    counts = counts_by_owner(documents)
    lines = [f"• {owner_link(owner) if owner else 'no owner'}: {count}" for owner, count in counts[:OWNERS_SHOWN]]
    if len(counts) > OWNERS_SHOWN:
        more = plural(len(counts) - OWNERS_SHOWN, "more owner")
        lines.append(f"• {more}: {sum(c for _, c in counts[OWNERS_SHOWN:])}")
    ingested = last_ingest(documents)
    when = f"\nLast ingest: {ingested:%Y-%m-%d %H:%M} UTC" if ingested else ""
    text = f"*{plural(len(documents), 'document')} you may see*, by owning channel:\n" + "\n".join(lines) + when
    return SectionBlock(block_id="knowledge", text=MarkdownTextObject(text=text[:3000]))


def _activity_text(activity: Activity) -> str:
    refused = ", ".join(f"{kind} {count}" for kind, count in activity.refused.items()) or "none"
    latency = f"{activity.p95_latency_ms:.0f} ms" if activity.p95_latency_ms is not None else "-"
    return "\n".join([
        f"Questions: {activity.questions}",
        f"Answered: {activity.answered}",
        f"Refused: {sum(activity.refused.values())} ({mrkdwn(refused)})",
        f"Clarified: {activity.clarified}",
        f"Feedback: {activity.helpful} helpful, {activity.not_helpful} not helpful",
        f"Dead ends (refused with no passage to offer): {activity.dead_ends}",
        f"p95 latency: {latency}",
    ])


# -- the message shortcut ----------------------------------------------------------------------------------

def ask_modal(text: str, *, channel_id: str | None) -> View:
    """A modal with the message's text as the question, to edit before asking; the channel rides along in
    `private_metadata` so the answer goes back there, privately."""
    question = InputBlock(block_id=QUESTION_BLOCK, label="Your question",
                          element=PlainTextInputElement(action_id=QUESTION_INPUT, multiline=True,
                                                        initial_value=text[:MAX_QUESTION_LENGTH] or None,
                                                        max_length=MAX_QUESTION_LENGTH))
    hint = ContextBlock(elements=[MarkdownTextObject(text="Only you will see the answer.")])
    return View(type="modal", callback_id=ViewId.ASK, title=PlainTextObject(text="Ask Sourced"),
                submit=PlainTextObject(text="Ask"), close=PlainTextObject(text="Cancel"),
                private_metadata=channel_id or "", blocks=[question, hint])
