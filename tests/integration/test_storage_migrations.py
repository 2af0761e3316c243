"""The schema comes from the migrations alone, is the one the models describe, and migrating is idempotent."""

from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect

from core.storage import current_revision, head_revision, make_engine, migrate
from core.storage.migrations import include_name
from core.storage.tables import Base

TABLES = {"documents", "document_roles", "chunks", "audit_events", "processed_events", "feedback",
          "pending_clarifications", "chunk_embeddings", "conversation_turns", "connector_state",
          "source_group_members", "connector_item_failures", "audience_changes"}


def test_migrating_creates_every_table_and_records_the_head_revision(engine: Engine) -> None:
    assert set(inspect(engine).get_table_names()) >= TABLES
    assert current_revision(engine) == head_revision() == "0013_postgres_bm25"


def test_migrating_again_changes_nothing(engine: Engine) -> None:
    before = set(inspect(engine).get_table_names())
    migrate(engine)
    migrate(engine)
    assert set(inspect(engine).get_table_names()) == before
    assert current_revision(engine) == head_revision()


def test_the_migrated_schema_matches_the_models(engine: Engine) -> None:
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"include_name": include_name,
                                                                "compare_type": True})
        differences = compare_metadata(context, Base.metadata)
    assert differences == []


def test_each_database_has_its_own_full_text_tables(engine: Engine) -> None:
    tables = set(inspect(engine).get_table_names())
    sqlite, postgres = {"chunks_fts", "chunks_fts_vocab"}, {"chunk_terms", "class_terms", "audience_classes"}
    assert tables & (sqlite | postgres) == (sqlite if engine.dialect.name == "sqlite" else postgres)


def test_a_database_never_migrated_has_no_revision(database_url: str) -> None:
    fresh = make_engine(database_url)
    try:
        assert current_revision(fresh) is None
    finally:
        fresh.dispose()


def test_workers_starting_together_all_migrate_without_error(database_url: str) -> None:
    workers = 8
    start = Barrier(workers)

    def start_worker(_: int) -> str | None:
        engine = make_engine(database_url)
        try:
            start.wait()
            migrate(engine)
            return current_revision(engine)
        finally:
            engine.dispose()

    with ThreadPoolExecutor(max_workers=workers) as pool:
        assert list(pool.map(start_worker, range(workers))) == [head_revision()] * workers
