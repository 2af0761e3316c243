"""Fabrications made by code: from a case's supporting section, the answer a model would give, faithful or
subtly wrong, each claim with the quote such a model would attach.

Every variant is derived from the text of the retrieved sources and the case's `support` and `must_include`,
never written by hand, so the benchmark runs on any knowledge base and case file. The answer sentence is the
supporting section's statement (sentence, list item or table row) that holds the `must_include` items.

Faithful variants (the guard must pass them):
  faithful_quote       the answer sentence, quoted
  faithful_paraphrase  the answer sentence in other words (synonyms, contractions, a table row as a sentence)
Fabrications (the guard must refuse them), each quoting the span its error was made from:
  number_swap          a number, date or amount of the answer swapped for another of the same chunk
  entity_swap          a name or role swapped for another of the chunk (or two of the sentence exchanged)
  negation             the answer negated, or its negation removed
  added_clause         the answer plus a clause of another source that its quote does not state
  other_chunk          the right answer and quote, citing another retrieved chunk
  blend                the subject of the answer sentence with the value of another sentence of the chunk
  other_question       another sentence of the supporting chunk, faithfully quoted: it answers something else
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from core.documents import reading
from core.eval.cases import Alternatives, Case
from core.text import STOPWORDS, content_stems

Variant = Literal["faithful_quote", "faithful_paraphrase", "number_swap", "entity_swap", "negation",
                  "added_clause", "other_chunk", "blend", "other_question"]
VARIANTS: Final[tuple[Variant, ...]] = ("faithful_quote", "faithful_paraphrase", "number_swap", "entity_swap",
                                        "negation", "added_clause", "other_chunk", "blend", "other_question")
FAITHFUL: Final = frozenset({"faithful_quote", "faithful_paraphrase"})

_LIST_MARKER: Final = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)]|>)\s+")
_MARKUP: Final = re.compile(r"\*\*|__|`|(?<!\w)\*(?=\w)|(?<=\w)\*(?!\w)")
_LINK: Final = re.compile(r"\[([^\]]+)\]\([^)]*\)")
NUMBER: Final = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\d])")
NAME: Final = re.compile(r"(?<=[a-z,;] )[A-Z][a-zA-Z]+(?: [A-Z][a-zA-Z]+)*\b(?![\d-])")
ROLE: Final = re.compile(r"(?<![\w-])(?:(?!(?:the|a|an|your|their|our|any|each|every|its|his|her|my|of|to|by|for|"
                          r"with|and|or|on|in)\b)[a-z]+ )?(?:director|manager|lead|officer|supervisor|head|team|"
                          r"committee|coordinator|administrator|desk|department|specialist|analyst|controller|owner|"
                          r"physician|nurse|engineer|approver)s?\b")
AUXILIARY: Final = re.compile(r"\b(is|are|was|were|must|may|can|will|should|shall|has to|have to|need to|"
                               r"needs to|could|would)\b")
_NEGATED: Final = re.compile(r"\b(not|never)\s+|\bno\s+(?=\w)|n't\b")
_PARENTHESIS: Final = re.compile(r"\s*\([^()\d]*\)")
_SOURCE: Final = re.compile(r'<source id="(?P<id>[^"]*)" section="(?P<section>[^"]*)">\n(?P<text>.*?)\n</source>',
                            re.DOTALL)
_PARAPHRASES: Final = (
    (r"\bdo not\b", "don't"), (r"\bdoes not\b", "doesn't"), (r"\bis not\b", "isn't"), (r"\bare not\b", "aren't"),
    (r"\bcannot\b", "can't"), (r"\bwill not\b", "won't"), (r"\breceives\b", "gets"), (r"\breceive\b", "get"),
    (r"\bemployees\b", "staff members"), (r"\bemployee\b", "staff member"), (r"\bprior to\b", "before"),
    (r"\bbefore\b", "prior to"), (r"\bpurchase\b", "buy"), (r"\bapproximately\b", "about"),
    (r"\breimbursed\b", "paid back"), (r"\breimburses\b", "pays back"), (r"\brequires\b", "needs"),
    (r"\brequire\b", "need"), (r"\bsubmit\b", "send"), (r"\bsubmitted\b", "sent"), (r"\bobtain\b", "get"),
    (r"\bprovides\b", "gives"), (r"\bprovide\b", "give"), (r"\bcontact\b", "reach"),
    (r"\badditional\b", "extra"), (r"\bassistance\b", "help"), (r"\bimmediately\b", "right away"),
    (r"\bannual\b", "yearly"), (r"\bbegins\b", "starts"), (r"\bbegin\b", "start"),
    (r"\bpermitted\b", "allowed"), (r"\bat least\b", "a minimum of"), (r"\bup to\b", "a maximum of"),
    (r"\bmore than\b", "over"), (r"\bless than\b", "under"), (r"\bper(?! cent)\b", "a"),
    (r"\bnotify\b", "tell"), (r"\bapproved\b", "signed off"), (r"\bcustomers\b", "clients"),
    (r"\bcompleted\b", "finished"), (r"\bcomplete\b", "finish"), (r"\bselect\b", "choose"),
)


@dataclass(frozen=True, kw_only=True)
class Source:
    """A retrieved chunk as the model sees it in its prompt."""

    chunk_id: str
    heading: str
    text: str

    @property
    def doc_id(self) -> str:
        return self.chunk_id.partition("#")[0]


@dataclass(frozen=True, kw_only=True)
class Sentence:
    """A statement of a source: `raw` as the chunk writes it, at `start` in the chunk; a table row carries its
    header row's cells."""

    source: Source
    raw: str
    start: int
    header: tuple[str, ...] = ()
    lead: str = ""
    """A list item's lead-ins, which a model reads with it."""

    @property
    def end(self) -> int:
        return self.start + len(self.raw)

    @property
    def cells(self) -> list[str]:
        return [clean(cell) for cell in self.raw.strip().strip("|").split("|")]

    @property
    def text(self) -> str:
        """The statement as a model would write it: markup gone, a table row as `Header: cell; ...`."""
        if not self.header:
            return reading.stated(clean(self.lead), clean(self.raw))
        return "; ".join(f"{h}: {c}" for h, c in zip(self.header, self.cells, strict=False) if c)


