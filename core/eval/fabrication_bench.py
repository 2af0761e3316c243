"""The fabrication benchmark (`sourced eval --fabrications`): how often the guard refuses a fabricated answer
and passes a faithful one.

For every answerable case, a scripted OpenAI-compatible model on loopback answers, one variant at a time,
with an answer `fabrications` builds from the sources in its prompt; the pipeline is the one the bot runs
(retrieval, the adapter over HTTP, the strict parser, the guard). Each variant is asked twice: with the quote
the model gives, and without any (the guard then aligns the claim to a sentence itself). A variant counts
only for the cases where the scripted model was called and could build it; the rest are counted apart.
"""

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from core.application.guard.checks import cited_chunks, claim_support
from core.application.guard.envelope import parse_envelope
from core.application.orchestrator import Evidence, Question
from core.application.routing import KnownGap
from core.config import SourcedConfig
from core.domain import Answered, Audience, Outcome
from core.eval.cases import Case
from core.eval.fabrications import FAITHFUL, VARIANTS, Fabrication, Variant, fabricate, parse_sources
from core.eval.falsify import FALSIFIED, Falsification, Falsified, falsify
from core.eval.replay import RecordedModel, Recording, question_of
from core.eval.runner import EvalSession, case_principal, eval_session
from core.eval.scripted_server import Respond, ScriptedServer
from core.eval.stats import percentile
from core.llm.openai_compat import OpenAICompatModel

NOT_FOUND: Final = json.dumps({"found": False, "answer": "", "claims": [], "confidence": "low",
                               "refusal_reason": "variant not applicable"})
QUOTE_MODES: Final = (True, False)
METRIC_KEYS: Final = (*(variant + suffix for variant in VARIANTS for suffix in ("", ".omitted")), *FALSIFIED)
PASSING: Final = FAITHFUL | {"recorded"}
"""The variants the guard must pass; it must refuse every other."""


@dataclass(frozen=True, kw_only=True)
class Trial:
    """One variant of one case, asked once."""

    case_id: str
    variant: Variant | Falsified
    with_quotes: bool
    kind: str
    detail: str | None
    claims: tuple[dict[str, Any], ...]
    check_ms: float | None
    readings: tuple[float, ...] = ()
    """Per claim, the reader's probability that its quote answers the question (when the guard got that far)."""
    rank_gaps: tuple[float | None, ...] = ()
    """Per claim, how far below the best candidate the ranker puts its quote (when the guard got that far)."""
    shown: bool = True
    """A falsified recording: whether its false claim was among the answer's (not dropped by the guard)."""

    @property
    def passed(self) -> bool:
        """Answered: for a falsified recording, with its false claim shown."""
        return self.kind == "answered" and self.shown


def right_share(trials: Sequence[Trial], answered: Callable[[Trial], bool], *, faithful: bool) -> float | None:
    """The share of the faithful answers (`faithful`) or of the fabrications handled right, had each trial been
    decided by `answered`: how a fitting script replays one run at another floor or margin. None without any."""
    chosen = [t for t in trials if (t.variant in PASSING) == faithful]
    if not chosen:
        return None
    return sum(answered(t) == faithful for t in chosen) / len(chosen)


