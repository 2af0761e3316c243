"""Does a retrieved statement state what the question asks? A fitted score, not hand-set floors.

Every candidate statement of the best retrieved chunks gets general features of (question, statement, its
chunk, heading path and retrieval rank): the asked-for kind of value and whether the statement holds one,
coverage of the question's words weighted by how rare they are among the candidates (so the word that narrows
the question, "Singapore", "staging", "weekend", weighs most), whether the names and numbers the question uses
stand in the statement's chunk, a modifier of the question's subject replaced by another, semantic similarity
and the retrieval evidence. A logistic model, fitted by `training/fit_answerability.py` on labelled
(question, statement) pairs of several knowledge bases and committed with its data version
(`model.json` beside this module), turns them into the probability that the statement answers. The question is
answerable when the best probability reaches the model's threshold, chosen for a target false-answer rate.
"""

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import pairwise
from typing import Any, Final

from core.application.language.answer_types import (
    AnswerType,
    asked_category,
    asks_money,
    counted_noun,
    expected_answer_type,
    has_answer_type,
    has_quantity,
    states_money,
)
from core.application.language.facts import Quantity, held_by_bounds, quantities
from core.application.language.statements import Statement, statements_of
from core.application.ports import Assessment, Candidate, Embedder, Reader, ReadPassage
from core.domain import RetrievedChunk
from core.domain.errors import ModelError
from core.spelling import english_words, letter_words, respelt
from core.text import STOPWORDS, capitalised_names, content_stems, numbers, stem, words

CANDIDATE_CHUNKS: Final = 8
"""Chunks whose statements are candidates: as many as retrieval returns at its usual depth. More candidates did
not add look-alikes, likely because the rarity of a question's words and each statement's rank are then read
against more of the knowledge base: against 5, `python -m benchmarks.every_set` gave wrong answers dev2 0.067 ->
0.053, squad2 0.075 -> 0.047, dev3 0.093 -> 0.065 and real 0.074 -> 0.056 (one more on each annotated half), with
correct answers squad2 0.671 -> 0.694, annotated-b 0.319 -> 0.329 and dev3 0.477 -> 0.495 (6, 7, 10 and 12
measured too: 6 gains half as much, 10 and 12 as much as 8). `ask` p95 at 10k chunks, full text: 18.6 -> 24.0
ms."""
EMBEDDED_STATEMENTS: Final = 6
"""Statements embedded per question, the best by words and retrieval: bounds the embedding cost, the largest
part of a first-time `ask` (MiniLM on two cores, some 5 ms a statement). Six instead of the twelve the model was
fitted with moved 1 case of 71 on dev (wrong to refused), 1 of 150 on dev2 (refused to wrong) and 1 of 706 on
squad2 (correct to refused), and took `ask` p95 at 100k chunks from 123 to 96 ms (`benchmarks/ask_phases.py`)."""
READ_STATEMENTS: Final = 12
"""Statements the reader reads per question, the best by words and retrieval. Of the answerable cases with an
answering statement among the first 24 (`training/reader/own_data.py`), the first 12 hold it for dev 35 of 37,
dev2 48 of 48, examples 22 of 22 and squad2 359 of 364 (16: 36, 48, 22, 359). The reader's cost grows with the
statements read, one pair at a time, and is the largest part of `ask` with a reader: at 16, its p95 was 89-91 ms
at 20k chunks (`sourced bench`), over the 80 ms budget."""
READER_LOGIT_LIMIT: Final = 8.0
MODEL_FILE: Final = "model.json"
SOLE_CANDIDATE_MARGIN: Final = 1.0
"""The lead of a question's only candidate: clear, but no clearer than a typical first over second."""

EVIDENCE_AGAINST: Final = frozenset({
    "rarest_word_missing", "names_missing", "typed_not_held", "modifier_replaced", "modifier_unstated",
    "money_missing", "count_unbound", "row_key_unmatched", "row_names_missing"})
