"""Writing chunk vectors, on either database, in the caller's transaction.

`chunk_embeddings` records, for every chunk, the model that embedded it and the content hash it embedded: what
decides whether it must be embedded again. On SQLite it also holds the vector (float32 bytes), which the
in-memory vector search loads. On PostgreSQL the vector is stored once, in pgvector's `chunk_vectors`
(`core.storage.postgres`), which the database searches itself; the bytes column is left empty there.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, Engine, delete, insert, select, text

from core.storage.postgres import VECTOR_TABLE, write_pgvectors
from core.storage.tables import ChunkEmbeddingRow


@dataclass(frozen=True, kw_only=True)
class ChunkVector:
    chunk_id: str
    content_hash: str
    vector: npt.NDArray[np.float32]


def store_vectors(connection: Connection, *, model: str, vectors: Sequence[ChunkVector]) -> None:
    """Replace these chunks' vectors with `model`'s."""
    if not vectors:
        return
    in_database = connection.dialect.name == "postgresql"
    connection.execute(delete(ChunkEmbeddingRow).where(
        ChunkEmbeddingRow.chunk_id.in_([row.chunk_id for row in vectors])))
    connection.execute(insert(ChunkEmbeddingRow), [
        {"chunk_id": row.chunk_id, "model": model, "dim": int(row.vector.shape[0]), "content_hash": row.content_hash,
         "vector": b"" if in_database else row.vector.astype("<f4").tobytes()}
        for row in vectors])
    if in_database:
        write_pgvectors(connection, model=model, vectors=[(row.chunk_id, row.vector.tolist()) for row in vectors])


def read_vectors(engine: Engine, *, model: str, chunk_ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
    """The stored vectors of `model` for these chunks (those it has), to be written again unchanged when their
    document is replaced but they are not."""
    if not chunk_ids:
        return {}
    with engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            rows = connection.execute(text(f"SELECT chunk_id, CAST(embedding AS text) FROM {VECTOR_TABLE} "
                                           "WHERE model = :model AND chunk_id = ANY(:ids)"),
                                      {"model": model, "ids": list(chunk_ids)}).all()
            return {chunk_id: np.array(json.loads(literal), dtype=np.float32) for chunk_id, literal in rows}
        rows = connection.execute(select(ChunkEmbeddingRow.chunk_id, ChunkEmbeddingRow.vector)
                                  .where(ChunkEmbeddingRow.model == model,
                                         ChunkEmbeddingRow.chunk_id.in_(list(chunk_ids)))).all()
    return {chunk_id: np.frombuffer(vector, dtype="<f4").astype(np.float32) for chunk_id, vector in rows if vector}
