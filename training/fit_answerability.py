"""Fit the answerability model and report it on sets it did not see.

    .venv/bin/python -m training.fit_answerability            # leave-one-set-out table, then the full fit
    .venv/bin/python -m training.fit_answerability --write    # ... and write the shipped model file
    .venv/bin/python -m training.fit_answerability --variants semantic+reader lexical+reader --write
                                               # the reader's fits, with and without an embedder
    .venv/bin/python -m training.fit_answerability --variants semantic+matcher --write
                                               # the question matcher's fit (`SOURCED_MATCHER=bundled`)

Two stages, both linear over standardised features (`core.application.answerability.model`):
- the ranker orders a question's candidate statements: a conditional logit (softmax over the candidates)
  fitted to put a statement that states the answer (one of the case's `must_include` items, in a support
  section) first;
- the decision reads the best-ranked candidate and gives the probability that the question is answered by
  it: 1 when the case is answerable and that candidate lies in a support section, 0 for every refusal case
  and for answerable cases where the ranker picked a statement from elsewhere (answering would be wrong).
Every weight has the sign its feature's meaning gives it (evidence for an answer never counts against it,
nor the reverse); weights are fitted by projected gradient descent. Each set weighs the same, whatever its
size. The threshold is chosen on held-out folds: each training set's cases are decided by the fit made
without that set, and the threshold is the lowest at which the false-answer and wrong-answer rates, averaged
over the sets written as company documents, are at most their targets. The decision and its threshold are fitted on the
company-document sets only (not `squad2`, see `DECISION_SETS_EXCLUDED`).

Held-out discipline: each set's figures are measured by `sourced eval`'s own scoring, with the model fitted
on the other sets; the shipped fit (all sets) is reported beside, marked as fitted on the set, and on the sets
no fit ever learns from (`dev3`, `real`: `held_out_sets`).

A refit written over a variant drops the margin of the guard's ranking check fitted on its old ranker
(`claim_rank_margin`): run `training/fit_claim_ranking.py --variant V --write` after it.

`semantic+matcher` reads the semantic features with the question matcher (`training/question_matcher.py`), which
was trained on the annotated questions: each annotated half is read by the matcher trained without it
(`--leave-out`, in `--matchers`), and left out of the fit when that fold is missing.

Variants with `+reader` read the candidates with the trained reader (`training/reader`): each set with the
fold's reader that was not trained on it (`--readers`, the training's work folder), so the weights are fitted
on the scores a reader gives to text it has never seen, as the shipped reader will at a company.
"""

import argparse
import json
import math
import shlex
import sys
from collections import defaultdict
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from core.application.answerability.model import EVIDENCE_AGAINST, MODEL_FILE, UNSIGNED_FEATURES, AnswerabilityModel
from core.eval.cases import load_cases
from core.eval.report import metrics
from core.eval.runner import EvalSession
from core.retrieval.matcher import MATCHER_FILE
from training.answerability_data import EvalSet, Row, collect, held_out_sets, known_sets, opened
from training.reader.folds import fold_model

TARGET_FALSE_ANSWER: Final = 0.05
"""The false-answer rate the threshold is chosen for, on held-out folds of the training sets."""
TARGET_WRONG_ANSWER: Final = 0.05
"""The wrong-answer rate the threshold is chosen for, likewise: a wrong answer breaks trust as a false one does."""
MATCHER_TRAINED_ON: Final = ("annotated-a", "annotated-b")
"""The sets of annotated questions (`training/reader/data`) the question matcher learnt from."""
DECISION_SETS_EXCLUDED: Final = frozenset({"squad2"})
"""Sets the ranker learns from but the decision and its threshold do not: SQuAD 2.0's unanswerable questions
are adversarial rewrites of a paragraph, made to share its words, not questions asked of company documents;
fitted on, they teach the decision that word coverage means nothing (measured: a question whose every word
a statement states was refused)."""
REFUSALS: Final = frozenset({"not_in_corpus", "not_permitted", "not_answerable"})
DECISION_ONLY: Final = ("rank_score", "rank_margin", "question_words")
"""The same for every candidate of a question, or read off the ranking: no use to the ranker."""
L2: Final = 0.05
STEPS: Final = 600
REPORTED: Final = ("correct_answer", "wrong_answer", "false_abstention", "false_answer", "kind_accuracy",
                   "citation_precision", "clarify_rate")

Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True, kw_only=True)
class Question:
    """The candidates of one case."""

    set_name: str
    expect: str
    features: list[dict[str, float]]
    answers: list[bool]
    """Each candidate states the answer (a must_include item, in a support section)."""
    supports: list[bool]
    """Each candidate lies in a support section."""
    reaches_decision: bool