"""Features that speak against an answer: the fit never gives them a positive weight."""
UNSIGNED_FEATURES: Final = frozenset({"statement_words", "question_words", "leads_in"})
"""Features with no direction of their own. Every other feature speaks for an answer (weight >= 0)."""
NAME_WEIGHT: Final = 2.0
"""How much more a name or number the question uses weighs in coverage than its other words."""
MIN_ABBREVIATION: Final = 4
"""Shorter prefixes ("dev", "pay") begin too many unrelated words to be read as abbreviations."""
_PHRASE_END: Final = ("[", ",", ";", ":", "(", ")", "]", "{", "}", "!", "?", '"')


class EmbedderFailed(ModelError, RuntimeError):
    """The embedder failed while the candidates' semantic features were computed."""


class ReaderFailed(ModelError, RuntimeError):
    """The reader failed while the candidates were read."""


@dataclass(frozen=True, kw_only=True)
class LinearScore:
    """Weights over standardised features: a feature enters as (value - mean) / scale."""

    weights: Mapping[str, float]
    means: Mapping[str, float]
    scales: Mapping[str, float]
    intercept: float = 0.0

    def contributions(self, features: Mapping[str, float]) -> list[tuple[str, float]]:
        return [(name, weight * (features[name] - self.means[name]) / self.scales[name])
                for name, weight in self.weights.items()]

    def __call__(self, features: Mapping[str, float]) -> float:
        return self.intercept + sum(value for _, value in self.contributions(features))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "LinearScore":
        return cls(weights=dict(data["weights"]), means=dict(data["means"]), scales=dict(data["scales"]),
                   intercept=float(data.get("intercept", 0.0)))


@dataclass(frozen=True, kw_only=True)
class AnswerabilityModel:
    """A ranker that orders a question's candidate statements, and a logistic decision on the best of them:
    the probability that it answers, against a threshold chosen for a target false-answer rate."""

    ranker: LinearScore
    decision: LinearScore
    threshold: float
    version: str
    claim_rank_margin: float | None = None
    """How far below the best candidate, in this ranker's log-odds, a model's quote may rank and still answer
    (`training/fit_claim_ranking.py`). A margin means something only on the ranker it was fitted on: a model
    without one (the reader's rankers, a refit not yet measured) is not checked."""

    def probability(self, features: Mapping[str, float]) -> float:
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, self.decision(features)))))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "AnswerabilityModel":
        margin = data.get("claim_rank_margin")
        return cls(ranker=LinearScore.from_dict(data["ranker"]), decision=LinearScore.from_dict(data["decision"]),
                   threshold=float(data["threshold"]), version=str(data["version"]),
                   claim_rank_margin=None if margin is None else float(margin))


@cache
def shipped_models() -> dict[str, AnswerabilityModel]:
    """The committed fit: one model per set of features available (an embedder configured or not, a reader
    configured or not)."""
    text = resources.files("core.application.answerability").joinpath(MODEL_FILE).read_text(encoding="utf-8")
    return {variant: AnswerabilityModel.from_dict(data) for variant, data in json.loads(text)["models"].items()}


def variant_name(*, semantic: bool, reading: bool, matching: bool = False) -> str:
    """`matching`: the semantic features read by the question matcher rather than the retrieval embedder."""
    return ("semantic" if semantic else "lexical") + ("+matcher" if matching else "") + ("+reader" if reading else "")


def shipped_model(*, semantic: bool, reading: bool = False, matching: bool = False) -> AnswerabilityModel:
    return shipped_models()[variant_name(semantic=semantic, reading=reading, matching=matching)]


