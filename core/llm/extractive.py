"""The default model: offline, deterministic, extractive.

It answers with the retrieved chunks' own sentences and returns the same envelope JSON an LLM would, so the
orchestrator parses and checks it exactly like any other model's output. It says `found: false` when no
sentence states the kind of thing the question asks for, about the words the question uses.
"""

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Final, Literal

from core.application.instructions import addressed_to_assistants
from core.application.ports import Embedder, GenerationRequest
from core.domain import RetrievedChunk
from core.text import STOPWORDS, capitalised_names, content_stems, numbers, stem, words

AnswerType = Literal["amount", "time", "age", "count", "place", "person", "name", "phone", "any"]

MIN_OVERLAP: Final = 0.6
TYPED_MIN_OVERLAP: Final = 0.3
SECOND_CLAIM_RATIO: Final = 0.85
HEADING_WEIGHT: Final = 0.6
RETRIEVAL_WEIGHT: Final = 0.4
CANDIDATE_CHUNKS: Final = 4
NAME_WEIGHT: Final = 2.0
"""A name the question uses ("Tier B", "Privacy Officer") counts double: it says which statement is meant."""
SEMANTIC_CANDIDATES: Final = 8
"""Statements embedded per question, the best by words and retrieval: bounds the embedding cost of long chunks
(on `dev`, 8 to 100 give the same answers)."""
SEMANTIC_WEIGHT: Final = 0.5
"""With an embedder: share of a statement's match that is its cosine to the question (the rest is word overlap)."""
SEMANTIC_FLOOR: Final = 0.6
"""Cosine (question, statement) at which a statement of the asked-for type answers from any retrieved chunk."""
TYPED_FLOOR: Final = 0.40
"""Cosine enough for a statement of the top-ranked chunk when it holds the asked-for kind of value (an amount,
a time, a count, a person): the retriever, the type and the meaning then agree."""
UNTYPED_FLOOR: Final = 0.48
"""The same for a question that names no kind of value ("can I ...", "what do I do ..."): nothing but the
meaning vouches for the statement, so more of it is needed."""
SEMANTIC_VETO: Final = 0.2
"""Below this cosine a statement does not answer, however many of the question's words it shares."""
# The three floors were fitted on the even-numbered `dev` cases and the examples (false_answer 0 on both);
# the odd-numbered `dev` cases are the held-out check (`sourced eval`, see the issue notes).

_TYPE_CUES: Final[tuple[tuple[AnswerType, re.Pattern[str]], ...]] = (
    ("phone", re.compile(r"\b(phone|telephone|fax) number\b|\bwhat number\b", re.I)),
    ("count", re.compile(r"\bhow many\b", re.I)),
    ("age", re.compile(r"\b(until|from|at|by|before|after|under|over|of) what age\b|\bhow old\b|"
                       r"\b(minimum|maximum|youngest|oldest) age\b", re.I)),
    ("time", re.compile(r"\b(how long|how soon|how quickly|how fast|how far in advance|how early|how late|"
                        r"how often|by when|what time|what day|which day|what night|deadline|lead time|"
                        r"how much (?:advance )?(?:notice|warning|time)|last day|first day)\b|^\s*when\b",
                        re.I)),
    ("place", re.compile(r"^\s*where\b|\bwhere (is|are|do|does|did|can|should|must|was|were|to)\b|"
                         r"\b(what|which) (country|city|town|region|state|province|building|floor|room|"
                         r"location|address|site|continent|river|sea|island|office|ward|wing)\b", re.I)),
    ("amount", re.compile(r"\b(how much|how big|how large|how high|rate|fee|fees|cost|costs|price|cap|limit|"
                          r"budget|allowance|maximum|minimum|premium|percentage|"
                          r"per (?:hour|day|week|mile|night|year|month))\b", re.I)),
    ("name", re.compile(r"\b(which|what) (company|vendor|supplier|hospital|airline|bank|provider|agency|"
                        r"app|tool|system|software|website|brand|firm|insurer|carrier)\b", re.I)),
    ("person", re.compile(r"^\s*(who|whom)\b|\bwho (signs|approves|decides|do i|should i|can i|has to|must|"
                          r"needs to|is responsible)\b", re.I)),
)
_TYPE_CUES_BY_NAME: Final = dict(_TYPE_CUES)
_ROLE_WORDS: Final = re.compile(r"\b(director|manager|lead|officer|supervisor|team|desk|department|nurse|"
                                r"physician|owner|administrator|committee|coordinator|head|chief|hr|it)\b", re.I)