@dataclass(kw_only=True)
class FabricationReport:
    trials: list[Trial] = field(default_factory=list)
    not_applicable: Counter[tuple[Variant | Falsified, bool]] = field(default_factory=Counter)
    variants: tuple[Variant | Falsified, ...] = VARIANTS
    quote_modes: tuple[bool, ...] = QUOTE_MODES
    """Both for code-made fabrications; with the model's own quotes only for falsified recordings."""
    model_not_called: int = 0
    cases: int = 0

    def rows(self) -> list[dict[str, Any]]:
        """Per variant and quote mode: cases, the share that went the right way (refused for a fabrication,
        passed for a faithful variant), and the most common refusal reasons."""
        rows = []
        for variant in self.variants:
            for with_quotes in self.quote_modes:
                trials = [t for t in self.trials if t.variant == variant and t.with_quotes == with_quotes]
                right = [t for t in trials if t.passed == (variant in PASSING)]
                rows.append({
                    "variant": variant, "quotes": "given" if with_quotes else "omitted",
                    "expect": "pass" if variant in PASSING else "refuse", "cases": len(trials),
                    "right": round(len(right) / len(trials), 4) if trials else None,
                    "not_applicable": self.not_applicable[(variant, with_quotes)],
                    "reasons": dict(Counter(_reason(t) for t in trials if not t.passed).most_common(4)),
                })
        return rows

    def metrics(self) -> dict[str, float | None]:
        """The share that went the right way per variant (`number_swap`), and without quotes
        (`number_swap.omitted`): what `--fail-under` bounds from below."""
        return {row["variant"] + ("" if row["quotes"] == "given" else ".omitted"): row["right"]
                for row in self.rows()}

    def wrong(self) -> list[Trial]:
        """Fabrications that passed and faithful answers that were refused."""
        return [t for t in self.trials if t.passed != (t.variant in PASSING)]

    def check_latency_ms(self) -> dict[str, float | None]:
        timed = [t.check_ms for t in self.trials if t.check_ms is not None]
        return {"p50": _round(percentile(timed, 50)), "p95": _round(percentile(timed, 95)),
                "max": _round(max(timed, default=None))}

    def as_dict(self) -> dict[str, Any]:
        return {"cases": self.cases, "model_not_called": self.model_not_called, "variants": self.rows(),
                "check_latency_ms": self.check_latency_ms(),
                "wrong": [{"case": t.case_id, "variant": t.variant, "quotes": t.with_quotes, "kind": t.kind,
                           "detail": t.detail, "claims": list(t.claims)} for t in self.wrong()]}


def _reason(trial: Trial) -> str:
    detail = (trial.detail or "").split(": ", 1)[-1]
    return f"{trial.kind}: {detail.split(':')[0].split(' (')[0][:48]}" if detail else trial.kind


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


class _Script:
    """What the scripted model answers next: the current case's variant, built from the prompt's sources."""

    def __init__(self) -> None:
        self.case: Case | None = None
        self.variant: Variant = "faithful_quote"
        self.with_quotes = True
        self.made: Fabrication | None = None

    def respond(self, messages: list[dict[str, Any]]) -> str:
        prompt = "\n".join(str(message.get("content", "")) for message in messages)
        assert self.case is not None
        self.made = fabricate(self.variant, self.case, parse_sources(prompt))
        if self.made is None:
            return NOT_FOUND
        return json.dumps(self.made.envelope(with_quotes=self.with_quotes))


def run_fabrications(*, kb: Path, cases: Sequence[Case], config: SourcedConfig, known_gaps: tuple[KnownGap, ...],
                     progress: Callable[[Iterable[Case]], Iterable[Case]] = lambda cases: cases
                     ) -> FabricationReport:
    """Every answerable case, every variant, with and without quotes, through the bot's own pipeline."""
    script = _Script()
    report = FabricationReport()
    with _scripted_session(script.respond, kb=kb, config=config, known_gaps=known_gaps,
                           model="fabricator", provider="scripted") as session:
        for case in progress([case for case in cases if case.expect == "answer"]):
            report.cases += 1
            script.case = case
            _ask_variants(session, case, script, report)
    return report


@contextmanager
def _scripted_session(respond: Respond, *, kb: Path, config: SourcedConfig, known_gaps: tuple[KnownGap, ...],
                      model: str, provider: str) -> Iterator[EvalSession]:
    """The bot's own pipeline over a fresh knowledge base, its model a reply function on loopback behind the real
    OpenAI-compatible adapter."""
    with ScriptedServer(respond) as server:
        adapter = OpenAICompatModel(base_url=server.base_url, model=model, provider=provider, max_retries=0)
        with eval_session(kb=kb, config=config, known_gaps=known_gaps, model=adapter) as session:
            yield session


def _ask(session: EvalSession, case: Case) -> tuple[Outcome, Evidence]:
    principal = case_principal(case)
    return session.sourced.orchestrator.ask_with_evidence(
        Question(text=case.question, principal=principal, audience=Audience.only(principal)))


