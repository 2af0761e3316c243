"""What a quote is read in: the words around it that a reader takes its own sentence with.

A quote's sentence leaves things implicit that its surroundings say: "It must be longer than 14 characters"
under a sentence about the passcode, "Carryover: to 31 March" under "Germany > Annual leave", a list item under
its lead-in, a table cell in its row, "while she is not in" after a sentence naming Judy. A claim that says them
("The passcode must be ...") states what the quote states. The guard lets a claim's names and words come from
this context; what makes a claim true or false (numbers, negation, bounds, modality, whose value it is) it
still reads in the quote alone (`checks`).

The context is the heading path and document title, the statements' lead-ins (a list item's, a table's header
and the rest of a quoted row), the sentences just before the quote in its paragraph or item (what "it", "this",
"these" stand for), and the asker's own question. Across a paragraph break, the sentences that introduce a list
with no lead-in of its own, or that a paragraph opening with "this" points back to, are its `introduction`:
their words may be the claim's, never their names or conditions.

A list straight under a heading that denies or sets a condition ("What is not reimbursed", "If you leave the
company") has that heading as its lead-in (`heading_lead_in`): "Gym memberships" under "What is not reimbursed"
says they are not. Its negation is then the quote's own, not only its context.
"""

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Final

from core.application.language import facts
from core.application.language.quotes import Statement, plain, statements
from core.domain import RetrievedChunk
from core.text import capitalised_names, content_stems, stem, words

PRECEDING_SENTENCES: Final = 2
"""How many sentences (or list items) before the quote, in its paragraph or list, it is read after."""
SHARED_PREFIX: Final = 4
"""A nationality and a context word that open alike over this many letters, and over three quarters of the
shorter, are one name in two forms ("German" under "Germany", "Italian" under "Italy")."""
ORGANISATION_SHARE: Final = 0.75
MIN_ORGANISATION_DOCUMENTS: Final = 3
"""A name written mid-sentence in three quarters of the documents (three at least) is the organisation they
speak for: a handbook names its company on nearly every page, a vendor or a tool on a few (measured on four
handbooks: the company's name in 76 to 100% of their documents, the next name in 41 to 60%)."""
_NATIONALITY: Final = ("an", "ese", "ish", "ic", "i")
"""How an adjective of nationality ends: only such a word is matched by its opening letters."""

_DEMONYMS: Final = {
    "dutch": ("netherlands", "holland"), "british": ("uk", "britain", "kingdom"), "english": ("england",),
    "french": ("france",), "spanish": ("spain",), "swiss": ("switzerland",), "irish": ("ireland",),
    "polish": ("poland",), "danish": ("denmark",), "swedish": ("sweden",), "finnish": ("finland",),
    "norwegian": ("norway",), "greek": ("greece",), "turkish": ("turkey", "türkiye"), "welsh": ("wales",),
    "scottish": ("scotland",), "american": ("us", "usa", "america"), "filipino": ("philippines",),
    "belgian": ("belgium",), "chinese": ("china",), "japanese": ("japan",), "thai": ("thailand",),
    "czech": ("czechia",), "emirati": ("uae", "emirates"), "kiwi": ("zealand",),
}
"""Adjectives of nationality whose country is not spelled alike (the rest share a prefix)."""
_CONDITION: Final = re.compile(r"^\W*(?:if|when|whenever|unless|once|while|until|provided|providing|only|except|"
                               r"in case|as long as)\b(?!\s+to\b)", re.IGNORECASE)
"""A heading that sets a condition on what is listed under it ("If you leave the company", "Only with approval");
"When to escalate" names a topic, as "How to escalate" does, and sets none."""
_CONDITIONAL: Final = re.compile(r"\b(?:if|when|whenever|unless|once|while|until|provided|providing|only|except|"
                                 r"in case|as long as)\b", re.IGNORECASE)
"""A lead-in that sets a condition on what follows it, wherever the word stands ("Use the travel card if")."""
_HYPHENATED: Final = re.compile(r"\w+(?:-\w+)+")
"""A word joined by a hyphen denies nothing: "No-show fees"."""
FIRST_PERSON: Final = frozenset({"we", "our", "us", "ours", "ourselves"})
"""Where a document speaks as its organisation: a claim may name the organisation in their place."""
_NUMBERED: Final = re.compile(r"^\s*(\d{1,2})[.)]\s")
_ORDINALS: Final = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
_POINTING_BACK: Final = frozenset({"this", "these", "that", "those", "it", "they", "such"})
"""Words a paragraph opens with that stand for what the paragraph before it said."""