# -- the features ------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class QuestionProfile:
    """What is read once per question."""

    stems: tuple[str, ...]
    names: frozenset[str]
    """Capitalised names and numbers the question uses: the most specific words it has."""
    answer_type: AnswerType
    category: str | None
    pairs: tuple[tuple[str, str], ...]
    money: bool
    counted: str | None
    measured: tuple[Quantity, ...]
    """The question's numbers with a unit ("been here 9 months"): a band a statement states may hold them."""

    @classmethod
    def of(cls, question: str) -> "QuestionProfile":
        return cls(stems=tuple(dict.fromkeys(content_stems(question))),
                   names=frozenset(stem(name) for name in capitalised_names(question)) | numbers(question),
                   answer_type=expected_answer_type(question), category=asked_category(question),
                   pairs=tuple(pair for pair in word_pairs(question) if pair[0]), money=asks_money(question),
                   counted=counted_noun(question), measured=tuple(q for q in quantities(question) if q.unit))


def candidate_statements(chunks: Sequence[RetrievedChunk]) -> list[Statement]:
    """The statements of the best chunks, never one addressed to automated readers."""
    best = sorted(chunks, key=lambda c: c.score, reverse=True)[:CANDIDATE_CHUNKS]
    return [s for s in statements_of(best) if not s.addressed_to_assistants]


def as_meant(question: str, statements: Sequence[Statement]) -> str:
    """The question with its typos read as the candidates' words they were meant to be (`core.spelling`)."""
    vocabulary = set().union(*(letter_words(s.text + " " + s.chunk.passage.heading) for s in statements))
    return respelt(question, vocabulary)


def rarity_weights(profile: QuestionProfile, statements: Sequence[Statement]) -> dict[str, float]:
    """Rarer words among the candidates matter more, as in IDF, computed over the candidates alone (what the
    audience may see, nothing else). A name or number the question uses weighs double."""
    frequency: Counter[str] = Counter()
    wanted = set(profile.stems)
    for statement in statements:
        frequency.update(set(content_stems(statement.text)) & wanted)
    total = max(len(statements), 1)
    return {term: math.log(1 + total / (1 + frequency[term])) * (NAME_WEIGHT if term in profile.names else 1.0)
            for term in profile.stems}


def statement_features(profile: QuestionProfile, statement: Statement, *, weights: Mapping[str, float],
                       rank: int, top_score: float) -> dict[str, float]:
    """The general features of one (question, statement) pair, every value a number in a small range; the
    semantic ones are 0 until `featurise` sets them."""
    chunk = statement.chunk
    said = set(content_stems(statement.text)) | held_by_bounds(profile.measured, statement.text)
    heading = set(content_stems(chunk.passage.heading))
    in_chunk = set(content_stems(chunk.text)) | heading
    total = sum(weights.values()) or 1.0

    def covered(where: set[str]) -> float:
        return sum(weight for term, weight in weights.items() if term in where) / total

    rarest = narrowing_word(profile, weights)
    chunk_names = _names_in(chunk.passage.heading + " " + chunk.text) | held_by_bounds(profile.measured, chunk.text)
    typed = profile.answer_type != "any"
    holds = has_answer_type(statement.text, profile.answer_type) and (
        profile.category is None or stem(profile.category) in said | heading)
    return {
        "coverage_statement": covered(said),
        "coverage_heading": covered(heading - said),
        "coverage_chunk": covered(in_chunk),
        "rarest_word_missing": float(bool(rarest) and rarest not in said | heading),
        "names_missing": (sum(1 for name in profile.names if name not in chunk_names) / len(profile.names)
                          if profile.names else 0.0),
        "typed_and_held": float(typed and holds),
        "typed_not_held": float(typed and not holds),
        "modifier_replaced": float(replaced_modifier(profile, statement.text + ". " + _titles(chunk.passage.heading))),
        "modifier_unstated": unstated_modifiers(profile, said | heading),
        "semantic": 0.0,
        "retrieval_score": chunk.score,
        "retrieval_top": float(rank == 1),
        "retrieval_relative": chunk.score / top_score if top_score > 0 else 0.0,
        "statement_words": math.log1p(len(words(statement.text))) / 4,
        "question_words": math.log1p(len(profile.stems)) / 3,
        "leads_in": float(statement.leads_in),
        "money_missing": float(profile.money and not states_money(statement.text)),
        "count_unbound": float(profile.counted is not None and not count_bound(profile.counted, statement, heading)),
        "row_key_matched": float(statement.row_key is not None
                                 and bool(set(content_stems(statement.row_key)) & set(profile.stems))),
        "row_key_unmatched": float(statement.row_key is not None
                                   and not set(content_stems(statement.row_key)) & set(profile.stems)),
        "row_names_missing": float(statement.row_key is not None and bool(profile.names)
                                   and not profile.names & (_names_in(statement.text + " " + chunk.passage.heading)
                                                            | said)),
    }


