"""`sourced eval` on every evaluation set at hand, one Markdown row each: the table a closing note reports.

    .venv/bin/python -m benchmarks.every_set                        # the default profile
    SOURCED_READER=bundled .venv/bin/python -m benchmarks.every_set --sets dev3 real
    .venv/bin/python -m benchmarks.every_set --json build/every-set.json
    .venv/bin/python -m benchmarks.every_set --profile recorded     # a capable model's recorded answers

Each set runs as `sourced eval --kb SET/kb --cases SET/cases.yaml [--known-gaps SET/owners.yml] --json` in a
process of its own, with this process's environment (so `SOURCED_*` choose the profile): the figures are the
command's own, reproducible one set at a time. The sets: `examples/`, `dev`, `dev2`, `squad2` and the annotated
halves (`training/answerability_data.py`'s `known_sets`, which fits learn from), then `dev3` and `real`,
which nothing is fitted on. Under the table, the profile that answered each set (`sourced eval`'s `profile`).

`--profile recorded` answers with a capable model's recorded replies (`sourced eval --recorded`), on the sets
that have a recording in `../shared/eval/recorded/` (`SET.jsonl`); its table adds how many answer cases the model
answered that the guard refused (`guard_refused`) and how each request was replayed.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

from training.answerability_data import EvalSet, held_out_sets, known_sets

COLUMNS: Final = ("correct_answer", "wrong_answer", "false_answer", "false_abstention", "citation_precision",
                  "kind_accuracy", "leaks")
RECORDED_COLUMNS: Final = (*COLUMNS, "guard_refused", "model_declined")
RECORDINGS: Final = Path(__file__).resolve().parents[2] / "shared" / "eval" / "recorded"


def evaluated(eval_set: EvalSet, recording: Path | None = None) -> dict[str, Any]:
    command = [str(Path(sys.executable).with_name("sourced")), "eval", "--kb", str(eval_set.kb), "--cases",
               str(eval_set.cases), "--json"]
    if recording is not None:
        command += ["--recorded", str(recording)]
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
    parser.add_argument("--profile", choices=("environment", "recorded"), default="environment",
                        help="environment: the model SOURCED_MODEL names (default); recorded: a capable model's "
                             f"recorded replies, on the sets recorded in {RECORDINGS}")
    parser.add_argument("--recordings", type=Path, default=RECORDINGS, metavar="DIR",
                        help="where the recorded profile finds SET.jsonl (default: %(default)s)")
    args = parser.parse_args()
    held = {s.name for s in held_out_sets()}
    sets = [s for s in [*known_sets(), *held_out_sets()] if not args.sets or s.name in args.sets]
    recorded = args.profile == "recorded"
    if recorded:
        sets = [s for s in sets if (args.recordings / f"{s.name}.jsonl").is_file()]
    columns = RECORDED_COLUMNS if recorded else COLUMNS
    print("| set | " + " | ".join(columns) + (" | replayed" if recorded else "") + " |\n|---|"
          + "---|" * (len(columns) + recorded), flush=True)
    reports = {}
    for eval_set in sets:
        recording = args.recordings / f"{eval_set.name}.jsonl" if recorded else None
        reports[eval_set.name] = report = evaluated(eval_set, recording)
        cells = " | ".join("-" if report.get(k) is None else f"{report[k]:.2f}" for k in columns)
        if recorded:
            cells += " | " + ", ".join(f"{n} {kind}" for kind, n in report["replayed"].items())
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
