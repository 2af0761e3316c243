"""What an audit record holds: the decision and its evidence, never the question as typed."""

import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from core.domain import Audience, OutcomeKind, RiskLevel

AuditMode = Literal["best_effort", "required"]
PREVIEW_LENGTH: Final = 80
PREVIEW_SHARE: Final = 0.6

_REDACTIONS: Final = (
    # a match starts only where a run of address characters starts: without the lookbehind every position of a
    # long run was tried and backtracked over (found by fuzzing: 77 s for a 100 KB question)
    ("[email]", re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")),
    ("[iban]", re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?\b", re.IGNORECASE)),
    ("[card]", re.compile(r"\b(?:\d[ -]?){12,18}\d\b")),
    ("[national-id]", re.compile(r"\b\d{3}-\d{2}-\d{4}\b")),
)
_PHONE: Final = re.compile(r"(?<!\w)\+?\(?\d[\d ().-]{5,}\d\b")
_ISO_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")


def _mask_phone(match: re.Match[str]) -> str:
    """Seven or more digits in a phone-like run, but not an ISO date."""
    text = match.group(0)
    if _ISO_DATE.fullmatch(text.strip()) or sum(ch.isdigit() for ch in text) < 7:
        return text
    return "[phone]"


def question_sha256(question: str) -> str:
    # surrogatepass: a lone surrogate (invalid, but JSON can carry one) still hashes instead of failing the audit
    return hashlib.sha256(question.encode("utf-8", "surrogatepass")).hexdigest()


def redact(text: str) -> str:
    """The text with card numbers, national ids, IBANs, e-mail addresses and phone numbers masked."""
    redacted = text.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate cannot be stored
    for label, pattern in _REDACTIONS:
        redacted = pattern.sub(label, redacted)
    return _PHONE.sub(_mask_phone, redacted)


def question_preview(question: str) -> str:
    """A recognisable prefix of the question with card numbers, national ids, IBANs, e-mails and phone
    numbers masked: at most 80 characters, and never the whole question, so the log never holds what the
    person typed even when the question is short."""
    redacted = " ".join(redact(question).split())
    limit = min(PREVIEW_LENGTH - 1, int(len(redacted) * PREVIEW_SHARE))
    cut = redacted[:limit]
    if " " in cut and len(redacted) > limit:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip() + "…"


def user_reference(user_id: str, key: bytes | None) -> str:
    """The user id as stored: itself, or a keyed hash when the deployment configures a key."""
    if key is None:
        return user_id
    return "h:" + hmac.new(key, user_id.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


@dataclass(frozen=True, kw_only=True)
class ScoredId:
    chunk_id: str
    score: float


@dataclass(frozen=True, kw_only=True)
class CitedId:
    """A cited chunk, its content hash, and where in its document it stands, as the reply named it."""

    chunk_id: str
    content_hash: str
    heading: str | None = None
    page: int | None = None
    link: str | None = None


@dataclass(frozen=True, kw_only=True)
class AnswerabilityNote:
    """Why the question was judged answerable or not: the best statement's probability against the model's
    threshold, and the features that moved it most (name, contribution to the log-odds)."""

    score: float
    threshold: float
    model_version: str
    strongest: tuple[tuple[str, float], ...] = ()
    reader: float | None = None
    """The reader's probability that the best statement answers; None when no reader read it."""


@dataclass(frozen=True, kw_only=True)
class ReadingNote:
    """How a message with earlier turns was read: by which reader, whether as a follow-up, and then the
    standalone question it was answered as, kept like the question itself (a hash and a redacted preview)."""

    by: str
    followup: bool
    sha256: str | None = None
    preview: str | None = None


@dataclass(frozen=True, kw_only=True)
class QuoteAnchor:
    """Where claim `claim` rests: characters `start`..`end` of chunk `chunk_id`, and the SHA-256 of that span.
    `given` is False when the model gave no quote and the guard aligned the claim to the chunk itself."""

    claim: int
    chunk_id: str
    start: int
    end: int
    sha256: str
    given: bool


@dataclass(frozen=True, kw_only=True)
class AuditRecord:
    correlation_id: str
    at: datetime
    workspace_id: str | None
    channel_id: str | None
    user_ref: str
    question_sha256: str
    question_preview: str
    risk: RiskLevel | None
    kind: OutcomeKind
    retrieved: tuple[ScoredId, ...]
    cited: tuple[CitedId, ...]
    claim_map: tuple[tuple[int, tuple[str, ...]], ...]
    model: str | None
    prompt_version: str | None
    latency_ms: float
    detail: str | None = None
    answerability: AnswerabilityNote | None = None
    quotes: tuple[QuoteAnchor, ...] = ()
    reading: ReadingNote | None = None
    """Set when the message had earlier turns: `question_*` is the message as typed, this its reading."""
    shown_as: OutcomeKind | None = None
    """The kind the reply presented, when it is not `kind` (a `not_permitted` refusal presents as absence)."""
    audience: Audience | None = None
    """Who the reply was for (its parties, and the channel it was posted in, if any); None in records written
    before audiences were recorded."""
    shown: tuple[str, ...] = ()
    """The chunk ids the reply showed: an answer's citations, a refusal's closest passages."""

    @property
    def presented_kind(self) -> OutcomeKind:
        """The kind every surface outside the audit log uses (Home, metrics, exports, logs)."""
        return self.shown_as or self.kind
