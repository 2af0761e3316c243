"""Fit the floor of the guard's claim reading (`core.application.guard.claim_reading.CLAIM_READING_FLOOR`) on the
fabrication benchmark, and report it on sets it did not see.

    .venv/bin/python -m training.fit_claim_reading                  # readers of build/reader, every set

Every set's fabrication benchmark runs once, with the fold's reader that was never trained on that set
(`training/reader/folds.py`), recording for each trial the reader's probability per claim. A trial that passed
every other check is answered at floor f when each claim reads at least f; so one run gives every floor's outcome.
For each set, the floor is the highest at which faithful answers (quoted and paraphrased, with and without
quotes) of the *other* sets are kept at least `KEEP` of the time; its figures on the set are held-out ones.
The shipped floor is the same rule over every set, and is reported on the sets nothing is fitted on (`dev3`,
`real`), read by the shipped reader's fold.
"""

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from core.eval.fabrication_bench import Trial, right_share
from training.answerability_data import EvalSet, fabrication_trials, held_out_sets, known_sets
from training.reader.folds import fold_model

KEEP: Final = 0.95
"""Faithful answers the floor must keep on the sets it is fitted on."""
READER_REFUSAL: Final = "does not answer the question"
FLOORS: Final = [round(0.005 * n, 3) for n in range(0, 100)]


def trials(eval_set: EvalSet, readers: Path) -> list[Trial]:
    os.environ["SOURCED_READER_PATH"] = str(fold_model(readers, eval_set.name))
    return fabrication_trials(eval_set)


def answered(trial: Trial, floor: float) -> bool:
    """The trial's outcome had the floor been `floor`."""
    reached_reader = trial.kind == "answered" or READER_REFUSAL in (trial.detail or "")
    return reached_reader and bool(trial.readings) and min(trial.readings) >= floor


def share_at(items: Sequence[Trial], floor: float, *, faithful: bool) -> float | None:
    return right_share(items, lambda trial: answered(trial, floor), faithful=faithful)


def fitted_floor(items: Sequence[Trial]) -> float:
    """The highest floor that keeps `KEEP` of the faithful answers."""
    kept = [f for f in FLOORS if (share_at(items, f, faithful=True) or 0.0) >= KEEP]
    return max(kept, default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--readers", type=Path, default=Path("build/reader"))
    parser.add_argument("--sets", nargs="+", default=["examples", "dev", "dev2"],
                        help="the sets the floor is fitted on (default: %(default)s)")
    args = parser.parse_args()
    by_set = {s.name: trials(s, args.readers) for s in known_sets() if s.name in args.sets}
    print(f"{'held out':10} {'floor':>6} {'faithful kept':>14} {'other_question refused':>23} "
          f"{'fabrications refused':>21}")
    for name, items in by_set.items():
        floor = fitted_floor([t for other, rest in by_set.items() if other != name for t in rest])
        _row(name, floor, items)
    everything = [t for items in by_set.values() for t in items]
    floor = fitted_floor(everything)
    _row("all*", floor, everything)
    for held in held_out_sets():
        _row(held.name, floor, trials(held, args.readers))
    print(f"(* fitted on these sets: not a held-out figure; {', '.join(s.name for s in held_out_sets())}: never "
          f"fitted on, read by the shipped reader)\nshipped floor: {floor}")


def _row(name: str, floor: float, items: Sequence[Trial]) -> None:
    other = [t for t in items if t.variant == "other_question"]
    cells = (share_at(items, floor, faithful=True), share_at(other, floor, faithful=False),
             share_at(items, floor, faithful=False))
    print(f"{name:10} {floor:6.3f} " + " ".join(f"{'-' if v is None else f'{v:.3f}':>{w}}"
                                                  for v, w in zip(cells, (14, 23, 21), strict=True)), flush=True)


if __name__ == "__main__":
    main()
