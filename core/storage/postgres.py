"""What only PostgreSQL has: the chunks' index terms, audience classes, pgvector's table and its indexes.

Full text. `chunk_terms` holds each chunk's index terms as SQLite's FTS5 index holds them (`core.text`'s stems of
the heading path and the text, stopwords included): each distinct term once with how often it occurs (`terms`,
`counts`), and the chunk's length in terms, written by ingestion with the chunk (`write_chunk_terms`). A GIN index
on `terms` finds the chunks having any of a question's terms; the search computes SQLite's BM25 from these
(`core.retrieval.postgres_index`), so both databases score with the same terms and the same numbers.

Audience classes. A document's *audience class* is the set of its roles; every party of an audience either may
see all the documents of a class or none of them. A trigger gives every chunk, as it is inserted, the key of its
document's class (`chunks.audience_key`, an MD5 of the sorted roles) and records the class (`audience_classes`:
key and roles). A search turns its audience into the keys it may see (`core.domain.is_visible` over the classes,
a handful of rows) and filters chunks by key: one comparison per row instead of a join with the roles.
Ingestion always writes a document's roles before its chunks, in the same transaction, and replaces the chunks
whenever the roles change, so the key is current; the passages a search returns are checked against the roles
once more all the same.

Statistics per class. BM25 counts the rows an audience may see, their terms, and how many of them have each
term. Statement triggers on `chunk_terms`, in the writing transaction, keep per class its chunks and their terms
in total (`audience_classes.chunks`, `.tokens`) and per class and term how many chunks have it (`class_terms`).
Summed over the classes an audience may see, they are the statistics of *that audience's* rows, read in a few
lookups: what FTS5 would count on a knowledge base holding only what the audience may see.

Vectors. pgvector's `vector` type needs the extension, which many servers lack (the PostgreSQL 15 of this
machine does). The migration creates what follows only where the extension can be had; `prepare_vectors`
creates it later (idempotently) when pgvector has been installed since, and refuses to start with an embedder on
a database that has none (`PgvectorMissing`).

`chunk_vectors` holds one vector per chunk, partitioned by audience class, so a question searches only the
partitions its audience may see, and each partition has its own HNSW graph, built from the vectors of that class
alone. The nearest neighbours an audience gets therefore never depend on a document it may not see: not through
a filter applied after the graph walk (which returns fewer than asked), nor through graph edges that pass
through hidden vectors (with which an approximate search finds different neighbours). The HNSW index is an
expression index per dimension (`embedding::vector(384)` for the bundled MiniLM), partial on `dim`, so vectors of
another embedder's dimension can live beside them while a model is switched.
"""

import re
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Final

from sqlalchemy import Connection, Engine, create_engine, text
from sqlalchemy.engine import make_url

from core.domain.errors import OperatorError
from core.storage.database import MIGRATION_LOCK_KEY

MINILM_DIMENSION: Final = 384
"""Indexed by the migration; another embedder's dimension gets its index with its first vectors."""
PGVECTOR_MINIMUM: Final = (0, 8)
"""Iterative index scans (`hnsw.iterative_scan`) came with pgvector 0.8."""
VECTOR_TABLE: Final = "chunk_vectors"
AUDIENCE_TABLE: Final = "audience_classes"
TERM_TABLE: Final = "class_terms"

CHUNK_TERMS_TABLE: Final = "chunk_terms"

