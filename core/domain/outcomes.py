"""The one outcome of a question: answered, refused (with its kind) or a clarifying question.

An outcome is a value, never an exception. An answered outcome cannot be built without citations.
"""

from dataclasses import dataclass
from typing import Literal, get_args

from core.domain.chunks import Passage
from core.domain.errors import CitationInvariantError
from core.domain.risk import RiskAssessment

RefusalKind = Literal[
    "not_in_corpus",
    "not_permitted",
    "not_retrieved",
    "not_answerable",
    "malformed_response",
    "model_self_refusal",
    "invalid_citation",
    "unsupported_claim",
    "model_unavailable",
    "invalid_query",
    "audit_unavailable",
]
OutcomeKind = Literal[RefusalKind, "answered", "ambiguous"]
CitationTier = Literal["direct", "synthesis"]

ANSWERED: Literal["answered"] = "answered"
REFUSAL_KINDS: tuple[RefusalKind, ...] = get_args(RefusalKind)


@dataclass(frozen=True, kw_only=True)
class Citation:
    """A source of an answer: marker number `n` in the text, the passage, and how closely it supports."""

    n: int
    passage: Passage
    content_hash: str
    tier: CitationTier
    age_days: int | None = None
    """How many days before the answer its document was last updated (None: the date is unknown)."""
    stale: bool = False
    """Older than the operator's `stale_after_days`: the reply says so beside the citation."""


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One fact of the answer and the markers of the citations that support it."""

    text: str
    citations: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class Answered:
    text: str
    claims: tuple[Claim, ...]
    citations: tuple[Citation, ...]
    risk: RiskAssessment
    correlation_id: str
    kind: Literal["answered"] = ANSWERED
    reading: str | None = None
    """The standalone question a follow-up was read as; the reply shows it in one line."""

    def __post_init__(self) -> None:
        ensure_citation_invariant(self)


@dataclass(frozen=True, kw_only=True)
class Refused:
    """A refusal. `text` is one of our fixed sentences, never a model's prose."""

    kind: RefusalKind
    text: str
    risk: RiskAssessment | None
    correlation_id: str
    owner: str | None = None
    nearest: tuple[Passage, ...] = ()
    shown_as: RefusalKind | None = None
    reading: str | None = None

    @property
    def presented_kind(self) -> RefusalKind:
        """The kind the reply presents. Only `not_permitted` differs: it presents exactly as absence would."""
        return self.shown_as or self.kind


@dataclass(frozen=True, kw_only=True)
class ClarifyOption:
    label: str
    refine: str


@dataclass(frozen=True, kw_only=True)
class Clarify:
    text: str
    options: tuple[ClarifyOption, ...]
    risk: RiskAssessment
    correlation_id: str
    kind: Literal["ambiguous"] = "ambiguous"
    reading: str | None = None


Outcome = Answered | Refused | Clarify


def presented_kind(outcome: Outcome) -> OutcomeKind:
    """The kind every surface but the audit log may show, count or export: a `not_permitted` refusal presents as
    the kind absence would have given (DESIGN section 3), since whether a hidden document answers is the most
    sensitive fact."""
    return outcome.presented_kind if isinstance(outcome, Refused) else outcome.kind


def ensure_citation_invariant(outcome: Outcome) -> Outcome:
    """Raise unless an answer cites something and every claim points at one of its citations."""
    if not isinstance(outcome, Answered):
        return outcome
    if not outcome.citations or not outcome.claims:
        raise CitationInvariantError("an answered outcome needs at least one claim and one citation")
    markers = {citation.n for citation in outcome.citations}
    for claim in outcome.claims:
        if not claim.citations or not set(claim.citations) <= markers:
            raise CitationInvariantError(f"claim {claim.text[:40]!r} cites no known source")
    return outcome