_PLACE_WORDS: Final = re.compile(r"\b(room|floor|building|office|desk|wing|ward|station|site|lobby|reception|"
                                 r"entrance|cabinet|drawer|locker|closet|shelf|fridge|freezer|portal|page|website|"
                                 r"folder|drive|channel|inbox|street|road|city|country|region|north|south|east|"
                                 r"west|northern|southern|eastern|western|near|between|beside)\b", re.I)
"""Words that say where: a statement answering "where ..." names a place or one of these."""
_CLOCK_TIME: Final = re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{1,2}\s?(?:am|pm)\b", re.I)
"""A time of day: a number, but never an amount or a count."""
_PHONE_LIKE: Final = re.compile(r"\d[\d ().-]{5,}\d")
_CAPITALISED_INSIDE: Final = re.compile(r"(?<=[a-z,;:] )[A-Z][A-Za-z]+")
_TIME_WORDS: Final = re.compile(
    r"\b(minutes?|hours?|days?|weeks?|months?|years?|hrs?|min|business days?|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|"
    r"december|midnight|noon|immediately|same day|next day|before|after|within)\b", re.I)
_NUMBER_WORDS: Final = re.compile(r"\b(two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|thirty|"
                                  r"half|once|twice)\b", re.I)
"""Quantities written out; "one" is left out, as it is mostly a pronoun ("no one", "one of our clinics")."""
_PHRASE_END: Final = re.compile(r"[,;:()\[\]{}!?\"]+|\.(?=\s|$)")
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(*])")
_MARKUP: Final = re.compile(r"\*\*|__|`|^\s*[-*+]\s+|^\s*\d+[.)]\s+|^\s*>\s*", re.M)


@dataclass(frozen=True, kw_only=True)
class Unit:
    """One quotable statement of a chunk: a sentence, a bullet, or a table row with its headers."""

    text: str
    chunk: RetrievedChunk
    quote: str
    """The statement as the chunk writes it, markup and all (a table row without its header): the claim's
    quote, which the guard finds verbatim in the chunk."""


@dataclass(frozen=True, kw_only=True)
class ScoredUnit:
    unit: Unit
    overlap: float
    score: float
    semantic: float | None = None
    """Cosine between the question and the statement, when an embedder ranked them."""


class ExtractiveModel:
    """Answers with the best sentence of the retrieved chunks, or says it found nothing. With an embedder,
    sentences are also ranked by their semantic similarity to the question."""

    def __init__(self, *, embedder: Embedder | None = None) -> None:
        self._embedder = embedder

    @property
    def name(self) -> str:
        return "extractive-1"

    @property
    def prompt_version(self) -> str:
        return "extractive-v1"

    def generate(self, request: GenerationRequest) -> str:
        ranked = rank_units(request.question, request.chunks, embedder=self._embedder)
        if not ranked or not _answers(ranked[0], request.question, request.chunks):
            return _envelope_not_found()
        best = ranked[0]
        chosen = [best]
        for other in ranked[1:3]:
            if (other.unit.chunk.chunk_id == best.unit.chunk.chunk_id
                    and other.score >= best.score * SECOND_CLAIM_RATIO
                    and not _swaps_what_best_states(request.question, other, best)):
                chosen.append(other)
        claims = [{"text": scored.unit.text, "chunk_ids": [scored.unit.chunk.chunk_id], "quote": scored.unit.quote}
                  for scored in chosen]
        return json.dumps({
            "found": True,
            "answer": " ".join(scored.unit.text for scored in chosen),
            "claims": claims,
            "confidence": "high" if best.overlap >= 0.7 else "medium",
            "refusal_reason": None,
        })


def _swaps_what_best_states(question: str, other: ScoredUnit, best: ScoredUnit) -> bool:
    """A further statement that replaces a word of the question the best one keeps: "Staff Software Engineer"
    beside "Senior Software Engineer", asked about the senior one."""
    modifier = conflicting_modifier(question, other.unit.text)
    return modifier is not None and stem(modifier) in content_stems(best.unit.text)