@dataclass(frozen=True, kw_only=True)
class Fabrication:
    variant: Variant
    claims: tuple[dict[str, Any], ...]

    def envelope(self, *, with_quotes: bool = True) -> dict[str, Any]:
        claims = [claim if with_quotes else {k: v for k, v in claim.items() if k != "quote"}
                  for claim in self.claims]
        return {"found": True, "answer": " ".join(claim["text"] for claim in claims), "claims": claims,
                "confidence": "high", "refusal_reason": None}


def parse_sources(prompt: str) -> list[Source]:
    """The sources of a rendered answer prompt, as a model reads them."""
    return [Source(chunk_id=m["id"], heading=_unescape(m["section"]), text=_unescape(m["text"]))
            for m in _SOURCE.finditer(prompt)]


def _unescape(text: str) -> str:
    return (text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&#x27;", "'")
            .replace("&amp;", "&"))


def clean(text: str) -> str:
    return " ".join(_MARKUP.sub("", _LINK.sub(r"\1", _LIST_MARKER.sub("", text))).split())


def sentences(source: Source) -> list[Sentence]:
    """The source's statements, as the product reads them (`core.documents.reading`)."""
    found: list[Sentence] = []
    for span in reading.statements(source.text):
        raw = source.text[span.start:span.end]
        header = tuple(clean(cell) for cell in span.context.strip().strip("|").split("|")) \
            if span.kind == "row" else ()
        found.append(Sentence(source=source, raw=raw, start=span.start, header=header,
                              lead=span.context if span.kind == "item" else ""))
    return [sentence for sentence in found if len(clean(sentence.raw)) > 3]


def fabricate(variant: Variant, case: Case, sources: Sequence[Source]) -> Fabrication | None:
    """The variant's answer for this case, or None when the sources do not allow it (no supporting chunk
    among them, or nothing of the kind to swap)."""
    answer = answer_sentences(case, sources)
    if not answer:
        return None
    if variant in FAITHFUL:
        say = paraphrase if variant == "faithful_paraphrase" else (lambda sentence: sentence.text)
        return Fabrication(variant=variant, claims=tuple(_claim(say(s), s) for s in answer))
    first = answer[0]
    made = _fabricated(variant, case, first, sentences(first.source), sources)
    if made is None:
        return None
    text, quote, chunk_id = made
    return Fabrication(variant=variant, claims=({"text": text, "chunk_ids": [chunk_id], "quote": quote},))


