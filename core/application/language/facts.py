"""What a sentence asserts, as the guard compares it: quantities with their units, polarity, direction of
comparison, modality, and which words each value is stated with.

A claim can use every word of its quote and still say the opposite ("is not reimbursed"), bound the other way
("at least" for "at most"), weaken or harden it ("may" for "must"), or give one subject's value to another.
These functions read those features from plain text; `checks` compares claim and quote with them.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from core.text import ADDRESS, content_stems

Direction = Literal["less", "more", "before", "after"]
Modality = Literal["obligation", "recommendation", "permission"]

_SPELLED: Final = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
}
_UNITS: Final = (
    ("business day", r"business|working"), ("day", r"calendar\s+days?|days?"), ("hour", r"hours?|hrs?"),
    ("minute", r"minutes?|mins?"), ("week", r"weeks?"), ("month", r"months?"), ("year", r"years?"),
    ("night", r"nights?"), ("percent", r"%|percent|per\s*cent"), ("mile", r"miles?"),
    ("km", r"km|kilomet(?:re|er)s?"), ("second", r"seconds?|secs?"),
)
_UNIT_AFTER: Final = re.compile(r"\s*(?:-\s*)?(" + "|".join(f"(?P<u{i}>{p})" for i, (_, p) in enumerate(_UNITS))
                                + r")\b(?:\s+days?)?", re.IGNORECASE)
_CURRENCY: Final = {"$": "usd", "us$": "usd", "usd": "usd", "€": "eur", "eur": "eur", "£": "gbp", "gbp": "gbp"}
_NUMBER: Final = r"\d[\d,]*(?:\.\d+)?"
_QUANTITY: Final = re.compile(
    rf"(?P<currency>US\$|\$|€|£|USD\s?|EUR\s?|GBP\s?)?(?<![A-Za-z\d.])(?P<digits>{_NUMBER})"
    r"|\b(?P<word>" + "|".join(_SPELLED) + r")\b", re.IGNORECASE)

_DIRECTIONS: Final[tuple[tuple[Direction, str], ...]] = (
    ("less", r"no more than|not more than|no longer than|not (?:to )?exceed|at most|up to|a maximum of|"
             r"maximum of|maximum|max|less than|fewer than|under|below|within|or less|or fewer|lower than|"
             r"shorter than|capped at|cap of|limited to"),
    ("more", r"no less than|not less than|no fewer than|no shorter than|at least|a minimum of|minimum of|"
             r"minimum|more than|over|above|exceeds?|exceeding|in excess of|greater than|or more|higher than|"
             r"longer than|beyond"),
    ("before", r"no later than|before|prior to|ahead of|in advance|earlier than|beforehand"),
    ("after", r"no earlier than|after|following|later than|afterwards?|thereafter"),
)
_OPPOSITE: Final[dict[Direction, Direction]] = {"less": "more", "more": "less", "before": "after",
                                               "after": "before"}
_COMPARISON: Final = re.compile(r"(?<![-\u2010])\b(?:" + "|".join(f"(?P<{d}>{p})" for d, p in _DIRECTIONS)
                                + r")\b(?![-\u2010])", re.IGNORECASE)
"""A word joined by a hyphen is no comparison: "under-30s", "after-hours", "carried-over"."""
_ALSO: Final[dict[str, Direction]] = {"within": "before"}
"""Words that bound two ways: "within 30 days" is at most 30 days, and before they are over."""
_MONEY: Final = r"(?:US\$|\$|€|£|USD\s?|EUR\s?|GBP\s?)?"
_RANGE: Final = re.compile(rf"{_MONEY}(?P<low>{_NUMBER})\s*(?:to|-|\u2013|and)\s*{_MONEY}(?P<high>{_NUMBER})")
_NEGATION: Final = re.compile(r"\b(?:not|no|never|none|nobody|nothing|neither|nor|cannot|unable|without|except|"
                              r"unless)\b|n['\u2019]t\b|[\u274c\u2716\U0001f6ab]", re.IGNORECASE)
"""Words that deny, and the marks that do in lists of dos and don'ts (❌, ✖, 🚫); "unable" is "not able"."""
_MODALITIES: Final[tuple[tuple[Modality, str], ...]] = (
    ("obligation", r"must|shall|required|requires?|ha(?:ve|s) to|needs? to|mandatory|obliged|obligatory|"
                   r"compulsory"),
    ("recommendation", r"should|recommended|encouraged|ought"),
    ("permission", r"may(?!\s+\d)|can|could|allowed|permitted|optional|eligible|entitled|(?:the )?ability to|"
                   r"(?:un)?able to|(?:is it|it is|it's|that's|that is)\s+(?:ok|okay|fine|alright|all right)\s+"
                   r"(?:if|to)|feel free to"),
)
_MODALITY: Final = re.compile(r"\b(?:" + "|".join(f"(?P<{m}>{p})" for m, p in _MODALITIES) + r")\b",
                              re.IGNORECASE)
