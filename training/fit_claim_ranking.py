"""Fit the margin of the guard's ranking check (`core.application.guard.claim_ranking`) on the fabrication benchmark,
report it on sets it did not see, and write it beside the ranker it was fitted on.

    .venv/bin/python -m training.fit_claim_ranking                        # the default profile's ranker
    .venv/bin/python -m training.fit_claim_ranking --variant lexical --write   # no embedder; write the margin

Every set's fabrication benchmark runs once through the default pipeline with a scripted generative model,
recording for each trial how far below the question's best candidate the ranker puts each claim's quote. A trial
that passed every other check is answered at margin m when some claim ranks at most m below the best; so one run
gives every margin's outcome. For each set, the margin is the lowest at which faithful answers (quoted and
paraphrased, with and without quotes) of the *other* sets are kept at least `KEEP` of the time; its figures on
the set are held-out ones. The shipped margin is the same rule over every set, reported on the sets nothing is
fitted on (`dev3`, `real`), and written as `claim_rank_margin` of the variant's model in
`core/application/answerability/model.json`: a refit of that model drops it, and the check is off for the variant
until this is run again. Each row also gives a ceiling: the other-question fabrications refused at the margin that
keeps 90% of that set's own faithful answers, and how often its fabrication ranks at or above the faithful quote.
"""

import argparse
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from core.application.answerability.model import MODEL_FILE
from core.application.guard.claim_ranking import RANKED_FAR_BELOW, rests_on_an_answer
from core.eval.fabrication_bench import Trial, right_share
from training.answerability_data import fabrication_trials, held_out_sets, known_sets

KEEP: Final = 0.95
"""Faithful answers the margin must keep on the sets it is fitted on."""
ORACLE_KEEP: Final = 0.90
"""The faithful answers a guard must keep while it refuses 90% of other-question fabrications (the bar set for
`dev3`)."""
MARGINS: Final = [round(0.25 * n, 2) for n in range(0, 81)]


def answered(trial: Trial, margin: float) -> bool:
    """The trial's outcome had the margin been `margin`. Default profile only: no check comes after this one
    (with a reader, a trial the ranking refused might have been refused by the reader too)."""
    reached_ranking = trial.kind == "answered" or RANKED_FAR_BELOW in (trial.detail or "")
    return reached_ranking and rests_on_an_answer(trial.rank_gaps, margin)


def share_at(items: Sequence[Trial], margin: float, *, faithful: bool) -> float | None:
    return right_share(items, lambda trial: answered(trial, margin), faithful=faithful)


def fitted_margin(items: Sequence[Trial]) -> float:
    """The lowest margin that keeps `KEEP` of the faithful answers."""
    kept = [m for m in MARGINS if (share_at(items, m, faithful=True) or 0.0) >= KEEP]
    return min(kept, default=MARGINS[-1])


