"""Upgrading from every earlier revision keeps what was stored and leaves a database the index can search.

Each case migrates an empty database to an older revision, stores what that revision could hold (with raw SQL,
as an older Sourced would have written it), then migrates to the newest and checks the rows and the search.
"""

from datetime import UTC, datetime, timedelta

import pytest
from alembic import command
from sqlalchemy import Engine, inspect, text

from core.bootstrap import build_index
from core.domain import Audience, Party
from core.storage import current_revision, head_revision, make_engine, migrate
from core.storage.database import alembic_config

EARLIER = [None, "0001", "0002", "0003", "0004_postgres_index"]
STAFF = Audience(parties=(Party(),))
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def upgrade_to(engine: Engine, revision: str) -> None:
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), revision)


def downgrade_to(engine: Engine, revision: str) -> None:
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), revision)


def store_as_older_sourced(engine: Engine, revision: str) -> None:
    """A document with a restricted twin, their chunks (and SQLite full-text rows), a handled event, a reader's
    two verdicts on one reply and, from 0002, a stored vector."""
    sqlite = engine.dialect.name == "sqlite"
    with engine.begin() as connection:
        for doc_id, role in (("parking", "everyone"), ("bonus", "finance")):
            connection.execute(text(
                "INSERT INTO documents (doc_id, source_path, title, owner, file_sha256, supersedes, ingested_at) "
                "VALUES (:doc, :path, :title, '#owners', :sha, '[]', :at)"),
                {"doc": doc_id, "path": f"{doc_id}.md", "title": doc_id.title(), "sha": "0" * 64,
                 "at": NOW.replace(tzinfo=None) if sqlite else NOW})
            connection.execute(text("INSERT INTO document_roles (doc_id, role) VALUES (:doc, :role)"),
                               {"doc": doc_id, "role": role})
        chunks = (("parking#permits", "parking", "Parking > Permits", "A parking permit costs 40 dollars.", 1),
                  ("bonus#rules", "bonus", "Bonus > Rules", "The bonus is paid in March.", 2))
        for chunk_id, doc_id, heading, body, rowid in chunks:
            connection.execute(text(
                "INSERT INTO chunks (chunk_id, doc_id, ordinal, heading, text, content_hash, fts_rowid) "
                "VALUES (:id, :doc, 0, :heading, :body, :hash, :rowid)"),
                {"id": chunk_id, "doc": doc_id, "heading": heading, "body": body, "hash": "1" * 64,
                 "rowid": rowid if sqlite else None})
            if sqlite:
                connection.execute(text("INSERT INTO chunks_fts (rowid, chunk_id, body) VALUES (:rowid, :id, :body)"),
                                   {"rowid": rowid, "id": chunk_id, "body": "parking permit cost 40 dollar"
                                    if doc_id == "parking" else "bonus paid march"})
        handled = ", done_at" if revision == "0004_postgres_index" else ""  # 0004 marks handled events itself
        connection.execute(text(f"INSERT INTO processed_events (event_id, received_at{handled}) "
                                f"VALUES ('Ev1', :at{handled.replace(', ', ', :')})"),
                           {"at": NOW.replace(tzinfo=None) if sqlite else NOW,
                            "done_at": NOW.replace(tzinfo=None) if sqlite else NOW})
        for verdict, minutes in (("not_helpful", 0), ("helpful", 5)):
            at = NOW + timedelta(minutes=minutes)
            connection.execute(text("INSERT INTO feedback (correlation_id, user_ref, verdict, at) "
                                    "VALUES ('c-1', 'U1', :verdict, :at)"),
                               {"verdict": verdict, "at": at.replace(tzinfo=None) if sqlite else at})
        if revision in {"0002", "0003", "0004_postgres_index"}:
            connection.execute(text(
                "INSERT INTO chunk_embeddings (chunk_id, model, dim, vector, content_hash) "
                "VALUES ('parking#permits', 'old-model', 2, :vector, :hash)"), {"vector": b"\0" * 8, "hash": "1" * 64})


