"""A rule-based risk classifier: configurable keywords decide low / medium / high.

The defaults name kinds of topic every company has; `sourced.yml` (`risk:`) adds or replaces them."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from core.domain import RiskAssessment
from core.text import words

DEFAULT_HIGH: Final = (
    # pay and employment decisions
    "salary", "salaries", "compensation", "pay", "termination", "fired", "dismissal", "disciplinary", "warning",
    "severance", "redundancy", "layoff", "layoffs",
    # conduct, law and contracts
    "harassment", "discrimination", "whistleblowing", "lawsuit", "legal", "contract", "litigation",
    # security and personal data
    "breach", "incident", "security", "password", "credentials", "privacy", "gdpr", "personal",
    # health and safety of people
    "injury", "medical", "health", "safety", "accident",
)
"""Topics where a wrong answer harms a person or the company in any organisation: deeper retrieval."""
DEFAULT_MEDIUM: Final = (
    "refund", "expense", "reimbursement", "leave", "pto", "sick", "benefits", "allowance", "fee", "deadline",
    "approval", "visa", "travel", "insurance", "bonus",
)
"""Money and time-off rules: a wrong answer costs someone money or days."""


@dataclass(frozen=True, kw_only=True)
class KeywordRiskClassifier:
    """High when any high-risk keyword appears, medium for medium ones, else low. Reasons name the keywords."""

    high: frozenset[str] = field(default_factory=lambda: frozenset(DEFAULT_HIGH))
    medium: frozenset[str] = field(default_factory=lambda: frozenset(DEFAULT_MEDIUM))

    @classmethod
    def with_keywords(cls, *, high: Iterable[str] = DEFAULT_HIGH, medium: Iterable[str] = DEFAULT_MEDIUM,
                      ) -> "KeywordRiskClassifier":
        return cls(high=frozenset(k.lower() for k in high), medium=frozenset(k.lower() for k in medium))

    def assess(self, question: str) -> RiskAssessment:
        present = set(words(question))
        high_hits = tuple(sorted(present & self.high))
        if high_hits:
            return RiskAssessment(level="high", reasons=high_hits)
        medium_hits = tuple(sorted(present & self.medium))
        if medium_hits:
            return RiskAssessment(level="medium", reasons=medium_hits)
        return RiskAssessment(level="low")
