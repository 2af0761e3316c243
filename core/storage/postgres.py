"""What only PostgreSQL has: the weighted full-text column, pgvector's table and its indexes.

Full text. `chunks.search_vector` is a generated column, `setweight(to_tsvector('english', heading), 'A') ||
setweight(to_tsvector('english', text), 'B')`, kept current by PostgreSQL itself on every insert, so ingestion
writes chunks the same way on both databases. A GIN index serves `@@`.

Vectors. pgvector's `vector` type needs the extension, which many servers lack (the PostgreSQL 15 of this
machine does). The migration creates what follows only where the extension can be had, and
`ensure_vector_schema` creates it later (idempotently) when pgvector has been installed since; Sourced refuses
to start with an embedder on a database that has none (`PgvectorMissing`).

`chunk_vectors` holds one vector per chunk, partitioned by the chunk's *audience class*: the set of roles of its
document (`audience_key`). Every party of an audience either may see all of a class or none of it, so a question
searches only the partitions its audience may see, and each partition has its own HNSW graph, built from the
vectors of that class alone. The nearest neighbours an audience gets therefore never depend on a document it
may not see: not through a filter applied after the graph walk (which returns fewer than asked), nor through
graph edges that pass through hidden vectors (with which an approximate search finds different neighbours).
The HNSW index is an expression index per dimension (`embedding::vector(384)` for the bundled MiniLM), partial
on `dim`, so vectors of another embedder's dimension can live beside them while a model is switched.
"""

import hashlib
import re
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Final

from sqlalchemy import Connection, Engine, create_engine, text
from sqlalchemy.engine import make_url

from core.storage.database import MIGRATION_LOCK_KEY

MINILM_DIMENSION: Final = 384
"""Created by the migration; another embedder's dimension gets its index at start (`ensure_vector_schema`)."""
PGVECTOR_MINIMUM: Final = (0, 8)
"""Iterative index scans (`hnsw.iterative_scan`) came with pgvector 0.8."""
VECTOR_TABLE: Final = "chunk_vectors"
AUDIENCE_TABLE: Final = "audience_classes"

ADD_SEARCH_VECTOR: Final = """
ALTER TABLE chunks ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english'::regconfig, heading), 'A') ||
    setweight(to_tsvector('english'::regconfig, text), 'B')) STORED"""
CREATE_SEARCH_INDEX: Final = "CREATE INDEX ix_chunks_search_vector ON chunks USING gin (search_vector)"

_CREATE_VECTOR_TABLES: Final = (
    f"""CREATE TABLE IF NOT EXISTS {AUDIENCE_TABLE} (
        audience_key text PRIMARY KEY,
        roles text[] NOT NULL)""",
    f"""CREATE TABLE IF NOT EXISTS {VECTOR_TABLE} (
        chunk_id varchar NOT NULL REFERENCES chunks (chunk_id) ON DELETE CASCADE,
        audience_key text NOT NULL,
        model varchar NOT NULL,
        dim integer NOT NULL,
        embedding vector NOT NULL,
        CONSTRAINT pk_{VECTOR_TABLE} PRIMARY KEY (audience_key, chunk_id)
    ) PARTITION BY LIST (audience_key)""",
    f"CREATE INDEX IF NOT EXISTS ix_{VECTOR_TABLE}_chunk_id ON {VECTOR_TABLE} (chunk_id)",
)
_KEY: Final = re.compile(r"[0-9a-f]{32}")


class PgvectorMissing(RuntimeError):
    """The database has no pgvector, and the configured embedder needs it. The message is one line."""


def installed_pgvector(connection: Connection) -> str | None:
    """The version of pgvector installed in this database, or None."""
    return connection.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).scalar()


def pgvector_available(connection: Connection) -> str | None:
    """The version of pgvector this server could install, or None."""
    return connection.execute(
        text("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")).scalar()


def vector_schema_ready(connection: Connection) -> bool:
    return connection.execute(text("SELECT to_regclass(:name)"), {"name": VECTOR_TABLE}).scalar() is not None


def create_vector_schema(connection: Connection, *, dimension: int = MINILM_DIMENSION) -> None:
    """The extension, the partitioned vector table and its HNSW index for `dimension`. Idempotent."""
    connection.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
    for statement in _CREATE_VECTOR_TABLES:
        connection.execute(text(statement))
    ensure_dimension_index(connection, dimension)