_SUBJECT_BREAK: Final = re.compile(r"[;()\[\]\n]|(?<!\d):|:(?!\d)|,\s*(?=(?:and|or|but|while|whereas|although|though|"
                                   r"so|which|who|if|only|unless|provided|when|once|as)\b)|"
                                   r"\b(?:but|whereas|while|although|though|because)\b|(?<=[.!?])\s+")
_CLAUSE_BREAK: Final = re.compile(_SUBJECT_BREAK.pattern + r"|(?<!\d)\s+[-\u2013\u2014]\s+|\s+[-\u2013\u2014]\s+(?!\d)")
"""A spaced dash sets a clause apart as a comma before "but" does ("You don't need long - 2 days is fine"); a
dash between numbers is a range ("06:00 - 14:00")."""
_CONJUNCT: Final = re.compile(r"\s+(?=\b(?:and|or)\s)", re.IGNORECASE)
_CONJUNCT_NEGATION_WORDS: Final = 3
_CLAUSE_BEFORE_CONJUNCT: Final = 4
"""A conjunct that opens by denying ("or no longer meets ...") is a clause of its own up to the next comma, and so is
one whose subject comes first ("and Slack doesn't like ...") after a clause of four words or more: its negation
is not the other conjunct's ("If it stops working or no longer meets your needs, ..." says nothing negative of a
laptop that stopped working). A negation before the conjunction ("Do not eat or drink") covers both and leaves the
clause whole, and so does one after a short list of subjects ("Guests and staff may not enter")."""
_VALUE_BREAK: Final = re.compile(r"[;()\[\]\n]|(?<!\d)[:,]|[:,](?!\d)|\b(?:and|or|but|while|whereas)\b|(?<=[.!?])\s+",
                                re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class Quantity:
    value: str
    unit: str | None
    at: int = 0
    """Where the number starts in the text."""


def quantities(text: str) -> list[Quantity]:
    """Every number of the text with its unit, when one follows (or a currency precedes): "$1,200" is
    (1200, usd), "five business days" (5, business day), "8 hours" (8, hour). A spelled number counts only
    with a unit after it: "one of the clinics" states no quantity."""
    found = []
    text = without_addresses(text)
    for match in _QUANTITY.finditer(text):
        unit = _unit_after(text, match.end())
        if match.group("word"):
            if unit is None:
                continue
            value = str(_SPELLED[match.group("word").lower()])
        else:
            value = _normal_number(match.group("digits"))
        currency = match.group("currency")
        found.append(Quantity(value=value, unit=_CURRENCY[currency.strip().lower()] if currency else unit,
                              at=match.start()))
    return found


_BOUND: Final = re.compile(
    rf"(?<![\d.,])(?P<low>{_NUMBER})\s*(?:-|\u2013|to)\s*(?P<high>{_NUMBER})"
    rf"|\b(?:under|below|less than|fewer than)\s+(?P<under>{_NUMBER})"
    rf"|\b(?:over|above|more than)\s+(?P<over>{_NUMBER})|(?<![\d.,])(?P<plus>{_NUMBER})\s*\+",
    re.IGNORECASE)


def held_by_bounds(asked: Sequence[Quantity], text: str) -> set[str]:
    """The asked quantities that a range or bound of the text holds in the same unit: "9 months" is held by
    "6-12 months", "Under 12 months" and "3+ months", not by "1-2 years". A table that states notice or leave
    by tenure answers the asker's own tenure with the band it falls in, never with the number itself."""
    if not asked:
        return set()
    text = without_addresses(text)
    held = set()
    for match in _BOUND.finditer(text):
        unit = _unit_after(text, match.end())
        if unit is None:
            continue
        for quantity in asked:
            if quantity.unit == unit and _within(float(quantity.value), match):
                held.add(quantity.value)
    return held


def _within(value: float, bound: re.Match[str]) -> bool:
    def number(group: str) -> float:
        return float(bound.group(group).replace(",", ""))
    if bound.group("low"):
        return number("low") <= value <= number("high")
    if bound.group("under"):
        return value < number("under")
    if bound.group("over"):
        return value > number("over")
    return value >= number("plus")


def without_addresses(text: str) -> str:
    """The text with web and e-mail addresses blanked (same length): `%20` in a URL states no 20."""
    return ADDRESS.sub(lambda match: " " * len(match.group(0)), text)


def _unit_after(text: str, at: int) -> str | None:
    match = _UNIT_AFTER.match(text, at)
    if not match:
        return None
    return next(name for i, (name, _) in enumerate(_UNITS) if match.group(f"u{i}"))


def _normal_number(raw: str) -> str:
    """`1,200.00` and `1200` are the same number."""
    whole, _, fraction = raw.replace(",", "").partition(".")
    whole = whole.lstrip("0") or "0"
    fraction = fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def clauses(text: str, *, scopes: bool = True) -> list[str]:
    """Sentences cut where a contrast or a new clause begins: the unit a negation or a bound applies to. Without
    `scopes`, a spaced dash and a conjunct that denies do not cut: the clauses whose subjects say what a sentence
    speaks of."""
    breaks = _CLAUSE_BREAK if scopes else _SUBJECT_BREAK
    parts = [part.strip() for part in breaks.split(text) if part and part.strip()]
    return [piece for part in parts for piece in (_negated_conjuncts(part) if scopes else [part])]


def _negated_conjuncts(clause: str) -> list[str]:
    """The clause with each conjunct that denies on its own ("or no longer meets the needs of your role") cut
    out, up to the comma that ends it (`_CONJUNCT_NEGATION_WORDS`)."""
    parts = _CONJUNCT.split(clause)
    pieces = [parts[0]]
    for part in parts[1:]:
        opening = part.split()[1:1 + _CONJUNCT_NEGATION_WORDS]
        denies = [index for index, word in enumerate(opening) if negations(word)]
        own = bool(denies) and (denies[0] == 0 or len(pieces[-1].split()) >= _CLAUSE_BEFORE_CONJUNCT)
        if not own:
            pieces[-1] = f"{pieces[-1]} {part}"
            continue
        conjunct, comma, rest = part.partition(",")
        pieces += [conjunct, rest] if comma else [conjunct]
    return [piece.strip() for piece in pieces if piece.strip()]


def value_segments(text: str) -> list[str]:
    """Phrases cut at every list separator: "8 hours for test A and 32 hours for test B" is two segments, so
    each value stays with the words it is stated with."""
    return [part.strip() for part in _VALUE_BREAK.split(text) if part and part.strip()]


def negations(text: str) -> int:
    """How many times the text denies something. Bounds written with a negation ("no more than") are
    comparisons, not denials."""
    return len(_NEGATION.findall(_COMPARISON.sub(" ", text)))


def bounds(text: str) -> set[tuple[str, Direction]]:
    """Directions tied to the value right after them: "under $5,000" is (5000, less); a range "5,000 to
    49,999" bounds its first value from below and its last from above."""
    found: set[tuple[str, Direction]] = set()
    for match in _COMPARISON.finditer(text):
        value = _QUANTITY.match(text, len(text) - len(text[match.end():].lstrip()))
        if value and value.group("digits"):
            found.update((_normal_number(value.group("digits")), d) for d in _matched(match))
    for match in _RANGE.finditer(text):
        found.add((_normal_number(match.group("low")), "more"))
        found.add((_normal_number(match.group("high")), "less"))
    return found


def directions(text: str) -> set[Direction]:
    found: set[Direction] = set()
    for match in _COMPARISON.finditer(text):
        found.update(_matched(match))
    return found


def _matched(match: re.Match[str]) -> set[Direction]:
    found: set[Direction] = {d for d in _OPPOSITE if match.group(d)}
    also = _ALSO.get(match.group(0).lower())
    return found | {also} if also else found


def opposite(direction: Direction) -> Direction:
    return _OPPOSITE[direction]


def modalities(text: str) -> set[Modality]:
    found: set[Modality] = set()
    for match in _MODALITY.finditer(_COMPARISON.sub(" ", text)):
        found.update(m for m, _ in _MODALITIES if match.group(m))
    return found


def lead_words(text: str, value: str) -> set[str]:
    """Who or what the value is said of: the content words before it in its phrase, with those of the
    number-free phrases just before ("For physicians, the allowance is $3,000"). A phrase that opens with
    its value gives its own words and those of the number-free phrases after it ("6 occurrences: written
    warning")."""
    segments = value_segments(text)
    before: set[str] = set()
    for index, segment in enumerate(segments):
        stated = [q for q in quantities(segment) if q.value == value]
        if stated:
            lead = before | set(content_stems(subject_words(segment[:stated[0].at])))
            if lead:
                return lead
            following = [segment]
            for later in segments[index + 1:]:
                if quantities(later):
                    break
                following.append(later)
            return set(content_stems(subject_words(" ".join(following))))
        before = set() if quantities(segment) else before | set(content_stems(segment))
    return set()


def subject_words(text: str) -> str:
    """The text without its numbers, bounds and modal verbs: what is left says whose value it is."""
    return _MODALITY.sub(" ", _COMPARISON.sub(" ", _QUANTITY.sub(" ", text)))
