"""From case results to the report of `sourced eval`: the rates, per expected kind and tag, the failures, and
the bounds `--fail-under` checks.

Every rate is a fraction of its case group: the answer verdicts of the answer cases, the abstention rates and
`kind_accuracy` of the refusal cases, `leaks` and `clarify_rate` of all cases. `citation_precision` is a share
of citations (in answered answer cases). A rate whose group is empty is None.

Conversations: `followup_correct_answer` and `followup_wrong_answer` are the answer verdicts of the turns
after the first, `followup_false_answer` the false answers of their refusal cases, and `standalone_misread`
the share of later turns the case calls questions of their own that the pipeline read as follow-ups.

With a generative model: `guard_refused` is the share of the answer cases the model answered (`found` true)
that the guard then refused or clarified; `model_declined` the share of answer cases the model itself declined.

Dead ends: `dead_end_rate` is the share of answer cases refused without a supporting passage among the closest
passages shown; `closest_hit` the share of refused answer cases whose closest passages include one;
`closest_shown_unanswerable` the share of refusal cases whose refusal showed closest passages.
"""

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from core.eval.cases import EXPECTATIONS
from core.eval.scoring import CaseResult
from core.eval.stats import percentile

Metrics = dict[str, float | None]

RATE_KEYS: Final = ("correct_answer", "wrong_answer", "false_abstention", "missed", "correct_abstention",
                    "false_answer", "kind_accuracy", "leaks", "citation_precision", "clarify_rate",
                    "latency_p50_ms", "latency_p95_ms", "dead_end_rate", "closest_hit", "closest_shown_unanswerable",
                    "followup_correct_answer", "followup_wrong_answer", "followup_false_answer", "standalone_misread",
                    "guard_refused", "model_declined")
MAXIMUM_KEYS: Final = frozenset({"wrong_answer", "false_abstention", "missed", "false_answer", "leaks",
                                 "clarify_rate", "latency_p50_ms", "latency_p95_ms", "dead_end_rate",
                                 "followup_wrong_answer", "followup_false_answer", "standalone_misread",
                                 "guard_refused", "model_declined"})
"""Rates where lower is better: `--fail-under` treats their bound as a maximum, every other as a minimum."""


def metrics(results: Sequence[CaseResult]) -> Metrics:
    answers = [r for r in results if r.expected == "answer"]
    refusals = [r for r in results if r.expected != "answer"]
    answered = [r for r in answers if r.answered]
    refused_answers = [r for r in answers if r.refused]
    citations = sum(r.citations for r in answered)
    latencies = [r.latency_ms for r in results]
    later = [r for r in results if r.followup]
    return {
        "correct_answer": _share(answers, lambda r: r.verdict == "correct_answer"),
        "wrong_answer": _share(answers, lambda r: r.verdict == "wrong_answer"),
        "false_abstention": _share(answers, lambda r: r.verdict == "false_abstention"),
        "missed": _share(answers, lambda r: r.verdict == "missed"),
        "correct_abstention": _share(refusals, lambda r: r.verdict == "correct_abstention"),
        "false_answer": _share(refusals, lambda r: r.verdict == "false_answer"),
        "kind_accuracy": _share(refusals, lambda r: bool(r.kind_correct)),
        "leaks": _share(results, lambda r: r.leak is not None),
        "citation_precision": round(sum(r.supported_citations for r in answered) / citations, 4)
        if citations else None,
        "clarify_rate": _share(results, lambda r: r.clarified),
        "latency_p50_ms": _rounded(percentile(latencies, 50)),
        "latency_p95_ms": _rounded(percentile(latencies, 95)),
        "dead_end_rate": _share(answers, lambda r: r.refused and not r.closest_supported),
        "closest_hit": _share(refused_answers, lambda r: r.closest_supported),
        "closest_shown_unanswerable": _share(refusals, lambda r: r.closest_shown),
        "followup_correct_answer": _share([r for r in later if r.expected == "answer"],
                                          lambda r: r.verdict == "correct_answer"),
        "followup_wrong_answer": _share([r for r in later if r.expected == "answer"],
                                        lambda r: r.verdict == "wrong_answer"),
        "followup_false_answer": _share([r for r in later if r.expected != "answer"],
                                        lambda r: r.verdict == "false_answer"),
        "standalone_misread": _share([r for r in later if r.standalone], lambda r: r.read_as_followup),
        "guard_refused": _share([r for r in answers if r.model_found], lambda r: not r.answered),
        "model_declined": _share([r for r in answers if r.model_found is not None], lambda r: not r.model_found),
    }