def rank_units(question: str, chunks: Sequence[RetrievedChunk], *,
               embedder: Embedder | None = None) -> list[ScoredUnit]:
    """Every statement of the chunks that has the answer's type, best first; by word overlap, and by
    semantic similarity to the question too when an embedder is given."""
    wanted = set(content_stems(question))
    if not wanted:
        return []
    answer_type = expected_answer_type(question)
    top = sorted(chunks, key=lambda c: c.score, reverse=True)[:CANDIDATE_CHUNKS]
    if not top or top[0].score <= 0:
        return []
    units = [unit for chunk in top for unit in split_units(chunk)
             if not addressed_to_assistants(unit.text)]
    weights = _local_weights(wanted, units)
    for name in {stem(name) for name in capitalised_names(question)} & weights.keys():
        weights[name] *= NAME_WEIGHT
    scored = []
    category = asked_category(question)
    typed = [unit for unit in units if has_answer_type(unit.text, answer_type)
             and not (category and category not in content_stems(unit.text + " " + unit.chunk.passage.heading))]
    lexical = sorted(((unit, _overlap(wanted, weights, unit), unit.chunk.score / top[0].score) for unit in typed),
                     key=lambda item: (1 - RETRIEVAL_WEIGHT) * item[1] + RETRIEVAL_WEIGHT * item[2], reverse=True)
    if embedder is not None:
        lexical = lexical[:SEMANTIC_CANDIDATES]
    similarities = _similarities(embedder, question, [unit for unit, _, _ in lexical])
    for (unit, overlap, relative), semantic in zip(lexical, similarities, strict=True):
        match = overlap if semantic is None else (1 - SEMANTIC_WEIGHT) * overlap + SEMANTIC_WEIGHT * semantic
        score = (1 - RETRIEVAL_WEIGHT) * match + RETRIEVAL_WEIGHT * relative
        scored.append(ScoredUnit(unit=unit, overlap=overlap, score=score, semantic=semantic))
    return sorted(scored, key=lambda s: s.score, reverse=True)


def _answers(best: ScoredUnit, question: str, chunks: Sequence[RetrievedChunk]) -> bool:
    """Does the best statement answer? It has the asked-for type (`rank_units` kept only those). With an
    embedder it answers when it means what the question asks; or, meaning it only moderately, when it comes
    from the top-ranked chunk, shares a word with the question and keeps the question's subject ("gym
    membership" asked, "coworking membership" stated is another subject). Without one it must share enough
    of the question's words, and keep the subject too."""
    answer_type = expected_answer_type(question)
    if best.semantic is not None and best.semantic >= SEMANTIC_FLOOR:
        return True
    if conflicting_modifier(question, best.unit.text):
        return False
    from_top_chunk = best.unit.chunk.chunk_id == max(chunks, key=lambda c: c.score).chunk_id
    if best.semantic is not None:
        floor = UNTYPED_FLOOR if answer_type == "any" else TYPED_FLOOR
        return (from_top_chunk and best.overlap > 0 and best.semantic >= SEMANTIC_VETO
                and (best.semantic >= floor or best.overlap >= MIN_OVERLAP))
    if best.overlap >= MIN_OVERLAP:
        return True
    return answer_type != "any" and best.overlap >= TYPED_MIN_OVERLAP and from_top_chunk


def _similarities(embedder: Embedder | None, question: str, units: Sequence[Unit]) -> list[float | None]:
    """Cosine of each statement to the question (vectors are unit length), or None without an embedder."""
    if embedder is None or not units:
        return [None] * len(units)
    vectors = embedder.embed([question, *(unit.text for unit in units)])
    asked = vectors[0]
    return [sum(a * b for a, b in zip(asked, vector, strict=True)) for vector in vectors[1:]]


def asked_category(question: str) -> str | None:
    """For "which hospital ...", the stem of "hospital": a statement naming some other thing does not answer."""
    match = _TYPE_CUES_BY_NAME["name"].search(question)
    return content_stems(match.group(2))[0] if match else None


def expected_answer_type(question: str) -> AnswerType:
    for answer_type, cue in _TYPE_CUES:
        if cue.search(question):
            return answer_type
    return "any"


