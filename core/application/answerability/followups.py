"""Follow-up questions: is a message elliptical, and which standalone question does it ask?

A message in a thread may lean on the turn before it: "and if we are adopting?", "what about contractors?",
"who approves it?", "how long?". Read alone it is refused or misread; read against the previous turn it is
a question the documents answer. Two readers implement the `FollowUps` port:

- `OfflineFollowUps`, deterministic: a message is a follow-up when it is elliptical by the shape of English
  (a leading "and"/"but"/"what about"/"what if", a bare phrase such as "for contractors?", a pronoun or "too"
  with no noun of its own to refer to, a bare "how long?" right after an answer). The cues are function words
  and grammar, never the vocabulary of a knowledge base, and they were written before any conversation case.
  A message with its own topic (more than a few content words, or a name of its own in a bare wh-question) is
  read alone. The rewrite keeps the previous question's frame or focus, lets the new words replace what they
  stand in for, and hands the previous answer's section names to retrieval; the new words of a frameless
  follow-up ("and for a client dinner?") must then be spoken of by the passage that answers it.
- `ModelFollowUps`: one strict-JSON request to a generative model (a versioned prompt), falling back to the
  offline reading when the reply is not exactly the expected object.

Both see only the turns that the pipeline has already filtered to what this reply's audience may see.
"""

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.application.language.shape import MAX_QUESTION_LENGTH, invalid_reason
from core.application.ports import Assessment, Rewriter, RewriteRequest
from core.domain import Reading, RetrievedChunk, Turn
from core.domain.errors import ModelError
from core.text import STOPWORDS, content_stems, stem, words

OFFLINE_VERSION: Final = "followup-offline-v1"
LONG_MESSAGE: Final = 8
"""Content words from which a message carries its own topic, whatever its first word."""
FEW_WORDS: Final = 3
"""Content words a pronoun-led or bare-phrase follow-up has at most ("does that apply to contractors?")."""
FOCUS_WORDS: Final = 12
"""Content words of the previous question carried into a follow-up that keeps its own frame."""
THREAD_QUESTION_LENGTH: Final = 600
"""Characters of the thread's own messages a mention in the thread is read against."""

Form = Literal["frame", "fragment"]
"""`frame`: the message keeps its own question frame ("who approves it?") and takes the previous focus;
`fragment`: a frameless phrase ("and for contractors?") takes the previous question's frame."""

_LEAD_IN: Final = re.compile(r"^\s*(?:(?:ok|okay|right|great|thanks|thank you|cool|alright|got it|i see|hm+)"
                             r"[,.!]*\s+)+", re.IGNORECASE)
_CONJUNCTION: Final = re.compile(r"^\s*(?:and|but|also|plus|or|so|then)\b[,:]?\s*", re.IGNORECASE)
_ABOUT: Final = re.compile(r"^\s*(?:what|how)\s+about\b[,:]?\s*", re.IGNORECASE)
_WHAT_IF: Final = re.compile(r"^\s*what\s+if\b\s*", re.IGNORECASE)
_SAME_FOR: Final = re.compile(r"^\s*(?:is\s+it\s+|is\s+that\s+)?(?:the\s+)?same\s+(?:goes\s+)?"
                              r"(?=for\b|with\b|in\b|on\b|at\b|if\b|when\b)", re.IGNORECASE)
_WH: Final = frozenset("who whom whose what what's whats when where where's why how how's which".split())
_AUXILIARIES: Final = frozenset("is are was were do does did can could should would will may might must has have "
                                "had am shall isn't aren't don't doesn't can't won't".split())
_SUBORDINATORS: Final = frozenset("for in on at with without during after before if unless while regarding re "
                                  "except including from to by under over via within outside inside per "
                                  "when whilst once".split())
"""Words that open a frameless phrase ("for contractors?", "if we are adopting?", "during probation?")."""
_PREPOSITIONS: Final = frozenset("for in on at with without during after before from to by under over via within "
                                 "outside inside per".split())
_ANAPHORS: Final = frozenset("it its itself that this these those they them their theirs such".split())
_TAIL_CUES: Final = re.compile(r"\b(?:too|as well|either|instead|also|else|otherwise)\s*[?.!]*\s*$|"
                               r"\bthe (?:same|other|rest|latter|former)\b|\b(?:that|this|which|the other) ones?\b",
                               re.IGNORECASE)