def questions(rows: Sequence[Row]) -> list[Question]:
    by_case: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        by_case[row.case_id].append(row)
    return [Question(set_name=items[0].set_name, expect=items[0].expect, features=[r.features for r in items],
                     answers=[r.label == 1 for r in items], supports=[r.in_support for r in items],
                     reaches_decision=items[0].reaches_decision)
            for items in by_case.values() if items[0].expect != "ambiguous"]


def sign(name: str) -> int:
    return 0 if name in UNSIGNED_FEATURES else -1 if name in EVIDENCE_AGAINST else 1


def project(weights: Matrix, names: Sequence[str]) -> Matrix:
    signs = np.array([sign(name) for name in names])
    return np.where(signs > 0, np.maximum(weights, 0), np.where(signs < 0, np.minimum(weights, 0), weights))


def standardise(values: Matrix) -> tuple[Matrix, Matrix]:
    means = values.mean(axis=0)
    scales = values.std(axis=0)
    return means, np.where(scales > 0, scales, 1.0)


def matrix(features: Sequence[dict[str, float]], names: Sequence[str]) -> Matrix:
    return np.array([[f[name] for name in names] for f in features], dtype=float)


def fit_ranker(train: Sequence[Question], names: Sequence[str]) -> dict[str, Any]:
    """Conditional logit: each answerable question's softmax over its candidates, towards its answers. Every
    question's candidates are one block of rows; each set weighs the same."""
    means, scales = standardise(np.vstack([matrix(q.features, names) for q in train]))
    groups = [q for q in train if q.expect == "answer" and any(q.answers)]
    per_set = {name: sum(1 for q in groups if q.set_name == name) for name in {q.set_name for q in groups}}
    z = np.vstack([(matrix(q.features, names) - means) / scales for q in groups])
    sizes = np.array([len(q.features) for q in groups])
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    group_of = np.repeat(np.arange(len(groups)), sizes)
    target = np.concatenate([np.array(q.answers, dtype=float) / sum(q.answers) for q in groups])
    row_weight = np.repeat([1.0 / per_set[q.set_name] for q in groups], sizes)
    weights = np.zeros(len(names))
    for _ in range(STEPS):
        scores = z @ weights
        soft = np.exp(scores - np.maximum.reduceat(scores, starts)[group_of])
        soft /= np.add.reduceat(soft, starts)[group_of]
        gradient = L2 * weights + z.T @ (row_weight * (soft - target))
        weights = project(weights - gradient / len(per_set), names)
    return _linear(names, weights, means, scales)


def ranked(question: Question, ranker: dict[str, Any]) -> tuple[list[int], list[float]]:
    """The candidates' indexes, the ranker's best first, and each candidate's ranking score."""
    scores = [score(ranker, features) for features in question.features]
    return sorted(range(len(scores)), key=lambda i: scores[i], reverse=True), scores


def decision_rows(train: Sequence[Question], ranker: dict[str, Any]) -> tuple[list[dict[str, float]], list[int],
                                                                                 list[str]]:
    """The best-ranked candidate of each question, with its ranking features, and whether answering with it is
    right."""
    features, labels, sets = [], [], []
    for question in train:
        order, scores = ranked(question, ranker)
        best = order[0]
        margin = scores[best] - scores[order[1]] if len(order) > 1 else 1.0
        features.append({**question.features[best], "rank_score": scores[best], "rank_margin": margin})
        labels.append(int(question.expect == "answer" and question.supports[best]))
        sets.append(question.set_name)
    return features, labels, sets


def fit_decision(features: list[dict[str, float]], labels: list[int], sets: list[str], names: Sequence[str]
                 ) -> dict[str, Any]:
    values = matrix(features, names)
    means, scales = standardise(values)
    z = np.hstack([np.ones((len(values), 1)), (values - means) / scales])
    counts = {name: sets.count(name) for name in set(sets)}
    sample = np.array([1.0 / counts[name] for name in sets]) / len(counts)
    target = np.array(labels, dtype=float)
    weights = np.zeros(z.shape[1])
    for _ in range(STEPS * 5):
        probability = 1 / (1 + np.exp(-z @ weights))
        gradient = z.T @ (sample * (probability - target)) + L2 / len(target) * np.r_[0, weights[1:]]
        weights = weights - 0.5 * gradient
        weights[1:] = project(weights[1:], names)
    linear = _linear(names, weights[1:], means, scales)
    linear["intercept"] = float(weights[0])
    return linear


