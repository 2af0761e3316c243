"""Alembic migrations, shipped as package data so an installed Sourced can migrate without alembic.ini."""

from typing import Final

BACKEND_ONLY_TABLES: Final = ("chunks_fts", "chunk_vectors", "audience_classes", "class_terms")
BACKEND_ONLY_COLUMNS: Final = frozenset({"search_vector", "audience_key"})
BACKEND_ONLY_INDEXES: Final = frozenset({"ix_chunks_search_vector"})


def include_name(name: str | None, type_: str, _parent_names: object) -> bool:
    """What autogenerate compares: not what one database alone has, which the revisions create by hand and the
    models do not declare: the FTS5 virtual tables and their shadow tables (`chunks_fts_data`, ...) on SQLite,
    the tsvector and audience-class columns, the GIN index and the tables of audience classes and vectors on
    PostgreSQL."""
    if name is None:
        return True
    if type_ == "table":
        return not name.startswith(BACKEND_ONLY_TABLES)
    if type_ == "column":
        return name not in BACKEND_ONLY_COLUMNS
    if type_ == "index":
        return name not in BACKEND_ONLY_INDEXES
    return True