def narrowing_word(profile: QuestionProfile, weights: Mapping[str, float]) -> str:
    """The question's word the fewest candidates say. Its names' double weight counts for coverage, not here: a
    number the question uses is often the asker's situation ("6 years here"), which a range states ("5-10")."""
    if not weights:
        return ""
    return max(weights, key=lambda term: weights[term] / (NAME_WEIGHT if term in profile.names else 1.0))


def _titles(heading: str) -> str:
    """A heading path as one phrase per title: "Training budget > Time spent" is no phrase "budget time"."""
    return ". ".join(heading.split(" > "))


def _names_in(text: str) -> set[str]:
    """The words, their stems and the numbers of a text, to look a question's names up in."""
    found = set(words(text))
    return found | {stem(word) for word in found} | numbers(text)


def count_bound(counted: str, statement: Statement, heading: set[str]) -> bool:
    """Does the statement give a number of the counted thing ("3 approvals" for "how many approvals")? A
    number anywhere counts when the heading names the thing ("Approvals needed: 2")."""
    tokens = words(statement.text)
    target = stem(counted)
    for index, token in enumerate(tokens):
        if stem(token) == target and has_quantity(" ".join(tokens[max(0, index - 3): index])):
            return True
    return target in heading and has_quantity(statement.text)


def replaced_modifier(profile: QuestionProfile, statement: str) -> bool:
    """The statement keeps the head of a phrase of the question but with another modifier: "gym membership"
    asked, "coworking membership" stated. It is about another kind of the thing."""
    stated = word_pairs(statement)
    stated_stems = {stem(word) for pair in stated for word in pair}
    for modifier, head in profile.pairs:
        if stem(head) not in stated_stems or _stated(modifier, stated_stems):
            continue
        if any(before and stem(after) == stem(head) for before, after in stated):
            return True
    return False


def unstated_modifiers(profile: QuestionProfile, stated: set[str]) -> float:
    """Share of the question's modifier-head phrases whose head is stated without the modifier anywhere in
    the statement or its headings ("weekend call-out rate" asked, "call-out" stated, "weekend" nowhere)."""
    relevant = [(m, h) for m, h in profile.pairs if stem(h) in stated]
    if not relevant:
        return 0.0
    return sum(1 for modifier, _ in relevant if not _stated(modifier, stated)) / len(relevant)


def _stated(modifier: str, stems: set[str]) -> bool:
    """The modifier, or a word it abbreviates ("perf" for "performance"): an abbreviation is no English word
    itself ("home" does not abbreviate "homeowner")."""
    if stem(modifier) in stems:
        return True
    return (len(modifier) >= MIN_ABBREVIATION and modifier not in english_words()
            and any(s.startswith(modifier) for s in stems))


def word_pairs(text: str) -> list[tuple[str, str]]:
    """Adjacent word pairs within a phrase (punctuation ends one); a pair whose first word is a stopword or a
    number is kept as ("", word), so the head counts as stated without a modifier."""
    for mark in _PHRASE_END:
        text = text.replace(mark, " . ")
    pairs = []
    for phrase in text.replace(". ", " | ").split(" | "):
        tokens = [word for word in words(phrase) if word]
        pairs.extend([("", tokens[0])] if tokens else [])
        for before, after in pairwise(tokens):
            if after in STOPWORDS or after.isdigit():
                continue
            plain = before in STOPWORDS or any(ch.isdigit() for ch in before)
            pairs.append(("" if plain else before, after))
    return pairs