@dataclass(frozen=True, kw_only=True)
class Asking:
    """What a claim is read with besides its cited chunks: the asker's question, every source the model was given,
    and the names of the organisation the documents call "we" (`organisation` in `sourced.yml`, and those the
    knowledge base shows: `organisation_names`)."""

    question: str = ""
    given: Sequence[RetrievedChunk] = ()
    organisation: tuple[str, ...] = ()

    @cached_property
    def organisation_words(self) -> frozenset[str]:
        """Where a name the claim puts for "we" may come from: the organisation's names, or, where none is known,
        the question's words. A vendor the passages name (however often) is not "we", nor one the asker names
        ("I'm not on Deel EOR") where the documents show who "we" is."""
        return frozenset(words(" ".join(self.organisation or (self.question,))))

    @cached_property
    def sources_text(self) -> str:
        """Every given source, titles and headings included: where a claim's capitalised first word shows
        whether it is a name."""
        return "\n".join(f"{chunk.passage.title}\n{chunk.passage.heading}\n{chunk.text}" for chunk in self.given)


NOT_ASKED: Final = Asking()


@dataclass(frozen=True, kw_only=True)
class QuoteContext:
    """The words a quote is read with, apart from the quote itself."""

    framing: str
    """Heading path, title, lead-ins and the rest of a quoted row: what the quote is said under."""
    before: str
    """The sentences just before the quote: what its "it" or "this" stands for, never a clause of its own."""
    introduction: str = ""
    """Across a paragraph break, the sentences that introduce the quote's list (one with no lead-in of its own)
    or that its paragraph's opening "this" points back to, and the statement a quote ending in a colon announces:
    their words may be the claim's, their names and conditions not (a name there is as likely another subject as
    the quote's)."""
    question: str
    scope: str = ""
    """What the quote is said under that may set a condition on it: the heading path and title (a section scopes
    what it says: "If you work in Germany" under "Germany"), and the lead-ins and questions it is read after that
    ask or set a condition themselves ("If you travel abroad:", "Lost your badge?"); not a lead-in that states a
    fact of its own ("Speed matters more than anything:"), nor the sentences before it."""

    @cached_property
    def around(self) -> str:
        return f"{self.framing}\n{self.before}"

    @cached_property
    def text(self) -> str:
        return f"{self.around}\n{self.question}"

    @cached_property
    def framing_text(self) -> str:
        """What a clause of the claim may rest on besides the quote: the framing and the asker's own words."""
        return f"{self.framing}\n{self.question}"

    @cached_property
    def stems(self) -> frozenset[str]:
        return frozenset(content_stems(self.text))

    @cached_property
    def word_forms(self) -> frozenset[str]:
        """Its words, their stems and the parts of hyphenated or elided ones."""
        found = set(words(self.text))
        found |= {part for word in found for part in word.replace("'", "-").split("-") if part}
        return frozenset(found | {stem(word) for word in found})

    def names(self, name: str) -> bool:
        """Does the context name this (a claim's capitalised word), in its form, its stem, or as the country of
        a nationality?"""
        forms = self.word_forms
        if name in forms or stem(name) in forms:
            return True
        if any(country in forms for country in _DEMONYMS.get(name, ())):
            return True
        return name.endswith(_NATIONALITY) and any(_same_name(name, word) for word in forms)


def _same_name(a: str, b: str) -> bool:
    shorter = min(len(a), len(b))
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shorter > SHARED_PREFIX and shared >= SHARED_PREFIX and shared * 4 >= shorter * 3


def heading_lead_in(heading: str) -> str:
    """The last title of a heading path when it denies or sets a condition ("Expenses > What is not reimbursed"
    gives "What is not reimbursed"), else '': a list item with no lead-in of its own is read after it, as after a
    lead-in sentence, so the negation or condition travels with every item quoted under it."""
    title = plain(heading.rsplit(" > ", 1)[-1]).strip()
    if not title:
        return ""
    denies = facts.negations(_HYPHENATED.sub(" ", title)) > 0
    return title if denies or _CONDITION.match(title) else ""


def unled_items(quoted: Sequence[Statement]) -> bool:
    """Are the quoted statements all list items read with no lead-in (nor question) of their own?"""
    return bool(quoted) and all(s.kind == "item" and not s.context and not s.asked for s in quoted)


def quote_context(chunk: RetrievedChunk, quoted: Sequence[Statement], asking: Asking, *, given: bool = True
                  ) -> QuoteContext:
    """The context of a quote the model gave (`given`); of a sentence the guard aligned a claim to itself, its
    framing and the question only: with the sentences before it too, a claim could be aligned to the sentence
    holding a value and take its subject from the one before."""
    passage = chunk.passage
    titles = [passage.title, passage.heading.replace(" > ", ". ")]
    lead_ins = [part for statement in quoted for part in (statement.context, statement.asked) if part]
    parts = titles + lead_ins + _rows(chunk.text, quoted) + _ordinals(chunk.text, quoted)
    scope = titles + [part for part in lead_ins if _CONDITIONAL.search(part) or "?" in part]
    return QuoteContext(framing="\n".join(plain(part) for part in parts if part),
                        before="\n".join(plain(part) for part in _before(chunk.text, quoted)) if given else "",
                        introduction="\n".join(plain(p) for p in _introduction(chunk.text, quoted)
                                                + _announced(chunk.text, quoted)) if given else "",
                        question=asking.question, scope="\n".join(plain(part) for part in scope if part))