AUDIENCE_SCHEMA: Final = (
    f"CREATE TABLE {AUDIENCE_TABLE} (audience_key text PRIMARY KEY, roles text[] NOT NULL)",
    "ALTER TABLE chunks ADD COLUMN audience_key text",
    # The roles sorted by code point (COLLATE "C"), joined by the unit separator: any role name is safe.
    f"""CREATE FUNCTION sourced_chunk_audience() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        class_roles text[];
    BEGIN
        SELECT array_agg(role ORDER BY role COLLATE "C") INTO class_roles
        FROM document_roles WHERE doc_id = NEW.doc_id;
        NEW.audience_key := md5(array_to_string(class_roles, chr(31)));
        IF NEW.audience_key IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM {AUDIENCE_TABLE} WHERE audience_key = NEW.audience_key) THEN
            INSERT INTO {AUDIENCE_TABLE} (audience_key, roles) VALUES (NEW.audience_key, class_roles)
            ON CONFLICT DO NOTHING;
        END IF;
        RETURN NEW;
    END $$""",
    "CREATE TRIGGER chunks_audience_class BEFORE INSERT ON chunks FOR EACH ROW "
    "EXECUTE FUNCTION sourced_chunk_audience()",
    # Chunks stored before revision 0004: the same key, computed in one statement.
    """UPDATE chunks AS c SET audience_key = k.audience_key FROM (
        SELECT doc_id, md5(array_to_string(array_agg(role ORDER BY role COLLATE "C"), chr(31))) AS audience_key
        FROM document_roles GROUP BY doc_id) AS k WHERE k.doc_id = c.doc_id""",
    f"""INSERT INTO {AUDIENCE_TABLE} (audience_key, roles)
        SELECT DISTINCT ON (k.audience_key) k.audience_key, k.roles FROM (
            SELECT md5(array_to_string(array_agg(role ORDER BY role COLLATE "C"), chr(31))) AS audience_key,
                   array_agg(role ORDER BY role COLLATE "C") AS roles
            FROM document_roles GROUP BY doc_id) AS k
        ON CONFLICT DO NOTHING""",
)
"""Revision 0004's audience classes, current."""
DROP_AUDIENCE_SCHEMA: Final = (
    "DROP TRIGGER IF EXISTS chunks_audience_class ON chunks",
    "DROP FUNCTION IF EXISTS sourced_chunk_audience()",
    "ALTER TABLE chunks DROP COLUMN IF EXISTS audience_key",
    f"DROP TABLE IF EXISTS {AUDIENCE_TABLE}",
)
TSVECTOR_SCHEMA: Final = (
    """ALTER TABLE chunks ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english'::regconfig, heading), 'A') ||
        setweight(to_tsvector('english'::regconfig, text), 'B')) STORED""",
    "CREATE INDEX ix_chunks_search_vector ON chunks USING gin (search_vector)",
    f"""CREATE TABLE {TERM_TABLE} (
        audience_key text NOT NULL,
        lexeme text NOT NULL,
        chunks integer NOT NULL,
        CONSTRAINT pk_{TERM_TABLE} PRIMARY KEY (lexeme, audience_key))
        WITH (fillfactor = 50)""",
    f"""CREATE FUNCTION sourced_count_terms() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            INSERT INTO {TERM_TABLE} (audience_key, lexeme, chunks)
            SELECT n.audience_key, t.lexeme, count(*) FROM inserted AS n,
                   unnest(tsvector_to_array(n.search_vector)) AS t(lexeme)
            WHERE n.audience_key IS NOT NULL GROUP BY 1, 2 ORDER BY 2, 1
            ON CONFLICT (lexeme, audience_key) DO UPDATE SET chunks = {TERM_TABLE}.chunks + EXCLUDED.chunks;
        ELSIF EXISTS (SELECT 1 FROM deleted) THEN
            UPDATE {TERM_TABLE} AS k SET chunks = k.chunks - d.chunks FROM (
                SELECT o.audience_key, t.lexeme, count(*) AS chunks FROM deleted AS o,
                       unnest(tsvector_to_array(o.search_vector)) AS t(lexeme)
                WHERE o.audience_key IS NOT NULL GROUP BY 1, 2) AS d
            WHERE k.audience_key = d.audience_key AND k.lexeme = d.lexeme;
        END IF;
        RETURN NULL;
    END $$""",
    "CREATE TRIGGER chunks_count_inserted AFTER INSERT ON chunks REFERENCING NEW TABLE AS inserted "
    "FOR EACH STATEMENT EXECUTE FUNCTION sourced_count_terms()",
    "CREATE TRIGGER chunks_count_deleted AFTER DELETE ON chunks REFERENCING OLD TABLE AS deleted "
    "FOR EACH STATEMENT EXECUTE FUNCTION sourced_count_terms()",
    f"""INSERT INTO {TERM_TABLE} (audience_key, lexeme, chunks)
        SELECT c.audience_key, t.lexeme, count(*) FROM chunks AS c,
               unnest(tsvector_to_array(c.search_vector)) AS t(lexeme)
        WHERE c.audience_key IS NOT NULL GROUP BY 1, 2""",
)
"""Revision 0004's full text (PostgreSQL's English stems in a weighted tsvector, ranked by `ts_rank`), replaced in
0013 by SQLite's terms and BM25; kept for the migrations that pass through 0004."""
DROP_TSVECTOR_SCHEMA: Final = (
    "DROP TRIGGER IF EXISTS chunks_count_deleted ON chunks",
    "DROP TRIGGER IF EXISTS chunks_count_inserted ON chunks",
    "DROP FUNCTION IF EXISTS sourced_count_terms()",
    f"DROP TABLE IF EXISTS {TERM_TABLE}",
    "DROP INDEX IF EXISTS ix_chunks_search_vector",
    "ALTER TABLE chunks DROP COLUMN IF EXISTS search_vector",
)
BM25_SCHEMA: Final = (
    f"ALTER TABLE {AUDIENCE_TABLE} ADD COLUMN chunks bigint NOT NULL DEFAULT 0, "
    "ADD COLUMN tokens bigint NOT NULL DEFAULT 0",
    f"""CREATE TABLE {CHUNK_TERMS_TABLE} (
        chunk_id varchar PRIMARY KEY REFERENCES chunks (chunk_id) ON DELETE CASCADE,
        audience_key text NOT NULL,
        terms text[] NOT NULL,
        counts integer[] NOT NULL,
        length integer NOT NULL)""",
    f"CREATE INDEX ix_{CHUNK_TERMS_TABLE}_terms ON {CHUNK_TERMS_TABLE} USING gin (terms)",
    f"""CREATE TABLE {TERM_TABLE} (
        audience_key text NOT NULL,
        term text NOT NULL,
        chunks integer NOT NULL,
        CONSTRAINT pk_{TERM_TABLE} PRIMARY KEY (term, audience_key))
        WITH (fillfactor = 50)""",  # room on each page, so a count's update stays on it (a HOT update)
    # Per statement, with the rows it inserted or deleted (a document's chunks, or their cascade from its delete):
    # one upsert per (class, term) of a document, and one update of its class's totals.
    f"""CREATE FUNCTION sourced_count_chunk_terms() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            INSERT INTO {TERM_TABLE} (audience_key, term, chunks)
            SELECT n.audience_key, t.term, count(*) FROM inserted AS n, unnest(n.terms) AS t(term)
            GROUP BY 1, 2 ORDER BY 2, 1
            ON CONFLICT (term, audience_key) DO UPDATE SET chunks = {TERM_TABLE}.chunks + EXCLUDED.chunks;
            UPDATE {AUDIENCE_TABLE} AS a SET chunks = a.chunks + n.chunks, tokens = a.tokens + n.tokens FROM (
                SELECT audience_key, count(*) AS chunks, sum(length) AS tokens FROM inserted GROUP BY 1) AS n
            WHERE a.audience_key = n.audience_key;
        ELSIF EXISTS (SELECT 1 FROM deleted) THEN
            UPDATE {TERM_TABLE} AS k SET chunks = k.chunks - d.chunks FROM (
                SELECT o.audience_key, t.term, count(*) AS chunks FROM deleted AS o, unnest(o.terms) AS t(term)
                GROUP BY 1, 2) AS d
            WHERE k.audience_key = d.audience_key AND k.term = d.term;
            UPDATE {AUDIENCE_TABLE} AS a SET chunks = a.chunks - o.chunks, tokens = a.tokens - o.tokens FROM (
                SELECT audience_key, count(*) AS chunks, sum(length) AS tokens FROM deleted GROUP BY 1) AS o
            WHERE a.audience_key = o.audience_key;
        END IF;
        RETURN NULL;
    END $$""",
    f"CREATE TRIGGER chunk_terms_counted_inserted AFTER INSERT ON {CHUNK_TERMS_TABLE} "
    "REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION sourced_count_chunk_terms()",
    f"CREATE TRIGGER chunk_terms_counted_deleted AFTER DELETE ON {CHUNK_TERMS_TABLE} "
    "REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION sourced_count_chunk_terms()",
)
"""Revision 0013's full text: the chunks' terms and the statistics of each audience class. The chunks stored
before it are given their terms by the revision (`write_chunk_terms`)."""
DROP_BM25_SCHEMA: Final = (
    f"DROP TABLE IF EXISTS {CHUNK_TERMS_TABLE}",
    "DROP FUNCTION IF EXISTS sourced_count_chunk_terms()",
    f"DROP TABLE IF EXISTS {TERM_TABLE}",
    f"ALTER TABLE {AUDIENCE_TABLE} DROP COLUMN IF EXISTS chunks, DROP COLUMN IF EXISTS tokens",
)
_CREATE_VECTOR_TABLE: Final = (
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


class PgvectorMissing(OperatorError, RuntimeError):
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


def create_vector_schema(connection: Connection) -> None:
    """The extension, the partitioned vector table and the MiniLM dimension's HNSW index. Idempotent."""
    connection.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
    for statement in _CREATE_VECTOR_TABLE:
        connection.execute(text(statement))
    ensure_dimension_index(connection, MINILM_DIMENSION)


def ensure_dimension_index(connection: Connection, dimension: int) -> None:
    """HNSW (cosine) over the vectors of one dimension, on every partition present and to come."""
    dim = int(dimension)
    name = f"ix_{VECTOR_TABLE}_hnsw_{dim}"
    if connection.execute(text("SELECT to_regclass(:name)"), {"name": name}).scalar() is None:
        connection.execute(text(f"CREATE INDEX IF NOT EXISTS {name} ON {VECTOR_TABLE} "
                                f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) WHERE dim = {dim}"))


def drop_vector_schema(connection: Connection) -> None:
    connection.execute(text(f"DROP TABLE IF EXISTS {VECTOR_TABLE} CASCADE"))


def prepare_vectors(engine: Engine) -> None:
    """At start with an embedder: the vector schema ready (created if pgvector was installed since the migration),
    or `PgvectorMissing`. Serialised with migrations, so workers starting together create it once."""
    with engine.begin() as connection:
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
        require_pgvector(connection, database=engine.url.render_as_string(hide_password=True))


def require_pgvector(connection: Connection, *, database: str) -> None:
    """Make the vector schema ready, or raise `PgvectorMissing` saying what to do."""
    problem = pgvector_problem(connection, database=database)
    if problem is not None:
        raise PgvectorMissing(problem)
    if not vector_schema_ready(connection):
        create_vector_schema(connection)


def pgvector_problem(connection: Connection, *, database: str) -> str | None:
    """Why vectors cannot be stored in this database, in one line; None when pgvector is there or can be."""
    version = installed_pgvector(connection) or pgvector_available(connection)
    if version is None:
        return (f"{database} has no pgvector (the extension 'vector' is not available on this server); install "
                "pgvector 0.8 or later, or set SOURCED_EMBEDDER=none for full-text search alone")
    if _version(version) < PGVECTOR_MINIMUM:
        return (f"{database} has pgvector {version}; Sourced needs 0.8 or later (iterative index scans): "
                "ALTER EXTENSION vector UPDATE")
    return None


def _version(text_version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text_version)[:2])


def audience_classes(connection: Connection) -> list[tuple[str, frozenset[str]]]:
    """Every audience class: its key and its roles."""
    rows = connection.execute(text(f"SELECT audience_key, roles FROM {AUDIENCE_TABLE}")).all()
    return [(key, frozenset(roles)) for key, roles in rows]


def partition_name(key: str) -> str:
    if not _KEY.fullmatch(key):  # the key is spliced into DDL: only ever an MD5 of ours
        raise ValueError(f"not an audience key: {key!r}")
    return f"{VECTOR_TABLE}_{key[:16]}"


def ensure_partitions(connection: Connection, keys: Sequence[str]) -> None:
    """A partition of `chunk_vectors` for each audience class that has none yet. Creating one locks the vector
    table until the transaction ends; it happens once per new combination of roles, in the ingestion of the first
    document that has it."""
    for key in sorted(set(keys)):
        name = partition_name(key)
        if connection.execute(text("SELECT to_regclass(:name)"), {"name": name}).scalar() is None:
            connection.execute(text(f"CREATE TABLE IF NOT EXISTS {name} PARTITION OF {VECTOR_TABLE} "
                                    f"FOR VALUES IN ('{key}')"))


def vector_literal(vector: Sequence[float]) -> str:
    """pgvector's text form, sent as a parameter and cast in SQL: no client-side type registration needed.
    Nine significant digits give back the same float32."""
    return "[" + ",".join(f"{float(value):.9g}" for value in vector) + "]"


def write_pgvectors(connection: Connection, *, model: str, vectors: Sequence[tuple[str, Sequence[float]]]) -> None:
    """Put (chunk id, vector) pairs into `chunk_vectors`, each in the partition of its chunk's audience class,
    replacing what the chunks had. The chunks must already be written."""
    if not vectors:
        return
    ids = [chunk_id for chunk_id, _ in vectors]
    keys = connection.execute(text("SELECT DISTINCT audience_key FROM chunks WHERE chunk_id = ANY(:ids) "
                                   "AND audience_key IS NOT NULL"), {"ids": ids}).scalars().all()
    ensure_partitions(connection, keys)
    for dim in {len(vector) for _, vector in vectors}:
        ensure_dimension_index(connection, dim)
    connection.execute(text(f"DELETE FROM {VECTOR_TABLE} WHERE chunk_id = ANY(:ids)"), {"ids": ids})
    # A chunk removed meanwhile, or without roles, is not found: its vector has nothing to point at.
    connection.execute(
        text(f"INSERT INTO {VECTOR_TABLE} (chunk_id, audience_key, model, dim, embedding) "
             "SELECT chunk_id, audience_key, :model, :dim, CAST(:embedding AS vector) FROM chunks "
             "WHERE chunk_id = :chunk_id AND audience_key IS NOT NULL"),
        [{"chunk_id": chunk_id, "model": model, "dim": len(vector), "embedding": vector_literal(vector)}
         for chunk_id, vector in vectors])


def write_chunk_terms(connection: Connection, chunks: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Put (chunk id, its index terms in order) pairs into `chunk_terms`, in one statement, so its triggers count a
    document's chunks at once. The chunks must already be written; one without an audience class is left out, as
    no search could see it. Terms are `[a-z0-9]+`, so a space joins them safely."""
    if not chunks:
        return
    counted = [(chunk_id, Counter(terms), len(terms)) for chunk_id, terms in chunks]
    connection.execute(text(f"""
        INSERT INTO {CHUNK_TERMS_TABLE} (chunk_id, audience_key, terms, counts, length)
        SELECT c.chunk_id, c.audience_key, string_to_array(t.terms, ' '),
               CAST(string_to_array(t.counts, ' ') AS integer[]), t.length
        FROM unnest(CAST(:ids AS text[]), CAST(:terms AS text[]), CAST(:counts AS text[]),
                    CAST(:lengths AS integer[])) AS t(chunk_id, terms, counts, length)
        JOIN chunks AS c ON c.chunk_id = t.chunk_id
        WHERE c.audience_key IS NOT NULL"""), {
        "ids": [chunk_id for chunk_id, _, _ in counted],
        "terms": [" ".join(counts) for _, counts, _ in counted],
        "counts": [" ".join(str(n) for n in counts.values()) for _, counts, _ in counted],
        "lengths": [length for _, _, length in counted]})


def index_memory(connection: Connection) -> tuple[int, int]:
    """Bytes of the server's `shared_buffers`, and of what a search reads: the chunks, documents, their terms and
    the term counts with their indexes (the GIN index among them), and every partition of the vectors with its HNSW
    graph."""
    row = connection.execute(text(f"""
        SELECT pg_size_bytes(current_setting('shared_buffers')) AS buffer_bytes,
               (SELECT coalesce(sum(pg_total_relation_size(oid)), 0) FROM pg_class WHERE oid IN (
                    SELECT to_regclass(name) FROM unnest(ARRAY['chunks', 'documents', '{CHUNK_TERMS_TABLE}',
                                                               '{TERM_TABLE}']) AS name
                    UNION ALL SELECT inhrelid FROM pg_inherits WHERE inhparent = to_regclass('{VECTOR_TABLE}'))
               ) AS index_bytes""")).one()
    return int(row.buffer_bytes), int(row.index_bytes)


def refresh_statistics(engine: Engine) -> None:
    """After an ingestion changed documents, on PostgreSQL: the planner's statistics of the index tables brought
    up to date now rather than whenever autovacuum comes by (a first search after a bulk load planned without
    them scanned every chunk). A sample of the rows: about a second at a million chunks."""
    if engine.dialect.name != "postgresql":
        return
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        tables = ["chunks", CHUNK_TERMS_TABLE, TERM_TABLE, AUDIENCE_TABLE]
        tables += [VECTOR_TABLE] if vector_schema_ready(connection) else []
        connection.execute(text(f"ANALYZE {', '.join(tables)}"))


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
