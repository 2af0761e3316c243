"""The shape of a question, read before retrieval: is it a question at all, an aggregate, too short?"""

import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal

from core.text import content_stems, words

MAX_QUESTION_LENGTH: Final = 1000

InvalidReason = Literal["empty", "too_long", "control_characters"]

_MONTHS: Final = (r"january|february|march|april|may|june|july|august|september|october|november|december")
_MEASURE: Final = re.compile(
    r"\b(?:how many|how much did|how much have|how often did|which|who|what)\b[^?]*?"
    r"\b(?:most|least|fewest|highest|lowest|biggest|smallest|best|worst)\b"
    r"|\bhow many\b|\b(?:total|average|median|sum|count|percentage|number) of\b|\b(?:average|median|total)\b",
    re.IGNORECASE)
# Records have a time window or a breakdown; a policy states a rule that holds whenever it is asked.
_RECORD_SCOPE: Final = re.compile(
    rf"\b(?:last|this|past|previous)\s+(?:day|week|month|quarter|year|shift|(?:{_MONTHS}))\b"
    rf"|\b(?:right now|currently|so far|to date|year to date|ytd)\b|\bin (?:(?:{_MONTHS})|\d{{4}})\b"
    r"|\b(?:across|by|for each|per|among)\s+(?:all\s+)?(?:the\s+|our\s+)?"
    r"(?:clinic|site|team|department|office|location|region|customer|employee)s?\b",
    re.IGNORECASE)
# "how many employees work fully remote": counting the organisation's own people or things.
_POPULATION: Final = re.compile(
    r"\bhow many\s+(?:of (?:our|the)\s+)?(?:people|employees|staff|nurses|engineers|customers|patients|"
    r"users|members|managers|contractors|clinicians|doctors|agents|hires|teams|clinics)\b"
    r"(?!\s+(?:do|does|can|could|should|must|will|would|may)\s+(?:i|we|you)\b)",
    re.IGNORECASE)
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
    if _POPULATION.search(question):
        return True
    return bool(_MEASURE.search(question)) and bool(_RECORD_SCOPE.search(question))


@dataclass(frozen=True, kw_only=True)
class Shape:
    aggregate: bool
    too_short: bool


def too_short(question: str) -> bool:
    """Too short to mean one thing: no specific word, or one in a very short question, or a dangling 'it'.

    Short alone does not clarify: the evidence must also spread over several documents (see clarify.py)."""
    meaningful = [s for s in content_stems(question) if s not in _GENERIC_STEMS]
    if not meaningful:
        return True
    if len(meaningful) == 1 and len(words(question)) <= 6:
        return True
    return bool(_VAGUE_REFERENCE.search(question)) and len(meaningful) <= 1 and len(words(question)) <= 8


def classify_shape(question: str) -> Shape:
    return Shape(aggregate=is_aggregate(question), too_short=too_short(question))