def _fabricated(variant: Variant, case: Case, first: Sentence, chunk: Sequence[Sentence],
                sources: Sequence[Source]) -> tuple[str, str, str] | None:
    """The fabricated claim, the quote a model making that error would give, and the id it would cite."""
    cited = first.source.chunk_id
    if variant == "other_chunk":
        other = next((s for s in sources if s.chunk_id != cited and clean(first.raw) not in clean(s.text)), None)
        return None if other is None else (first.text, first.raw, other.chunk_id)
    if variant == "blend":
        blended = _blend(first, chunk)
        return None if blended is None else (*blended, cited)
    if variant == "other_question":
        answered = _other_question(case, first, chunk)
        return None if answered is None else (answered.text, answered.raw, cited)
    makers: dict[str, Callable[[], str | None]] = {
        "number_swap": lambda: _swap_number(first, chunk),
        "entity_swap": lambda: _swap_entity(first, chunk, sources),
        "negation": lambda: negate(first.text),
        "added_clause": lambda: _add_clause(first, sources),
    }
    text = makers[variant]()
    return None if text is None or text == first.text else (text, first.raw, cited)


def _claim(text: str, sentence: Sentence) -> dict[str, Any]:
    return {"text": text, "chunk_ids": [sentence.source.chunk_id], "quote": sentence.raw}


def answer_sentences(case: Case, sources: Sequence[Source]) -> list[Sentence]:
    """The statements of the first supporting chunk that hold the case's `must_include` items: one when a
    single statement holds them all, else one per item. Without items, the statement sharing the most
    words with the question. Empty when no supporting chunk was retrieved or it lacks an item."""
    for source in sources:
        if not any(section.matches(source.doc_id, source.heading) for section in case.support):
            continue
        candidates = sentences(source)
        if not candidates:
            continue
        if not case.must_include:
            asked = set(content_stems(case.question))
            return [max(candidates, key=lambda s: len(asked & set(content_stems(s.text))))]
        whole = [s for s in candidates if all(_holds(s, item) for item in case.must_include)]
        if whole:
            return whole[:1]
        chosen: list[Sentence] = []
        for item in case.must_include:
            holder = next((s for s in candidates if _holds(s, item)), None)
            if holder is None:
                break
            if holder not in chosen:
                chosen.append(holder)
        else:
            return chosen
    return []


def _holds(sentence: Sentence, item: Alternatives) -> bool:
    text = sentence.text.casefold()
    return any(alternative.casefold() in text for alternative in ([item] if isinstance(item, str) else item))


# -- the faithful paraphrase -----------------------------------------------------------------------------------


def paraphrase(sentence: Sentence) -> str:
    """The statement in other words, as a model restating it would: a table row as a sentence, synonyms and
    contractions, parenthetical asides dropped. Numbers and names are left as they are."""
    if sentence.header:
        key, *rest = [(h, c) for h, c in zip(sentence.header, sentence.cells, strict=False) if c]
        parts = [f"the {h.lower()} is {c}" for h, c in rest]
        return f"For {key[1]}, {' and '.join(parts)}." if parts else f"{key[0]}: {key[1]}."
    text = _PARENTHESIS.sub("", sentence.text)
    for pattern, replacement in _PARAPHRASES:
        text = re.sub(pattern, _cased(replacement), text, count=1)
    if text == sentence.text:
        section = sentence.source.heading.split(" > ")[-1]
        opening = text if text[:2] == text[:2].upper() else text[0].lower() + text[1:]
        text = f"According to the {section} section, {opening}"
    return text


def _cased(replacement: str) -> Callable[[re.Match[str]], str]:
    """The replacement, capitalised when the word it replaces was."""
    return lambda match: replacement[0].upper() + replacement[1:] if match.group(0)[0].isupper() else replacement


# -- the fabrications -------------------------------------------------------------------------------------------


def _swap_number(sentence: Sentence, chunk: Sequence[Sentence]) -> str | None:
    """The sentence's first number replaced by a different number written elsewhere in the chunk."""
    mine = NUMBER.findall(sentence.text)
    if not mine:
        return None
    others = [n for s in chunk if s is not sentence for n in NUMBER.findall(s.text) if number_value(n) not in
              {number_value(m) for m in mine}]
    if not others:
        return None
    target = _target_number(sentence, mine)
    return re.sub(rf"(?<![\w.]){re.escape(target)}(?![\d])", others[0], sentence.text, count=1)


def _target_number(sentence: Sentence, mine: list[str]) -> str:
    """The number in the answer's value cell or fact: the last one of a table row, else the first."""
    return mine[-1] if sentence.header else mine[0]


def number_value(number: str) -> str:
    return number.replace(",", "").rstrip("0").rstrip(".") if "." in number else number.replace(",", "")


