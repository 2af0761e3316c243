"""Equal scores are ordered the same way on PostgreSQL and SQLite: by chunk id in code point order, whatever the
order the chunks were ingested in and whatever the database's collation (issue 56: one question, two answers)."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from core.domain import Audience, Party
from core.retrieval.index import SqliteIndex
from core.retrieval.ingest import Ingestor
from core.retrieval.postgres_index import PostgresIndex
from core.storage import make_engine

STAFF = Audience(parties=(Party(),))
SECTION = "Lockers on the second floor are emptied every Friday evening."
# File names sort opposite to the ids, so ingestion order is not id order; "a-c" sorts before "ab" by code point
# and after it under a language collation such as en_US, which ignores the hyphen at first.
FILES = {"1.md": "zz-lockers", "2.md": "ab", "3.md": "a-c", "4.md": "Lockers", "5.md": "a_b"}


def write_kb(root: Path) -> Path:
    root.mkdir()
    for name, doc_id in FILES.items():
        (root / name).write_text(f"---\nid: {doc_id}\ntitle: Lockers\n---\n# Lockers\n\n## Rule\n{SECTION}\n",
                                 encoding="utf-8")
    return root


@pytest.fixture
def postgres(pgvector_url: str) -> Iterator[Engine]:
    engine = make_engine(pgvector_url)
    yield engine
    engine.dispose()


def test_equal_scores_come_in_chunk_id_order_on_both_databases(sqlite_engine: Engine, postgres: Engine,
                                                               tmp_path: Path) -> None:
    kb = write_kb(tmp_path / "kb")
    for engine in (sqlite_engine, postgres):
        assert not Ingestor(engine, progress=False).ingest(kb).errors
    indexes = {"sqlite": SqliteIndex(sqlite_engine), "postgres": PostgresIndex(postgres)}

    for limit in (5, 3, 1):  # the top-k cut falls among the tied chunks: the same ones are kept
        found = {name: index.search("when are lockers emptied?", audience=STAFF, limit=limit)
                 for name, index in indexes.items()}
        for chunks in found.values():
            assert len({chunk.score for chunk in chunks}) == 1  # all tied
        chunk_ids = {name: [chunk.chunk_id for chunk in chunks] for name, chunks in found.items()}
        every = sorted(chunk.chunk_id for chunk in indexes["sqlite"].search("lockers", audience=STAFF, limit=10))
        assert chunk_ids["sqlite"] == chunk_ids["postgres"] == every[:limit]
