"""What the knowledge base holds for one audience, and what Sourced did lately: the App Home tab and the
assistant's suggested prompts read these, never the search index.

All are ports: `Catalog` lists documents, already filtered to what an audience may see (a restricted document
is absent from every count and title, as from retrieval); `ActivityLog` summarises the audit and feedback logs;
`ConnectorStates` says how each connector's last sync went.
"""

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Protocol

from core.domain import Audience


@dataclass(frozen=True, kw_only=True)
class DocumentSummary:
    doc_id: str
    title: str
    owner: str | None
    updated: date | None
    ingested_at: datetime


class Catalog(Protocol):
    def documents(self, audience: Audience) -> Sequence[DocumentSummary]:
        """Every current document the audience may see."""
        ...


@dataclass(frozen=True, kw_only=True)
class Activity:
    """The two-error view of a period: answers that should have been refusals show up as "not helpful",
    refusals that should have been answers as refusals and dead ends."""

    answered: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    clarified: int = 0
    helpful: int = 0
    not_helpful: int = 0
    dead_ends: int = 0
    """Refusals whose retrieval found nothing to offer: the person got a sentence and an owner, no passage."""
    p95_latency_ms: float | None = None

    @property
    def questions(self) -> int:
        return self.answered + self.clarified + sum(self.refused.values())


class ActivityLog(Protocol):
    def since(self, start: datetime) -> Activity: ...


@dataclass(frozen=True, kw_only=True)
class ConnectorStatus:
    """A connector's last sync, as the operators' Home tab and `sourced doctor` show it."""

    name: str
    cursor: str | None = None
    full_pass_at: datetime | None = None
    attempted_at: datetime | None = None
    succeeded_at: datetime | None = None
    error: str | None = None
    summary: str | None = None
    documents: int = 0
    unreadable: int = 0
    """Items the last syncs could not read: out of the index until one reads them again."""


class ConnectorStates(Protocol):
    def statuses(self, names: Collection[str]) -> list[ConnectorStatus]:
        """Each named connector's state, in order; one that never ran has no cursor and no dates."""
        ...


def newest_titles(documents: Sequence[DocumentSummary], *, limit: int) -> list[str]:
    """The titles of the most recently updated documents, newest first (undated last), without repeats."""
    ordered = sorted(documents, key=lambda doc: (doc.updated or date.min, doc.ingested_at), reverse=True)
    return list(dict.fromkeys(doc.title for doc in ordered))[:limit]


def counts_by_owner(documents: Sequence[DocumentSummary]) -> list[tuple[str | None, int]]:
    """How many documents each owner channel holds, most first; None for documents without an owner."""
    counted = Counter(doc.owner for doc in documents)
    return sorted(counted.items(), key=lambda item: (-item[1], item[0] or "~"))


def last_ingest(documents: Sequence[DocumentSummary]) -> datetime | None:
    return max((doc.ingested_at for doc in documents), default=None)


def percentile(values: Sequence[float], percent: float) -> float | None:
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * percent // 100))
    return ordered[int(rank) - 1]
