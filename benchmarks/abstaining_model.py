"""Does a generative model get asked, and is its abstention a refusal that moves the asker forward? (issue 22)

A scripted OpenAI-compatible server on loopback that always abstains (`found: false`) stands behind the real
adapter, with the default answerability gate for a generative model (`after_model`). For every case of each
set: did the question reach the model, and what came back. Every answerable case that reached the model must
come back refused with closest passages, never answered.

    python -m benchmarks.abstaining_model ../shared/eval/dev ../shared/eval/dev2
"""

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Final

from core.application.orchestrator import Question
from core.config import load_config, load_known_gaps
from core.domain import Answered, Audience, Refused
from core.eval.cases import load_cases
from core.eval.runner import case_principal, eval_session
from core.eval.scripted_server import ScriptedServer
from core.llm.openai_compat import OpenAICompatModel

ABSTAINS: Final = json.dumps({"found": False, "answer": "", "claims": [], "confidence": "low",
                              "refusal_reason": "the sources do not state it"})


def always_abstains(_messages: list[dict[str, Any]]) -> str:
    return ABSTAINS


def measure(evalset: Path) -> Counter[str]:
    """Counts per answerable case: asked (reached the model), refused_with_closest, answered; and the
    unanswerable cases that reached the model."""
    owners = evalset / "owners.yml"
    gaps = load_known_gaps(owners) if owners.exists() else ()
    counts: Counter[str] = Counter()
    with ScriptedServer(always_abstains) as server, eval_session(
            kb=evalset / "kb", config=load_config(None), known_gaps=gaps,
            model=OpenAICompatModel(base_url=server.base_url, model="always-abstains")) as session:
        for case in load_cases(evalset / "cases.yaml"):
            principal = case_principal(case)
            outcome, evidence = session.sourced.orchestrator.ask_with_evidence(
                Question(text=case.question, principal=principal, audience=Audience.only(principal)))
            group = "answerable" if case.expect == "answer" else "unanswerable"
            counts[group] += 1
            counts[f"{group}_asked"] += evidence.model_called
            counts[f"{group}_answered"] += isinstance(outcome, Answered)
            reached_and_shown = evidence.model_called and isinstance(outcome, Refused) and bool(outcome.nearest)
            counts[f"{group}_asked_refused_with_closest"] += reached_and_shown
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", type=Path, nargs="+", help="evaluation set folders (kb/, cases.yaml, owners.yml)")
    args = parser.parse_args()
    failed = False
    for evalset in args.sets:
        c = measure(evalset)
        print(f"{evalset.name}: answerable {c['answerable']}, reached the model {c['answerable_asked']} "
              f"({c['answerable_asked'] / max(c['answerable'], 1):.0%}), of which refused with closest passages "
              f"{c['answerable_asked_refused_with_closest']}, answered {c['answerable_answered']}; "
              f"unanswerable {c['unanswerable']}, reached the model {c['unanswerable_asked']}, "
              f"answered {c['unanswerable_answered']}")
        failed |= (c["answerable_asked"] < 0.9 * c["answerable"]
                   or c["answerable_asked_refused_with_closest"] != c["answerable_asked"]
                   or c["answerable_answered"] + c["unanswerable_answered"] > 0)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
