"""`ask` latency on an evaluation set, as `sourced eval` asks it: each question asked once with the sentence
embeddings not yet cached (the first time anyone asks about those passages), then again with them cached (a
running bot, where popular passages recur).

    .venv/bin/python -m benchmarks.ask_latency --kb ../shared/eval/dev/kb --cases ../shared/eval/dev/cases.yaml
"""

import argparse
import time
from pathlib import Path

from core.application.orchestrator import Question
from core.config import SourcedConfig, load_known_gaps
from core.domain import Audience
from core.eval.cases import load_cases
from core.eval.runner import case_principal, eval_session
from core.eval.stats import percentile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--cases", type=Path, required=True)
    parser.add_argument("--known-gaps", type=Path)
    args = parser.parse_args()
    cases = load_cases(args.cases)
    gaps = load_known_gaps(args.known_gaps) if args.known_gaps else ()
    with eval_session(kb=args.kb, config=SourcedConfig(), known_gaps=gaps) as session:
        for label in ("first asked", "asked again"):
            seconds = []
            for case in cases:
                principal = case_principal(case)
                question = Question(text=case.question, principal=principal, audience=Audience.only(principal))
                started = time.perf_counter()
                session.sourced.orchestrator.ask(question)
                seconds.append((time.perf_counter() - started) * 1000)
            print(f"{label:12} questions {len(seconds)}  p50 {percentile(seconds, 50):6.1f} ms  "
                  f"p95 {percentile(seconds, 95):6.1f} ms  max {max(seconds):6.1f} ms")


if __name__ == "__main__":
    main()