def _swap_entity(sentence: Sentence, chunk: Sequence[Sentence], sources: Sequence[Source]) -> str | None:
    """Who or what the statement is about, replaced: a table row's key cell by another row's; else a name or
    role by another of the chunk (or of another source); else two of the sentence's own exchanged."""
    if sentence.header:
        keys = [s.cells[0] for s in chunk if s.header and s.cells and s.cells[0] != sentence.cells[0]]
        if not keys or not sentence.cells:
            return None
        return sentence.text.replace(sentence.cells[0], keys[0], 1)
    text = sentence.text
    for pattern in (NAME, ROLE):
        mine = entities(pattern, text)
        if not mine:
            continue
        pool = [e for s in chunk for e in entities(pattern, s.text)] + \
            [e for source in sources for e in entities(pattern, clean(source.text))]
        taken = {word.lower() for phrase in mine for word in phrase.split()}
        replacement = next((p for p in pool if not {w.lower() for w in p.split()} & taken
                            and p.lower() not in text.lower()), None)
        if replacement is not None:
            return text.replace(mine[0], replacement, 1)
        first, second = [*dict.fromkeys(mine), ""][:2]
        between = text[text.find(first) + len(first):text.find(second)] if second else ""
        if second and between.strip(" ,") not in {"or", "and", ""}:
            return text.replace(first, "\0").replace(second, first).replace("\0", second)
    return None


def entities(pattern: re.Pattern[str], text: str) -> list[str]:
    """Names or roles of the text; a capitalised common word ("No", "The") is neither."""
    return [m.group(0) for m in pattern.finditer(text) if m.group(0).split()[0].lower() not in STOPWORDS]


def negate(text: str) -> str:
    """The statement's polarity reversed: its negation removed, else `not` after its first auxiliary, else
    the whole statement denied."""
    negation = _NEGATED.search(text)
    if negation:
        return text[:negation.start()] + text[negation.end():]
    auxiliary = AUXILIARY.search(text)
    if auxiliary:
        return f"{text[:auxiliary.end()]} not{text[auxiliary.end():]}"
    return f"It is not the case that {text[0].lower()}{text[1:]}"


def _add_clause(sentence: Sentence, sources: Sequence[Source]) -> str | None:
    """The sentence and a clause from another source, joined as one claim."""
    for source in sources:
        if source.chunk_id == sentence.source.chunk_id:
            continue
        for other in sentences(source):
            if not other.header and len(other.text.split()) >= 5 and other.text[-1] in ".!?":
                added = other.text.rstrip(".!?")
                return f"{sentence.text.rstrip('.!?')}, and {added[0].lower()}{added[1:]}."
    return None


def _blend(sentence: Sentence, chunk: Sequence[Sentence]) -> tuple[str, str] | None:
    """The answer's subject with another statement's value, from the nearest statement with a different
    value: a table row's key cell with another row's cells; a sentence's words up to its value, then the
    other's from its value (or, when the value opens the sentence, the value and then the other's
    predicate). Quoted as both statements when they are adjacent."""
    index = chunk.index(sentence) if sentence in chunk else -1
    mine = NUMBER.search(sentence.text)
    by_distance = sorted((s for s in chunk if s is not sentence and bool(s.header) == bool(sentence.header)
                          and NUMBER.search(s.text)), key=lambda s: abs(chunk.index(s) - index))
    for other in by_distance:
        theirs = NUMBER.search(other.text)
        if theirs is None or mine is None or number_value(theirs.group(0)) == number_value(mine.group(0)):
            continue
        if sentence.header:
            if not sentence.cells or not other.cells or sentence.cells[0] == other.cells[0]:
                continue
            blended = other.text.replace(other.cells[0], sentence.cells[0], 1)
        elif mine.start() > 0:
            start = mine.start() - (1 if sentence.text[mine.start() - 1] in "$€£" else 0)
            start_theirs = theirs.start() - (1 if other.text[theirs.start() - 1:theirs.start()] in "$€£" else 0)
            blended = sentence.text[:start] + other.text[max(start_theirs, 0):]
        else:
            blended = sentence.text[:mine.end()] + other.text[theirs.end():]
        if blended in {s.text for s in chunk}:
            continue
        if abs(chunk.index(other) - index) == 1:
            first, last = sorted((sentence, other), key=lambda s: s.start)
            return blended, first.source.text[first.start:last.end]
        return blended, sentence.raw
    return None


def _other_question(case: Case, answer: Sentence, chunk: Sequence[Sentence]) -> Sentence | None:
    """The statement of the supporting chunk, other than the answer, closest to the question in words: what a
    model answering the wrong question from the right section would say."""
    asked = set(content_stems(case.question))
    others = [s for s in chunk if s is not answer and s.text != answer.text
              and not any(_holds(s, item) for item in case.must_include)]
    if not others:
        return None
    return max(others, key=lambda s: len(asked & set(content_stems(s.text))))