def has_answer_type(text: str, answer_type: AnswerType) -> bool:
    """Does the statement contain the kind of thing asked for: a number, a time, a person, a name?"""
    has_quantity = bool(numbers(_CLOCK_TIME.sub(" ", text))) or bool(_NUMBER_WORDS.search(text))
    checks = {
        "amount": has_quantity,
        "count": has_quantity,
        "age": has_quantity,
        "time": bool(_TIME_WORDS.search(text)) or bool(_CLOCK_TIME.search(text)),
        "phone": bool(_PHONE_LIKE.search(text)),
        "person": bool(_ROLE_WORDS.search(text)) or bool(_CAPITALISED_INSIDE.search(text)),
        "name": bool(_CAPITALISED_INSIDE.search(text)),
        "place": bool(_CAPITALISED_INSIDE.search(text)) or bool(_PLACE_WORDS.search(text)),
    }
    return checks.get(answer_type, True)


def split_units(chunk: RetrievedChunk) -> list[Unit]:
    units: list[Unit] = []
    header: list[str] | None = None
    for line in chunk.text.splitlines():
        stripped = line.strip()
        if stripped.startswith("|"):
            cells = [cell.strip() for cell in stripped.strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", cell) for cell in cells if cell):
                continue
            if header is None:
                header = cells
                continue
            units.append(Unit(text=_clean("; ".join(f"{h}: {c}" for h, c in zip(header, cells, strict=False)
                                                    if c)), chunk=chunk, quote=stripped))
            continue
        header = None
        if stripped.startswith("#") or not stripped:
            continue
        units.extend(Unit(text=_clean(part), chunk=chunk, quote=part) for part in _SENTENCE_END.split(stripped))
    return [unit for unit in units if len(unit.text) > 3]


def conflicting_modifier(question: str, statement: str) -> str | None:
    """The question's word that the statement replaces by another: "gym membership" asked, "coworking
    membership" stated. The statement is then about another kind of thing, however many words it shares."""
    stated = _word_pairs(statement)
    stated_stems = {stem(word) for pair in stated for word in pair}
    for modifier, head in _word_pairs(question):
        if stem(head) not in stated_stems or stem(modifier) in stated_stems:
            continue
        modifiers_stated = {stem(before) for before, after in stated if stem(after) == stem(head)}
        if modifiers_stated - {""}:
            return modifier
    return None


def _word_pairs(text: str) -> list[tuple[str, str]]:
    """Adjacent word pairs within a phrase (punctuation ends one: "Salary Bands, Raise limit" pairs no "bands"
    with "raise"); a pair whose first word is a stopword or a number is kept as ("", word), so the head counts
    as stated without a modifier."""
    pairs = []
    for phrase in _PHRASE_END.split(text):
        tokens = [word for word in words(phrase) if word]
        pairs.extend([("", tokens[0])] if tokens else [])
        for before, after in pairwise(tokens):
            if after in STOPWORDS or after.isdigit():
                continue
            plain = before in STOPWORDS or any(ch.isdigit() for ch in before)
            pairs.append(("" if plain else before, after))
    return pairs


def _clean(text: str) -> str:
    return " ".join(_MARKUP.sub("", text).replace("*", "").split())


def _local_weights(wanted: set[str], units: Sequence[Unit]) -> dict[str, float]:
    """Rarer words among the candidate statements matter more, as in IDF, but computed locally."""
    frequency: Counter[str] = Counter()
    for unit in units:
        frequency.update(set(content_stems(unit.text)) & wanted)
    total = max(len(units), 1)
    return {term: math.log(1 + total / (1 + frequency[term])) for term in wanted}


def _overlap(wanted: set[str], weights: dict[str, float], unit: Unit) -> float:
    in_text = set(content_stems(unit.text))
    in_heading = set(content_stems(unit.chunk.passage.heading))
    gained = sum(weights[t] if t in in_text else HEADING_WEIGHT * weights[t] if t in in_heading else 0.0
                 for t in wanted)
    return gained / sum(weights.values())


def _envelope_not_found() -> str:
    return json.dumps({"found": False, "answer": "", "claims": [], "confidence": "low",
                       "refusal_reason": "no retrieved sentence states the answer"})