"""A comparison with, or a choice among, what was said before."""
_TIME_DEIXIS: Final = re.compile(r"\b(?:this|that|next|last)\s+(?:year|month|week|quarter|time|morning|afternoon|"
                                 r"evening|weekend|season|summer|winter|spring|autumn|fall|day|night)\b",
                                 re.IGNORECASE)
""""this year" points at the calendar, not at an earlier turn."""
_EXPLETIVE_IT: Final = re.compile(r"\bit\b(?:[^?.!]*\bto\s+[a-z]|\s+(?:is|was|'s)?\s*\w+\s+(?:that|whether|if)\b|"
                                  r"'s\s+\w+\s+to\b)", re.IGNORECASE)
""""is it OK to ...", "how long does it take to ...": "it" stands for the clause that follows."""
_NAME: Final = re.compile(r"(?<=[a-z0-9,;:)] )[A-Z][A-Za-z0-9]+|\b[A-Z]{2,}\b|\d")
"""A capitalised word inside the sentence, an acronym, or a number: the message names something itself."""
_INDEFINITE: Final = frozenset("everyone everybody everything others rest nobody nothing none each".split())
"""Indefinite pronouns: "and everyone else?" names no topic a passage must speak of."""
_NUMBER_WORDS: Final = frozenset("""zero one two three four five six seven eight nine ten eleven twelve thirteen
    fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred
    thousand million half first second third fourth fifth once twice""".split())
_HOW: Final = re.compile(r"\bhow\s+\w+", re.IGNORECASE)
""""how long", "how much": the question's frame."""
_CUT: Final = re.compile(r"[,;:.?!()]")
_TRAILING: Final = re.compile(r"[\s?.!,;:]+$")


@dataclass(frozen=True, kw_only=True)
class Elliptical:
    """How a follow-up leans on the previous turn: its form and the words it adds."""

    form: Form
    added: str
    """The message without its lead-in ("what about", "and"), trailing punctuation dropped."""


# -- detection -------------------------------------------------------------------------------------------

def content_words(text: str) -> list[str]:
    """The words that carry meaning: no stopword, no pronoun, no cue word."""
    cues = {"else", "instead", "either", "otherwise", "plus", "ones"}
    return [word for word in words(text) if word and word not in STOPWORDS and word not in cues]


def elliptical(message: str, previous: Turn) -> Elliptical | None:
    """The follow-up form of `message` after `previous`, or None when it reads as a question of its own."""
    text = _LEAD_IN.sub("", message).strip()
    if not text or len(content_words(text)) > LONG_MESSAGE:
        return None
    for lead, opening in ((_ABOUT, ""), (_WHAT_IF, "if "), (_SAME_FOR, "")):  # "what if X" adds "if X"
        found = lead.match(text)
        if found and text[found.end():].strip(" ?.!"):
            return Elliptical(form="fragment", added=opening + _bare(text[found.end():]))
    conjunction = _CONJUNCTION.match(text)
    if conjunction:
        rest = text[conjunction.end():]
        if not rest.strip(" ?.!"):
            return None
        if _ABOUT.match(rest) or _WHAT_IF.match(rest):
            return elliptical(rest, previous)
        return _after_conjunction(rest)
    return _without_conjunction(text, previous)


def _after_conjunction(rest: str) -> Elliptical | None:
    """"and ...": a short question of its own frame, or a phrase; a full question with its own topic is
    read alone ("And how many sick days do I get per year?")."""
    content = content_words(rest)
    if _asks(rest):
        if _anaphoric(rest) or len(content) <= FEW_WORDS:
            return Elliptical(form="frame", added=_bare(rest))
        return None
    if len(content) <= FEW_WORDS + 1:
        return Elliptical(form="fragment", added=_bare(rest))
    return None


