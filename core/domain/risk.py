"""How risky a question is: it sets retrieval depth and strictness."""

from dataclasses import dataclass
from typing import Literal

RiskLevel = Literal["low", "medium", "high"]


@dataclass(frozen=True, kw_only=True)
class RiskAssessment:
    level: RiskLevel
    reasons: tuple[str, ...] = ()

    @property
    def is_high(self) -> bool:
        return self.level == "high"
