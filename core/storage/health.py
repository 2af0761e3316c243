"""What `sourced doctor` reads of the database, as values: the index's size and age, the chunks' text (for lines
addressed to assistants), and how many chunks have a current vector. The checks and their wording are in
`core.diagnosis`; the SQL stays here, beside the tables."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, func, select, text

from core.storage.tables import ChunkEmbeddingRow, ChunkRow, DocumentRow

TEXT_BATCH = 2000
"""Chunks read per round trip when every chunk's text is walked."""


@dataclass(frozen=True, kw_only=True)
class IndexSize:
    documents: int
    chunks: int
    last_ingest: datetime | None


def index_size(engine: Engine) -> IndexSize:
    with engine.connect() as connection:
        documents = connection.execute(select(func.count()).select_from(DocumentRow)).scalar_one()
        chunks = connection.execute(select(func.count()).select_from(ChunkRow)).scalar_one()
        last = connection.execute(select(func.max(DocumentRow.ingested_at))).scalar_one()
    return IndexSize(documents=int(documents), chunks=int(chunks), last_ingest=last)


def chunk_texts(engine: Engine) -> Iterator[tuple[str, str]]:
    """Every chunk's document id and text, streamed."""
    with engine.connect() as connection:
        for doc_id, chunk_text in connection.execute(select(ChunkRow.doc_id, ChunkRow.text)).yield_per(TEXT_BATCH):
            yield str(doc_id), str(chunk_text)


def stored_vectors(connection: Connection) -> int:
    """Rows of PostgreSQL's `chunk_vectors` (pgvector), once its table exists."""
    return int(connection.execute(text("SELECT count(*) FROM chunk_vectors")).scalar_one())


def embedded_chunks(engine: Engine, model_id: str) -> tuple[int, int]:
    """Chunks with a current vector of this model (of their present text), and all chunks."""
    with engine.connect() as connection:
        embedded = connection.execute(
            select(func.count()).select_from(ChunkEmbeddingRow)
            .join(ChunkRow, ChunkRow.chunk_id == ChunkEmbeddingRow.chunk_id)
            .where(ChunkEmbeddingRow.model == model_id,
                   ChunkEmbeddingRow.content_hash == ChunkRow.content_hash)).scalar_one()
        chunks = connection.execute(select(func.count()).select_from(ChunkRow)).scalar_one()
    return int(embedded), int(chunks)
