"""When a reader's click on a reply counts as feedback on its decision.

A verdict labels chunks for refitting answerability, so a click counts only from someone who read the reply,
about what the reply showed, once per reader (the feedback table's key). The decision's audit record is the
only witness: it says who asked, who the reply was for and which chunks it showed. A button's value names the
decision and the chunk; like any value a request carries, it is a claim to check, never a fact.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal, Protocol

from core.application.audit import AuditRecord
from core.domain.text import storable

MAX_DECISION_ID: Final = 64
Verdict = Literal["helpful", "not_helpful", "answered_it"]
"""`answered_it`: one of a refusal's closest passages answered the question (it names the chunk)."""


@dataclass(frozen=True, kw_only=True)
class FeedbackEntry:
    correlation_id: str
    user_ref: str
    verdict: Verdict
    at: datetime
    chunk_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class LabelledPair:
    """One line of `sourced feedback export`: a question (by hash), a chunk, what a reader said of it, and who
    said it as a keyed hash (one person's many clicks can be weighed as one person's, by nobody who lacks the
    key can tell whose)."""

    question_sha256: str
    chunk_id: str
    label: Verdict
    reader: str
    question_preview: str | None = None


@dataclass(frozen=True, kw_only=True)
class Click:
    """Who clicked, and where, as Slack signed it: the clicker's user reference, the channel of the clicked
    message, and whether that message was ephemeral (seen by one person)."""

    reader: str
    channel_id: str | None
    ephemeral: bool


class Decisions(Protocol):
    def get(self, correlation_id: str) -> AuditRecord | None: ...


class FeedbackStore(Protocol):
    """Readers' verdicts, one per reader and reply (`core.storage.FeedbackLog`)."""

    def record(self, correlation_id: str, user_ref: str, verdict: Verdict, *,
               chunk_id: str | None = None) -> FeedbackEntry | None:
        """The stored entry, or None when this reader has already rated this reply."""
        ...

    def labelled_pairs(self, *, reader_key: bytes, with_previews: bool = False) -> Iterator[LabelledPair]: ...


def why_not_counted(correlation_id: str, click: Click, *, decisions: Decisions,
                    chunk_id: str | None = None) -> str | None:
    """None when the click counts; else why not, in words that name ids only (for the log)."""
    if not storable(correlation_id) or len(correlation_id) > MAX_DECISION_ID:
        return "an unreadable decision id"
    decision = decisions.get(correlation_id)
    if decision is None:
        return f"no decision {correlation_id!r}"
    if not read_the_reply(decision, click):
        return f"the clicker was not in the audience of decision {correlation_id!r}"
    if chunk_id is not None and chunk_id not in decision.shown:
        return f"chunk {chunk_id[:MAX_DECISION_ID]!r} is not one decision {correlation_id!r} showed"
    return None


def read_the_reply(decision: AuditRecord, click: Click) -> bool:
    """The asker read their reply wherever it went. Anyone else only a reply posted for a channel, clicked on
    in that channel as a message everyone there sees: a private reply (ephemeral, a DM, an assistant thread)
    had one reader, whatever channel it was asked from. A decision recorded without its audience counts its
    asker alone."""
    if click.reader == decision.user_ref:
        return True
    posted_in = decision.audience.posted_in if decision.audience is not None else None
    return posted_in is not None and not click.ephemeral and click.channel_id == posted_in
