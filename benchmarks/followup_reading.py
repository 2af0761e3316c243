"""Questions of their own read as follow-ups, on questions the follow-up reader was never shown: every case of an
evaluation set asked right after the case before it in its file, in one thread, as the same asker.

None of these questions leans on the one before it, so each one the reader takes for a follow-up is a misread,
with one exception counted apart: the sets' `ambiguous` cases ("who approves it?") are elliptical by design, a
question with nothing to refer to, which in a thread would be a follow-up. The script also scores each case
both ways (alone, and after the case before it) and counts what the readings cost: answers that became wrong,
refusals that became answers.

    .venv/bin/python -m benchmarks.followup_reading examples ../shared/eval/dev ../shared/eval/dev2
"""

import argparse
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.application.orchestrator import Question
from core.config import SourcedConfig, load_config, load_known_gaps
from core.domain import Answered, Audience, Outcome, Refused, Turn
from core.eval.cases import Case, load_cases
from core.eval.runner import EvalSession, case_principal, eval_session
from core.eval.scoring import CaseResult, EvidenceSummary, asker_view, score_case

EXAMPLES = Path(__file__).resolve().parent.parent / "bot" / "examples"


@dataclass(frozen=True, kw_only=True)
class EvalSet:
    name: str
    kb: Path
    cases: Path
    config: SourcedConfig
    gaps: Path | None


def eval_set(name: str) -> EvalSet:
    """`examples` (the bundled handbook), or a folder holding `kb/`, `cases.yaml` and perhaps `owners.yml`."""
    if name == "examples":
        return EvalSet(name=name, kb=EXAMPLES / "handbook", cases=EXAMPLES / "cases.yaml",
                       config=load_config(EXAMPLES / "sourced.yml"), gaps=None)
    folder = Path(name)
    owners = folder / "owners.yml"
    return EvalSet(name=folder.name, kb=folder / "kb", cases=folder / "cases.yaml", config=SourcedConfig(),
                   gaps=owners if owners.is_file() else None)


def as_turn(question: str, outcome: Outcome) -> Turn:
    kind = outcome.presented_kind if isinstance(outcome, Refused) else outcome.kind
    cited = tuple(c.passage.chunk_id for c in outcome.citations) if isinstance(outcome, Answered) else ()
    return Turn(question=question, kind=kind, cited=cited)


def after(session: EvalSession, before: Case, case: Case) -> tuple[CaseResult, CaseResult, bool]:
    """`case` scored alone and right after `before` (asked by the same person): both results, and whether the
    second asking read it as a follow-up."""
    principal = case_principal(case)
    audience = Audience.only(principal)
    view = asker_view(session.documents, audience, session.public_owners)
    ask = session.sourced.orchestrator.ask_with_evidence
    first, _ = ask(Question(text=before.question, principal=principal, audience=audience))
    alone, alone_evidence = ask(Question(text=case.question, principal=principal, audience=audience))
    threaded, evidence = ask(Question(text=case.question, principal=principal, audience=audience,
                                      context=(as_turn(before.question, first),)))
    scored_alone = score_case(case, alone, EvidenceSummary.of(alone_evidence), view, latency_ms=0.0)
    scored_after = score_case(case, threaded, EvidenceSummary.of(evidence), view, latency_ms=0.0,
                              asked_before=[before.question])
    return scored_alone, scored_after, bool(evidence.reading and evidence.reading.followup)


def measure(chosen: EvalSet) -> dict[str, Any]:
    cases = load_cases(chosen.cases)
    gaps = chosen.config.gaps() + (load_known_gaps(chosen.gaps) if chosen.gaps else ())
    misread: list[str] = []
    elliptical: list[str] = []
    changed: dict[str, list[str]] = {"became_wrong": [], "became_false_answer": [], "became_correct": []}
    counts = {"wrong_alone": 0, "wrong_after": 0, "false_alone": 0, "false_after": 0}
    with eval_session(kb=chosen.kb, config=chosen.config, known_gaps=gaps) as session:
        for before, case in itertools.pairwise(cases):
            alone, threaded, followup = after(session, before, case)
            if followup:
                (elliptical if case.expect == "ambiguous" else misread).append(case.id)
            counts["wrong_alone"] += alone.verdict == "wrong_answer"
            counts["wrong_after"] += threaded.verdict == "wrong_answer"
            counts["false_alone"] += alone.verdict == "false_answer"
            counts["false_after"] += threaded.verdict == "false_answer"
            if threaded.verdict != alone.verdict:
                if threaded.verdict == "wrong_answer":
                    changed["became_wrong"].append(case.id)
                elif threaded.verdict == "false_answer":
                    changed["became_false_answer"].append(case.id)
                elif threaded.verdict == "correct_answer":
                    changed["became_correct"].append(case.id)
    standalone = sum(case.expect != "ambiguous" for case in cases[1:])
    return {"set": chosen.name, "questions": standalone, "read_as_followup": len(misread),
            "standalone_misread": round(len(misread) / standalone, 4) if standalone else None, "misread": misread,
            "elliptical_cases": len(cases) - 1 - standalone, "elliptical_read_as_followup": len(elliptical),
            **counts, **changed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="+", help="`examples`, or evaluation set folders (kb/, cases.yaml)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    reports = [measure(eval_set(name)) for name in args.sets]
    if args.json:
        print(json.dumps(reports, indent=2))
        return
    for report in reports:
        print(f"{report['set']:10} questions {report['questions']:4}  "
              f"read as follow-ups {report['read_as_followup']:3} "
              f"({report['standalone_misread']:.1%})  wrong answers alone {report['wrong_alone']} / after "
              f"{report['wrong_after']}  false answers alone {report['false_alone']} / after {report['false_after']}"
              f"  (ambiguous by design: {report['elliptical_read_as_followup']} of {report['elliptical_cases']} "
              "read as follow-ups)")
        if report["misread"]:
            print(f"           misread: {', '.join(report['misread'])}")


if __name__ == "__main__":
    main()
