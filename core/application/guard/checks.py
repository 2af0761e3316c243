"""The guard: checks a parsed envelope against what retrieval actually returned.

Citation ids are compared ordinally (`CHK-1` is not `chk-1`). A claim is supported only by its quote: the
verbatim span of a cited chunk that states it, at most two sentences long (a claim without a quote is held to
the best-aligned sentence, or pair of adjacent sentences, of its cited chunks). Support is sentence-local,
never chunk-wide: a real model otherwise cites a passage that holds the right number beside another fact.
The quote is read in its context (`quote_context`: headings, lead-ins, the sentences just before it, the
question): names and words may come from there, the facts only from the quote.
Each rule below is one reason a claim is refused as `unsupported_claim`:
- the quote does not occur in a cited chunk, or spans more than two sentences (a list under its lead-in is one);
- the quote is text addressed to automated readers (content, never an answer);
- a number, amount, percentage, date, duration or unit of the claim is not in the quote (the asker's own and a
  heading's named number aside); a capitalised name is in neither the quote nor its context (or a context's name
  takes the place of a quote's word that is no pronoun), nor the organisation the documents call "we";
- the quote and its context do not cover the claim's content words (with an embedder: nor is the claim close in
  meaning), a clause of the claim is not covered by the quote and what it is said under, or a word of the claim
  comes from another sentence of the chunk;
- a condition the claim sets stands neither in the quote nor in what scopes it (headings, a lead-in or question
  that sets a condition, the asker's question): another sentence of the source is never a condition of this one;
- the claim flips the quote: negation, direction of a bound, modality, or the subject a value belongs to (a
  subject named elsewhere put in place of the quote's own), each read in the clauses English makes (`facts`);
- the claim gives the subject of the question the quote replies to what the quote says of its own subject
  ("Contractors get ..." quoting "Employees get ..." under "Can contractors get a laptop?");
- with an embedder, a claim that is not the quote's own words is too far from it in meaning.
"""

import difflib
import hashlib
import itertools
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Final, Protocol

from core.application.guard.envelope import Envelope, EnvelopeClaim
from core.application.language import facts
from core.application.language.instructions import addressed_to_assistants
from core.application.language.quote_context import (
    FIRST_PERSON,
    NOT_ASKED,
    Asking,
    QuoteContext,
    heading_lead_in,
    points_back,
    quote_context,
    unled_items,
)
from core.application.language.quotes import (
    MAX_STATEMENTS,
    Span,
    Statement,
    cell_spans,
    occurrences,
    plain,
    quoted_text,
    spanned,
    statements,
    windows,
)
from core.application.ports import Embedder
from core.documents.reading import read_with
from core.domain import CitationTier, RetrievedChunk
from core.text import STOPWORDS, capitalised_names, content_stems, stem, words

SHORT_QUOTE_WORDS: Final = 12
"""A quote this short may span one statement more than `MAX_STATEMENTS`: "Merge anytime. Friday afternoon?
Merge." is one rule in fragments, and too short to take a number from one sentence and a subject from another."""
MIN_CONTENT_OVERLAP: Final = 0.6
"""Share of the claim's content words the quote (with its table header and the section heading) must hold."""
COVER_SIMILARITY: Final = 0.8
"""With an embedder: a claim below the word overlap is still covered when its cosine to the quote reaches
this (a paraphrase in other words)."""
MIN_CLAUSE_WORDS: Final = 3
MIN_CLAUSE_OVERLAP: Final = 0.5
"""A clause of the claim with at least `MIN_CLAUSE_WORDS` content words must have this share in the quote: an
added clause ("..., and receipts are not needed") is not covered by the rest of the claim being right."""
MIN_CONDITION_WORDS: Final = 2
"""A condition of the claim with this many content words or more must stand in its quote or scope
(`_unstated_condition`): "if needed" restates "when necessary"."""
_IN_THAT_CASE: Final = re.compile(r"\b(?:in (?:that|this|which|such a) case|if so|where this is the case)\b",
                                  re.IGNORECASE)
_CONDITIONING: Final = re.compile(r"\b(?:if|unless|provided(?: that)?|providing|as long as|on condition that)\b",
                                  re.IGNORECASE)
SUPPORT_FLOOR: Final = 0.5
"""With an embedder: a claim that is not its quote's own words needs at least this cosine to the quote."""
DIRECT_OVERLAP: Final = 0.9
DIRECT_SIMILARITY: Final = 0.95
"""A cosine at which a claim is near-verbatim: a `direct` citation."""
_ATTRIBUTING: Final = r"(?:according to|as (?:stated|described|set out|explained) (?:in|by)|per)"
_LOCATING: Final = r"(?:in|under)"
_SOURCE_NOUN: Final = r"(?:section|page|part|document|doc|policy|handbook|guide|guidelines)"
"""How a claim names its source before what it says: "According to the Parental leave section, ...", "In the
Onboarding Guide page: ..." ("In Germany, ..." under a heading "Germany" is the claim's own words)."""
_REPLY_WORDS: Final = frozenset("""yes yep yeah nope sure correct absolutely indeed certainly definitely course sorry
    sadly unfortunately afraid never""".split())
"""Words that reply to a question without saying anything of their own: no subject of a sentence."""
_SUBJECT_VERBS: Final = frozenset("""is are was were be can cannot can't may must should will would could might shall
    do does did don't doesn't didn't have has had get gets got receive receives need needs""".split())
"""Verbs a sentence's subject stands before ("Employees get ...", "Meals are ..."): a closed list, so that an
instruction ("Upload them to Concur.") or a fragment ("Ten per year.") has no subject."""
_CONTRACTED_VERBS: Final = frozenset({"re", "s", "ll", "ve", "d", "m"})
_SUBJECT_WINDOW: Final = 7
_OWN_SUBJECT_WINDOW: Final = 10
"""A quoted sentence's subject may run longer than a claim's ("The HogHero app in the right sidebar should ...")."""
_FRAGMENT_WORDS: Final = 6
_QUESTION: Final = re.compile(r"[^.!?:;]*\?")
"""The questions of what a statement is read after, without the lead-ins around them."""
_LEADING_CLAUSE: Final = re.compile(
    r"^\W*(?:if|when|whenever|before|after|once|unless|while|until|during)\b[^,;:]*[,;:]\s*", re.IGNORECASE)
"""A condition a claim opens with ("If a laptop is stolen, ..."): its main clause's subject comes after it."""
_SUBORDINATE: Final = re.compile(r"^\W*(?:if|when|whenever|unless|once|while|until|provided|as long as)\b",
                                 re.IGNORECASE)
"""A clause that sets a condition on the sentence's main one ("..., if the person is close to the goals")."""
_REFERRING_PRONOUNS: Final = frozenset({"they", "it", "he", "she", "this", "these", "those"})
_REFERRING: Final = _REFERRING_PRONOUNS | FIRST_PERSON | frozenset(
    {"that", "them", "its", "their", "his", "her", "him", "such", "here", "there", "you", "your"})
"""Words that stand for something said elsewhere: a claim may say what they stand for in their place."""
_PLACING: Final = frozenset({"in", "on", "with", "via", "using", "through", "by", "to", "from", "into", "at"})
"""Prepositions after which a heading names a tool or a place, not whom it addresses."""
_SECOND_PERSON: Final = frozenset({"you", "you'll", "you're", "you've", "you'd", "your"})
_FIRST_PERSON_SPAN: Final = 3
_ROW_CELLS: Final = 3
"""A row of this many cells or more is read, for meaning, as the cells a claim states (`_stated_cells`)."""
_DETERMINERS: Final = frozenset({"the", "a", "an", "your", "our", "their", "this", "these", "those", "that", "any",
                                  "all", "each", "every", "its", "his", "her", "my"})
