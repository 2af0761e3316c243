"""The training pair, and how a paragraph becomes candidate sentences with one labelled as the answer."""

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_WORD: Final = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, kw_only=True)
class Pair:
    """One (question, sentence) example: label 1 when the sentence states the answer."""

    question: str
    text: str
    heading: str
    before: str
    label: int
    source: str
    group: str
    """The question's identity within its source: pairs of one question stay in one split."""


@dataclass(frozen=True, kw_only=True)
class Sentence:
    text: str
    start: int
    end: int


def sentences(paragraph: str) -> list[Sentence]:
    """The sentences of a paragraph with their character offsets."""
    found: list[Sentence] = []
    start = 0
    for match in [*_SENTENCE_END.finditer(paragraph), None]:
        end = match.start() if match else len(paragraph)
        text = paragraph[start:end].strip()
        if text:
            offset = paragraph.index(text, start)
            found.append(Sentence(text=text, start=offset, end=offset + len(text)))
        start = match.end() if match else end
    return found


def overlap(question: str, text: str) -> float:
    """Share of the question's words the text uses: how hard a negative is to tell apart."""
    asked = set(_WORD.findall(question.lower()))
    return len(asked & set(_WORD.findall(text.lower()))) / (len(asked) or 1)


def hardest(question: str, candidates: Sequence[Sentence], count: int) -> list[Sentence]:
    return sorted(candidates, key=lambda s: overlap(question, s.text), reverse=True)[:count]


def span_pairs(*, question: str, paragraph: str, answer_start: int | None, heading: str, source: str,
               group: str, negatives: int, plausible_start: int | None = None) -> list[Pair]:
    """The sentence holding the answer's start is the positive; the other sentences of the paragraph are the
    hardest negatives there are. For an unanswerable question every sentence is a negative, the one holding the
    plausible (wrong) answer first."""
    split = sentences(paragraph)
    if not split:
        return []
    positive = _holding(split, answer_start)
    decoy = _holding(split, plausible_start)
    others = [s for s in split if s is not positive and s is not decoy]
    chosen = ([decoy] if decoy else []) + hardest(question, others, negatives - (1 if decoy else 0))
    labelled = [(s, 0) for s in chosen] + ([(positive, 1)] if positive is not None else [])
    return [Pair(question=question, text=s.text, heading=heading, before=_before(s, split), label=label,
                 source=source, group=group) for s, label in labelled]


def _holding(split: Sequence[Sentence], offset: int | None) -> Sentence | None:
    if offset is None:
        return None
    return next((s for s in split if s.start <= offset < s.end + 1), None)


def _before(sentence: Sentence, split: Sequence[Sentence]) -> str:
    index = split.index(sentence)
    return split[index - 1].text if index > 0 else ""


def sample(items: Iterable[Pair], limit: int, seed: int) -> list[Pair]:
    """Up to `limit` pairs, whole questions at a time, reproducibly."""
    by_group: dict[str, list[Pair]] = {}
    for pair in items:
        by_group.setdefault(pair.group, []).append(pair)
    groups = sorted(by_group)
    random.Random(seed).shuffle(groups)
    chosen: list[Pair] = []
    for group in groups:
        if len(chosen) >= limit:
            break
        chosen.extend(by_group[group])
    return chosen
