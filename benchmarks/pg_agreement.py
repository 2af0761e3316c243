"""Does a question get the same outcome on PostgreSQL as on SQLite, over the same documents?

Runs what `sourced eval` runs (`core.eval.runner.run_evaluation`, this process's `SOURCED_*` profile) on each set,
once on a fresh SQLite database and once on a database created for the run on the PostgreSQL server given, then
compares every case: its outcome kind (the true kind, as the audit records it) and the verdict it earned. Prints,
per set, the agreement, every case that differs with what each side did, and the set's figures on each side.

    .venv/bin/python -m benchmarks.pg_agreement --database postgresql+psycopg://postgres@127.0.0.1:5432/test
    .venv/bin/python -m benchmarks.pg_agreement --database URL --sets dev3 real --json build/agreement.json

The sets are `benchmarks.every_set`'s, by the same names (default: every set at hand), each with its own known
gaps and configuration. The server needs CREATEDB (and pgvector when the profile has an embedder). No timing is
measured.
"""

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from core.config import load_config, load_known_gaps
from core.eval.cases import load_items
from core.eval.report import Report
from core.eval.runner import run_evaluation
from core.eval.scoring import CaseResult
from training.answerability_data import EvalSet, held_out_sets, known_sets

FIGURES: Final = ("correct_answer", "wrong_answer", "false_answer", "false_abstention", "citation_precision",
                  "kind_accuracy", "leaks")


def outcome(result: CaseResult) -> tuple[str, str]:
    """What is compared: the outcome kind and the verdict it earned."""
    return result.got, result.verdict


def evaluated(eval_set: EvalSet, database: str | None) -> Report:
    config = load_config(eval_set.config)
    gaps = config.gaps() + (load_known_gaps(eval_set.known_gaps) if eval_set.known_gaps else ())
    report, errors = run_evaluation(kb=eval_set.kb, cases=load_items(eval_set.cases), config=config,
                                    known_gaps=gaps, database=database)
    if errors:
        print(f"  ({len(errors)} files not ingested)")
    return report


def compare(sqlite: Sequence[CaseResult], postgres: Sequence[CaseResult]) -> list[tuple[CaseResult, CaseResult]]:
    by_id = {result.case_id + f"#{result.turn}": result for result in postgres}
    return [(left, by_id[left.case_id + f"#{left.turn}"]) for left in sqlite
            if outcome(left) != outcome(by_id[left.case_id + f"#{left.turn}"])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", required=True, help="PostgreSQL server URL (SQLAlchemy, CREATEDB)")
    parser.add_argument("--sets", nargs="+", help="only these sets (default: every set at hand)")
    parser.add_argument("--json", type=Path, help="also write the per-case outcomes of both sides to this file")
    args = parser.parse_args()
    sets = [s for s in [*known_sets(), *held_out_sets()] if not args.sets or s.name in args.sets]
    view: dict[str, Any] = {}
    for eval_set in sets:
        sides = {"sqlite": evaluated(eval_set, None), "postgres": evaluated(eval_set, args.database)}
        sqlite, postgres = sides["sqlite"].results, sides["postgres"].results
        differing = compare(sqlite, postgres)
        print(f"{eval_set.name}: {len(sqlite) - len(differing)} of {len(sqlite)} cases get the same outcome "
              f"(kind and verdict) on PostgreSQL and SQLite", flush=True)
        for left, right in differing:
            print(f"  {left.case_id} (expected {left.expected}): sqlite {left.got}/{left.verdict}, "
                  f"postgres {right.got}/{right.verdict}")
        print(f"{'':10}" + "".join(f"{key:>19}" for key in FIGURES))
        for name, report in sides.items():
            measured = report.metrics
            print(f"{name:10}" + "".join(f"{'-' if measured[k] is None else f'{measured[k]:.3f}':>19}"
                                         for k in FIGURES), flush=True)
        for name, report in sides.items():
            print(f"  profile on {name}: " + ", ".join(report.profile))
        view[eval_set.name] = {name: {"profile": list(report.profile), "metrics": report.metrics,
                                      "cases": [{"id": r.case_id, "turn": r.turn, "got": r.got, "verdict": r.verdict}
                                                for r in report.results]}
                               for name, report in sides.items()}
    if args.json:
        args.json.write_text(json.dumps(view, indent=1))


if __name__ == "__main__":
    main()