_JOINING_WORDS: Final = frozenset({"and", "or", "like", "plus", "also", "too"})
"""Words that join a second subject to the quote's ("Employees and contractors get ...")."""
_NEGATION_WORDS: Final = frozenset({"not", "no", "never"})
_CONTRACTED_NEGATIONS: Final = {"can't": "can", "cannot": "can", "won't": "will", "shan't": "shall"}
_NEGATION_REACH: Final = 2
"""How many words on either side of a negation say which clause it belongs to (`_around_negations`)."""
_SENTENCE: Final = re.compile(r"(?<=[.!?])\s+|\n+")
_OPENERS: Final = frozenset({"however", "instead", "otherwise", "also", "therefore", "meanwhile", "afterwards"})
_OPENING: Final = re.compile(r"^\W*((?:\w+\s+){0,2}\w+),\s+")
"""A short phrase a sentence opens with before a comma ("For example, ", "In the UK, "): no subject."""
_YEAR: Final = re.compile(r"(?:19|20)\d\d")
_LIGHT_VERBS: Final = frozenset({"give", "gave", "given", "make", "made", "take", "took", "taken"})
"""The stems of verbs that carry no fact of their own, only the noun after them does ("gives guidance" for "provide
guidance"): one of them elsewhere in the chunk is a paraphrase's word, not a word taken from another sentence
("get" is a stopword already)."""
_CAPITALISED: Final = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*\b")


@dataclass(frozen=True, kw_only=True)
class Anchor:
    """The span of a chunk a claim rests on: the model's quote, or the best-aligned sentences without one. Its
    reading (`pieces`, `evidence`) is computed once: every rule reads it."""

    chunk: RetrievedChunk
    span: Span
    statements: tuple[Statement, ...]
    given: bool
    """True when the model gave the quote; False when the guard aligned the claim itself."""

    @property
    def text(self) -> str:
        return self.chunk.text[self.span.start:self.span.end]

    @cached_property
    def pieces(self) -> list[str]:
        """The quote as read, one piece per statement it spans: a sentence's words, or a table row's cells each
        under its header."""
        return [quoted_text(self.chunk.text, statement, self.span) for statement in self.statements]

    @cached_property
    def evidence(self) -> str:
        return "\n".join(self.pieces)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, kw_only=True)
class Supported:
    anchor: Anchor
    tier: CitationTier


@dataclass(frozen=True, kw_only=True)
class Unsupported:
    reason: str


class ClaimSupport(Protocol):
    """How a claim is judged against its cited chunks: `claim_support` in production; a benchmark may put
    another rule beside it (the chunk-wide check it replaced) on the same model outputs."""

    def __call__(self, claim: EnvelopeClaim, cited: Sequence[RetrievedChunk], *,
                 embedder: Embedder | None = None, asking: Asking = NOT_ASKED) -> "Supported | Unsupported": ...


def unknown_chunk_ids(envelope: Envelope, retrieved_ids: Sequence[str]) -> list[str]:
    """Cited ids that are not, character for character, among the retrieved ids."""
    known = set(retrieved_ids)
    return [cid for claim in envelope.claims for cid in claim.chunk_ids if cid not in known]


def cited_chunks(claim: EnvelopeClaim, by_id: Mapping[str, RetrievedChunk]) -> list[RetrievedChunk]:
    return [by_id[cid] for cid in dict.fromkeys(claim.chunk_ids)]


def claim_support(claim: EnvelopeClaim, cited: Sequence[RetrievedChunk], *,
                  embedder: Embedder | None = None, asking: Asking = NOT_ASKED) -> Supported | Unsupported:
    """The claim's anchor and citation tier, or why its quote does not state it. The claim is read as plain text,
    as its quote is: a model's Markdown link is its words, never its target's numbers. `asking` is what the
    quote is also read with: the question, and the sources the model was given (`quote_context`)."""
    claim_text = _without_attribution(plain(claim.text), cited)
    if claim.quote is not None and claim.quote.strip():
        anchor = quoted_anchor(claim.quote, claim_text, cited)
        if anchor is None:
            return Unsupported(reason="quote not found in the cited chunk")
        spans = _statement_count(anchor.statements)
        if spans > MAX_STATEMENTS + (len(words(anchor.text)) <= SHORT_QUOTE_WORDS):
            return Unsupported(reason=f"quote spans {spans} sentences, more than {MAX_STATEMENTS}")
    else:
        anchor = aligned_anchor(claim_text, cited)
        if anchor is None:
            return Unsupported(reason="no sentence in the cited chunk")
    context = quote_context(anchor.chunk, anchor.statements, asking, given=anchor.given)
    similarity = _Similarity(claim_text, anchor, embedder, context)
    reason = unstated_reason(claim_text, anchor, similarity, context, asking)
    if reason is not None:
        where = "quote" if anchor.given else "best-aligned sentence"
        return Unsupported(reason=reason.replace("the quote", f"the {where}"))
    return Supported(anchor=anchor, tier=_tier(claim_text, anchor, similarity))


def _statement_count(quoted: Sequence[Statement]) -> int:
    """How many statements a quote spans, the items of one list read after the same lead-in counting as one
    ("Things like:" and the three items under it are two): a claim that lists them states one fact."""
    count = 0
    for before, statement in zip((None, *quoted), quoted, strict=False):
        same_list = before is not None and statement.kind == before.kind == "item" \
            and statement.context == before.context
        count += not same_list
    return count


def _without_attribution(claim_text: str, cited: Sequence[RetrievedChunk]) -> str:
    """The claim without an opening that names a cited section or document as its source ("According to the
    Parental leave section, ..."): naming the source asserts nothing, and the title's words and numbers ("1.
    Product development") are no claim's facts. A source the claim does not cite is its words."""
    titles = {title for chunk in cited for title in (*chunk.passage.heading.split(" > "), chunk.passage.title)}
    for title in sorted((t.strip() for t in titles if t.strip()), key=len, reverse=True):
        named = rf"(?:the\s+)?[\"'\u201c\u2018]?{re.escape(title)}[\"'\u201d\u2019]?"
        opening = re.match(rf"\s*(?:{_ATTRIBUTING}\s+{named}(?:\s+{_SOURCE_NOUN})?|{_LOCATING}\s+{named}\s+"
                           rf"{_SOURCE_NOUN})\s*[,:]\s*", claim_text, flags=re.IGNORECASE)
        if opening:
            return claim_text[opening.end():]
    return claim_text


def quoted_anchor(quote: str, claim_text: str, cited: Sequence[RetrievedChunk]) -> Anchor | None:
    """Where the quote stands in the first cited chunk that holds it. Where it stands there more than once
    ("Yes." replying to two questions), the place whose reading holds most of the claim: each reads the same
    words of the document, after what they reply to."""
    for chunk in cited:
        spans = occurrences(quote, chunk.text)
        if not spans:
            continue
        of_chunk = statements(chunk.text)
        anchors = [Anchor(chunk=chunk, span=span, statements=tuple(spanned(of_chunk, span)), given=True)
                   for span in spans]
        return max(anchors, key=lambda anchor: _alignment(claim_text, anchor))
    return None


def aligned_anchor(claim_text: str, cited: Sequence[RetrievedChunk]) -> Anchor | None:
    """The sentence of the cited chunks that best holds the claim's facts and words; a pair of adjacent
    sentences only when it holds more of the claim's numbers and names than any single one (a pair that merely
    shares more words would let a claim borrow a neighbour's subject)."""
    singles: list[tuple[tuple[float, float], Anchor]] = []
    pairs: list[tuple[tuple[float, float], Anchor]] = []
    for chunk in cited:
        for window in windows(statements(chunk.text)):
            anchor = Anchor(chunk=chunk, span=Span(start=window[0].start, end=window[-1].end),
                            statements=window, given=False)
            (singles if len(window) == 1 else pairs).append((_alignment(claim_text, anchor), anchor))
    if not singles:
        return None
    best_score, best = max(singles, key=lambda scored: scored[0])
    better_pairs = [scored for scored in pairs if scored[0][0] > best_score[0]]
    return max(better_pairs, key=lambda scored: scored[0])[1] if better_pairs else best