def _rows(text: str, quoted: Iterable[Statement]) -> list[str]:
    """A quoted table row whole: a cell is read in its row."""
    return [text[s.start:s.end] for s in quoted if s.kind == "row"]


def _ordinals(text: str, quoted: Iterable[Statement]) -> list[str]:
    """A numbered list item's place in words: "1. Send the email" is the first step."""
    found = []
    for statement in quoted:
        line = text[text.rfind("\n", 0, statement.start) + 1:statement.start]
        number = _NUMBERED.match(line)
        if statement.kind == "item" and number and int(number.group(1)) <= len(_ORDINALS):
            found.append(_ORDINALS[int(number.group(1)) - 1])
    return found


def _before(text: str, quoted: Sequence[Statement]) -> list[str]:
    """The sentences just before the quote in its paragraph or list (an item's earlier sentences, the items just
    before it), and for a table row or a line of code the sentence that leads into its table or block, with the
    one before it in its paragraph (what the lead's "they" stands for: "A limit the customer set stands. Where
    they set none, the trial caps the product:")."""
    if not quoted:
        return []
    first = quoted[0]
    every = statements(text)
    if first.kind in ("row", "code"):
        earlier = [s for s in every if s.end <= first.start and s.kind != first.kind]
        if not earlier or not _ends_with_colon(text, earlier[-1]):
            return []
        lead = earlier[-1]
        return [text[s.start:s.end] for s in _earlier_in_block(text, lead, every)[-(PRECEDING_SENTENCES - 1):]
                ] + [text[lead.start:lead.end]]
    return [text[s.start:s.end] for s in _earlier_in_block(text, first, every)[-PRECEDING_SENTENCES:]]


def _earlier_in_block(text: str, first: Statement, every: Sequence[Statement]) -> list[Statement]:
    """The sentences and items before `first` in its paragraph or list (up to the blank line before it)."""
    boundary = text.rfind("\n\n", 0, first.start)
    return [s for s in every if boundary < s.start and s.end <= first.start and s.kind in ("sentence", "item")]


def _introduction(text: str, quoted: Sequence[Statement]) -> list[str]:
    """The last sentences of the paragraph before the quote's block, when that block is a list with no lead-in of
    its own or a paragraph that opens by pointing back ("This is encouraged."): what its items or its "this"
    stand for."""
    if not quoted or quoted[0].kind not in ("sentence", "item"):
        return []
    first = quoted[0]
    every = statements(text)
    earlier = _earlier_in_block(text, first, every)
    opening = earlier[0] if earlier else first
    unled_list = opening.kind == "item" and not opening.context
    if not (unled_list or (not earlier and points_back(text[first.start:first.end]))):
        return []
    boundary = text.rfind("\n\n", 0, first.start)
    preceding = reversed([s for s in every if s.end <= boundary])
    paragraph = list(itertools.takewhile(lambda s: s.kind == "sentence", preceding))[:PRECEDING_SENTENCES]
    return [text[s.start:s.end] for s in reversed(paragraph)]


def _announced(text: str, quoted: Sequence[Statement]) -> list[str]:
    """What a quote that ends by announcing it ("Send the following email to the account owner:") announces: the
    statement right after it (the email's subject line)."""
    if not quoted or not _ends_with_colon(text, quoted[-1]):
        return []
    following = [s for s in statements(text) if s.start >= quoted[-1].end]
    return [text[following[0].start:following[0].end]] if following else []


def _ends_with_colon(text: str, statement: Statement) -> bool:
    """Does the statement announce what follows it ("Send the following email to the account owner:")?"""
    return text[statement.start:statement.end].rstrip(" *_").endswith(":")


def points_back(sentence: str) -> bool:
    """Does the sentence open with a word that stands for something said before it ("This is encouraged.")?"""
    opening = words(sentence)[:1]
    return bool(opening) and opening[0] in _POINTING_BACK


def organisation_names(documents: Iterable[tuple[str, str]]) -> frozenset[str]:
    """The names the organisation goes by, from (document id, text) pairs (a document may come in several):
    the words written capitalised mid-sentence in `ORGANISATION_SHARE` of the documents."""
    names_by_document: dict[str, set[str]] = {}
    for doc_id, text in documents:
        names_by_document.setdefault(doc_id, set()).update(capitalised_names(text))
    counted = Counter(name for names in names_by_document.values() for name in names)
    least = max(MIN_ORGANISATION_DOCUMENTS, ORGANISATION_SHARE * len(names_by_document))
    return frozenset(name for name, n in counted.items() if n >= least)
