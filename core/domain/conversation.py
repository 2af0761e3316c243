"""A conversation as data: the earlier turns of a thread, and how a new message was read against them.

A follow-up ("and if we are adopting?") means nothing alone; read against the turn before it, it is a standalone
question. The turns are what our own decision records hold (the question we answered, its outcome kind and the
chunks it cited), or messages of the thread we never answered. Earlier citations are hints for retrieval, never
sources: an answer cites only what its own retrieval, in its own audience, returned.
"""

from dataclasses import dataclass

from core.domain.outcomes import OutcomeKind


@dataclass(frozen=True, kw_only=True)
class Turn:
    """One earlier message of the thread. `kind` is None for a message we did not answer (the thread's own
    question when Sourced is called into it); `kind` is the *presented* kind otherwise, so `not_permitted` is
    never told apart from absence here either."""

    question: str
    kind: OutcomeKind | None = None
    cited: tuple[str, ...] = ()
    """The chunk ids the answer cited."""
    headings: tuple[str, ...] = ()
    """The heading paths ("Title > Section > Subsection") of the cited chunks the audience of *this* reply may
    see; the pipeline fills them from the index, never from what a caller passes."""

    @property
    def answered(self) -> bool:
        return self.kind == "answered"

    @property
    def ours(self) -> bool:
        """A turn Sourced answered (or clarified, or refused), rather than a message of the thread."""
        return self.kind is not None


@dataclass(frozen=True, kw_only=True)
class Thread:
    """Where a conversation happens: a thread of a channel, or the top level of a direct message
    (`thread_id` empty)."""

    workspace_id: str | None
    channel_id: str
    thread_id: str


@dataclass(frozen=True, kw_only=True)
class RecordedTurn:
    """A turn with the id of the message that asked it (Slack's `ts`), which orders the turns of a thread."""

    message_id: str
    turn: Turn


@dataclass(frozen=True, kw_only=True)
class Reading:
    """What a message was taken to ask. `question` is what the pipeline answers and the reply shows;
    `search` is what retrieval reads (the question, plus the earlier turn's section names as hints)."""

    question: str
    search: str
    followup: bool
    by: str
    """Who read it, for the audit: the offline rewrite's version, or the model and its prompt version."""
    detail: str | None = None
    """Why a model's reading was not used (a malformed reply, a timeout), for the audit record."""
    required: tuple[str, ...] = ()
    """Word stems of which a passage must hold one to answer: what a frameless follow-up ("and for a client
    dinner?") adds, so the new words take precedence over the previous question's."""

    @classmethod
    def alone(cls, message: str, *, by: str) -> "Reading":
        return cls(question=message, search=message, followup=False, by=by)