def _alignment(claim_text: str, anchor: Anchor) -> tuple[float, float]:
    evidence = anchor.evidence
    stated_values = {q.value for q in facts.quantities(evidence)}
    stated_words = _word_parts(evidence)
    held = sum(q.value in stated_values for q in facts.quantities(claim_text)) + \
        sum(name in stated_words for name in _names(claim_text, anchor.chunk.text))
    return float(held), content_overlap(claim_text, evidence)


def unstated_reason(claim_text: str, anchor: Anchor, similarity: "_Similarity", context: QuoteContext,
                    asking: Asking = NOT_ASKED) -> str | None:
    """The first rule the claim breaks against its anchor, or None when the anchor states it. Names and words may
    come from the quote's context; its facts only from the quote."""
    organisation = _organisation_names(claim_text, anchor, asking)
    reason = (_addressed_to_machines(claim_text, anchor) or _missing_quantities(claim_text, anchor, context)
              or _missing_names(claim_text, anchor, context, organisation, asking)
              or _uncovered(claim_text, anchor, similarity, context, organisation))
    if reason is not None:
        return reason
    # Section titles are taken out of both sides alike: out of the claim alone, a quote's clause that opens with
    # the title ("Volunteering days do not carry over") no longer looks restated, and its negation goes uncounted.
    # A heading that is the quoted items' lead-in ("What is not reimbursed") is kept on both sides, and its
    # negation is the quote's whether the claim restates it or not.
    heading = anchor.chunk.passage.heading
    lead = heading_lead_in(heading) if unled_items(anchor.statements) else ""
    parents = heading.rsplit(" > ", 1)[0] if " > " in heading else ""
    titles = parents if lead else heading
    claim_proper, evidence_proper = _without_heading(claim_text, titles), _without_heading(anchor.evidence, titles)
    evidence_proper = read_with([lead, evidence_proper])
    # What the quote's opening "this" stands for, or the sentence a quoted table row is said under ("Where they
    # set none, the trial caps the product:"): its negation is the claim's when the claim restates it.
    rows = all(statement.kind == "row" for statement in anchor.statements)
    referent = f"{context.before}\n{context.introduction}" if points_back(anchor.evidence) or rows else ""
    reason = _flipped_polarity(claim_proper, evidence_proper, said=lead, referent=referent) \
        or _flipped_bound(claim_proper, evidence_proper) \
        or _flipped_modality(claim_proper, evidence_proper, inherited=_lead_in_modalities(anchor),
                             sentences=_quoted_sentences(anchor))
    if reason is not None:
        return reason
    for mix in (_moved_value, _mixed_rows, _question_in_place_of_quote):
        reason = mix(claim_text, anchor)
        if reason is not None:
            return reason
    reason = _swapped_subject(claim_text, anchor, context) or _named_reader(claim_text, anchor, context, asking)
    if reason is not None:
        return reason
    if similarity.available and not _verbatim(claim_text, anchor.evidence) and similarity.value < SUPPORT_FLOOR:
        return f"semantic support {similarity.value:.2f} below {SUPPORT_FLOOR}"
    return None


# -- the rules ---------------------------------------------------------------------------------------------


def _addressed_to_machines(claim_text: str, anchor: Anchor) -> str | None:
    """The quote, or the bracketed note it sits in, speaks to automated readers: content, never an answer."""
    text = anchor.chunk.text
    for statement in anchor.statements:
        sentence = text[statement.start:statement.end]
        if addressed_to_assistants(sentence) or addressed_to_assistants(_enclosing_note(text, statement)):
            return "the quote is text addressed to automated readers"
    return None


def _enclosing_note(text: str, statement: Statement) -> str:
    """The bracketed note a sentence belongs to ("[Note to AI assistants: ... ]"), or ''."""
    line_start = text.rfind("\n", 0, statement.start) + 1
    line_end = text.find("\n", statement.end)
    line_end = len(text) if line_end < 0 else line_end
    opening = text.rfind("[", line_start, statement.start + 1)
    closing = text.find("]", statement.start, line_end)
    return text[opening:closing + 1] if opening >= 0 and closing >= 0 else ""


def _missing_quantities(claim_text: str, anchor: Anchor, context: QuoteContext) -> str | None:
    """Every number of the claim is in the quote, with its unit. A number the asker gave ("with 5 years of
    service"), or a heading's number the claim names with the word beside it there ("the 30% ruling" under
    "30% ruling"), is the claim's setting, not its fact."""
    stated = facts.quantities(anchor.evidence)
    units_by_value: dict[str, set[str | None]] = {}
    for quantity in stated:
        units_by_value.setdefault(quantity.value, set()).add(quantity.unit)
    setting = {q.value for q in facts.quantities(context.question)} | _named_heading_numbers(claim_text, anchor)
    missing = sorted({q.value for q in facts.quantities(claim_text)} - units_by_value.keys() - setting)
    if missing:
        return f"numbers not in the quote: {missing}"
    for quantity in facts.quantities(claim_text):
        units = units_by_value.get(quantity.value, {None})
        if quantity.unit is not None and quantity.unit not in units and None not in units:
            return (f"'{quantity.value} {quantity.unit}' in the claim, the quote states "
                    f"{quantity.value} as {', '.join(sorted(u for u in units if u))}")
    return None


def _named_heading_numbers(claim_text: str, anchor: Anchor) -> set[str]:
    """The numbers of the heading path and title that the claim writes beside the same word as they stand
    beside there: names of a section ("30% ruling", "360 degree feedback"), not its numbering ("2. Equipment");
    and the year the document is of ("Salary Bands 2026"), where the quote states no year of its own."""
    passage = anchor.chunk.passage
    claimed = _numbers_with_neighbours(claim_text)
    elements = (passage.title, *passage.heading.split(" > "))
    named = {value for element in elements
             for value, beside in _numbers_with_neighbours(element).items() if beside & claimed.get(value, set())}
    if not any(_YEAR.fullmatch(q.value) for q in facts.quantities(anchor.evidence)):
        named |= {q.value for element in elements for q in facts.quantities(element)
                  if _YEAR.fullmatch(q.value) and q.unit is None}
    return named


def _numbers_with_neighbours(text: str) -> dict[str, set[str]]:
    """Each number of the text, with the content words within two words of it."""
    tokens = re.findall(r"[\w%.,$€£]+", text)
    found: dict[str, set[str]] = {}
    for index, token in enumerate(tokens):
        for quantity in facts.quantities(token):
            beside = [t.lower() for t in tokens[max(index - 2, 0):index] + tokens[index + 1:index + 3]]
            found.setdefault(quantity.value, set()).update(w for w in beside if w not in STOPWORDS)
    return found


def _missing_names(claim_text: str, anchor: Anchor, context: QuoteContext, organisation: set[str],
                   asking: Asking) -> str | None:
    """A capitalised name the claim states must be in the quote; or in its context (`quote_context`), unless it
    takes the place of a word of the quote ("the first PTO paycheck" for "the first February paycheck"; in
    place of "it" or "she" it says whom the quote means); or it is the organisation the quote calls "we"."""
    quoted = _word_parts(anchor.evidence)
    in_place = _substituted(claim_text, anchor.evidence) | _for_first_person(claim_text, anchor.evidence)
    missing = sorted(name for name in _names(claim_text, f"{anchor.chunk.text}\n{asking.sources_text}")
                     if name not in quoted and name not in organisation
                     and (name in in_place or not context.names(name.removesuffix("'s"))))
    return f"names not in the quote: {missing}" if missing else None


