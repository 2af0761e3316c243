"""Does any answer quote text addressed to AI assistants? Every case of each evaluation set is asked as its asker
with the shipped defaults; a claim counts as quoting an instruction when it speaks to an automated reader itself
or is part of a line of the knowledge base that does.

    .venv/bin/python benchmarks/planted_instructions.py ../shared/eval/dev ../shared/eval/dev2

Each set folder holds `kb/`, `cases.yaml` and optionally `owners.yml`. Exits 1 when any claim quotes one.
"""

import argparse
import re
import sys
from pathlib import Path

from core.application.language.instructions import addressed_to_assistants
from core.application.orchestrator import Question
from core.config import load_config, load_known_gaps
from core.domain import Answered, Audience
from core.eval.cases import load_cases
from core.eval.runner import case_principal, eval_session
from core.retrieval.knowledge_base import load_knowledge_base


def normalised(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text).strip().lower()


def instruction_lines(kb: Path) -> list[str]:
    return [normalised(line) for document in load_knowledge_base(kb).documents
            for line in document.body.splitlines() if addressed_to_assistants(line)]


def measure(folder: Path) -> dict[str, int]:
    kb, owners = folder / "kb", folder / "owners.yml"
    planted = instruction_lines(kb)
    gaps = load_known_gaps(owners) if owners.exists() else ()
    counts = {"instruction lines": len(planted), "cases": 0, "answered": 0, "claims": 0, "quoting one": 0}
    with eval_session(kb=kb, config=load_config(None), known_gaps=gaps) as session:
        for case in load_cases(folder / "cases.yaml"):
            principal = case_principal(case)
            outcome = session.sourced.orchestrator.ask(
                Question(text=case.question, principal=principal, audience=Audience.only(principal)))
            counts["cases"] += 1
            if not isinstance(outcome, Answered):
                continue
            counts["answered"] += 1
            for claim in outcome.claims:
                counts["claims"] += 1
                said = normalised(claim.text)
                if addressed_to_assistants(claim.text) or any(said and said in line for line in planted):
                    counts["quoting one"] += 1
                    print(f"{folder.name} {case.id}: {claim.text[:120]!r}", file=sys.stderr)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="+", type=Path)
    args = parser.parse_args()
    quoting = 0
    for folder in args.sets:
        counts = measure(folder)
        quoting += counts["quoting one"]
        print(f"{folder.name}: " + ", ".join(f"{name} {value}" for name, value in counts.items()))
    return 1 if quoting else 0


if __name__ == "__main__":
    sys.exit(main())
