"""Retrieval: loading the knowledge base, chunking it, ingesting it, and searching it (SQLite FTS5 with vectors in
memory, or the same BM25 on PostgreSQL with pgvector)."""

from core.retrieval.chunking import ChunkDraft, chunk_document
from core.retrieval.index import IndexUnavailable, SqliteIndex
from core.retrieval.ingest import Ingestor, IngestReport
from core.retrieval.knowledge_base import LoadError, LoadResult, SourceDocument, load_knowledge_base

__all__ = [
    "ChunkDraft",
    "IndexUnavailable",
    "IngestReport",
    "Ingestor",
    "LoadError",
    "LoadResult",
    "SourceDocument",
    "SqliteIndex",
    "chunk_document",
    "load_knowledge_base",
]