def _for_first_person(claim_text: str, evidence: str) -> set[str]:
    """The claim's words that stand, a few for a few, where the quote says "we" or "our" ("Deel is unable" for
    "Unfortunately, we are unable"): only the organisation's name may (`_organisation_names`), never another name
    of the context, such as a vendor's."""
    return {word for claimed, quoted, _ in _replacements(claim_text, evidence)
            if FIRST_PERSON & set(quoted) and len(claimed) <= _FIRST_PERSON_SPAN and len(quoted) <= _FIRST_PERSON_SPAN
            for word in claimed}


def _organisation_names(claim_text: str, anchor: Anchor, asking: Asking) -> set[str]:
    """The claim's names that stand where the quote says "we" or "our", where the name of the organisation the
    documents speak for shows (`Asking.organisation_words`): "PostHog uses" for "we use"."""
    standing = {word for claimed, quoted, _ in _replacements(claim_text, anchor.evidence)
                if FIRST_PERSON & set(quoted) for word in claimed}
    return {word for word in standing if word.removesuffix("'s") in asking.organisation_words}


def _word_parts(text: str) -> set[str]:
    """Words, and the parts of hyphenated or elided ones ("d'alsace" holds "alsace")."""
    found = set(words(text))
    return found | {part for word in found for part in re.split(r"[-']", word) if part}


def _substituted(claim_text: str, evidence: str) -> set[str]:
    """The claim's words that stand where the quote has other words, between words both share; not where the
    quote has a word that stands for something said elsewhere ("it", "this", "we")."""
    return {word for claimed, quoted, enclosed in _replacements(claim_text, evidence)
            if enclosed and not _REFERRING & set(quoted) for word in claimed}


def _replacements(claim_text: str, evidence: str) -> list[tuple[list[str], list[str], bool]]:
    """Where the claim's words stand in place of the quote's: (the claim's, the quote's, whether words both
    share stand on either side)."""
    claim, quote = words(claim_text), words(evidence)
    opcodes = difflib.SequenceMatcher(a=claim, b=quote, autojunk=False).get_opcodes()
    padded = [("start", 0, 0, 0, 0), *opcodes, ("end", 0, 0, 0, 0)]
    return [(claim[a1:a2], quote[b1:b2], before[0] == after[0] == "equal")
            for before, (tag, a1, a2, b1, b2), after in zip(padded, padded[1:], padded[2:], strict=False)
            if tag == "replace"]


def _names(claim_text: str, chunk_text: str) -> set[str]:
    """The claim's capitalised words that are names: any not opening a sentence (a table cell's first word
    after "Header: " included), and a sentence's first word when the sources write it capitalised mid-sentence.
    An acronym counts even when it spells a common word ("IT", "US")."""
    names = set()
    chunk_names = {name.removesuffix("'s") for name in capitalised_names(chunk_text)}
    for sentence in _SENTENCE.split(claim_text):
        for index, match in enumerate(_CAPITALISED.finditer(sentence)):
            word = match.group(0)
            acronym = len(word) > 1 and word.isupper()
            if (word.lower() in STOPWORDS and not acronym) or (
                    index == 0 and word.lower().removesuffix("'s") not in chunk_names):
                continue
            names.add(word.lower())
    return names


def _uncovered(claim_text: str, anchor: Anchor, similarity: "_Similarity", context: QuoteContext,
               organisation: set[str]) -> str | None:
    """Too few of the claim's words in the quote and its context (unless close in meaning), a clause of the
    claim that neither the quote nor what it is said under (headings, lead-ins, the question) states (the
    sentences before it say what "it" stands for, not a condition of their own), or words taken from elsewhere in
    the chunk (a negation aside: the polarity rule counts those)."""
    stated = f"{anchor.evidence}\n{context.text}\n{context.introduction}"
    overlap = content_overlap(claim_text, stated)
    if overlap < MIN_CONTENT_OVERLAP and not (similarity.available and similarity.value >= COVER_SIMILARITY):
        return f"content overlap {overlap:.2f} with the quote, below {MIN_CONTENT_OVERLAP}"
    framed = f"{anchor.evidence}\n{context.framing_text}"
    for clause in facts.clauses(claim_text):
        if len(content_stems(clause)) >= MIN_CLAUSE_WORDS and content_overlap(clause, framed) < MIN_CLAUSE_OVERLAP:
            return f"the quote does not state {clause!r}"
    reason = _unstated_condition(claim_text, anchor, context)
    if reason is not None:
        return reason
    # The rest of the quote's own sentence is no other sentence: a fragment quoted of it is read in it.
    known_text = f"{stated}\n{_quoted_sentences(anchor)}"
    known = set(content_stems(known_text)) | {stem(part) for part in _word_parts(known_text)}
    outside = _outside(anchor)
    paraphrased = _light_verbs(claim_text, anchor.evidence) | _named_kinds(claim_text, anchor.evidence, outside)
    elsewhere = set(content_stems(outside)) - known - paraphrased
    imported = sorted({word for word in words(claim_text) if stem(word) in elsewhere and word not in STOPWORDS
                       and word not in organisation and not facts.negations(word)}
                      - _compounded(claim_text, stated))
    if imported:
        return f"words from elsewhere in the chunk, not in the quote: {imported}"
    return None


def _light_verbs(claim_text: str, evidence: str) -> set[str]:
    """The verbs of the claim that carry no fact of their own where the word after them is the quote's own ("gives
    guidance" for "provide guidance"): a paraphrase's verb, not a word of another sentence ("take effect" is not
    "effective", and "makes a visit worthwhile" adds a clause)."""
    quoted = set(words(evidence))
    tokens = [word for word in words(claim_text) if word not in _DETERMINERS]
    return {stem(verb) for verb, after in itertools.pairwise(tokens)
            if stem(verb) in _LIGHT_VERBS and after in quoted}


def _named_kinds(claim_text: str, evidence: str, outside: str) -> set[str]:
    """What kind of thing a quoted name is, where the chunk says it right after the name as the claim does ("P1
    ticket" for a row "| P1 | 15 minutes |" of a chunk that writes "P1 tickets"): the name's noun, not a fact
    taken from another sentence. A name here is a code ("P1", "SUP") or a word the claim capitalises mid-sentence;
    a word that sets a value beside the name ("A PIP lasts 30 days") is a verb, and a fact."""
    codes = {word.casefold() for word in re.findall(r"\b\w*(?:\d|[A-Z]{2})\w*\b", claim_text)}
    named = (codes | capitalised_names(claim_text)) & set(words(evidence)) - STOPWORDS
    pairs = {(first, stem(second)) for first, second in itertools.pairwise(words(outside))}
    said = words(claim_text)
    return {stem(second) for first, second, third in zip(said, said[1:], [*said[2:], ""], strict=False)
            if first in named and (first, stem(second)) in pairs and not facts.quantities(third)}