def _fitted(items: Sequence[Trial], margin: float) -> bool:
    ranked = any(gap is not None for t in items for gap in t.rank_gaps)
    return ranked and (share_at(items, margin, faithful=True) or 0.0) >= KEEP


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="+", default=["examples", "dev", "dev2"],
                        help="the sets the margin is fitted on (default: %(default)s)")
    parser.add_argument("--variant", choices=["semantic", "lexical", "semantic+matcher"], default="semantic",
                        help="the ranker: with the embedder (the default profile), with the question matcher, or "
                             "without either (default %(default)s)")
    parser.add_argument("--write", action="store_true",
                        help=f"write the margin into core/application/answerability/{MODEL_FILE}")
    args = parser.parse_args()
    os.environ["SOURCED_EMBEDDER"] = "minilm" if args.variant.startswith("semantic") else "none"
    os.environ["SOURCED_MATCHER"] = "bundled" if "+matcher" in args.variant else "none"
    os.environ["SOURCED_READER"] = "none"  # the variant's own ranker, never a reader's
    # the shipped question matcher, never another; the gate "off" would rank nothing
    for setting in ("SOURCED_READER_PATH", "SOURCED_MATCHER_PATH", "SOURCED_ANSWERABILITY_GATE"):
        os.environ.pop(setting, None)
    by_set = {s.name: fabrication_trials(s) for s in known_sets() if s.name in args.sets}
    print(f"{'held out':10} {'margin':>6} {'faithful kept':>14} {'other_question refused':>23} "
          f"{'fabrications refused':>21} {'best at 90% kept':>24}   (each: without the check / with it; last: "
          f"the margin chosen on the set itself, and in brackets the share of cases whose fabrication ranks at or "
          f"above the faithful quote)")
    for name, items in by_set.items():
        _row(name, fitted_margin([t for other, rest in by_set.items() if other != name for t in rest]), items)
    everything = [t for items in by_set.values() for t in items]
    margin = fitted_margin(everything)
    _row("all*", margin, everything)
    for held in held_out_sets():
        _row(held.name, margin, fabrication_trials(held))
    print(f"(* fitted on these sets: not a held-out figure; {', '.join(s.name for s in held_out_sets())}: never "
          f"fitted on)\n{args.variant} margin: {margin}")
    if args.write and not _fitted(everything, margin):
        raise SystemExit("no margin written: no trial was ranked, or none keeps the faithful answers")
    if args.write:
        path = Path(__file__).resolve().parents[1] / "core" / "application" / "answerability" / MODEL_FILE
        shipped = json.loads(path.read_text(encoding="utf-8"))
        shipped["models"][args.variant]["claim_rank_margin"] = margin
        path.write_text(json.dumps(shipped, indent=1) + "\n", encoding="utf-8")
        print(f"wrote the {args.variant} margin to {path}")


def _row(name: str, margin: float, items: Sequence[Trial]) -> None:
    other = [t for t in items if t.variant == "other_question"]

    def shares(at: float) -> tuple[float | None, ...]:
        return (share_at(items, at, faithful=True), share_at(other, at, faithful=False),
                share_at(items, at, faithful=False))

    cells = [f"{_share(without)} / {_share(with_check)}"
             for without, with_check in zip(shares(math.inf), shares(margin), strict=True)]
    cells.append(_best_refused(items, other))
    widths = (14, 23, 21, 24)
    print(f"{name:10} {margin:6.2f} " + " ".join(f"{cell:>{w}}" for cell, w in zip(cells, widths, strict=True)),
          flush=True)


def _best_refused(items: Sequence[Trial], other: Sequence[Trial]) -> str:
    """The other-question fabrications refused at the lowest margin that keeps 90% of the set's own faithful
    answers (what any margin could reach on it, the bar of a guard that refuses 90% and keeps 90%), and the share
    of cases whose fabrication ranks at or above its faithful quote, which no margin can tell apart."""
    kept = [m for m in MARGINS if (share_at(items, m, faithful=True) or 0.0) >= ORACLE_KEEP]
    if not kept:
        return "-"
    return f"{min(kept):.2f}: {_share(share_at(other, min(kept), faithful=False))} ({_share(_outranked(items))})"


def _outranked(items: Sequence[Trial]) -> float | None:
    """Of the cases with a quoted faithful answer and a quoted other-question fabrication, both ranked, the share
    whose fabrication's quote ranks no lower than the faithful one's."""
    gaps: dict[str, dict[str, float]] = {}
    for trial in items:
        judged = [gap for gap in trial.rank_gaps if gap is not None]
        if trial.with_quotes and judged and trial.variant in ("faithful_quote", "other_question"):
            gaps.setdefault(trial.case_id, {})[trial.variant] = min(judged)
    both = [case for case in gaps.values() if len(case) == 2]
    if not both:
        return None
    return sum(case["other_question"] <= case["faithful_quote"] for case in both) / len(both)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


if __name__ == "__main__":
    main()
