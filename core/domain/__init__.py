"""The answer contract: outcomes, citations, principals and audiences, risk. Standard library only."""

from core.domain.chunks import Link, Passage, RetrievedChunk
from core.domain.conversation import Reading, RecordedTurn, Thread, Turn
from core.domain.errors import CitationInvariantError, DomainError
from core.domain.outcomes import (
    ANSWERED,
    REFUSAL_KINDS,
    Answered,
    Citation,
    CitationTier,
    Claim,
    Clarify,
    ClarifyOption,
    Outcome,
    OutcomeKind,
    RefusalKind,
    Refused,
    ensure_citation_invariant,
    presented_kind,
)
from core.domain.principal import EVERYONE, GUESTS, Audience, Party, Principal, is_visible
from core.domain.risk import RiskAssessment, RiskLevel

__all__ = [
    "ANSWERED",
    "EVERYONE",
    "GUESTS",
    "REFUSAL_KINDS",
    "Answered",
    "Audience",
    "Citation",
    "CitationInvariantError",
    "CitationTier",
    "Claim",
    "Clarify",
    "ClarifyOption",
    "DomainError",
    "Link",
    "Outcome",
    "OutcomeKind",
    "Party",
    "Passage",
    "Principal",
    "Reading",
    "RecordedTurn",
    "RefusalKind",
    "Refused",
    "RetrievedChunk",
    "RiskAssessment",
    "RiskLevel",
    "Thread",
    "Turn",
    "ensure_citation_invariant",
    "is_visible",
    "presented_kind",
]
