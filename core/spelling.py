"""Slips of the keyboard in a question, and chat's shorthand ("msgs", "perf"), read as the words they were meant
to be.

Chat questions carry typos ("comapny", "erors", "miscarrage") that no document uses, so every word-overlap
feature reads them as words the documents never state, the strongest sign of a question they do not answer.
A typed word is read as a slip only when it is a lower-case word of plain letters that is no English word, and
exactly one word of the given vocabulary (the words of the passages retrieved for the asker, nothing else) is
one slip away: two letters swapped, or one letter more or less. A changed letter is not a slip here: it turns
too many real words into others ("cost", "host"). A capitalised word is a name as typed, and a word with an
apostrophe ("mustn't") is left whole.

The English words (`english_words.txt`) are the whole words of MiniLM's WordPiece vocabulary, some 21,700: they
keep "dairy" from being read as "diary". The list lacks some words of company prose ("perk", "stipend"), so a
slip is read only into a word of four letters or more that is no stopword ("perk" never becomes "per").
"""

import re
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Final

from core.text import STOPWORDS

MIN_SLIP_LENGTH: Final = 4
"""Shorter words are one slip away from too many others ("tme": "time", "tee", "me")."""
_WORD: Final = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")
"""A word of letters, any alphabet, with its apostrophes: so "mustn't" is one word, never "mustn" and "t"."""
_PLAIN: Final = re.compile(r"[a-z]+")

_SHORTHAND: Final[dict[str, tuple[str, ...]]] = {
    "msg": ("message",), "msgs": ("messages",), "yr": ("year",), "yrs": ("years",), "hr": ("hour",),
    "hrs": ("hours",), "wk": ("week",), "wks": ("weeks",), "mo": ("month",), "mos": ("months",),
    "mgr": ("manager",), "mgrs": ("managers",), "mtg": ("meeting",), "mtgs": ("meetings",),
    "appt": ("appointment",), "ppl": ("people",), "dept": ("department",), "acct": ("account",),
    "amt": ("amount",), "govt": ("government",), "intl": ("international",), "approx": ("approximately",),
    "perf": ("performance",), "prod": ("production",), "repo": ("repository",), "repos": ("repositories",),
    "comms": ("communication", "communications"), "comp": ("compensation",), "vuln": ("vulnerability",),
    "vulns": ("vulnerabilities",), "sev": ("severity",), "cal": ("calendar",), "convo": ("conversation",),
    "config": ("configuration",), "env": ("environment",), "info": ("information",),
    "doc": ("documentation", "document"), "docs": ("documentation", "documents"),
    "req": ("request", "requirement"), "reqs": ("requests", "requirements"), "eng": ("engineering", "engineers"),
    "hols": ("holidays",),
}
"""Chat's shorthand for words a page spells out ("slack msgs", "perf review"), read as the word only where the
retrieved passages use it: the first of its readings they do ("docs": "documentation", else "documents")."""


@cache
def english_words() -> frozenset[str]:
    text = resources.files("core").joinpath("english_words.txt").read_text(encoding="utf-8")
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


def one_slip_apart(typed: str, meant: str) -> bool:
    """Two adjacent letters swapped, or one letter left out or added."""
    if len(typed) == len(meant):
        diffs = [i for i, (a, b) in enumerate(zip(typed, meant, strict=True)) if a != b]
        return (len(diffs) == 2 and diffs[1] == diffs[0] + 1
                and typed[diffs[0]] == meant[diffs[1]] and typed[diffs[1]] == meant[diffs[0]])
    shorter, longer = sorted((typed, meant), key=len)
    if len(longer) - len(shorter) != 1:
        return False
    return any(longer[:i] + longer[i + 1:] == shorter for i in range(len(longer)))


def respelt(question: str, vocabulary: Iterable[str]) -> str:
    """The question with each slip, and each shorthand of chat, replaced by the vocabulary word it was meant to
    be."""
    known = {word.lower() for word in vocabulary}
    readings = {word for word in known if len(word) >= MIN_SLIP_LENGTH and word not in STOPWORDS}
    english = english_words()

    def meant(match: re.Match[str]) -> str:
        typed = match.group(0)
        if typed in known:
            return typed
        spelt_out = next((word for word in _SHORTHAND.get(typed, ()) if word in known), None)
        if spelt_out is not None:
            return spelt_out
        if not _PLAIN.fullmatch(typed) or len(typed) < MIN_SLIP_LENGTH or typed in english:
            return typed
        matches = {word for word in readings if abs(len(word) - len(typed)) <= 1 and one_slip_apart(typed, word)}
        return matches.pop() if len(matches) == 1 else typed

    return _WORD.sub(meant, question)


def letter_words(text: str) -> set[str]:
    """The words of a text: the vocabulary a question's slips are read against."""
    return {word.lower() for word in _WORD.findall(text)}
