"""In-memory implementations of the application's ports, for tests that need no I/O."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from core.application.answerability.model import AnswerabilityModel, LinearScore
from core.application.audit import AuditRecord
from core.application.ports import GenerationRequest, ReadPassage
from core.domain import Audience, OutcomeKind, Passage, RetrievedChunk, RiskLevel, is_visible
from core.text import content_stems


@dataclass(frozen=True, kw_only=True)
class StoredChunk:
    chunk: RetrievedChunk
    audience: frozenset[str]


def chunk(chunk_id: str, text: str, *, doc_id: str = "doc", title: str = "Doc", heading: str | None = None,
          owner: str | None = "#doc-owner", audience: Sequence[str] = ("everyone",)) -> StoredChunk:
    passage = Passage(chunk_id=chunk_id, doc_id=doc_id, title=title, heading=heading or title, text=text,
                      owner=owner)
    return StoredChunk(chunk=RetrievedChunk(passage=passage, score=0.0, content_hash=f"hash-{chunk_id}"),
                       audience=frozenset(audience))


class FakeIndex:
    """Scores by the share of the query's content words a chunk contains."""

    def __init__(self, chunks: Sequence[StoredChunk]) -> None:
        self._chunks = list(chunks)
        self.searches = 0

    def _scored(self, query: str, allowed: Callable[[StoredChunk], bool]) -> list[RetrievedChunk]:
        wanted = set(content_stems(query))
        results = []
        for stored in self._chunks:
            have = set(content_stems(stored.chunk.passage.heading + " " + stored.chunk.text))
            score = len(wanted & have) / len(wanted) if wanted else 0.0
            if score > 0 and allowed(stored):
                results.append(RetrievedChunk(passage=stored.chunk.passage, score=score,
                                              content_hash=stored.chunk.content_hash))
        return sorted(results, key=lambda c: c.score, reverse=True)

    def search(self, query: str, *, audience: Audience, limit: int) -> list[RetrievedChunk]:
        self.searches += 1
        return self._scored(query, lambda s: is_visible(s.audience, audience))[:limit]

    def passage(self, chunk_id: str, *, audience: Audience) -> Passage | None:
        for stored in self._chunks:
            if stored.chunk.chunk_id == chunk_id and is_visible(stored.audience, audience):
                return stored.chunk.passage
        return None

    def best_unscoped_score(self, query: str) -> float:
        scored = self._scored(query, lambda s: True)
        return scored[0].score if scored else 0.0


class ScriptedModel:
    """Returns a fixed output, or raises the given error; records what it was asked."""

    def __init__(self, output: str | Callable[[GenerationRequest], str] = "", *,
                 error: Exception | None = None) -> None:
        self._output = output
        self._error = error
        self.requests: list[GenerationRequest] = []

    @property
    def name(self) -> str:
        return "scripted"

    @property
    def prompt_version(self) -> str:
        return "test-v0"

    @property
    def quotes_the_ranking(self) -> bool:
        return False

    @property
    def streams_answers(self) -> bool:
        return True  # it stands for a generative model

    def generate(self, request: GenerationRequest) -> str:
        self.requests.append(request)
        if self._error is not None:
            raise self._error
        return self._output(request) if callable(self._output) else self._output


class MemoryAudit:
    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

    def write(self, record: AuditRecord) -> None:
        self.records.append(record)


class FailingAudit:
    def write(self, record: AuditRecord) -> None:
        raise OSError("disk full")


@dataclass
class FixedClock:
    at: datetime = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    ticks: itertools.count[int] = field(default_factory=itertools.count)

    def now(self) -> datetime:
        return self.at

    def monotonic(self) -> float:
        return next(self.ticks) * 0.01


@dataclass
class RecordingMetrics:
    kinds: list[OutcomeKind] = field(default_factory=list)
    audit_failures: int = 0
    drift: list[str] = field(default_factory=list)

    def outcome(self, *, kind: OutcomeKind, risk: RiskLevel | None, retrieved: int, seconds: float) -> None:
        self.kinds.append(kind)

    def audit_write_failed(self) -> None:
        self.audit_failures += 1

    def phrasing_drift(self, *, severity: str) -> None:
        self.drift.append(severity)


class FailingEmbedder:
    """An embedder whose endpoint is down: every call raises."""

    def __init__(self, model_id: str = "failing@1") -> None:
        self._model_id = model_id

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return 8

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise ConnectionError("embedding endpoint unreachable")


def answerability(*, answers: bool) -> AnswerabilityModel:
    """A fixed answerability decision, so a test of what follows it does not depend on the committed fit."""
    no_weights = LinearScore(weights={}, means={}, scales={})
    decision = LinearScore(weights={}, means={}, scales={}, intercept=10.0 if answers else -10.0)
    return AnswerabilityModel(ranker=no_weights, decision=decision, threshold=0.5,
                              version="fake-answers" if answers else "fake-refuses")


class KeywordReader:
    """A reader that takes a statement holding `word` as the answer; it records every batch it reads."""

    def __init__(self, word: str) -> None:
        self._word = word
        self.batches: list[list[ReadPassage]] = []

    @property
    def name(self) -> str:
        return "keyword-reader@1"

    def score(self, question: str, passages: Sequence[ReadPassage]) -> list[float]:
        self.batches.append(list(passages))
        return [0.95 if self._word in passage.text.lower() else 0.01 for passage in passages]


class FailingReader:
    @property
    def name(self) -> str:
        return "failing-reader@1"

    def score(self, question: str, passages: Sequence[ReadPassage]) -> list[float]:
        raise RuntimeError("reader model failed")
