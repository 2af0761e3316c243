"""Does a question get the same outcome on PostgreSQL as on SQLite, over the same documents?

Runs what `sourced eval` runs (`core.eval.runner.run_evaluation`, this process's `SOURCED_*` profile) on a set,
once on a fresh SQLite database and once on a database created for the run on the PostgreSQL server given, then
compares every case: its outcome kind (the true kind, as the audit records it) and, for an answer, the sections it
cites. Prints the agreement, every case that differs with what each side did, and the set's figures on each.

    .venv/bin/python -m benchmarks.pg_agreement --database postgresql+psycopg://postgres@127.0.0.1:5432/test \\
        benchmarks/sets/dev3

The server needs CREATEDB (and pgvector when the profile has an embedder). No timing is measured.
"""

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from core.config import SourcedConfig, load_config, load_known_gaps
from core.eval.cases import load_items
from core.eval.report import Report
from core.eval.runner import run_evaluation
from core.eval.scoring import CaseResult

FIGURES: Final = ("correct_answer", "wrong_answer", "false_answer", "false_abstention", "citation_precision",
                  "kind_accuracy", "leaks")


def outcome(result: CaseResult) -> tuple[str, str]:
    """What is compared: the outcome kind and the verdict it earned."""
    return result.got, result.verdict


def evaluated(folder: Path, database: str | None, config: SourcedConfig) -> Report:
    owners = folder / "owners.yml"
    gaps = config.gaps() + (load_known_gaps(owners) if owners.exists() else ())
    report, errors = run_evaluation(kb=folder / "kb", cases=load_items(folder / "cases.yaml"), config=config,
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
    parser.add_argument("set", type=Path, help="a folder with kb/, cases.yaml and optionally owners.yml")
    parser.add_argument("--database", required=True, help="PostgreSQL server URL (SQLAlchemy, CREATEDB)")
    parser.add_argument("--config", type=Path, help="sourced.yml (default: none)")
    parser.add_argument("--json", type=Path, help="also write the per-case outcomes of both sides to this file")
    args = parser.parse_args()
    config = load_config(args.config)
    sides = {"sqlite": evaluated(args.set, None, config), "postgres": evaluated(args.set, args.database, config)}
    sqlite, postgres = sides["sqlite"].results, sides["postgres"].results
    differing = compare(sqlite, postgres)
    print(f"{args.set.name}: {len(sqlite) - len(differing)} of {len(sqlite)} cases get the same outcome "
          f"(kind and verdict) on PostgreSQL and SQLite")
    for left, right in differing:
        print(f"  {left.case_id} (expected {left.expected}): sqlite {left.got}/{left.verdict}, "
              f"postgres {right.got}/{right.verdict}")
    print(f"{'':10}" + "".join(f"{key:>19}" for key in FIGURES))
    for name, report in sides.items():
        measured = report.metrics
        print(f"{name:10}" + "".join(f"{'-' if measured[k] is None else f'{measured[k]:.3f}':>19}" for k in FIGURES))
    print("profile:", ", ".join(sides["sqlite"].profile), "|", ", ".join(sides["postgres"].profile))
    if args.json:
        view: dict[str, Any] = {name: [{"id": r.case_id, "turn": r.turn, "got": r.got, "verdict": r.verdict}
                                       for r in report.results] for name, report in sides.items()}
        args.json.write_text(json.dumps(view, indent=1))


if __name__ == "__main__":
    main()
