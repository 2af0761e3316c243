"""What the Home tab and the assistant's prompts read: the documents an audience may see, and a week of
decisions and feedback, added up from the real tables."""

import textwrap
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from sqlalchemy import Engine

from core.application.audit import ScoredId
from core.domain import Audience, Principal
from core.retrieval.ingest import Ingestor
from core.storage import SqlAuditLog
from core.storage.catalog import SqlActivityLog, SqlCatalog
from core.storage.repositories import FeedbackLog
from tests.integration.test_storage_audit_log import NOON, record

DOCUMENTS = {
    "open.md": "---\nid: open\ntitle: Open Handbook\nowner: '#people'\nupdated: 2026-01-01\n---\n# Open\nHello.\n",
    "old.md": "---\nid: old\ntitle: Old Handbook\nowner: '#people'\nupdated: 2025-01-01\n---\n# Old\nBye.\n",
    "new.md": textwrap.dedent("""\
        ---
        id: new
        title: New Handbook
        owner: "#people"
        updated: 2026-02-01
        supersedes: [old]
        ---
        # New
        This handbook replaces the old one.
        """),
    "secret.md": "---\nid: secret\ntitle: Board Minutes\nowner: '#board'\naudience: [board]\n---\n# Minutes\nX.\n",
}


def test_the_catalog_lists_current_documents_the_audience_may_see(sqlite_engine: Engine, tmp_path: Path) -> None:
    for name, text in DOCUMENTS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert not Ingestor(sqlite_engine, progress=False).ingest(tmp_path).errors
    catalog = SqlCatalog(sqlite_engine)
    staff = Audience.only(Principal(user_id="U1", roles=frozenset({"everyone"})))
    board = Audience.only(Principal(user_id="U2", roles=frozenset({"everyone", "board"})))
    assert sorted(doc.title for doc in catalog.documents(staff)) == ["New Handbook", "Open Handbook"]
    assert "Board Minutes" in {doc.title for doc in catalog.documents(board)}


def test_a_week_of_decisions_adds_up_into_the_two_error_view(engine: Engine) -> None:
    log = SqlAuditLog(engine)
    log.write(record("a-1", latency_ms=100.0))
    log.write(record("a-2", latency_ms=300.0))
    log.write(record("r-1", kind="not_in_corpus", retrieved=(), cited=(), latency_ms=50.0))
    log.write(record("r-2", kind="not_retrieved", retrieved=(ScoredId(chunk_id="x#y", score=0.1),), cited=(),
                     latency_ms=60.0))
    log.write(record("c-1", kind="ambiguous", cited=(), latency_ms=70.0))
    log.write(record("i-1", kind="invalid_query", retrieved=(), cited=(), latency_ms=1.0))
    log.write(record("old", at=NOON - timedelta(days=8)))
    feedback = FeedbackLog(engine)
    feedback.record("a-1", "U1", "helpful", at=NOON)
    feedback.record("a-2", "U2", "not_helpful", at=NOON)
    activity = SqlActivityLog(engine).since(NOON - timedelta(days=7))
    assert (activity.answered, activity.clarified, activity.dead_ends) == (2, 1, 1)
    assert activity.refused == {"not_in_corpus": 1, "not_retrieved": 1}
    assert (activity.helpful, activity.not_helpful) == (1, 1)
    assert activity.p95_latency_ms == 300.0
    assert activity.questions == 5


def test_a_note_is_added_to_the_records_detail(engine: Engine) -> None:
    log = SqlAuditLog(engine)
    log.write(replace(record("n-1"), detail="first"))
    assert log.note("n-1", "streamed answer replaced: invalid_blocks")
    assert log.get("n-1").detail == "first; streamed answer replaced: invalid_blocks"  # type: ignore[union-attr]
    assert not log.note("missing", "x")