def _unstated_condition(claim_text: str, anchor: Anchor, context: QuoteContext) -> str | None:
    """A condition the claim sets ("..., only if X", "If X, ...") is a fact: it must stand in the quote, in what
    scopes it (`QuoteContext.scope`: its headings, or a lead-in or question of its own that sets a condition) or
    in the asker's question. Half its words there at least, and none taken from another sentence of the source
    or of the quote's context (the sentences before it say what "it" stands for, never a condition). A list item
    is read here without its lead-in: a lead-in that sets no condition states a fact of its own. A quote whose
    own condition points back ("If this happens, ...", "If so, ...", "In that case, ...") has it in the sentences
    before it."""
    own = "\n".join(plain(anchor.chunk.text[statement.start:statement.end]) if statement.kind == "item" else piece
                    for statement, piece in zip(anchor.statements, anchor.pieces, strict=True))
    referring = _REFERRING_PRONOUNS | {"that", "so", "such"}
    if any(set(words(condition)) & referring for condition in _conditions(own)) or _IN_THAT_CASE.search(own):
        own = f"{own}\n{context.before}"
    scoped = f"{own}\n{context.scope}\n{context.question}"
    stated = set(content_stems(scoped)) | {stem(part) for part in _word_parts(scoped)}
    elsewhere = set(content_stems(f"{_outside(anchor)}\n{context.framing}\n{context.before}")) - stated
    for condition in _conditions(claim_text):
        claimed = content_stems(condition)
        if len(claimed) < MIN_CONDITION_WORDS:
            continue
        held = sum(word in stated for word in claimed)
        taken = sorted({word for word in claimed if word in elsewhere})
        if held * 2 < len(claimed) or taken:
            return f"the quote does not set the condition {condition!r}"
    return None


def _conditions(claim_text: str) -> list[str]:
    """The conditions a claim sets: from "if", "unless", "provided", "as long as" to the end of its clause (to
    the comma after a condition that opens the sentence, "If X, ..."; to the end of the sentence after one set
    later, "..., only if X.")."""
    found = []
    for sentence in _SENTENCE.split(claim_text):
        for match in _CONDITIONING.finditer(sentence):
            rest = sentence[match.end():]
            opens = not sentence[:match.start()].strip(" \t\"'(*_-")
            end = re.search(r"[,;]" if opens else r";", rest)
            found.append(rest[:end.start()] if end else rest)
    return found


def _compounded(claim_text: str, stated: str) -> set[str]:
    """The claim's words that are a compound of the stated text written the other way, open, hyphenated or
    closed: "carries over" for "Carryover", "log in" for "login", "login" or "log-in" for "log in". The same word,
    not one from elsewhere."""
    claim, said = words(claim_text), words(stated)
    closed = set(said)
    opened = {first + joint + second for first, second in itertools.pairwise(said) for joint in ("", "-")}
    found = {word for word in claim if word in opened}
    for first, second in itertools.pairwise(claim):
        if any(len(word) > len(second) and word.endswith(second) and stem(word[:-len(second)]) == stem(first)
               for word in closed):
            found |= {first, second}
    return found


def _outside(anchor: Anchor) -> str:
    """The chunk without the sentences the quote touches."""
    text = anchor.chunk.text
    return text[:anchor.statements[0].start] + " " + text[anchor.statements[-1].end:] if anchor.statements \
        else text[:anchor.span.start] + " " + text[anchor.span.end:]


def _flipped_polarity(claim_text: str, evidence: str, *, said: str = "", referent: str = "") -> str | None:
    """The claim denies what its quote affirms, or the reverse: their negations differ in number. A clause read
    more than once (a list's lead-in, repeated before each quoted item) counts once; the clauses of `said` (a
    heading read as the lead-in) count whether the claim restates them or not; those of `referent` (what the
    quote's opening "this" stands for, or the sentences a quoted table row is said under) when the claim
    restates them in its place."""
    used = list(dict.fromkeys([*_used_clauses(claim_text, evidence), *facts.clauses(said),
                               *_restated_clauses(claim_text, referent)]))
    claimed, stated = facts.negations(claim_text), sum(facts.negations(clause) for clause in used)
    if claimed != stated:
        return f"negation flipped: {claimed} in the claim, {stated} in {' '.join(used)!r}"
    return None


def _flipped_bound(claim_text: str, evidence: str) -> str | None:
    """"at least" where the quote says "at most", "after" where it says "before"; "under 5,000" where the
    quote's range starts at 5,000. A direction is read in the clauses the claim restates, and in the whole quote
    when the claim's own is nowhere in it ("Before booking, upgrade" quoting "Upgrade thereafter")."""
    stated_bounds = facts.bounds(evidence)
    for value, direction in sorted(facts.bounds(claim_text)):
        if (value, facts.opposite(direction)) in stated_bounds and (value, direction) not in stated_bounds:
            return f"comparison flipped: '{direction}' {value} in the claim, '{facts.opposite(direction)}' in the quote"
    stated = set().union(*(facts.directions(clause) for clause in _used_clauses(claim_text, evidence)))
    anywhere = facts.directions(evidence)
    for direction in sorted(facts.directions(claim_text)):
        if (direction not in stated and facts.opposite(direction) in stated) \
                or (direction not in anywhere and facts.opposite(direction) in anywhere):
            return f"comparison flipped: '{direction}' in the claim, '{facts.opposite(direction)}' in the quote"
    return None


def _flipped_modality(claim_text: str, evidence: str, *, inherited: set[facts.Modality], sentences: str
                      ) -> str | None:
    """"may" where the quote says "must", or the reverse; a quote without a modal word of its own has its
    sentence's, or its lead-in's ("Customers must meet these criteria:" above "- The request is made within 30
    days"). "may" for an instruction ("Submit it within 30 days.") is a flip too."""
    claimed = facts.modalities(claim_text)
    stated = set().union(*(facts.modalities(clause) for clause in _used_clauses(claim_text, evidence)))
    stated = stated or facts.modalities(evidence) or facts.modalities(sentences) or inherited
    if claimed - stated and stated - claimed:
        return f"modality changed: {sorted(claimed)} in the claim, {sorted(stated)} in the quote"
    if "permission" in claimed and not stated and _instructs(sentences):
        return "modality changed: ['permission'] in the claim, an instruction in the quote"
    return None


def _quoted_sentences(anchor: Anchor) -> str:
    """The whole statements the quote stands in, as read: a quoted fragment's modal word may be outside it."""
    return "\n".join(plain(anchor.chunk.text[s.start:s.end]) for s in anchor.statements)


def _instructs(evidence: str) -> bool:
    """Does the quote open with an instruction ("Submit it within 30 days.")? Its first word is a verb: no
    subject stands before a verb of the closed list, and the word is none a statement opens with."""
    tokens = words(evidence)
    return bool(tokens) and not _subject(tokens) and tokens[0] not in STOPWORDS | _REPLY_WORDS \
        and not facts.quantities(tokens[0]) and tokens[0] not in _SUBJECT_VERBS


def _lead_in_modalities(anchor: Anchor) -> set[facts.Modality]:
    """The modal words of the lead-ins the quoted list items are read after, and of the questions the quote
    replies to (those it is read after, or a section whose title asks: "Can someone join two teams?" above "Only
    if they're in a supporting role." grants a permission, "Must I ...? Only if ..." sets an obligation)."""
    title = anchor.chunk.passage.heading.rsplit(" > ", 1)[-1].strip()
    asked = [s.asked for s in anchor.statements] + ([title] if title.endswith("?") else [])
    return set().union(*(facts.modalities(s.context) for s in anchor.statements if s.kind == "item"),
                       *(facts.modalities(" ".join(_QUESTION.findall(question))) for question in asked))


def _without_heading(claim_text: str, heading: str) -> str:
    """The claim without the section titles it names ("According to the What we cannot delete section, ..."):
    a title's words are not the claim's assertions."""
    for title in sorted(heading.split(" > "), key=len, reverse=True):
        if len(title) > 3:
            claim_text = re.sub(re.escape(title), " ", claim_text, flags=re.IGNORECASE)
    return claim_text


