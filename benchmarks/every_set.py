"""`sourced eval` on every evaluation set at hand, one Markdown row each: the table a closing note reports.

    .venv/bin/python -m benchmarks.every_set                        # the default profile
    SOURCED_READER=bundled .venv/bin/python -m benchmarks.every_set --sets dev3 real
    .venv/bin/python -m benchmarks.every_set --json build/every-set.json

Each set runs as `sourced eval --kb SET/kb --cases SET/cases.yaml [--known-gaps SET/owners.yml] --json` in a
process of its own, with this process's environment (so `SOURCED_*` choose the profile): the figures are the
command's own, reproducible one set at a time. The sets: `examples/`, `dev`, `dev2`, `squad2` and the annotated
halves (`benchmarks/answerability_data.py`'s `known_sets`, which fits learn from), then `dev3` and `real`,
which nothing is fitted on. Under the table, the profile that answered each set (`sourced eval`'s `profile`).
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

from benchmarks.answerability_data import EvalSet, held_out_sets, known_sets

COLUMNS: Final = ("correct_answer", "wrong_answer", "false_answer", "false_abstention", "citation_precision",
                  "kind_accuracy", "leaks")


def evaluated(eval_set: EvalSet) -> dict[str, Any]:
    command = [str(Path(sys.executable).with_name("sourced")), "eval", "--kb", str(eval_set.kb), "--cases",
               str(eval_set.cases), "--json"]
    if eval_set.known_gaps is not None:
        command += ["--known-gaps", str(eval_set.known_gaps)]
    if eval_set.config is not None:
        command += ["--config", str(eval_set.config)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{eval_set.name}: sourced eval failed: {done.stderr.strip()[-500:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="+", help="only these sets (default: every set at hand)")
    parser.add_argument("--json", type=Path, help="also write every set's whole report to this file")
    args = parser.parse_args()
    held = {s.name for s in held_out_sets()}
    sets = [s for s in [*known_sets(), *held_out_sets()] if not args.sets or s.name in args.sets]
    print("| set | " + " | ".join(COLUMNS) + " |\n|---|" + "---|" * len(COLUMNS), flush=True)
    reports = {}
    for eval_set in sets:
        reports[eval_set.name] = report = evaluated(eval_set)
        cells = " | ".join("-" if report.get(k) is None else f"{report[k]:.2f}" for k in COLUMNS)
        name = f"`{eval_set.name}`" + (" (never fitted on)" if eval_set.name in held else "")
        print(f"| {name} | {cells} |", flush=True)
    # The profile each set was answered by (the environment chose it): said under the table, so the figures
    # cannot be reported as another profile's.
    for profile in dict.fromkeys(tuple(report["profile"]) for report in reports.values()):
        names = [f"`{name}`" for name, report in reports.items() if tuple(report["profile"]) == profile]
        print(f"\nProfile of {', '.join(names)}:\n" + "\n".join(f"- {line}" for line in profile))
    if args.json:
        args.json.write_text(json.dumps(reports, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
