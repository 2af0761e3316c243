"""Which statement should an extractive answer quote: the fitted ranker's best, or the one the reader reads best?

    .venv/bin/python -m benchmarks.quote_choice [--readers build/reader]

For every answerable case of every set, the candidates are read as `fit_answerability`'s `semantic+reader`
variant reads them (each set by the reader fold that never trained on it); the ranker is fitted without the set
(leave one set out; `dev3` and `real` by the fit on all the others). Per set, the share of answerable cases whose
chosen statement lies in a support section, and the share whose chosen statement states the answer (a
`must_include` item in a support section), for: the ranker's best (what ships), the reader's best among every
candidate, and the reader's best among the ranker's first two.
"""

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from training.answerability_data import collect, held_out_sets, known_sets, opened
from training.fit_answerability import Question, fit_stages, questions, ranked
from training.reader.folds import fold_model

Chooser = Callable[[Question, Sequence[int]], int]
CHOOSERS: dict[str, Chooser] = {
    "ranker": lambda q, order: order[0],
    "reader": lambda q, order: max(order, key=lambda i: q.features[i]["reader"]),
    "reader of ranker's 2": lambda q, order: max(order[:2], key=lambda i: q.features[i]["reader"]),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--readers", type=Path, default=Path("build/reader"))
    args = parser.parse_args()
    fitted, held = known_sets(), held_out_sets()
    by_set = {}
    for eval_set in [*fitted, *held]:
        with opened(eval_set, embedder="minilm", reader=fold_model(args.readers, eval_set.name)) as session:
            by_set[eval_set.name] = questions(list(collect(session, eval_set)))
    print("| set | " + " | ".join(f"{name}: in support / states it" for name in CHOOSERS) + " |")
    print("|---|" + "---|" * len(CHOOSERS))
    for name, asked in by_set.items():
        ranker, _ = fit_stages([q for other in fitted if other.name != name for q in by_set[other.name]])
        answerable = [q for q in asked if q.expect == "answer"]
        cells = []
        for choose in CHOOSERS.values():
            chosen = [choose(q, ranked(q, ranker)[0]) for q in answerable]
            supported = sum(q.supports[i] for q, i in zip(answerable, chosen, strict=True)) / len(answerable)
            stating = sum(q.answers[i] for q, i in zip(answerable, chosen, strict=True)) / len(answerable)
            cells.append(f"{supported:.2f} / {stating:.2f}")
        print(f"| `{name}` | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
