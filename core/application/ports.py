"""The small interfaces the orchestrator needs. Adapters implement them; tests use in-memory fakes."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from core.application.audit import AuditRecord
from core.application.language.statements import Statement
from core.domain import (
    Audience,
    ClarifyOption,
    OutcomeKind,
    Passage,
    Reading,
    RecordedTurn,
    RetrievedChunk,
    RiskAssessment,
    RiskLevel,
    Thread,
    Turn,
)


class Index(Protocol):
    def search(self, query: str, *, audience: Audience, limit: int) -> Sequence[RetrievedChunk]:
        """The best chunks the audience may see, best first, scores in 0..1. Filtered before the top-k."""
        ...

    def passage(self, chunk_id: str, *, audience: Audience) -> Passage | None:
        """One chunk by id, or None when it does not exist or the audience may not see its document."""
        ...

    def best_unscoped_score(self, query: str) -> float:
        """The best score over every document, whoever may see it. Only ever used to name the refusal kind
        in the audit record; nothing of what it finds may reach a reply."""
        ...


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """A statement with its features, its ranking score among the question's candidates, and the fitted
    probability that it answers the question."""

    statement: Statement
    features: Mapping[str, float]
    rank_score: float
    probability: float


@dataclass(frozen=True, kw_only=True)
class Assessment:
    """The candidates of one question, best first, and the decision."""

    candidates: tuple[Candidate, ...]
    threshold: float
    model_version: str
    claim_rank_margin: float | None = None
    """The model's margin for the guard's ranking check (`core.application.guard.claim_ranking`); None: not checked."""
    set_aside_from: int | None = None
    """Where the candidates a follow-up's reading set aside begin (`new_words_first`); None: none were."""
    explanation: tuple[tuple[str, float], ...] = ()
    """The best candidate's strongest features: (name, contribution to the log-odds), largest first."""

    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None

    @property
    def score(self) -> float:
        return self.candidates[0].probability if self.candidates else 0.0

    @property
    def answerable(self) -> bool:
        return self.score >= self.threshold


@dataclass(frozen=True, kw_only=True)
class GenerationRequest:
    question: str
    chunks: Sequence[RetrievedChunk]
    risk: RiskAssessment
    assessment: Assessment | None = None
    """The pipeline's answerability assessment of these chunks, when it made one: a model may reuse it."""


class AnswerModel(Protocol):
    @property
    def name(self) -> str:
        """Model identity and version, for the audit record."""
        ...

    @property
    def prompt_version(self) -> str: ...

    @property
    def quotes_the_ranking(self) -> bool:
        """True when the answer is the answerability assessment's own choice of statements (the offline
        extractive model): the assessment then decides before the model is asked, and the guard checks the quotes
        against that ranking. False for a model that reads the passages itself."""
        ...

    @property
    def streams_answers(self) -> bool:
        """True when a front end may stream this model's answer once the guard has checked it, as a reply being
        written (a generative model's prose); False when the answer is the documents' own sentences (the
        extractive model), posted at once."""
        ...

    def generate(self, request: GenerationRequest) -> str:
        """The raw envelope text. Raise on failure; the orchestrator turns any error into a refusal."""
        ...


@runtime_checkable
class ModelEndpoint(Protocol):
    """What a generative model's endpoint can also be asked: a second opinion on an answer, and the rewrite of
    a follow-up. Models without an endpoint (the extractive one) do not have these."""

    def verifier(self) -> "Verifier": ...

    def rewriter(self) -> "Rewriter": ...


@dataclass(frozen=True, kw_only=True)
class QuotedClaim:
    """A claim that passed the guard and the span of its chunk it rests on."""

    text: str
    quote: str


@dataclass(frozen=True, kw_only=True)
class VerificationRequest:
    question: str
    claims: Sequence[QuotedClaim]


class Verifier(Protocol):
    """A second opinion from the model (`SOURCED_VERIFIER=model`): does each quote state its claim, and do the
    claims answer the question?"""

    @property
    def prompt_version(self) -> str: ...

    def verify(self, request: VerificationRequest) -> str:
        """The raw verdict text. Raise on failure; the orchestrator turns any error into a refusal."""
        ...