def _linear(names: Sequence[str], weights: Matrix, means: Matrix, scales: Matrix) -> dict[str, Any]:
    return {"weights": {n: round(float(w), 5) for n, w in zip(names, weights, strict=True)},
            "means": {n: round(float(m), 6) for n, m in zip(names, means, strict=True)},
            "scales": {n: round(float(s), 6) for n, s in zip(names, scales, strict=True)}}


def score(linear: dict[str, Any], features: dict[str, float]) -> float:
    return float(linear.get("intercept", 0.0)) + sum(
        weight * (features[name] - linear["means"][name]) / linear["scales"][name]
        for name, weight in linear["weights"].items())


def held_out_threshold(train: Sequence[Question], target: float, wrong_target: float) -> float:
    """The lowest threshold at which, on average over the company sets (each set weighs the same), the
    false-answer rate is at most `target` and the wrong-answer rate at most `wrong_target`, each set's cases
    decided by the fit made without that set: the threshold is chosen for documents the fit never saw, not for
    the ones it learnt from. A wrong answer is an answerable case answered with a statement outside its support
    sections. Cases the pipeline settles before the decision (by their shape, a known gap, or a clarifying
    question) count as refused, as `sourced eval` counts them."""
    deciding = sorted({q.set_name for q in train if q.set_name not in DECISION_SETS_EXCLUDED})
    false_answers: list[list[float]] = []
    wrong_answers: list[list[float]] = []
    for held in deciding:
        ranker, decision = fit_stages([q for q in train if q.set_name != held])
        mine = [q for q in train if q.set_name == held and q.expect != "ambiguous"]
        features, labels, _ = decision_rows(mine, ranker)
        decided = [(1 / (1 + math.exp(-score(decision, f))) if q.reaches_decision else 0.0, q, right)
                   for f, q, right in zip(features, mine, labels, strict=True)]
        false_answers.append([p for p, q, _ in decided if q.expect in REFUSALS])
        wrong_answers.append([p if not right else 0.0 for p, q, right in decided if q.expect == "answer"])
    for threshold in np.arange(0.05, 0.995, 0.005):
        if (_mean_share(false_answers, threshold) <= target
                and _mean_share(wrong_answers, threshold) <= wrong_target):
            return round(float(threshold), 3)
    return 0.995


def _mean_share(probabilities: Sequence[Sequence[float]], threshold: float) -> float:
    """The share of each set's cases answered at the threshold, averaged over the sets that have any."""
    shares = [sum(p >= threshold for p in ps) / len(ps) for ps in probabilities if ps]
    return float(np.mean(shares)) if shares else 0.0


