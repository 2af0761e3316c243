"""What the connector tests share: an application on a database of its own, synced from a fake source, asked as
a person of the source (by e-mail) or as an audience of several, and compared with one that never had a
document (a refusal for a restricted document must be the refusal for an absent one)."""

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import select

from benchmarks.restricted_absence import CORRELATION_ID, what_the_audience_gets
from core.application.orchestrator import Question
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig
from core.connectors.port import Connector
from core.connectors.sync import SyncReport
from core.domain import EVERYONE, Audience, Principal
from core.storage.tables import ChunkRow, DocumentRoleRow, DocumentRow

DEFAULT_OWNER = "#help-desk"


def application(folder: Path, *, config: dict[str, Any] | None = None, embedder: Any = None,
                database_url: str | None = None) -> Sourced:
    """The application on a SQLite file in `folder`, or on `database_url` (a PostgreSQL of the suite's)."""
    folder.mkdir(parents=True, exist_ok=True)
    settings = Settings(database_url=database_url or f"sqlite:///{folder / 'sourced.db'}")
    return bootstrap(settings, config=SourcedConfig.model_validate({"default_owner": DEFAULT_OWNER,
                                                                     **(config or {})}),
                     progress=False, embedder=embedder)


def sync(sourced: Sourced, connector: Connector, *, full: bool = False) -> SyncReport:
    report = sourced.syncer.sync(connector, full=full)
    assert report.ok, report.summary()
    return report


def person(sourced: Sourced, email: str | None, *, user_id: str = "U-ASKER") -> Principal:
    """A member of staff whose verified Slack e-mail is `email`, as the bot resolves one."""
    return Principal(user_id=user_id, roles=frozenset({EVERYONE}) | sourced.source_principals.principals(email))


ASKED = itertools.count(1)


def ask(sourced: Sourced, text: str, *people: Principal, correlation: int | None = None) -> dict[str, Any]:
    """The reply an audience of these people gets (one: a DM; several: a channel they are all in), as they
    would see it (the presented kind, blocks and view). Two replies to compare need the same `correlation`
    (an answer's buttons carry it)."""
    audience = Audience.of(person.party for person in people)
    correlation = next(ASKED) if correlation is None else correlation
    outcome, evidence = sourced.orchestrator.ask_with_evidence(Question(
        text=text, principal=people[0], audience=audience, correlation_id=f"{CORRELATION_ID}-{correlation}"))
    return what_the_audience_gets(outcome, evidence, text)


def cited_documents(reply: dict[str, Any]) -> set[str]:
    return {citation["chunk_id"].split("#", 1)[0] for citation in reply["view"]["citations"]}


def index_state(sourced: Sourced) -> dict[str, Any]:
    """What a sync leaves: every chunk id with its text hash, and every document's audience and version."""
    with sourced.engine.connect() as connection:
        chunks = sorted(tuple(row) for row in connection.execute(
            select(ChunkRow.chunk_id, ChunkRow.heading, ChunkRow.content_hash)))
        roles: dict[str, list[str]] = {}
        for doc_id, role in connection.execute(select(DocumentRoleRow.doc_id, DocumentRoleRow.role)):
            roles.setdefault(doc_id, []).append(role)
        documents = sorted(tuple(row) for row in connection.execute(
            select(DocumentRow.doc_id, DocumentRow.source_version, DocumentRow.title)))
    return {"chunks": chunks, "documents": documents,
            "audiences": {doc_id: sorted(found) for doc_id, found in sorted(roles.items())}}


def answered_with(reply: dict[str, Any], words: Sequence[str]) -> bool:
    text = reply["view"]["text"]
    return reply["view"]["outcome"] == "answered" and all(word in text for word in words)