def _without_conjunction(text: str, previous: Turn) -> Elliptical | None:
    content = content_words(text)
    first = _first_word(text)
    if first in _SUBORDINATORS and not _asks(text) and 0 < len(content) <= FEW_WORDS:
        return Elliptical(form="fragment", added=_bare(text))
    if _anaphoric(text) and len(content) <= FEW_WORDS:
        return Elliptical(form="frame", added=_bare(text))
    if _TAIL_CUES.search(text) and len(content) <= FEW_WORDS + 1:
        return Elliptical(form="frame", added=_bare(text))
    short_after_answer = previous.kind in ("answered", "ambiguous", None)
    if first in _WH and len(content) <= 1 and not _NAME.search(text) and short_after_answer:
        return Elliptical(form="frame", added=_bare(text))
    return None


def _asks(text: str) -> bool:
    """Opens with a question word or an auxiliary ("who ...", "is ...", "does ..."), or with a preposition
    carrying the question word along ("from which countries did ...", "in what case is ...")."""
    found = words(text)
    first = found[0] if found else ""
    if first == "when":  # "when travelling?" is a phrase; "when is it due?" a question
        return len(found) > 1 and found[1] in _AUXILIARIES
    if first in _SUBORDINATORS:  # "for how long?" is a phrase; "to where did he go?" a question
        return any(word in _WH for word in found[1:4]) and any(word in _AUXILIARIES for word in found[1:])
    return first in _WH or first in _AUXILIARIES


def _anaphoric(text: str) -> bool:
    """A pronoun or demonstrative that refers back: not "this year", not the "it" of "is it OK to ...". """
    cleaned = _TIME_DEIXIS.sub(" ", text)
    found = {word for word in words(cleaned) if word in _ANAPHORS}
    if found == {"it"} and _EXPLETIVE_IT.search(cleaned):
        return False
    if found == {"that"} and re.search(r"\b(?:so|such|now|than|sure|make sure|know|think|say|says|said)\s+that\b",
                                       cleaned, re.IGNORECASE):
        return False
    return bool(found)


def _first_word(text: str) -> str:
    found = words(text)
    return found[0] if found else ""


def _bare(text: str) -> str:
    return _TRAILING.sub("", text.strip())


# -- rewriting -------------------------------------------------------------------------------------------