def _used_clauses(claim_text: str, evidence: str) -> list[str]:
    """The quote's clauses the claim restates: at least half of their content words are in the claim (of their
    own words, where they have words no other clause has: a clause the claim leaves out, "(so say why your card
    wasn't used)", does not count as restated for the words it shares with the rest), or else the clauses that
    share the most words with it. A claim may restate part of its quote, and a negation in a clause it leaves
    out is not its own. A clause without a content word after a question whose every content word the claim says
    is its reply ("Can contractors bring a dog? No."), read with it so that its "no" counts; so is such a clause
    the claim says word for word ("(not just for you)")."""
    claim = set(content_stems(claim_text))
    clauses = facts.clauses(evidence)
    stems = [set(content_stems(clause)) for clause in clauses]
    clauses_having = Counter(word for mine in stems for word in mine)
    owns = [{word for word in mine if clauses_having[word] == 1} or mine for mine in stems]
    used = [clause for clause, mine, own in zip(clauses, stems, owns, strict=True)
            if mine and len(own & claim) * 2 >= len(own)]
    if not used:
        shared = [len(mine & claim) for mine in stems]
        best = max(shared, default=0)
        used = [clause for clause, n in zip(clauses, shared, strict=True) if n == best and best > 0]
    said = f" {' '.join(words(claim_text))} "
    replies = [index for index, mine in enumerate(stems) if not mine and (
        f" {' '.join(words(clauses[index]))} " in said
        or (index and clauses[index - 1].endswith("?") and stems[index - 1] <= claim))]
    affirmed = f" {' '.join(_affirmed(claim_text)[0])} "
    around = [index for index, clause in enumerate(clauses) if any(
        f" {' '.join(window)} " in affirmed for window in _around_negations(clause))]
    return [clause for index, clause in enumerate(clauses) if clause in used or index in replies or index in around]


def _restated_clauses(claim_text: str, text: str) -> list[str]:
    """The clauses of `text` whose content words the claim says, half of them at least, and with them the word
    each of their negations denies ("doesn't involve real data"): a clause whose denial the claim leaves out
    lends the claim no negation."""
    claim = set(content_stems(claim_text))
    said = {stem(word) for word in words(claim_text)}
    restated = []
    for clause in facts.clauses(text):
        own = set(content_stems(clause))
        kept, at = _affirmed(clause)
        denied = [stem(kept[index]) for index in at if index < len(kept)]
        if own and len(own & claim) * 2 >= len(own) and all(word in said for word in denied):
            restated.append(clause)
    return restated


def _affirmed(text: str) -> tuple[list[str], list[int]]:
    """The text's words with every negation taken out ("wasn't" read as "was", "not" and "no" dropped), and
    where each negation stood in them."""
    kept: list[str] = []
    at: list[int] = []
    for word in words(text):
        if word in _NEGATION_WORDS:
            at.append(len(kept))
        elif word.endswith("n't") or word == "cannot":
            kept.append(_CONTRACTED_NEGATIONS.get(word, word.removesuffix("n't").removesuffix("not")))
            at.append(len(kept))
        else:
            kept.append(word)
    return kept, at


def _around_negations(clause: str) -> list[list[str]]:
    """For each negation of the clause, the words around it with the negation taken out: two before, two after
    ("your brex was used" of "why your Brex wasn't used"). A claim that says them in order restates the clause,
    with its negation or without, however few of the clause's own words it says."""
    kept, at = _affirmed(clause)
    windows = [kept[max(index - _NEGATION_REACH, 0):index + _NEGATION_REACH] for index in at]
    return [window for window in windows if len(window) > _NEGATION_REACH
            and any(word not in STOPWORDS for word in window)]


def _moved_value(claim_text: str, anchor: Anchor) -> str | None:
    """A value the quote states with one subject, claimed of another: "8 hours" of test A given to test B, a
    date of one sentence given to the event of the next, a row's figure given to another row's key.

    In sentences the subject is what stands before the value: the claim is refused when the words before its
    value are more those of another part of the quote than of the value's own part (not any word of another
    part: "the glucose test must be run within 2 hours, and the lipid panel within 48" lends its verb to the
    lipid panel). A table row is a record: no word of another row may join its values."""
    groups = _value_groups(anchor)
    heading = set(content_stems(anchor.chunk.passage.heading))
    claimed = set(content_stems(facts.subject_words(claim_text))) - heading
    stated = set().union(*(group.values for group in groups))
    for value in dict.fromkeys(q.value for q in facts.quantities(claim_text) if q.value in stated):
        own = set().union(*(group.stems for group in groups if value in group.values))
        others = set().union(*(group.stems for group in groups if value not in group.values))
        if any(group.row for group in groups):
            theirs = sorted(claimed & (others - own))
            if theirs:
                return f"the quote states {value} with other words than {theirs}"
            continue
        lead = facts.lead_words(claim_text, value) - heading
        theirs = sorted(lead & (others - own))
        if len(theirs) > len(lead & (own - others)):
            return f"the quote states {value} with other words than {theirs}"
        if any(group.gapped for group in groups):
            after = _words_after(claim_text, value) - heading
            theirs = sorted(after & (others - own))
            if theirs and not after & (own - others):
                return f"the quote states {value} with other words than {theirs}"
    return None


def _words_after(claim_text: str, value: str) -> set[str]:
    """The content words after the value in the claim's phrase that states it ("for dependents" of "75% for
    dependents")."""
    for segment in facts.value_segments(claim_text):
        stated = [q for q in facts.quantities(segment) if q.value == value]
        if stated:
            rest = segment[stated[0].at:]
            return set(content_stems(facts.subject_words(rest)))
    return set()


def _question_in_place_of_quote(claim_text: str, anchor: Anchor) -> str | None:
    """The claim's subject taken from the question its quote is read after, where the quote's sentence states a
    subject of its own: under "Can contractors get a laptop?", "Employees get a MacBook Pro." says nothing of
    contractors, however the items between them are read (a window that repeats the question but not the "- No."
    after it), nor does it beside a table cell that asks. Checked against the quoted sentence whole, so a quote
    that leaves its subject out ("get a MacBook Pro.") lends none. A question's word may add to the quote ("New
    hires get a laptop." from "A laptop.", "Taxi rides are covered." from "Yes, rides are covered."), but not join
    another subject ("Employees and contractors get ..."). The subject is what stands before the sentence's first
    verb (`_SUBJECT_VERBS`): an instruction or a fragment has none, and a pronoun or a reply word is no subject
    of its own."""
    claim = words(claim_text)
    said = {stem(word) for word in claim}
    readings = [_asked_and_own(anchor, statement) for statement in anchor.statements]
    quoted = {stem(word) for _, _, own_text in readings for word in words(own_text)}
    for questions, read_after, own_text in readings:
        if not questions:
            continue
        own = words(own_text)
        from_question = set(content_stems(questions)) - quoted
        claim_subject = _claimed_subject(claim_text, read_after)
        taken = sorted({word for word in claim_subject if stem(word) in from_question and word not in STOPWORDS})
        own_subject = {stem(word) for word in _subject(own) if word not in STOPWORDS | _REPLY_WORDS}
        displaced = sorted(own_subject - said)
        joined = own_subject & {stem(word) for word in claim_subject} and set(claim_subject) & _JOINING_WORDS
        if taken and (displaced or joined):
            return f"the claim gives {taken} of the question what the quote says of {sorted(own_subject)}"
    return None


