"""The answerability floors' held-out check: `sourced eval`'s metrics on the even-numbered cases (where the
floors of `core.llm.extractive` were fitted, with the examples) and on the odd-numbered ones (held out), with
semantic retrieval and with plain BM25.

    .venv/bin/python -m benchmarks.calibration --kb ../shared/eval/dev/kb --cases ../shared/eval/dev/cases.yaml \
        --known-gaps ../shared/eval/dev/owners.yml
"""

import argparse
import os
import re
from pathlib import Path
from typing import Final

from core.config import SourcedConfig, load_known_gaps
from core.eval.cases import load_cases
from core.eval.report import metrics
from core.eval.runner import eval_session
from core.eval.scoring import CaseResult

KEYS: Final = ("correct_answer", "wrong_answer", "false_abstention", "false_answer", "citation_precision",
               "kind_accuracy", "leaks")


def half_of(case_id: str) -> str:
    digits = re.findall(r"\d+", case_id)
    return "even" if digits and int(digits[-1]) % 2 == 0 else "odd"


def evaluate(kb: Path, cases_file: Path, known_gaps: Path | None, embedder: str) -> list[CaseResult]:
    os.environ["SOURCED_EMBEDDER"] = embedder
    gaps = load_known_gaps(known_gaps) if known_gaps else ()
    with eval_session(kb=kb, config=SourcedConfig(), known_gaps=gaps) as session:
        return [session.score(case) for case in load_cases(cases_file)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--cases", type=Path, required=True)
    parser.add_argument("--known-gaps", type=Path)
    args = parser.parse_args()
    print(f"{'embedder':8} {'half':5} {'cases':>5} " + " ".join(f"{key:>18}" for key in KEYS))
    for embedder in ("minilm", "none"):
        results = evaluate(args.kb, args.cases, args.known_gaps, embedder)
        for half in ("even", "odd", "all"):
            chosen = [r for r in results if half in ("all", half_of(r.case_id))]
            measured = metrics(chosen)
            cells = " ".join(f"{'-' if measured[key] is None else f'{measured[key]:.3f}':>18}" for key in KEYS)
            print(f"{embedder:8} {half:5} {len(chosen):>5} {cells}")


if __name__ == "__main__":
    main()
