"""The shape of a question, read before retrieval: is it a question at all, an aggregate, too short?"""

import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal

from core.text import content_stems, words

MAX_QUESTION_LENGTH: Final = 1000

InvalidReason = Literal["empty", "too_long", "control_characters"]

_AGGREGATE: Final = (
    # "how many no-shows did Eastgate have last month", "how many nurses used up ... in 2025"
    re.compile(r"\bhow many\b(?![^?]*\b(?:do|can|does|should|will|may|must|am|are)\s+(?:i|we|you)\b)"
               r"[^?]*\b(?:did|were|was|have been|has been|had|took|taken|used|logged|filed|happened|"
               r"last|this|per|in \d{4}|so far|currently|right now)\b", re.IGNORECASE),
    # "which clinic has the most unanswered messages", "what team had the highest turnover"
    re.compile(r"\b(?:which|what)\b[^?]*\b(?:most|least|fewest|highest|lowest|biggest|smallest|best|worst)\b"
               r"(?![^?]*\b(?:i|we)\s+(?:can|may|could)\b)", re.IGNORECASE),
    re.compile(r"\b(?:average|median|total number|in total|sum of|count of|percentage of|rank|ranking)\b"
               r"[^?]*\b(?:across|all|every|by|per|last|this)\b", re.IGNORECASE),
    re.compile(r"\b(?:by|per|for each|across)\s+(?:clinic|site|team|department|office|location|region|month)s?\b"
               r"[^?]*$", re.IGNORECASE),
)
_VAGUE_REFERENCE: Final = re.compile(r"\b(?:it|this|that|them|they|one)\b\s*[?.!]*\s*$", re.IGNORECASE)
_GENERIC_STEMS: Final = frozenset({"fee", "cap", "limit", "allow", "allowanc", "rule", "polici", "deadlin",
                                   "sign", "report", "soon", "long", "cost", "approv", "rate", "time"})


def invalid_reason(question: str) -> InvalidReason | None:
    """Why the text is not a question we accept, or None when it is."""
    if not question.strip():
        return "empty"
    if len(question) > MAX_QUESTION_LENGTH:
        return "too_long"
    if any(unicodedata.category(ch) in {"Cc", "Cf"} and ch not in "\n\t" for ch in question):
        return "control_characters"
    return None


def is_aggregate(question: str) -> bool:
    """A count, total, ranking or comparison across records: document search cannot answer it."""
    return any(pattern.search(question) for pattern in _AGGREGATE)


@dataclass(frozen=True, kw_only=True)
class Shape:
    aggregate: bool
    too_short: bool


def too_short(question: str) -> bool:
    """Too short to mean one thing: at most two generic content words, or a dangling 'it'."""
    meaningful = [s for s in content_stems(question) if s not in _GENERIC_STEMS]
    if not meaningful:
        return True
    return bool(_VAGUE_REFERENCE.search(question)) and len(meaningful) <= 1 and len(words(question)) <= 8


def classify_shape(question: str) -> Shape:
    return Shape(aggregate=is_aggregate(question), too_short=too_short(question))