def _swapped_subject(claim_text: str, anchor: Anchor, context: QuoteContext) -> str | None:
    """The claim's subject is another one its source names outside the quoted sentences (in the chunk or the quote's
    context, a part of a hyphenated name too: "Team" in "#team-it-help"), where the quote states a subject of its
    own that the claim leaves out: "Managers get 25 days" quoting "Employees get 25 days" after a sentence on
    managers, a table row's value given another row's key. A word of the quoted sentence may become the subject
    ("Items can be returned" for "Customers may return items"): words alone cannot tell a passive from a swap, and
    the overlap rules read those; but a passive moves the word, and a claim that says it where the quote does and
    again as its subject ("Team are paid from your team's budget" quoting "Flights are paid from your team's
    budget") has taken a new one, unless it is the word of the question the quote replies to
    (`_question_in_place_of_quote` judges those). Context says what "it", "this" or "we" stand for, never whom a
    value belongs to instead; a claim's own word for the subject, one its source never uses, is for the overlap and
    meaning rules to judge."""
    subject = [word for word in _claimed_subject(claim_text, "") if word not in STOPWORDS]
    claimed = {stem(word) for word in subject}
    quoted = set(content_stems(_quoted_sentences(anchor)))
    source = f"{anchor.chunk.text}\n{context.text}"
    named = set(content_stems(source)) | {stem(part) for part in _word_parts(source)}
    names = _names(claim_text, source)
    said_times = Counter(stem(word) for word in words(claim_text))
    quoted_times = Counter(content_stems(_quoted_sentences(anchor)))
    asked = set(content_stems(" ".join([context.question, *(_asked_and_own(anchor, s)[0] for s in anchor.statements)])))
    moved = {word for word in claimed & quoted if said_times[word] <= quoted_times[word] or word in asked}
    if not claimed or moved or not (claimed <= named or set(subject) <= names):
        return None
    said = {stem(word) for word in words(claim_text)}
    subjects = [_own_subjects(anchor, statement) for statement in anchor.statements]
    own = [subject for of_statement in subjects for subject in of_statement]
    if own and all(of_statement[0] for of_statement in subjects if of_statement) \
            and not any(subject & said for subject in own):
        return f"the claim gives {sorted(claimed)} what the quote says of {sorted(set().union(*own))}"
    return None


def _named_reader(claim_text: str, anchor: Anchor, context: QuoteContext, asking: Asking) -> str | None:
    """A quote that speaks to its reader ("You'll be assigned a limit of $5,000", "Block out your calendar") says
    nothing of a name its source uses for something else: "Brex is assigned a limit of $5,000" quoting it gives
    the reader's rule to a tool, however the asker named the tool. The claim may name the reader by a common
    word ("Employees"), by the organisation's name or by whom its heading addresses ("What does the Comms Lead
    do?"), and make a word of the quoted sentence its subject ("A Secret is treated as leaked" for "Treat a
    Secret as leaked": an instruction made passive)."""
    sentence = _quoted_sentences(anchor)
    first = _without_opening(facts.clauses(sentence, scopes=False)[0]) if sentence.strip() else ""
    opening = words(first)
    if not opening or not (opening[0] in _SECOND_PERSON or _instructs(first)):
        return None
    subject = [word for word in _claimed_subject(claim_text, "") if word not in STOPWORDS]
    source = f"{anchor.chunk.text}\n{context.before}\n{context.introduction}"
    others = capitalised_names(source) - asking.organisation_words - set(words(sentence)) \
        - _addressed(anchor.chunk.passage.heading)
    if subject and all(word in others for word in subject):
        return f"the claim gives {subject} what the quote says to its reader"
    return None


def _addressed(heading: str) -> set[str]:
    """The words of a heading path but those after a preposition: "What does the Comms Lead do?" and "Guidelines
    for Comms Leads" address the comms lead; "How to book time off in PTO" names a tool."""
    tokens = words(heading.replace(" > ", ". "))
    return {word for before, word in zip(["", *tokens], tokens, strict=False) if before not in _PLACING}


def _own_subjects(anchor: Anchor, statement: Statement) -> list[set[str]]:
    """What a quoted statement says something of: a table row's key cell; each clause's words before its first
    verb, after an opening phrase ("For example, ...") ("Alcohol is not reimbursed, but meals are covered" is of
    alcohol and of meals; a fragment, a pronoun or "we" has none, and its context may say it); what an
    instruction acts on (`_object`). A later clause that sets a condition ("..., if the person is close to the
    goals") says nothing of its subject: the claim may keep it and still swap the main one."""
    text = anchor.chunk.text
    if statement.kind == "row":
        cells = cell_spans(text, statement)
        return [set(content_stems(plain(text[cells[0][0]:cells[0][1]])))] if cells else []
    sentence = plain(text[statement.start:statement.end])
    clauses = facts.clauses(sentence, scopes=False)
    return [{stem(word) for word in _subject(words(_without_opening(clause)), _OWN_SUBJECT_WINDOW)
             or (_before_value(clause) if index else _fragment_subject(clause, sentence) or _object(clause))
             if word not in STOPWORDS | _REPLY_WORDS | _REFERRING} for index, clause in enumerate(clauses)
            if not (index and _SUBORDINATE.match(clause))]


def _object(clause: str) -> list[str]:
    """What an instruction acts on ("Submit high-risk changes in Jira" acts on high-risk changes): the words after
    its verb, past a determiner, up to the next function word. A claim that makes it passive keeps them as its
    subject ("High-risk changes must be submitted ..."); one that names another of its source there swaps it."""
    if not _instructs(clause):
        return []
    tokens = words(clause)[1:]
    while tokens and tokens[0] in _DETERMINERS:
        tokens = tokens[1:]
    taken = list(itertools.takewhile(lambda word: word not in STOPWORDS and not facts.quantities(word), tokens))
    return taken if len(taken) < len(tokens) else []


def _fragment_subject(clause: str, sentence: str) -> list[str]:
    """A quote's first clause with no verb ("PostHog's global paternity leave (6 weeks ...)") names what it is
    of, unless it opens with its value ("6 months, set by CBA") or labels it ("Length: 40 minutes"): then the
    heading says whose it is."""
    tokens = words(clause)
    label = sentence.lstrip().startswith(clause) and sentence.lstrip()[len(clause):].lstrip().startswith(":")
    if not tokens or label or facts.quantities(tokens[0]) or len(tokens) > _FRAGMENT_WORDS:
        return []
    return tokens


def _without_opening(clause: str) -> str:
    """The clause after a short opening phrase without a verb that opens with a function word or an adverb ("For
    example, we ...", "In the UK, we ...", "Typically, you ..."); "Managers, employees and contractors get ..."
    keeps its subject."""
    opening = _OPENING.match(clause)
    first = words(opening.group(1))[0] if opening else ""
    if opening is None or set(words(opening.group(1))) & _SUBJECT_VERBS \
            or not (first in STOPWORDS or first.endswith("ly") or first in _OPENERS):
        return clause
    rest = clause[opening.end():]
    return rest if _subject(words(rest)) or not rest else clause


def _before_value(clause: str) -> list[str]:
    """A later clause that leaves its verb to the first ("..., and the lipid panel within 48 hours"): its
    words before its value say whose value it is."""
    tokens = words(clause)
    at = next((index for index, token in enumerate(tokens) if facts.quantities(token)), None)
    return tokens[:at] if at is not None else []


def _asked_and_own(anchor: Anchor, statement: Statement) -> tuple[str, str, str]:
    """The questions a quoted statement replies to, what it is read after, and its own words: for a sentence or
    an item, the questions it is read after and the whole sentence; for a table row, its cells that ask ("| Can
    contractors get a laptop? | Employees get a MacBook Pro. |") and the quoted cells that do not."""
    text = anchor.chunk.text
    if statement.kind != "row":
        read_after = read_with([statement.context, statement.asked])
        return " ".join(_QUESTION.findall(read_after)), read_after, plain(text[statement.start:statement.end])
    cells = [(start, end, plain(text[start:end])) for start, end in cell_spans(text, statement)]
    asking = [cell for _, _, cell in cells if cell.endswith("?")]
    quoted = [cell for start, end, cell in cells
              if not cell.endswith("?") and start < anchor.span.end and anchor.span.start < end]
    return " ".join(asking), "", " ".join(quoted)


