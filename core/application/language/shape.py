"""The shape of a question, read before retrieval: is it a question at all, a measurement over records, short?

Documents state rules; they do not count, total, average or rank what happened. A question is a measurement
over records when it asks for one of those operations *about records*: a time window ("last quarter", "so
far this year", "in 2025", "right now"), events asked in the past tense ("did we have", "were received"), a
population of people ("how many employees", "everyone in payments ops", "which team has the most
engineers"), a ranking of entities ("which team ... the most"), or the asker's own running balance and what
they have used of it ("how much ... do I have left", "how much have I spent"). A rule that merely contains a
quantity ("how many days of leave do I get", "how many reviewers must approve") is not one.
"""

import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal

from core.text import content_stems, words

MAX_QUESTION_LENGTH: Final = 1000
SHORT_STEMS: Final = 2
SHORT_WORDS: Final = 8

InvalidReason = Literal["empty", "too_long", "control_characters"]

_MONTHS: Final = (r"january|february|march|april|may|june|july|august|september|october|november|december|"
                  r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
_PERIOD: Final = r"(?:day|week|month|quarter|year|half|sprint|fiscal year|fy|shift|night|season)"

_MEASURE: Final = re.compile(
    r"\bhow many\b|\b(?:total|sum|average|avg|mean|median|count|number|share|proportion|percentage|fraction|"
    r"tally) (?:of|for|by)\b|\b(?:total|average|median|mean|cumulative|overall)\b|"
    r"\bwhat (?:share|proportion|percentage|fraction|percent)\b|\bhow often did\b",
    re.IGNORECASE)
"""Counting, summing, averaging: operations over many records."""
_RANKING: Final = re.compile(
    r"\b(?:which|who|what)\b[^?.]*\b(?:most|least|fewest|highest|lowest|biggest|smallest|worst|best|"
    r"longest|shortest|largest)\b",
    re.IGNORECASE)
"""Ranking entities against each other."""
_LISTING: Final = re.compile(r"\b(?:list|show me|name)\s+(?:all|every|everyone|everybody|each)\b|"
                             r"\b(?:rank|ranking|leaderboard)\b|\b(?:top|bottom) (?:\d+|ten|five|three)\b|"
                             r"\b(?:who|which (?:people|employees|staff))\b[^?.]*\b(?:still )?(?:hasn't|haven't|"
                             r"has not|have not|didn't|did not)\b", re.IGNORECASE)
"""Enumerating or ranking the records (or people) that match a condition."""
_RECORD_SCOPE: Final = re.compile(
    rf"\b(?:last|this|past|previous|prior|current|next)\s+(?:\d+\s+)?{_PERIOD}s?\b"
    rf"|\b(?:yesterday|today|tonight|so far|to date|year to date|ytd|mtd|qtd|right now|currently|"
    rf"at the moment|as of now|at present)\b"
    rf"|\b(?:in|during|for|since|through|throughout)\s+(?:(?:{_MONTHS})\b|\d{{4}}\b|q[1-4]\b|h[12]\b|fy\s?\d{{2,4}}\b)"
    rf"|\bq[1-4]\b|\b(?:{_MONTHS})'s\b"
    r"|\b(?:did|have|has|were|was)\s+(?:we|they|you|anyone|anybody|people|there|our)\b"
    r"|\b(?:across|by|for each|per|among|between)\s+(?:all\s+)?(?:the\s+|our\s+)?[a-z]+s\b(?!\s+(?:of|in)\b)"
    r"|\b(?:on|in) (?:my|our) team\b",
    re.IGNORECASE)
"""Records have a time window, past events, or a breakdown; a rule holds whenever it is asked."""
_PEOPLE: Final = (r"people|persons|employees|staff|staffers|colleagues|co-?workers|workers|members|customers|"
                  r"clients|users|hires|contractors|managers|engineers|agents|candidates|applicants|visitors|"
                  r"guests|teams|departments|offices|locations|sites")
_POPULATION: Final = re.compile(
    rf"\bhow many\s+(?:of\s+(?:our|the|my)\s+)?(?:\w+\s+)?(?:{_PEOPLE})\b"
    r"(?!\s+(?:do|does|can|could|should|must|will|would|may|need|needs|are allowed|is allowed)\s)"
    r"(?!\s+(?:per|for each|in a|on a|on each)\b)"
    rf"|(?:^|[,;:]\s*)(?:which|who)\s+(?:\w+\s+){{0,3}}?(?:has|have|had|employs?)\s+the\s+(?:most|fewest|least)\s+"
    rf"(?:\w+\s+)?(?:{_PEOPLE})\b",
    re.IGNORECASE)
"""Counting the organisation's own people, teams or places, or ranking entities by that count ("which team has
the most engineers?")."""
_BALANCE: Final = re.compile(r"\b(?:do|have|does)\s+(?:i|we|you|he|she|they)\s+(?:have\s+)?(?:left|remaining)\b|"
                             r"\b(?:my|our|his|her|their)\s+(?:remaining|current|outstanding)\s+(?:balance|"
                             r"budget|allowance|days|leave)\b|\bhow much\b[^?.]*\b(?:left|remaining)\b|"
                             r"\bhow much\b[^?.]*\b(?:have|did)\s+(?:i|we)\s+(?:already\s+)?(?:spent|spend|used|use|"
                             r"taken|take|claimed|claim|expensed|expense|booked|book)\b",
                             re.IGNORECASE)
"""The asker's running balance, or what they have used of it so far ("how much have I spent this month?"): a
record about one person, kept in a system, not a document."""

_ENTITLEMENT: Final = re.compile(r"\bhow (?:many|much)\b[^?.]*\b(?:do|can|could|will|may|should|must)\s+(?:i|you)\s+"
                                 r"(?:get|take|receive|book|claim|carry over)\b", re.IGNORECASE)
"""What a rule gives or allows the asker ("moving house in March, how many days off do I get?", "how many sick days
can I take this year?"): the time it names is when the asker will use it, not a window of records. Not when it
asks for a sum, an average or what happened besides ("how many did I take this year, and how many can I take?")."""
_NOT_ONLY_ENTITLEMENT: Final = re.compile(r"\b(?:average|avg|mean|median|total|sum|overall|across|per person|per team|"
                                          r"did|was|were|have|has|had)\b", re.IGNORECASE)


def visible_text(question: str) -> str:
    """The question without invisible formatting marks (Unicode Cf: zero-width joiners inside emoji, the
    right-to-left marks of Arabic and Hebrew text, soft hyphens, a byte-order mark, bidirectional overrides).
    They carry no words, and text pasted from documents and chat clients is full of them."""
    return "".join(ch for ch in question if unicodedata.category(ch) != "Cf")


def invalid_reason(question: str) -> InvalidReason | None:
    """Why the text (already `visible_text`) is not a question we accept, or None when it is."""
    if not question.strip():
        return "empty"
    if len(question) > MAX_QUESTION_LENGTH:
        return "too_long"
    # Cs: half a UTF-16 surrogate pair (JSON can escape one) is not text; it cannot be encoded, hashed or stored
    if any(unicodedata.category(ch) in {"Cc", "Cs"} and ch not in "\n\t" for ch in question):
        return "control_characters"
    return None


def is_aggregate(question: str) -> bool:
    """A count, total, average, ranking or listing over records, or a personal balance: document search cannot
    answer it."""
    if _POPULATION.search(question) or _BALANCE.search(question) or _LISTING.search(question):
        return True
    measured = _MEASURE.search(question) or _RANKING.search(question)
    entitlement = _ENTITLEMENT.search(question) and not _NOT_ONLY_ENTITLEMENT.search(question)
    return bool(measured) and bool(_RECORD_SCOPE.search(question)) and not entitlement


@dataclass(frozen=True, kw_only=True)
class Shape:
    aggregate: bool
    short: bool
    """At most two words that carry meaning, in a short question: whether it means one thing depends on
    what the documents say (see clarify.py)."""


def is_short(question: str) -> bool:
    return len(set(content_stems(question))) <= SHORT_STEMS and len(words(question)) <= SHORT_WORDS


def classify_shape(question: str) -> Shape:
    return Shape(aggregate=is_aggregate(question), short=is_short(question))
