"""PostgreSQL against SQLite on evaluation sets: the lexical scale fitted, then every case side by side.

1. Lexical scale. `ts_rank` (PostgreSQL) and normalised BM25 (SQLite) both lie in 0..1, but not on the same
   scale: a body word matched once is worth about 0.24 of a query term to `ts_rank` and about 0.45 to BM25. For
   every question of the sets, full text alone on each database, the best score of the asker's audience is taken
   on both, and the factor for `ts_rank` is chosen that makes the most questions fall on the same side of each
   floor of the retrieval policy (0.06 weak, 0.15 usable, 0.2 usable at high risk).
2. Side by side. `sourced eval` on both databases with the default embedder: the metrics, and every case whose
   verdict or outcome kind differs, with the top retrieved sections on each side.

    .venv/bin/python -m benchmarks.pg_calibration --database postgresql+psycopg://postgres@/postgres?host=/tmp/pg \
        --set ../shared/eval/dev --set ../shared/eval/dev2

Each set is a folder with `kb/`, `cases.yaml` and optionally `owners.yml`. The PostgreSQL server needs pgvector
and CREATEDB: a database is created per run and dropped after.
"""

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from core.application.orchestrator import Question
from core.config import SourcedConfig, load_known_gaps
from core.domain import Audience
from core.eval.cases import Case, load_cases
from core.eval.report import metrics
from core.eval.runner import case_principal, eval_session
from core.eval.scoring import CaseResult, EvidenceSummary, asker_view, score_case
from core.retrieval import postgres_index

FLOORS: Final = (0.06, 0.15, 0.2)
SCALES: Final = tuple(round(0.5 + 0.05 * step, 2) for step in range(191))
KEYS: Final = ("correct_answer", "wrong_answer", "false_abstention", "missed", "correct_abstention",
               "false_answer", "kind_accuracy", "citation_precision", "leaks")


@dataclass(frozen=True)
class EvalSet:
    name: str
    kb: Path
    cases: tuple[Case, ...]
    gaps_file: Path | None


def load_set(folder: Path) -> EvalSet:
    owners = folder / "owners.yml"
    return EvalSet(name=folder.name, kb=folder / "kb", cases=tuple(load_cases(folder / "cases.yaml")),
                   gaps_file=owners if owners.exists() else None)


def best_scores(eval_set: EvalSet, database: str | None) -> list[float]:
    """The best full-text score each case's asker gets (raw `ts_rank` on PostgreSQL)."""
    os.environ["SOURCED_EMBEDDER"] = "none"
    gaps = load_known_gaps(eval_set.gaps_file) if eval_set.gaps_file else ()
    with eval_session(kb=eval_set.kb, config=SourcedConfig(), known_gaps=gaps, database=database) as session:
        index = session.sourced.index
        best = []
        for case in eval_set.cases:
            hits = index.search(case.question, audience=Audience.only(case_principal(case)), limit=1)
            best.append(hits[0].score if hits else 0.0)
        return best


def agreement(sqlite: Sequence[float], raw: Sequence[float], scale: float) -> float:
    """The share of (question, floor) pairs on the same side of the floor on both databases."""
    same = sum((s >= floor) == (min(1.0, r * scale) >= floor)
               for s, r in zip(sqlite, raw, strict=True) for floor in FLOORS)
    return same / (len(sqlite) * len(FLOORS))


def fit_scale(sqlite: Sequence[float], raw: Sequence[float]) -> tuple[float, float]:
    """The factor putting the most (question, floor) pairs on the same side on both databases; ties go to the
    factor nearest the median ratio. Returns it with its agreement."""
    ratios = sorted(s / r for s, r in zip(sqlite, raw, strict=True) if s > 0 and r > 0)
    median = ratios[len(ratios) // 2] if ratios else 1.0
    best = max(SCALES, key=lambda scale: (agreement(sqlite, raw, scale), -abs(scale - median)))
    return best, agreement(sqlite, raw, best)


def evaluate(eval_set: EvalSet, database: str | None) -> list[tuple[CaseResult, EvidenceSummary]]:
    os.environ["SOURCED_EMBEDDER"] = "auto"
    gaps = load_known_gaps(eval_set.gaps_file) if eval_set.gaps_file else ()
    with eval_session(kb=eval_set.kb, config=SourcedConfig(), known_gaps=gaps, database=database) as session:
        results = []
        for case in eval_set.cases:
            principal = case_principal(case)
            audience = Audience.only(principal)
            outcome, evidence = session.sourced.orchestrator.ask_with_evidence(
                Question(text=case.question, principal=principal, audience=audience))
            summary = EvidenceSummary.of(evidence)
            view = asker_view(session.documents, audience, session.public_owners)
            results.append((score_case(case, outcome, summary, view, latency_ms=0.0), summary))
        return results


def top(summary: EvidenceSummary, n: int = 3) -> str:
    return ", ".join(f"{ref} {ref.score:.2f}" for ref in summary.retrieved[:n]) or "nothing"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", required=True, help="PostgreSQL server URL (with pgvector, CREATEDB)")
    parser.add_argument("--set", type=Path, action="append", required=True, dest="sets")
    parser.add_argument("--skip-fit", action="store_true", help="only the side-by-side evaluation")
    args = parser.parse_args()
    sets = [load_set(folder) for folder in args.sets]
    if not args.skip_fit:
        fitted = postgres_index.LEXICAL_SCALE
        postgres_index.LEXICAL_SCALE = 1.0  # type: ignore[misc]  # raw ts_rank while fitting
        sqlite = [score for s in sets for score in best_scores(s, None)]
        raw = [score for s in sets for score in best_scores(s, args.database)]
        postgres_index.LEXICAL_SCALE = fitted  # type: ignore[misc]
        scale, agreed = fit_scale(sqlite, raw)
        print(f"lexical scale: fitted {scale} (agreement on the floors {agreed:.3f}); in use {fitted} "
              f"(agreement {agreement(sqlite, raw, fitted):.3f}); {len(sqlite)} questions")
    for eval_set in sets:
        side = {"sqlite": evaluate(eval_set, None), "postgres": evaluate(eval_set, args.database)}
        print(f"\n{eval_set.name}: {len(eval_set.cases)} cases")
        print(f"{'':10}" + "".join(f"{key:>19}" for key in KEYS))
        for backend, results in side.items():
            measured = metrics([result for result, _ in results])
            print(f"{backend:10}" + "".join(f"{'-' if measured[k] is None else f'{measured[k]:.3f}':>19}"
                                           for k in KEYS))
        differing = [(a, b) for a, b in zip(side["sqlite"], side["postgres"], strict=True)
                     if (a[0].verdict, a[0].got) != (b[0].verdict, b[0].got)]
        print(f"cases whose outcome differs: {len(differing)}")
        for (left, left_evidence), (right, right_evidence) in differing:
            print(f"  {left.case_id} expected {left.expected}: sqlite {left.got}/{left.verdict}, "
                  f"postgres {right.got}/{right.verdict}")
            print(f"      sqlite   top: {top(left_evidence)}")
            print(f"      postgres top: {top(right_evidence)}")


if __name__ == "__main__":
    main()