@pytest.mark.parametrize("start", EARLIER, ids=lambda revision: f"from-{revision or 'nothing'}")
def test_an_upgrade_from_an_earlier_revision_keeps_the_data_and_the_search_works(database_url: str,
                                                                                  start: str | None) -> None:
    engine = make_engine(database_url)
    try:
        if start is not None:
            upgrade_to(engine, start)
            store_as_older_sourced(engine, start)
        migrate(engine)
        assert current_revision(engine) == head_revision()
        if start is None:
            return
        with engine.connect() as connection:
            done = connection.execute(text("SELECT done_at FROM processed_events WHERE event_id = 'Ev1'")).scalar()
            documents = connection.execute(text("SELECT count(*) FROM documents")).scalar()
            verdicts = connection.execute(text("SELECT verdict FROM feedback WHERE correlation_id = 'c-1'")).all()
        assert [verdict for (verdict,) in verdicts] == ["helpful"], "a reader's newest verdict on a reply counts"
        assert done is not None, "an event handled before the upgrade must not be taken for an abandoned one"
        assert documents == 2
        staff = build_index(engine, None).search("how much is a parking permit?", audience=STAFF, limit=5)
        assert [chunk.chunk_id for chunk in staff] == ["parking#permits"]
        assert build_index(engine, None).search("when is the bonus paid?", audience=STAFF, limit=5) == []
    finally:
        engine.dispose()


def test_postgres_gives_chunks_stored_before_the_upgrade_their_audience_class_terms_and_counts(
        database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        if engine.dialect.name != "postgresql":
            pytest.skip("the audience classes and term counts are PostgreSQL's")
        upgrade_to(engine, "0002")
        store_as_older_sourced(engine, "0002")
        migrate(engine)
        with engine.connect() as connection:
            classes = {tuple(roles): (chunks, tokens) for roles, chunks, tokens in connection.execute(
                text("SELECT roles, chunks, tokens FROM audience_classes"))}
            keyed = connection.execute(text("SELECT count(*) FROM chunks WHERE audience_key IS NULL")).scalar()
            permits = connection.execute(text("SELECT sum(chunks) FROM class_terms WHERE term = 'permit'")).scalar()
        # "Parking > Permits" and "A parking permit costs 40 dollars.", stopwords included: 8 terms; the bonus
        # chunk's 8, each in its own class.
        assert classes == {("everyone",): (1, 8), ("finance",): (1, 8)}
        assert keyed == 0
        assert permits == 1
    finally:
        engine.dispose()


def test_downgrading_to_the_previous_revision_and_back_works(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        migrate(engine)
        downgrade_to(engine, "0004_postgres_index")
        assert "chunk_id" not in {column["name"] for column in inspect(engine).get_columns("feedback")}
        downgrade_to(engine, "0003")
        assert current_revision(engine) == "0003"
        columns = {column["name"] for column in inspect(engine).get_columns("processed_events")}
        assert "lease_until" not in columns
        migrate(engine)
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()


def test_decisions_stored_before_presented_kinds_present_as_the_refusal_absence_would_have_given(
        database_url: str) -> None:
    engine = make_engine(database_url)
    sqlite = engine.dialect.name == "sqlite"
    decisions = {  # correlation id: (true kind, detail, retrieved)
        "absent": ("not_in_corpus", None, "[]"),
        "hidden": ("not_permitted", None, "[]"),
        "hidden-self-refusal": ("not_permitted", "model reported found=false", '[{"chunk_id": "a", "score": 0.4}]'),
        "hidden-weak": ("not_permitted", "no statement answers", '[{"chunk_id": "a", "score": 0.1}]'),
        "hidden-strong": ("not_permitted", "no statement answers", '[{"chunk_id": "a", "score": 0.5}]'),
    }
    try:
        upgrade_to(engine, "0005_feedback_on_closest")
        with engine.begin() as connection:
            for correlation_id, (kind, detail, retrieved) in decisions.items():
                connection.execute(text(
                    "INSERT INTO audit_events (correlation_id, at, user_ref, question_sha256, question_preview, "
                    "kind, retrieved, cited, claim_map, latency_ms, detail) VALUES (:id, :at, 'U1', :sha, 'q…', "
                    ":kind, :retrieved, '[]', '[]', 1.0, :detail)"),
                    {"id": correlation_id, "at": NOW.replace(tzinfo=None) if sqlite else NOW, "sha": "2" * 64,
                     "kind": kind, "retrieved": retrieved, "detail": detail})
        migrate(engine)
        with engine.connect() as connection:
            presented = dict(connection.execute(text(
                "SELECT correlation_id, presented_kind FROM audit_events WHERE audience IS NULL")).all())
        assert presented == {"absent": "not_in_corpus", "hidden": "not_in_corpus",
                             "hidden-self-refusal": "model_self_refusal", "hidden-weak": "not_retrieved",
                             "hidden-strong": "not_in_corpus"}
        downgrade_to(engine, "0005_feedback_on_closest")
        assert "presented_kind" not in {column["name"] for column in inspect(engine).get_columns("audit_events")}
    finally:
        engine.dispose()