def ensure_dimension_index(connection: Connection, dimension: int) -> None:
    """HNSW (cosine) over the vectors of one dimension, on every partition present and to come."""
    dim = int(dimension)
    connection.execute(text(
        f"CREATE INDEX IF NOT EXISTS ix_{VECTOR_TABLE}_hnsw_{dim} ON {VECTOR_TABLE} "
        f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) WHERE dim = {dim}"))


def drop_vector_schema(connection: Connection) -> None:
    connection.execute(text(f"DROP TABLE IF EXISTS {VECTOR_TABLE} CASCADE"))
    connection.execute(text(f"DROP TABLE IF EXISTS {AUDIENCE_TABLE}"))


def prepare_vectors(engine: Engine) -> None:
    """At start with an embedder: the vector schema ready (created if pgvector was installed since the migration),
    or `PgvectorMissing`. Serialised with migrations, so workers starting together create it once."""
    with engine.begin() as connection:
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
        require_pgvector(connection, database=engine.url.render_as_string(hide_password=True))


def require_pgvector(connection: Connection, *, database: str) -> None:
    """Make the vector schema ready, or raise `PgvectorMissing` saying what to do."""
    version = installed_pgvector(connection) or pgvector_available(connection)
    if version is None:
        raise PgvectorMissing(
            f"{database} has no pgvector (the extension 'vector' is not available on this server); install "
            "pgvector 0.8 or later, or set SOURCED_EMBEDDER=none for full-text search alone")
    if _version(version) < PGVECTOR_MINIMUM:
        raise PgvectorMissing(f"{database} has pgvector {version}; Sourced needs 0.8 or later "
                              "(iterative index scans): ALTER EXTENSION vector UPDATE")
    if not vector_schema_ready(connection):
        create_vector_schema(connection)


def _version(text_version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text_version)[:2])


def audience_key(roles: Iterable[str]) -> str:
    """The audience class of a document: a digest of its sorted roles (a role may contain any character)."""
    return hashlib.md5("\x1f".join(sorted(set(roles))).encode("utf-8"), usedforsecurity=False).hexdigest()


def ensure_audience_classes(connection: Connection, role_sets: Iterable[frozenset[str]]) -> None:
    """A partition of `chunk_vectors` for each audience class not seen before.

    Creating a partition locks the vector table until the transaction ends; it happens once per new
    combination of roles, inside the ingestion of the first document that has it."""
    for roles in {frozenset(r) for r in role_sets}:
        key = audience_key(roles)
        created = connection.execute(
            text(f"INSERT INTO {AUDIENCE_TABLE} (audience_key, roles) VALUES (:key, :roles) "
                 "ON CONFLICT DO NOTHING RETURNING audience_key"),
            {"key": key, "roles": sorted(roles)}).first()
        if created is not None:
            connection.execute(text(f"CREATE TABLE IF NOT EXISTS {partition_name(key)} PARTITION OF "
                                    f"{VECTOR_TABLE} FOR VALUES IN ('{key}')"))


def partition_name(key: str) -> str:
    if not _KEY.fullmatch(key):  # the key is spliced into DDL: only ever a digest of ours
        raise ValueError(f"not an audience key: {key!r}")
    return f"{VECTOR_TABLE}_{key[:16]}"


def audience_classes(connection: Connection) -> list[tuple[str, frozenset[str]]]:
    """Every audience class: its key and its roles."""
    rows = connection.execute(text(f"SELECT audience_key, roles FROM {AUDIENCE_TABLE}")).all()
    return [(key, frozenset(roles)) for key, roles in rows]


def vector_literal(vector: Sequence[float]) -> str:
    """pgvector's text form, sent as a parameter and cast in SQL: no client-side type registration needed.
    Nine significant digits give back the same float32."""
    return "[" + ",".join(f"{float(value):.9g}" for value in vector) + "]"


_CHUNK_ROLES: Final = text("""
SELECT c.chunk_id, array_agg(r.role) AS roles
FROM chunks AS c JOIN document_roles AS r ON r.doc_id = c.doc_id
WHERE c.chunk_id = ANY(:ids) GROUP BY c.chunk_id""")


def write_pgvectors(connection: Connection, *, model: str, vectors: Sequence[tuple[str, Sequence[float]]]) -> None:
    """Put (chunk id, vector) pairs into `chunk_vectors`, each in the partition of its document's audience class,
    replacing what the chunks had. The chunks and their documents' roles must already be written."""
    if not vectors:
        return
    ids = [chunk_id for chunk_id, _ in vectors]
    roles = {chunk_id: frozenset(chunk_roles) for chunk_id, chunk_roles in connection.execute(_CHUNK_ROLES,
                                                                                            {"ids": ids})}
    ensure_audience_classes(connection, roles.values())
    for dim in {len(vector) for _, vector in vectors}:
        if connection.execute(text("SELECT to_regclass(:name)"),
                              {"name": f"ix_{VECTOR_TABLE}_hnsw_{int(dim)}"}).scalar() is None:
            ensure_dimension_index(connection, dim)
    connection.execute(text(f"DELETE FROM {VECTOR_TABLE} WHERE chunk_id = ANY(:ids)"), {"ids": ids})
    rows = [{"chunk_id": chunk_id, "key": audience_key(roles[chunk_id]), "model": model, "dim": len(vector),
             "embedding": vector_literal(vector)} for chunk_id, vector in vectors if chunk_id in roles]
    if rows:  # a chunk missing here was removed meanwhile: its vector has nothing to point at
        connection.execute(text(f"INSERT INTO {VECTOR_TABLE} (chunk_id, audience_key, model, dim, embedding) "
                                "VALUES (:chunk_id, :key, :model, :dim, CAST(:embedding AS vector))"), rows)


@contextmanager
def scratch_database(server_url: str, *, prefix: str) -> Iterator[str]:
    """A new, empty database on the server of `server_url`, dropped afterwards (needs CREATEDB): for the
    evaluation and the benchmark, which must not mix their documents with anyone's."""
    url = make_url(server_url)
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield url.set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as connection:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()