def _claimed_subject(claim_text: str, read_after: str) -> list[str]:
    """The subject of the claim's main clause, after what its quote is read after when the claim opens by saying
    it ("Before booking, check: Is the trip approved? Your manager approves it.") and after a condition it opens
    with ("If a laptop is stolen, report it ..."), unless the main clause names its subject only by a pronoun
    ("If contractors need one, they get ...")."""
    said = _after_prefix(claim_text, read_after)
    main = _LEADING_CLAUSE.sub("", said, count=1)
    subject = _subject(words(main))
    if main != said and subject and set(subject) <= _REFERRING_PRONOUNS:
        return _subject(words(said))
    return subject


def _after_prefix(claim_text: str, prefix: str) -> str:
    """The claim's text after `prefix` when its words open the claim, else the whole claim."""
    wanted = words(prefix)
    count = 0
    for token in re.finditer(r"\S+", claim_text) if wanted else ():
        count += len(words(token.group()))
        if count >= len(wanted):
            opened = words(claim_text[:token.end()]) == wanted
            return claim_text[token.end():] if opened else claim_text
    return claim_text


def _subject(tokens: Sequence[str], window: int = _SUBJECT_WINDOW) -> list[str]:
    """The words before a sentence's first verb among its first few, or [] when it has none there."""
    for index, token in enumerate(tokens[:window]):
        if token in _SUBJECT_VERBS or ("'" in token and token.rpartition("'")[2] in _CONTRACTED_VERBS):
            return list(tokens[:index])
    return []


@dataclass(frozen=True, kw_only=True)
class _ValueGroup:
    values: set[str]
    stems: set[str]
    """The words the values are stated with."""
    row: bool
    """They form a table row."""
    gapped: bool = False
    """The phrase leaves its verb and subject to the phrase before ("..., and 75% for dependents")."""


def _value_groups(anchor: Anchor) -> list[_ValueGroup]:
    """The quote's values, each with the words it is stated with, and whether they form a table row. A list
    item's lead-in ("This rota has 3 layers:") is said of every value of the item. A phrase that opens with its
    value after a phrase with a value of its own ("PostHog pays 100% of the premium for staff, and 75% for
    dependents") leaves its verb and subject to that phrase: it is stated with that phrase's words but the one
    its own words stand parallel to ("for staff"). A sentence that points back ("We used to do this (and get
    1000s more applications)") states its values with the words of the quoted sentence before it, when that one
    states none of its own."""
    groups: list[_ValueGroup] = []
    for statement, piece in zip(anchor.statements, anchor.pieces, strict=True):
        row = statement.kind == "row"
        shared: set[str] = set(content_stems(facts.subject_words(statement.context))) \
            if statement.kind == "item" else set()
        if groups and not groups[-1].values and _REFERRING_PRONOUNS & set(words(piece)):
            shared |= groups[-1].stems
        valued: list[_ValueGroup] = []
        before = ""
        for segment in [piece] if row else facts.value_segments(piece):
            values = {q.value for q in facts.quantities(segment)}
            stems = set(content_stems(facts.subject_words(segment)))
            if not values:
                shared |= stems
                continue
            gapped = bool(before) and not row and _opens_with_value(segment)
            if gapped:
                stems |= _left_to_before(before, segment)
            valued.append(_ValueGroup(values=values, stems=stems, row=row, gapped=gapped))
            before = segment
        groups.extend([replace(group, stems=group.stems | shared) for group in valued]
                      or [_ValueGroup(values=set(), stems=shared, row=row)])
    return groups


def _opens_with_value(segment: str) -> bool:
    tokens = words(segment)
    return bool(tokens) and bool(facts.quantities(tokens[0]))


def _left_to_before(before: str, segment: str) -> set[str]:
    """What a phrase that opens with its value takes from the phrase before it: its words but the value and the
    part its own words stand parallel to (from the same function word on: "for team members" to "for
    dependents"), or, without such a part, the words before that phrase's value."""
    rest = words(facts.subject_words(segment))
    opener = next((word for word in rest if word in STOPWORDS), None)
    first = facts.quantities(before)[0]
    tail = words(before[first.at:])
    if opener is not None and opener in tail[1:]:
        cut = len(tail) - tail[::-1].index(opener) - 1
        kept = words(before[:first.at]) + tail[1:cut]
    else:
        kept = words(before[:first.at])
    return {stem(word) for word in kept if word not in STOPWORDS and not facts.quantities(word)}


def _mixed_rows(claim_text: str, anchor: Anchor) -> str | None:
    """Values of two table rows in one claim: a row is a record, and one claim states one record."""
    rows = [{q.value for q in facts.quantities(piece)}
            for statement, piece in zip(anchor.statements, anchor.pieces, strict=True) if statement.kind == "row"]
    if len(rows) < 2:
        return None
    claimed = {q.value for q in facts.quantities(claim_text)}
    common = set.intersection(*rows)
    touched = [row for row in rows if (claimed & row) - common]
    return "the claim mixes values of different table rows" if len(touched) > 1 else None


# -- overlap, meaning and tiers ------------------------------------------------------------------------------


class _Similarity:
    """The claim's cosine to its anchor: the best of the quote's own words, the quote as read (a list item after
    its lead-ins), the quote after its context, and for a table row the cells the claim states with the row's key
    (a record of eight cells read whole is far from a claim that states two of them); computed once and only
    when a rule needs it."""

    def __init__(self, claim_text: str, anchor: Anchor, embedder: Embedder | None, context: QuoteContext) -> None:
        self._texts = (claim_text, plain(anchor.text), anchor.evidence, f"{context.around}\n{anchor.evidence}",
                       *_stated_cells(claim_text, anchor))
        self._embedder = embedder
        self._value: float | None = None

    @property
    def available(self) -> bool:
        return self._embedder is not None

    @property
    def value(self) -> float:
        if self._value is None:
            assert self._embedder is not None
            claim, *readings = self._embedder.embed(list(self._texts))
            self._value = max(sum(a * b for a, b in zip(claim, quote, strict=True)) for quote in readings)
        return self._value


def _stated_cells(claim_text: str, anchor: Anchor) -> list[str]:
    """Each quoted table row as its key cell and the cells that share a word or a number with the claim, each
    under its header ("Severity: SEV2; Acknowledge within: 15 minutes"); nothing for a quote without a row."""
    claimed = set(content_stems(claim_text)) | {q.value for q in facts.quantities(claim_text)}
    found = []
    for statement, piece in zip(anchor.statements, anchor.pieces, strict=True):
        cells = piece.split("; ")
        if statement.kind != "row" or len(cells) < _ROW_CELLS:
            continue
        touched = [cell for cell in cells[1:] if claimed & (set(content_stems(cell.partition(": ")[2]))
                                                           | {q.value for q in facts.quantities(cell)})]
        if touched and len(touched) < len(cells) - 1:
            found.append("; ".join([cells[0], *touched]))
    return found


def content_overlap(claim_text: str, evidence: str) -> float:
    """Share of the claim's content words that the evidence contains."""
    claim = content_stems(claim_text)
    if not claim:
        return 0.0
    present = set(content_stems(evidence))
    return sum(1 for s in claim if s in present) / len(claim)


def _verbatim(claim_text: str, evidence: str) -> bool:
    """Is the claim the quote's own words, in order (case, punctuation and markup aside)?"""
    claim = " ".join(words(claim_text))
    return bool(claim) and claim in " ".join(words(evidence))


def _tier(claim_text: str, anchor: Anchor, similarity: _Similarity) -> CitationTier:
    """`direct` when the claim is near-verbatim in its quote, `synthesis` when it paraphrases it."""
    if _verbatim(claim_text, anchor.evidence) or content_overlap(claim_text, anchor.evidence) >= DIRECT_OVERLAP:
        return "direct"
    return "direct" if similarity.available and similarity.value >= DIRECT_SIMILARITY else "synthesis"
