"""Shared text analysis: word stems for search and overlap, and the facts (numbers, names) a claim states.

One module so that retrieval, the extractive model and the claim check agree on what a word is.
"""

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Final

import snowballstemmer  # type: ignore[import-untyped]  # the package ships no type information

STOPWORDS: Final = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
    during each few for from further had hadn't has hasn't have haven't having he her here hers herself him
    himself his how i i'm i've if in into is isn't it it's its itself just let's me more most my myself no
    nor not now of off on once only or other ought our ours ourselves out over own same shan't she should
    shouldn't so some such than that that's the their theirs them themselves then there there's these they
    this those through to too under until up very was wasn't we we're were weren't what what's whats when
    where which while who whom why will with won't would wouldn't you you're your yours yourself
    yourselves get got gets do does also may might must shall us one ok okay please tell know need want
    like still really just thing things stuff anything something someone anyone many much i'd i'll you'd you'll
    you've he'd he'll he's she'd she'll she's it'll we'd we'll we've they'd they'll they're they've
    dont doesnt didnt cant couldnt wouldnt shouldnt isnt arent wasnt werent hasnt havent hadnt wont im ive
    youre youve youll theyre theyve thats theres hows whos wheres whens whys heres""".split()
)
"""Chat drops the apostrophe ("why dont we ...", "im on call"): those spellings are stopwords too, except where
they are words of their own ("ill", "id", "lets", "wed", "well", "shell")."""

ADDRESS: Final = re.compile(r"\b(?:https?://|www\.)[^\s<>()\[\]]+|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b", re.IGNORECASE)
"""A web or e-mail address: words of a place, not facts (`%20` in a URL is not the number 20)."""
_WORD: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\u2019\-]*")
_NUMBER: Final = re.compile(r"(?<![A-Za-z])\d[\d,]*(?:\.\d+)?")
_CAPITALISED: Final = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*\b")
_STEMMER: Final = snowballstemmer.stemmer("english")
_INDEX_TOKEN: Final = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """Lower-cased word tokens, apostrophes normalised, edge hyphens dropped."""
    return [w.lower().replace("\u2019", "'").strip("-'") for w in _WORD.findall(text)]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


def stems(text: str) -> list[str]:
    """Stems of every word, stopwords included: the form the search index stores."""
    return [stem(w) for w in words(text) if w]


def content_stems(text: str) -> list[str]:
    """Stems of the words that carry meaning: no stopwords, no bare punctuation."""
    return [stem(w) for w in words(text) if w and w not in STOPWORDS]


def chunk_stems(heading: str, text: str) -> list[str]:
    """What a chunk is found by: the stems of its heading path and its text, stopwords included."""
    return stems(heading + "\n" + text)


def index_tokens(stemmed: Iterable[str]) -> list[str]:
    """Stems as the full-text index's terms: a stem such as `follow-up` or `o'brien` is two terms, split where
    SQLite FTS5's tokenizer splits the stems it is given, so both databases count the same terms."""
    return [token for one in stemmed for token in _INDEX_TOKEN.findall(one)]


def numbers(text: str) -> set[str]:
    """Every number, normalised: `$1,200.00` and `1200` are the same fact."""
    found = set()
    for raw in _NUMBER.findall(ADDRESS.sub(" ", text)):
        whole, _, fraction = raw.replace(",", "").partition(".")
        whole = whole.lstrip("0") or "0"
        fraction = fraction.rstrip("0")
        found.add(f"{whole}.{fraction}" if fraction else whole)
    return found


def capitalised_names(text: str) -> set[str]:
    """Capitalised words that are not the first word of a sentence nor a capitalised stopword."""
    names = set()
    for sentence in re.split(r"(?<=[.!?:;])\s+|\n+", text):
        for index, match in enumerate(_CAPITALISED.finditer(sentence.strip(" -*#>|"))):
            word = match.group(0)
            if index == 0 or word.lower() in STOPWORDS or word.isdigit():
                continue
            names.add(word.lower())
    return names
