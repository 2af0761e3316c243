"""Alembic migrations, shipped as package data so an installed Sourced can migrate without alembic.ini."""


def include_name(name: str | None, type_: str, _parent_names: object) -> bool:
    """What autogenerate compares: not the FTS5 virtual tables and their shadow tables (`chunks_fts_data`,
    ...), which it cannot reflect; the revisions create those by hand, on SQLite only."""
    return not (type_ == "table" and name is not None and name.startswith("chunks_fts"))