def fit_stages(train: Sequence[Question]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ranker on every set, then the decision on the company sets' best-ranked candidates."""
    names = sorted(train[0].features[0])
    ranker = fit_ranker(train, [name for name in names if name not in DECISION_ONLY])
    features, labels, sets = decision_rows([q for q in train if q.set_name not in DECISION_SETS_EXCLUDED], ranker)
    return ranker, fit_decision(features, labels, sets, [*names, "rank_score", "rank_margin"])


def fit(train: Sequence[Question], version: str, target: float, wrong_target: float) -> dict[str, Any]:
    ranker, decision = fit_stages(train)
    return {"ranker": ranker, "decision": decision, "threshold": held_out_threshold(train, target, wrong_target),
            "version": version}


def measured(session: EvalSession, eval_set: EvalSet, model: dict[str, Any]) -> dict[str, Any]:
    """`sourced eval`'s metrics on the set with this model."""
    scored = session.with_answerability(AnswerabilityModel.from_dict(model))
    return metrics([scored.score(case) for case in load_cases(eval_set.cases)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"write core/application/answerability/{MODEL_FILE}")
    parser.add_argument("--variants", nargs="+", default=["semantic", "lexical"],
                        choices=["semantic", "lexical", "semantic+matcher", "semantic+reader", "lexical+reader"])
    parser.add_argument("--readers", type=Path, default=Path("build/reader"),
                        help="the reader training's work folder, for the +reader variants (default %(default)s)")
    parser.add_argument("--matchers", type=Path, default=Path("build/question_matcher"),
                        help="the question matcher's fold folders, for the sets it learnt (default %(default)s)")
    parser.add_argument("--target", type=float, default=TARGET_FALSE_ANSWER,
                        help="the false-answer rate the threshold is chosen for (default %(default)s)")
    parser.add_argument("--wrong-target", type=float, default=TARGET_WRONG_ANSWER,
                        help="the wrong-answer rate the threshold is chosen for (default %(default)s)")
    args = parser.parse_args()
    path = Path(__file__).resolve().parents[1] / "core" / "application" / "answerability" / MODEL_FILE
    for variant in args.variants:
        embedder = "minilm" if variant.startswith("semantic") else "none"
        sets = fit_sets(variant, args.matchers, writing=args.write)
        versions = {s.name: s.version() for s in sets}
        matching = "+matcher" in variant
        with ExitStack() as stack:
            sessions = {s.name: stack.enter_context(opened(
                s, embedder=embedder, reader=fold_model(args.readers, s.name) if "+reader" in variant else None,
                matching=matching, matcher=fold_matcher(args.matchers, s.name) if matching else None))
                for s in sets}
            by_set = {s.name: questions(list(collect(sessions[s.name], s))) for s in sets}
            print(f"\n## {variant} ({embedder}): leave one set out, then the shipped fit on all sets")
            print(f"{'held out':10} {'threshold':>9} " + " ".join(f"{k:>18}" for k in REPORTED))
            for held in sets:
                train = [q for name, qs in by_set.items() if name != held.name for q in qs]
                model = fit(train, version=f"loso-{held.name}", target=args.target, wrong_target=args.wrong_target)
                _print_row(held.name, model["threshold"], measured(sessions[held.name], held, model))
            model = fit([q for qs in by_set.values() for q in qs], target=args.target, wrong_target=args.wrong_target,
                        version=f"{variant}-{date.today().isoformat()}-" + "-".join(
                            f"{name}:{v}" for name, v in sorted(versions.items())))
            for held in sets:
                _print_row(f"{held.name}*", model["threshold"], measured(sessions[held.name], held, model))
            for held in held_out_sets():
                with opened(held, embedder=embedder, reader=fold_model(args.readers, held.name)
                            if "+reader" in variant else None, matching=matching) as session:
                    _print_row(held.name, model["threshold"], measured(session, held, model))
        print("(* fitted on this set too: not a held-out figure; dev3 and real: never fitted on)")
        model["fitted_by"] = "python -m training.fit_answerability " + shlex.join(sys.argv[1:])
        shipped: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["models"]  # as it is now: another
        shipped[variant] = model  # run may have written its own variants meanwhile
        _print_weights(model)
        if args.write:  # each variant as it is fitted: a later one failing loses nothing
            path.write_text(json.dumps({
                "fitted_by": "python -m training.fit_answerability --write",
                "data": versions, "target_false_answer": args.target, "target_wrong_answer": args.wrong_target,
                "models": shipped,
            }, indent=1) + "\n", encoding="utf-8")
            print(f"\nwrote {variant} to {path}")


def fit_sets(variant: str, matchers: Path, *, writing: bool) -> list[EvalSet]:
    """The sets a variant is fitted on: every known set; a fit with the question matcher reads the sets it was
    trained on with a fold's matcher that never saw them (`training.question_matcher --leave-out`). Without that
    fold the set is left out of a trial fit, and a fit to be written stops: without the real-text sets the fit
    gives the similarity no weight (docs/answering.md, the question matcher)."""
    sets = known_sets()
    if "+matcher" not in variant:
        return sets
    left_out = [s.name for s in sets if s.name in MATCHER_TRAINED_ON and fold_matcher(matchers, s.name) is None]
    if left_out and writing:
        raise SystemExit(f"{variant}: no matcher in {matchers} that did not learn {', '.join(left_out)}; train them "
                         f"first: python -m training.question_matcher --leave-out {left_out[0]}")
    if left_out:
        print(f"{variant}: not fitted on {', '.join(left_out)} (no matcher in {matchers} that did not learn them)")
    return [s for s in sets if s.name not in left_out]


def fold_matcher(matchers: Path, set_name: str) -> Path | None:
    """The matcher trained without this set's questions, for the sets the shipped one learnt from."""
    folder = matchers / f"fold-{set_name}"
    return folder if set_name in MATCHER_TRAINED_ON and (folder / MATCHER_FILE).is_file() else None


def _print_row(name: str, threshold: float, values: dict[str, Any]) -> None:
    cells = " ".join(f"{'-' if values[k] is None else f'{values[k]:.3f}':>18}" for k in REPORTED)
    print(f"{name:10} {threshold:9.3f} {cells}", flush=True)


def _print_weights(model: dict[str, Any]) -> None:
    for stage in ("ranker", "decision"):
        weights = sorted(model[stage]["weights"].items(), key=lambda item: -abs(item[1]))
        print(f"{stage}: " + ", ".join(f"{name} {weight:+.2f}" for name, weight in weights if weight))


if __name__ == "__main__":
    main()
