"""Prometheus metrics (the Metrics port) and the system clock."""

import time
from datetime import UTC, datetime
from typing import Final

from prometheus_client import Counter, Histogram

from core.domain import OutcomeKind, RiskLevel

OUTCOMES: Final = Counter("sourced_outcomes_total", "Questions by outcome kind and risk class",
                          ["kind", "risk"])
RETRIEVED: Final = Histogram("sourced_retrieved_chunks", "Chunks retrieved per question",
                             buckets=(0, 1, 2, 4, 8, 12, 16, 32))
LATENCY: Final = Histogram("sourced_answer_seconds", "Time to an outcome, audit included",
                           buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
AUDIT_FAILURES: Final = Counter("sourced_audit_write_failures_total", "Audit records that could not be written")
PHRASING_DRIFT: Final = Counter("sourced_phrasing_drift_total", "Model prose inconsistent with its verdict",
                                ["severity"])


class PrometheusMetrics:
    def outcome(self, *, kind: OutcomeKind, risk: RiskLevel | None, retrieved: int, seconds: float) -> None:
        OUTCOMES.labels(kind=kind, risk=risk or "none").inc()
        RETRIEVED.observe(retrieved)
        LATENCY.observe(seconds)

    def audit_write_failed(self) -> None:
        AUDIT_FAILURES.inc()

    def phrasing_drift(self, *, severity: str) -> None:
        PHRASING_DRIFT.labels(severity=severity).inc()


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.perf_counter()
