"""Fabrications made from a capable model's recorded claims: its real answer, with one claim made false.

Code-made fabrications (`fabrications`) start from a case's supporting sentence; these start from what a
frontier model actually wrote (its wording, its paraphrases, its quotes), so the guard is measured on the
claims it will really see: a faithful recording must pass, and each falsified one must be refused. The quote
stays the model's exact words; only the claim is changed (except `other_question`, which is true to its quote).

  recorded                  the recorded answer as it was (the guard must pass it when it was right)
  number                    a number of a claim swapped for another number of the source it cites
  negation                  a claim's negation removed, or a negation added
  bound_or_modality         "at least" for "at most", "before" for "after", "may" for "must", ...
  subject                   a claim's subject swapped for another one its source names
  condition                 a condition added to a claim, made of another sentence of its source
  other_question            claim and quote replaced by another true sentence of the cited source: it answers
                            something else (the closest to the question in words)
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from core.documents import reading
from core.eval.fabrications import AUXILIARY, NAME, NUMBER, ROLE, Source, clean, entities, negate, number_value
from core.text import STOPWORDS, content_stems, words

Falsified = Literal["recorded", "number", "negation", "bound_or_modality", "subject", "condition",
                    "other_question"]
FALSIFIED: Final[tuple[Falsified, ...]] = ("recorded", "number", "negation", "bound_or_modality", "subject",
                                           "condition", "other_question")
_FLIPS: Final = (("at least", "at most"), ("at most", "at least"), ("more than", "less than"),
                 ("less than", "more than"), ("fewer than", "more than"), ("no more than", "no less than"),
                 ("minimum", "maximum"), ("maximum", "minimum"), ("before", "after"), ("after", "before"),
                 ("over", "under"), ("under", "over"), ("up to", "at least"), ("within", "after"),
                 ("must", "may"), ("may", "must"), ("should", "need not"), ("required", "optional"),
                 ("optional", "required"), ("can", "must"), ("mandatory", "optional"))
_SUBJECT_WINDOW: Final = 8
_ADDED_WORDS: Final = 10
_CONDITION_WORDS: Final = 5
_OTHER_WORDS: Final = 6

Claim = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Falsification:
    envelope: dict[str, Any]
    claim: str | None
    """The text of the claim made false (None for the recording as it was): refused whole or dropped from the
    answer, it never reaches the asker."""


def falsify(variant: Falsified, envelope: dict[str, Any], sources: Sequence[Source], question: str
            ) -> Falsification | None:
    """The recorded envelope with its first claim that the variant applies to made false, or None when no claim
    can be. The other claims stay as recorded."""
    claims: list[Claim] = [dict(claim) for claim in envelope.get("claims") or [] if isinstance(claim, dict)]
    if variant == "recorded":
        return Falsification(envelope=envelope, claim=None)
    by_id = {source.chunk_id: source for source in sources}
    for index, claim in enumerate(claims):
        cited = [by_id[cid] for cid in claim.get("chunk_ids") or () if cid in by_id]
        if not cited or not isinstance(claim.get("text"), str):
            continue
        if variant == "other_question":
            made = _other_question(claims, cited[0], question)
            return None if made is None else Falsification(envelope=_envelope([made]), claim=made["text"])
        text = _MAKERS[variant](claim["text"], str(claim.get("quote") or ""), cited[0])
        if text is not None and text != claim["text"]:
            return Falsification(envelope=_envelope([*claims[:index], {**claim, "text": text}, *claims[index + 1:]]),
                                 claim=text)
    return None


def _envelope(claims: list[Claim]) -> dict[str, Any]:
    return {"found": True, "answer": " ".join(claim["text"] for claim in claims), "claims": claims,
            "confidence": "high", "refusal_reason": None}


def _number(text: str, quote: str, source: Source) -> str | None:
    """The claim's first number replaced by a different number of its source."""
    mine = NUMBER.findall(text)
    if not mine:
        return None
    values = {number_value(n) for n in mine}
    others = [n for n in NUMBER.findall(clean(source.text)) if number_value(n) not in values]
    if not others:
        return None
    return re.sub(rf"(?<![\w.]){re.escape(mine[0])}(?![\d])", others[0], text, count=1)


def _negation(text: str, quote: str, source: Source) -> str | None:
    return negate(text)


def _bound_or_modality(text: str, quote: str, source: Source) -> str | None:
    """The first bound or modal word of the claim turned the other way."""
    found = [(match.start(), match, replacement) for phrase, replacement in _FLIPS
             for match in [re.search(rf"\b{re.escape(phrase)}\b", text, flags=re.IGNORECASE)] if match]
    if not found:
        return None
    _, match, replacement = min(found, key=lambda item: (item[0], -len(item[1].group(0))))
    if match.group(0)[0].isupper():
        replacement = replacement[0].upper() + replacement[1:]
    return text[:match.start()] + replacement + text[match.end():]


def _subject(text: str, quote: str, source: Source) -> str | None:
    """The words before the claim's first auxiliary verb (a subject of content words, not "There" or "It")
    replaced by a name or role its source names and neither the claim nor the quote says."""
    auxiliary = AUXILIARY.search(text)
    if auxiliary is None or len(text[:auxiliary.start()].split()) > _SUBJECT_WINDOW:
        return None
    if not [word for word in words(text[:auxiliary.start()]) if word not in STOPWORDS]:
        return None
    said = set(words(text)) | set(words(quote))
    for pattern in (NAME, ROLE):
        for other in entities(pattern, clean(source.text)):
            if not set(words(other)) & said:
                return f"{other[0].upper()}{other[1:]} {text[auxiliary.start():]}"
    return None


def _condition(text: str, quote: str, source: Source) -> str | None:
    """The claim with "only if" and a clause made of another sentence of its source: one the quote is not part
    of, most of whose words the claim does not say."""
    said = set(content_stems(text)) | set(content_stems(quote))
    for statement in reading.statements(source.text):
        sentence = clean(source.text[statement.start:statement.end]).rstrip(".!?:;")
        own = set(content_stems(sentence))
        if statement.kind not in ("sentence", "item") or len(sentence.split()) < _CONDITION_WORDS \
                or len(own - said) * 2 < len(own):
            continue
        added = " ".join(sentence.split()[:_ADDED_WORDS])
        return f"{text.rstrip('.!? ')}, only if {added[0].lower()}{added[1:]}."
    return None


def _other_question(claims: Sequence[Claim], source: Source, question: str) -> Claim | None:
    """Another sentence of the cited source, true to itself and quoted whole: the one closest to the question
    in words that no recorded quote touches."""
    quotes = [" ".join(str(claim.get("quote") or "").split()) for claim in claims]
    asked = set(content_stems(question))
    candidates = []
    for begin, end in reading.sentence_spans(source.text):
        raw = source.text[begin:end].strip()
        squeezed = " ".join(raw.split())
        if len(words(raw)) < _OTHER_WORDS or any(q and (q in squeezed or squeezed in q) for q in quotes):
            continue
        candidates.append(raw)
    if not candidates:
        return None
    chosen = max(candidates, key=lambda raw: len(asked & set(content_stems(raw))))
    return {"text": clean(chosen), "chunk_ids": [source.chunk_id], "quote": chosen}


_MAKERS: Final[dict[str, Callable[[str, str, Source], str | None]]] = {
    "number": _number, "negation": _negation, "bound_or_modality": _bound_or_modality, "subject": _subject,
    "condition": _condition,
}