# -- the decision ------------------------------------------------------------------------------------------

def assess(question: str, chunks: Sequence[RetrievedChunk], *, embedder: Embedder | None = None,
           reader: Reader | None = None, model: AnswerabilityModel | None = None) -> Assessment:
    """Score every candidate statement of the retrieved chunks; the best first. Each set of features available
    (an embedder or not, a reader or not) has its own fit."""
    model = model or shipped_model(semantic=embedder is not None, reading=reader is not None)
    statements = candidate_statements(chunks)
    question = as_meant(question, statements)
    profile = QuestionProfile.of(question)
    if not profile.stems or not statements:
        return Assessment(candidates=(), threshold=model.threshold, model_version=model.version,
                          claim_rank_margin=model.claim_rank_margin)
    features = featurise(question, profile, statements, embedder=embedder, reader=reader)
    ranked = sorted(zip((model.ranker(f) for f in features), statements, features, strict=True),
                    key=lambda item: item[0], reverse=True)
    candidates = []
    for index, (score, statement, values) in enumerate(ranked):
        runner_up = ranked[1][0] if index == 0 and len(ranked) > 1 else ranked[0][0]
        decided = {**values, **ranking_features(score, runner_up, len(ranked) == 1)}
        candidates.append(Candidate(statement=statement, features=decided, rank_score=score,
                                    probability=model.probability(decided)))
    strongest = sorted(model.decision.contributions(candidates[0].features), key=lambda item: abs(item[1]),
                       reverse=True)
    return Assessment(candidates=tuple(candidates), threshold=model.threshold, model_version=model.version,
                      claim_rank_margin=model.claim_rank_margin,
                      explanation=tuple((name, round(value, 3)) for name, value in strongest[:5]))


def ranking_features(score: float, runner_up: float, alone: bool) -> dict[str, float]:
    """What the decision reads of the ranking: the candidate's score and its lead over the best other one."""
    return {"rank_score": score, "rank_margin": SOLE_CANDIDATE_MARGIN if alone else score - runner_up}


def featurise(question: str, profile: QuestionProfile, statements: Sequence[Statement], *,
              embedder: Embedder | None, reader: Reader | None = None) -> list[dict[str, float]]:
    """The features of every statement. Only the best by words and retrieval are embedded and read; the others
    keep the lowest similarity and reading any of those has (they ranked below all of them)."""
    weights = rarity_weights(profile, statements)
    ranks = _chunk_ranks(statements)
    top_score = max(s.chunk.score for s in statements)
    lexical = [statement_features(profile, s, weights=weights, rank=ranks[s.chunk.chunk_id], top_score=top_score)
               for s in statements]
    order = by_words_and_retrieval(lexical)
    if reader is not None:
        _read(question, statements, order[:READ_STATEMENTS], lexical, reader)
    if embedder is None:
        _relative_features(lexical, statements, semantic=False)
        return lexical
    chosen = order[:EMBEDDED_STATEMENTS]
    try:
        vectors = embedder.embed([question, *(in_context(statements[i]) for i in chosen)])
    except Exception as error:  # the embedder is an adapter (a model, an HTTP endpoint) that may fail
        raise EmbedderFailed(f"embedding candidate statements failed: {type(error).__name__}") from error
    similarity = {i: _dot(vectors[0], v) for i, v in zip(chosen, vectors[1:], strict=True)}
    for i, features in enumerate(lexical):
        features["semantic"] = similarity.get(i, min(similarity.values()))
    _relative_features(lexical, statements, semantic=True)
    return lexical