def _share(results: Sequence[CaseResult], counts: Callable[[CaseResult], bool]) -> float | None:
    return round(sum(map(counts, results)) / len(results), 4) if results else None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def group(results: Sequence[CaseResult]) -> dict[str, Any]:
    """One group of the report: the case count, the rates, owner routing, the false abstentions whose
    support never reached the model (dropped by the floor or a clarification), and the outcome kinds seen."""
    with_owner = [r for r in results if r.owner_correct is not None]
    answers = [r for r in results if r.expected == "answer"]
    return {
        "cases": len(results),
        **metrics(results),
        "owner_accuracy": _share(with_owner, lambda r: bool(r.owner_correct)),
        "false_abstention_before_model": _share(
            answers, lambda r: r.verdict == "false_abstention" and not r.support_given),
        "got": dict(Counter(r.got for r in results).most_common()),
    }


def by_kind(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Per expected kind, in the order of the case format, each with its rows per tag."""
    report: dict[str, Any] = {}
    for kind in EXPECTATIONS:
        of_kind = [r for r in results if r.expected == kind]
        if of_kind:
            tags = sorted({tag for r in of_kind for tag in r.tags})
            report[kind] = {**group(of_kind),
                            "tags": {tag: group([r for r in of_kind if tag in r.tags]) for tag in tags}}
    return report


def followups(results: Sequence[CaseResult]) -> dict[str, Any]:
    """The turns after the first, whole and split: those the case reads as follow-ups (`elliptical`), and the
    questions of their own asked in the same thread (`standalone`)."""
    later = [r for r in results if r.followup]
    return {"all": group(later), "elliptical": group([r for r in later if not r.standalone]),
            "standalone": {**group([r for r in later if r.standalone]),
                           "read_as_followup": _share([r for r in later if r.standalone],
                                                      lambda r: r.read_as_followup)}}


@dataclass(frozen=True, kw_only=True)
class Report:
    results: tuple[CaseResult, ...]
    profile: tuple[str, ...] = ()
    """What answered (`Sourced.components`: retrieval, question matcher, reader, answerability fit, answer model):
    a figure is only comparable with another of the same profile, so the report names its own."""
    replayed: dict[str, int] | None = None
    """With a recorded model: how many requests replayed exactly, moved, stayed stale or had no recording."""

    @property
    def metrics(self) -> Metrics:
        return metrics(self.results)

    def failures(self) -> list[dict[str, str]]:
        return [{"id": r.case_id, "expected": r.expected, "got": r.got, "reason": r.reason,
                 **({"detail": r.detail} if r.detail else {})}
                for r in self.results if r.reason]

    def as_dict(self) -> dict[str, Any]:
        """The object `sourced eval --json` prints: the rates, then `cases`, `by_kind`, `followups`, `failures`
        and `profile`."""
        return {**self.metrics, "cases": len(self.results), "by_kind": by_kind(self.results),
                "followups": followups(self.results), "failures": self.failures(), "profile": list(self.profile),
                **({"replayed": self.replayed} if self.replayed is not None else {})}


@dataclass(frozen=True, kw_only=True)
class Bound:
    """`KEY=VALUE` of `--fail-under`: a minimum for the rates where higher is better, else a maximum."""

    key: str
    value: float

    @classmethod
    def parse(cls, text: str, keys: Sequence[str] = RATE_KEYS) -> "Bound":
        key, sep, raw = text.partition("=")
        key = key.strip()
        if not sep or key not in keys:
            raise ValueError(f"{text!r}: expected KEY=VALUE with KEY one of {', '.join(keys)}")
        try:
            return cls(key=key, value=float(raw))
        except ValueError:
            raise ValueError(f"{text!r}: {raw!r} is not a number") from None

    @property
    def is_maximum(self) -> bool:
        return self.key in MAXIMUM_KEYS

    def violation(self, measured: Metrics) -> str | None:
        """Why the measured value is past this bound, or None. A rate that could not be measured fails."""
        value = measured[self.key]
        if value is None:
            return f"{self.key} could not be measured (no cases in its group)"
        if self.is_maximum and value > self.value:
            return f"{self.key} = {value:g} is above the maximum {self.value:g}"
        if not self.is_maximum and value < self.value:
            return f"{self.key} = {value:g} is below the minimum {self.value:g}"
        return None