def _ask_variants(session: EvalSession, case: Case, script: _Script, report: FabricationReport) -> None:
    for variant in VARIANTS:
        for with_quotes in QUOTE_MODES:
            script.variant, script.with_quotes, script.made = variant, with_quotes, None
            outcome, evidence = _ask(session, case)
            if not evidence.model_called:
                report.model_not_called += 1
                return
            if script.made is None:
                report.not_applicable[(variant, with_quotes)] += 1
                continue
            claims = tuple(script.made.envelope(with_quotes=with_quotes)["claims"])
            report.trials.append(Trial(case_id=case.id, variant=variant, with_quotes=with_quotes,
                                       kind=outcome.kind, detail=evidence.detail, claims=claims,
                                       check_ms=_check_ms(session, claims, evidence.given_to_model),
                                       readings=evidence.claim_readings, rank_gaps=evidence.claim_rank_gaps))


def _check_ms(session: EvalSession, claims: Sequence[dict[str, Any]], given: Sequence[Any]) -> float | None:
    """The guard's claim checks alone on this answer, timed (None when a citation is not among the chunks)."""
    envelope = parse_envelope(json.dumps({"found": True, "answer": "", "claims": list(claims),
                                          "confidence": "high", "refusal_reason": None}))
    by_id = {chunk.chunk_id: chunk for chunk in given}
    if any(cid not in by_id for claim in envelope.claims for cid in claim.chunk_ids):
        return None
    started = time.perf_counter()
    for claim in envelope.claims:
        claim_support(claim, cited_chunks(claim, by_id), embedder=session.sourced.embedder)
    return (time.perf_counter() - started) * 1000


class _Falsifier:
    """What the scripted model answers next: the recording of this request, falsified by the current variant."""

    def __init__(self, recorded: RecordedModel) -> None:
        self.recorded = recorded
        self.variant: Falsified = "recorded"
        self.made: Falsification | None = None

    def respond(self, messages: list[dict[str, Any]]) -> str:
        content = self.recorded.respond(messages)
        user = "\n".join(str(message.get("content", "")) for message in messages)
        try:
            envelope = json.loads(content)
        except ValueError:
            envelope = None
        self.made = None if not isinstance(envelope, dict) or not envelope.get("found") else \
            falsify(self.variant, envelope, parse_sources(user), question_of(user) or "")
        return NOT_FOUND if self.made is None else json.dumps(self.made.envelope, ensure_ascii=False)


def run_recorded_fabrications(*, kb: Path, cases: Sequence[Case], config: SourcedConfig,
                              known_gaps: tuple[KnownGap, ...], recordings: Sequence[Recording],
                              progress: Callable[[Iterable[Case]], Iterable[Case]] = lambda cases: cases
                              ) -> FabricationReport:
    """Every answerable case the recorded model answered, as recorded and falsified each way, with the model's
    own quotes, through the bot's own pipeline."""
    script = _Falsifier(RecordedModel(recordings))
    report = FabricationReport(variants=FALSIFIED, quote_modes=(True,))
    with _scripted_session(script.respond, kb=kb, config=config, known_gaps=known_gaps,
                           model="recorded", provider="recorded") as session:
        for case in progress([case for case in cases if case.expect == "answer"]):
            report.cases += 1
            _ask_falsified(session, case, script, report)
    return report


def _ask_falsified(session: EvalSession, case: Case, script: _Falsifier, report: FabricationReport) -> None:
    for variant in FALSIFIED:
        script.variant, script.made = variant, None
        outcome, evidence = _ask(session, case)
        if not evidence.model_called:
            report.model_not_called += 1
            return
        if script.made is None:
            report.not_applicable[(variant, True)] += 1
            continue
        claims = tuple(script.made.envelope["claims"])
        shown = isinstance(outcome, Answered) and any(claim.text == (script.made.claim or "").strip()
                                                      for claim in outcome.claims)
        report.trials.append(Trial(case_id=case.id, variant=variant, with_quotes=True, kind=outcome.kind,
                                   detail=evidence.detail, claims=claims, shown=shown or script.made.claim is None,
                                   check_ms=_check_ms(session, claims, evidence.given_to_model)))