def in_context(statement: Statement) -> str:
    """A statement as its reader meets it: under its heading path ("Netherlands > Leave > Sick leave: Employer
    pays 70% of salary..."), which says what a list item or a short line is about."""
    return f"{statement.chunk.passage.heading}: {statement.text}"


def by_words_and_retrieval(features: Sequence[Mapping[str, float]]) -> list[int]:
    """Statement indexes, the best first by the question's words they state and their chunk's retrieval: the
    cheap order that picks which statements the costlier models look at."""
    return sorted(range(len(features)), reverse=True,
                  key=lambda i: features[i]["coverage_statement"] + features[i]["retrieval_relative"])


def read_passages(statements: Sequence[Statement]) -> list[ReadPassage]:
    """Each statement with its heading path and the statement before it in its chunk."""
    text_at = {(s.chunk.chunk_id, s.position): s.text for s in statements}
    return [ReadPassage(text=s.text, heading=s.chunk.passage.heading,
                        before=text_at.get((s.chunk.chunk_id, s.position - 1), "")) for s in statements]


def _read(question: str, statements: Sequence[Statement], chosen: Sequence[int], features: list[dict[str, float]],
          reader: Reader) -> None:
    """The reader's probability that the statement answers, and its log-odds, which a linear score can use."""
    passages = read_passages(statements)
    try:
        probabilities = reader.score(question, [passages[i] for i in chosen])
    except Exception as error:  # the reader is an adapter (a model file, a runtime) that may fail
        raise ReaderFailed(f"reading candidate statements failed: {type(error).__name__}") from error
    read = dict(zip(chosen, probabilities, strict=True))
    floor = min(read.values())
    for i, f in enumerate(features):
        f["reader"] = read.get(i, floor)
        f["reader_logit"] = _logit(f["reader"]) / READER_LOGIT_LIMIT
    _compare(features, "reader")


def _logit(probability: float) -> float:
    p = min(max(probability, 1e-6), 1 - 1e-6)
    return max(-READER_LOGIT_LIMIT, min(READER_LOGIT_LIMIT, math.log(p / (1 - p))))


def _compare(features: list[dict[str, float]], name: str) -> None:
    """`name_margin`: the lead over the best other candidate (negative when behind); `name_rank`: 1 / rank."""
    values = [f[name] for f in features]
    ordered = sorted(values, reverse=True)
    for f, value in zip(features, values, strict=True):
        others = ordered[1] if value == ordered[0] and len(ordered) > 1 else ordered[0]
        f[f"{name}_margin"] = value - others
        f[f"{name}_rank"] = 1.0 / (1 + ordered.index(value))


def _relative_features(features: list[dict[str, float]], statements: Sequence[Statement], *,
                       semantic: bool) -> None:
    """How each statement compares with the other candidates of the same question."""
    for name in ("semantic", "coverage_statement") if semantic else ("coverage_statement",):
        _compare(features, name)
    if not semantic:
        return
    best_in_chunk: dict[str, float] = {}
    for f, statement in zip(features, statements, strict=True):
        key = statement.chunk.chunk_id
        best_in_chunk[key] = max(best_in_chunk.get(key, -1.0), f["semantic"])
    for f, statement in zip(features, statements, strict=True):
        f["chunk_best_semantic"] = best_in_chunk[statement.chunk.chunk_id]
        # Two independent readings agreeing (the words and the meaning pick the same statement) is stronger
        # evidence than either alone: a product a linear score cannot form by itself.
        f["words_and_meaning_agree"] = float(f["semantic_rank"] == 1.0 and f["coverage_statement_rank"] == 1.0)
        f["semantic_x_coverage"] = f["semantic"] * f["coverage_statement"]


def _chunk_ranks(statements: Sequence[Statement]) -> dict[str, int]:
    chunks = sorted({s.chunk.chunk_id: s.chunk for s in statements}.values(), key=lambda c: c.score, reverse=True)
    return {chunk.chunk_id: rank for rank, chunk in enumerate(chunks, start=1)}


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))
