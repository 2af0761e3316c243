"""Alembic migrations, shipped as package data so an installed Sourced can migrate without alembic.ini."""

from typing import Final

BACKEND_ONLY_TABLES: Final = ("chunks_fts", "chunk_vectors", "chunk_terms", "audience_classes", "class_terms")
BACKEND_ONLY_COLUMNS: Final = frozenset({"audience_key"})


def include_name(name: str | None, type_: str, _parent_names: object) -> bool:
    """What autogenerate compares: not what one database alone has, which the revisions create by hand and the
    models do not declare: the FTS5 virtual tables and their shadow tables (`chunks_fts_data`, ...) on SQLite,
    the audience-class column and the tables of chunk terms, audience classes and vectors on PostgreSQL."""
    if name is None:
        return True
    if type_ == "table":
        return not name.startswith(BACKEND_ONLY_TABLES)
    if type_ == "column":
        return name not in BACKEND_ONLY_COLUMNS
    return True