def previous_question(turns: Sequence[Turn]) -> Turn | None:
    """The turn a follow-up leans on: the latest turn of ours, or when the thread's own messages came after it
    (Sourced called into a thread), those messages read together, the thread's first question first."""
    if not turns:
        return None
    if turns[-1].ours:
        return turns[-1]
    trailing: list[Turn] = []
    for turn in reversed(turns):
        if turn.ours:
            break
        trailing.insert(0, turn)
    joined = " ".join(_sentence(turn.question) for turn in trailing)
    if len(joined) > THREAD_QUESTION_LENGTH:  # the thread's question first, then its latest words
        first = _bare(trailing[0].question)[: THREAD_QUESTION_LENGTH // 2]
        joined = f"{first}. {joined[-(THREAD_QUESTION_LENGTH // 2):]}"
    return Turn(question=joined)


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith(("?", ".", "!")) else f"{text}."


def rewrite(form: Elliptical, previous: Turn) -> tuple[str, str, tuple[str, ...]]:
    """The standalone question, the text retrieval reads (the question and the previous answer's section
    names), and the stems a passage must hold to answer it (the new words of a frameless follow-up)."""
    if form.form == "frame":
        question, required = f"{form.added} ({_focus(previous.question)})?", tuple[str, ...]()
    else:
        question = _substituted(_bare(previous.question), form.added) + "?"
        required = new_stems(form.added, previous.question)
    question = _capped(question)
    search = " ".join([question, *dict.fromkeys(hint for hint in previous.headings[:2] if hint)])
    return question, search, required


def new_stems(added: str, before: str) -> tuple[str, ...]:
    """What a frameless follow-up brings that the previous question did not, and that an answer to it must
    speak of: its content words' stems, without names and numbers (a city, an amount or a year is a value
    the documents may give under another row, "all other cities")."""
    named = {token.strip("?.!,;:()\"'").lower() for index, token in enumerate(added.split())
             if index in set(_named_tokens(added.split(), skip_first=False))}
    had = {stem(word) for word in words(before)}
    asked = _HOW.sub(" ", added)  # "for how long?": "how long" is what it asks, not what it is about
    found = [stem(word) for word in content_words(asked) if word not in named and word not in _INDEFINITE
             and word not in _NUMBER_WORDS and not any(ch.isdigit() for ch in word)]
    return tuple(dict.fromkeys(term for term in found if term not in had))


def _focus(question: str) -> str:
    """The previous question's content words, in order, once each: its topic without its question frame
    ("how long", "how much" ask; they are not the topic)."""
    topic = _HOW.sub(" ", question)
    kept = list(dict.fromkeys(word for word in _surface_words(topic) if word.lower() not in STOPWORDS))
    return " ".join(kept[:FOCUS_WORDS]) or _bare(question)


def _substituted(question: str, added: str) -> str:
    """The previous question with the new words standing where what they replace stood: a phrase opened by the
    same preposition ("in London" for "in Dublin?"), a name or number for a name or number ("SEV1" for "a
    SEV3?"); otherwise the new words are added to it ("..., if we are adopting")."""
    return (_same_preposition_replaced(question, added) or _names_replaced(question, added)
            or f"{question}, {added}")


def _same_preposition_replaced(question: str, added: str) -> str | None:
    first = _first_word(added)
    if first not in _PREPOSITIONS:
        return None
    found = re.search(rf"\b{re.escape(first)}\b", question, re.IGNORECASE)
    if found is None:
        return None
    rest = question[found.end():]
    stop = _CUT.search(rest)
    following = [m for m in re.finditer(r"\b\w+\b", rest) if m.group(0).lower() in _PREPOSITIONS | _WH]
    ends = [m.start() for m in following] + ([stop.start()] if stop else [])
    end = found.end() + (min(ends) if ends else len(rest))
    return " ".join(f"{question[: found.start()]} {added} {question[end:]}".split())


def _names_replaced(question: str, added: str) -> str | None:
    """The first run of names and numbers of the question replaced by the new ones: by the new names alone
    when the new words are nothing else ("a SEV3" for "SEV1"), else by all of them."""
    new_tokens = added.split()
    new_names = _named_tokens(new_tokens, skip_first=False)
    tokens = question.split()
    named = _named_tokens(tokens, skip_first=True)
    if not new_names or not named:
        return None
    start = end = named[0]
    while end + 1 in named:
        end += 1
    others = [t for i, t in enumerate(new_tokens) if i not in new_names and content_words(t)]
    replacement = " ".join(new_tokens[i] for i in new_names) if not others else added
    trailing = tokens[end][len(tokens[end].rstrip("?.!,;:")):]
    return " ".join([*tokens[:start], replacement + trailing, *tokens[end + 1:]])


def _named_tokens(tokens: Sequence[str], *, skip_first: bool) -> list[int]:
    """Positions of names and numbers: capitalised words that are not stopwords (a sentence's first word
    excepted when `skip_first`), acronyms, anything with a digit."""
    found = []
    for index, token in enumerate(tokens):
        word = token.strip("?.!,;:()\"'")
        if not word or (skip_first and index == 0):
            continue
        if any(ch.isdigit() for ch in word) or (word[:1].isupper() and word.lower() not in STOPWORDS):
            found.append(index)
    return found


def _surface_words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9$€£][A-Za-z0-9$€£.,'\u2019/-]*[A-Za-z0-9%]|[A-Za-z0-9]", text)


def _capped(question: str, limit: int = MAX_QUESTION_LENGTH) -> str:
    if len(question) <= limit:
        return question
    cut = question[: limit - 2]
    return cut[: cut.rfind(" ")].rstrip() + "…?" if " " in cut else cut + "…?"


class OfflineFollowUps:
    """The deterministic reader (`FollowUps` port)."""

    @property
    def version(self) -> str:
        return OFFLINE_VERSION

    def read(self, message: str, turns: Sequence[Turn]) -> Reading:
        previous = previous_question(turns)
        if previous is None:
            return Reading.alone(message, by=self.version)
        if not message.strip():  # Sourced called into a thread with nothing but its name: the thread's question
            return Reading(question=previous.question, search=" ".join([previous.question, *previous.headings[:2]]),
                           followup=True, by=self.version)
        form = elliptical(message, previous)
        if form is None:
            return Reading.alone(message, by=self.version)
        question, search, required = rewrite(form, previous)
        return Reading(question=question, search=search, followup=True, by=self.version, required=required)


# -- the new words take precedence -----------------------------------------------------------------------

def speaking_of(reading: Reading | None, candidates: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
    """The candidates that hold one of the words a follow-up requires, in their section's own headings (the
    document's title names every section) or their text; all of them when it requires none."""
    if reading is None or not reading.followup or not reading.required:
        return list(candidates)
    return [chunk for chunk in candidates
            if _holds(reading.required, f"{_below_title(chunk.passage.heading)} {chunk.text}")]


def new_words_first(reading: Reading | None, assessment: Assessment) -> Assessment:
    """The assessment with the statements that speak of a follow-up's new words ranked first: "and for a client
    dinner?" is answered by a statement about client meals, never by the meal allowance just given. A statement
    moved up keeps the probability it was given as a runner-up, so it must answer well on its own."""
    if reading is None or not reading.followup or not reading.required or not assessment.candidates:
        return assessment
    speaking = [c for c in assessment.candidates
                if _holds(reading.required, f"{_below_title(c.statement.chunk.passage.heading)} {c.statement.text}")]
    if not speaking or speaking[0] is assessment.candidates[0]:
        return assessment
    rest = [c for c in assessment.candidates if c not in speaking]
    return replace(assessment, candidates=(*speaking, *rest), explanation=(), set_aside_from=len(speaking))


def _holds(required: Sequence[str], text: str) -> bool:
    return not set(required).isdisjoint(content_stems(text))


def _below_title(heading: str) -> str:
    return heading.split(" > ", 1)[1] if " > " in heading else ""


# -- a generative model's reading ----------------------------------------------------------------------

class ModelReading(BaseModel):
    """The model's reply: exactly these two fields."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    followup: bool
    question: str = Field(max_length=MAX_QUESTION_LENGTH)


class MalformedReading(ModelError, ValueError):
    """The model's reply is not exactly one object of the expected schema."""


def parse_reading(raw: str) -> ModelReading:
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, RecursionError, ValueError) as error:
        raise MalformedReading(f"not a single JSON object: {type(error).__name__}") from None
    if not isinstance(data, dict):
        raise MalformedReading(f"expected an object, got {type(data).__name__}")
    try:
        reading = ModelReading.model_validate(data)
    except ValidationError as error:
        fields = sorted({".".join(str(p) for p in e["loc"]) or "<root>" for e in error.errors()})
        raise MalformedReading(f"schema violation in {', '.join(fields)}") from None
    if reading.followup and invalid_reason(reading.question) is not None:
        raise MalformedReading(f"the rewritten question is {invalid_reason(reading.question)}")
    return reading


def reading_json_schema() -> dict[str, object]:
    return ModelReading.model_json_schema()


class ModelFollowUps:
    """The `FollowUps` port over a generative model: one strict-JSON rewrite request per message that has
    earlier turns. Any failure (the adapter raising, a reply that is not exactly the object) falls back to the
    offline reading, and the audit says why."""

    def __init__(self, rewriter: Rewriter, *, fallback: OfflineFollowUps | None = None) -> None:
        self._rewriter = rewriter
        self._fallback = fallback or OfflineFollowUps()

    @property
    def version(self) -> str:
        return f"{self._rewriter.name}+{self._rewriter.prompt_version}"

    def read(self, message: str, turns: Sequence[Turn]) -> Reading:
        if not turns:
            return Reading.alone(message, by=self.version)
        try:
            raw = self._rewriter.rewrite(RewriteRequest(message=message, turns=tuple(turns)))
            parsed = parse_reading(raw)
        except Exception as error:  # an adapter failure or a malformed reply: the offline reading stands in
            fallback = self._fallback.read(message, turns)
            return replace(fallback, detail=f"model reading failed: {type(error).__name__}")
        if not parsed.followup or not parsed.question.strip():
            return Reading.alone(message, by=self.version)
        previous = previous_question(turns)
        hints = previous.headings[:2] if previous is not None else ()
        question = parsed.question.strip()
        return Reading(question=question, search=" ".join([question, *hints]), followup=True, by=self.version)
