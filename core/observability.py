"""Prometheus metrics (the Metrics port) and the system clock."""

import time
from dataclasses import dataclass
from datetime import UTC, datetime

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram

from core.domain import OutcomeKind, RiskLevel


@dataclass(frozen=True)
class Instruments:
    outcomes: Counter
    retrieved: Histogram
    latency: Histogram
    audit_failures: Counter
    phrasing_drift: Counter


def instruments(registry: CollectorRegistry) -> Instruments:
    """Sourced's metrics, registered in `registry` (once per registry: Prometheus refuses a name twice)."""
    return Instruments(
        outcomes=Counter("sourced_outcomes_total", "Questions by presented outcome kind and risk class",
                         ["kind", "risk"], registry=registry),
        retrieved=Histogram("sourced_retrieved_chunks", "Chunks retrieved per question",
                            buckets=(0, 1, 2, 4, 8, 12, 16, 32), registry=registry),
        latency=Histogram("sourced_answer_seconds", "Time to an outcome, audit included",
                          buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30), registry=registry),
        audit_failures=Counter("sourced_audit_write_failures_total", "Audit records that could not be written",
                               registry=registry),
        phrasing_drift=Counter("sourced_phrasing_drift_total", "Model prose inconsistent with its verdict",
                               ["severity"], registry=registry),
    )


PROCESS = instruments(REGISTRY)
"""What `/metrics` serves (`bot.http`)."""


class PrometheusMetrics:
    """The Metrics port. `kind` is the presented kind (the orchestrator gives no other): a scraper learns no
    more than the askers did. Into the process's registry, or one of its own (a benchmark comparing two
    deployments within one process)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self._m = PROCESS if registry is None else instruments(registry)

    def outcome(self, *, kind: OutcomeKind, risk: RiskLevel | None, retrieved: int, seconds: float) -> None:
        self._m.outcomes.labels(kind=kind, risk=risk or "none").inc()
        self._m.retrieved.observe(retrieved)
        self._m.latency.observe(seconds)

    def audit_write_failed(self) -> None:
        self._m.audit_failures.inc()

    def phrasing_drift(self, *, severity: str) -> None:
        self._m.phrasing_drift.labels(severity=severity).inc()


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.perf_counter()