class Embedder(Protocol):
    """Text to unit-length vectors. Vectors are only comparable with vectors of the same `model_id`."""

    @property
    def model_id(self) -> str:
        """Model name and version, stored with every vector: a different id means re-embedding."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order. Raise on failure."""
        ...


@dataclass(frozen=True, kw_only=True)
class ReadPassage:
    """A statement as the reader reads it: with its heading path and the statement before it (what "it" or
    "this" in the statement refers to)."""

    text: str
    heading: str = ""
    before: str = ""


class Reader(Protocol):
    """A cross-encoder: it reads the question and each passage together and says whether the passage states
    the answer. Unlike an embedder's similarity, it can tell "about the same thing" from "answers it"."""

    @property
    def name(self) -> str:
        """Model identity and version, for `sourced doctor` and the audit record."""
        ...

    def score(self, question: str, passages: Sequence[ReadPassage]) -> list[float]:
        """Per passage, in order, the probability (0..1) that it states the answer. Raise on failure."""
        ...


class FollowUps(Protocol):
    """Reads a message against the earlier turns of its thread: a follow-up becomes a standalone question."""

    @property
    def version(self) -> str:
        """Which reader and wording, for the audit record ("followup-offline-v1", "openai:m+followup-v1")."""
        ...

    def read(self, message: str, turns: Sequence[Turn]) -> Reading:
        """The message as a standalone question; `Reading.alone` when it is not a follow-up. Never raises."""
        ...


@dataclass(frozen=True, kw_only=True)
class RewriteRequest:
    message: str
    turns: tuple[Turn, ...]


class Rewriter(Protocol):
    """A generative model asked to rewrite a follow-up (`ModelFollowUps` parses and checks its reply)."""

    @property
    def name(self) -> str: ...

    @property
    def prompt_version(self) -> str: ...

    def rewrite(self, request: RewriteRequest) -> str:
        """The raw reply text. Raise on failure; the offline reading then stands in."""
        ...


class TurnStore(Protocol):
    """The recent turns of each thread, kept briefly (they hold the question as answered)."""

    def recent(self, thread: Thread, *, limit: int) -> list[RecordedTurn]:
        """The latest `limit` unexpired turns of the thread, oldest first."""
        ...

    def record(self, thread: Thread, *, message_id: str, correlation_id: str, turn: Turn) -> None: ...


@dataclass(frozen=True, kw_only=True)
class PendingClarification:
    """A clarifying question waiting for the asker's click. Holds the raw question, hence the expiry."""

    id: str
    question: str
    user_id: str
    channel_id: str | None
    options: tuple[ClarifyOption, ...]
    created_at: datetime
    expires_at: datetime
    thread_ts: str | None = None


class Clarifications(Protocol):
    """Short-lived state between a clarifying question and the click that answers it."""

    def save(self, *, question: str, user_id: str, channel_id: str | None, options: tuple[ClarifyOption, ...],
             thread_ts: str | None = None) -> PendingClarification:
        """Store it; its id goes into the buttons' values. `thread_ts`: the thread it was asked in."""
        ...

    def take(self, clarification_id: str) -> PendingClarification | None:
        """Remove and return it, at most once; None if unknown or expired."""
        ...

    def purge_expired(self) -> int:
        """Delete every clarification past its expiry, so raw questions do not outlive their use."""
        ...


class Corpus(Protocol):
    """What the whole knowledge base says of itself, read by the guard."""

    def organisation_names(self) -> frozenset[str]:
        """The names (lower-cased words) the organisation the documents speak for goes by: see
        `quote_context.organisation_names`."""
        ...


class AuditSink(Protocol):
    def write(self, record: AuditRecord) -> None: ...


class RiskClassifier(Protocol):
    def assess(self, question: str) -> RiskAssessment: ...


class Clock(Protocol):
    def now(self) -> datetime: ...

    def monotonic(self) -> float: ...


class Metrics(Protocol):
    def outcome(self, *, kind: OutcomeKind, risk: RiskLevel | None, retrieved: int, seconds: float) -> None: ...

    def audit_write_failed(self) -> None: ...

    def phrasing_drift(self, *, severity: str) -> None: ...
