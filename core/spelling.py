"""Slips of the keyboard in a question, read as the words they were meant to be.

Chat questions carry typos ("comapny", "erors", "miscarrage") that no document uses, so every word-overlap
feature reads them as words the documents never state, the strongest sign of a question they do not answer.
A question word is read as a slip only when it is no English word and exactly one word of the given
vocabulary (the words of the passages retrieved for the asker, nothing else) is one slip away: two letters
swapped, or one letter more or less. A changed letter is not a slip here: it turns too many real words into
others ("cost", "host").

The English words are the whole words of MiniLM's WordPiece vocabulary, the tokenizer file shipped for the
embedder (`core/retrieval/minilm_tokenizer`): some 20,000 lower-case words, so that "dairy" is never read
as "diary" and a name the documents use is found as it is.
"""

import json
import re
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Final

MIN_SLIP_LENGTH: Final = 4
"""Shorter words are one slip away from too many others ("tme": "time", "tee", "me")."""
_LETTERS: Final = re.compile(r"[A-Za-z]+")
_WORD_LIST: Final = resources.files("core.retrieval").joinpath("minilm_tokenizer", "tokenizer.json")


@cache
def english_words() -> frozenset[str]:
    vocabulary = json.loads(_WORD_LIST.read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(token for token in vocabulary if token.isalpha() and token.islower())


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
    """The question with each slip replaced by the vocabulary word it was meant to be."""
    known = {word.lower() for word in vocabulary}
    english = english_words()

    def meant(match: re.Match[str]) -> str:
        typed = match.group(0).lower()
        if len(typed) < MIN_SLIP_LENGTH or typed in english or typed in known:
            return match.group(0)
        matches = {word for word in known if abs(len(word) - len(typed)) <= 1 and one_slip_apart(typed, word)}
        return matches.pop() if len(matches) == 1 else match.group(0)

    return _LETTERS.sub(meant, question)


def letter_words(text: str) -> set[str]:
    """The words of a text that are letters only: the vocabulary a question's slips are read against."""
    return {word.lower() for word in _LETTERS.findall(text)}
