"""The installation's check-up behind `sourced doctor`: what `bootstrap` would build from the settings and
sourced.yml (the configuration, the database and its index, retrieval, the embedder, the question matcher, the
reader, the answerability model, the answer model, the audit mode) and the connectors' syncs, each a `Check`:
`ok`, `warning` or `error`, with the fix to try.

It only reads: it migrates nothing and ingests nothing. Beside the composition root, it is the other reader of
`Settings`: it examines the choices bootstrap makes, without making them. A front end renders the checks and adds
its own (the CLI adds Slack's between the installation's lines and the connectors').

Each line is a small check function of an `Installation` (what the checks share, each piece read once) returning a
`Check` or None (not applicable here); `INSTALLATION_CHECKS` is the order they print in.
"""

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from core.application.answerability.model import shipped_model
from core.application.catalog import ConnectorStatus
from core.application.language.instructions import instruction_lines
from core.application.ports import Embedder, Reader
from core.bootstrap import EmbedderChoice, build_reader, choose_embedder
from core.config import (
    DEMO_DATABASE,
    ConfigError,
    ConnectorEntry,
    Settings,
    SourcedConfig,
    config_path,
    load_config,
    parse_duration,
)
from core.connectors.build import missing_requirements
from core.install import install_command, install_extra
from core.llm.reader import ReaderUnavailable
from core.retrieval.embeddings import (
    INSTALL_SEMANTIC,
    MINILM_PACKAGE,
    EmbedderUnavailable,
    MiniLmEmbedder,
    uncached,
)
from core.retrieval.ingest import plural
from core.retrieval.matcher import matcher_for
from core.storage.connectors import SqlConnectorState
from core.storage.database import current_revision, head_revision, make_engine
from core.storage.health import chunk_texts, embedded_chunks, index_size, stored_vectors
from core.storage.postgres import (
    index_memory,
    installed_pgvector,
    pgvector_available,
    pgvector_problem,
    vector_schema_ready,
)

Status = Literal["ok", "warning", "error"]
PROBE_TIMEOUT_S = 3.0
"""How long doctor waits for a model endpoint to answer at all."""


@dataclass(frozen=True, kw_only=True)
class Check:
    """One finding: what was checked, how it stands, what was found and, when it is not ok, the fix to try."""

    name: str
    status: Status
    detail: str
    fix: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    """The line's values for `--json` (counts, names, versions)."""


def ok(name: str, detail: str, /, **facts: Any) -> Check:
    return Check(name=name, status="ok", detail=detail, facts=facts)


def warning(name: str, detail: str, fix: str | None = None, /, **facts: Any) -> Check:
    return Check(name=name, status="warning", detail=detail, fix=fix, facts=facts)


def error(name: str, detail: str, fix: str | None = None, /, **facts: Any) -> Check:
    return Check(name=name, status="error", detail=detail, fix=fix, facts=facts)


@dataclass(frozen=True, kw_only=True)
class Diagnosis:
    """What `diagnose` found, in two parts, so a front end can print its own checks between them."""

    installation: list[Check]
    """From the configuration to the audit mode, in the order they print."""
    connectors: list[Check]
    """One line per connector of sourced.yml, and per connector no longer in it that left data behind."""
    config: SourcedConfig | None
    """sourced.yml as read, for a front end's own checks; None when it could not be read (its line says why)."""


class Installation:
    """What the checks look at, each piece read once, on first use; a piece that cannot be read is kept as the
    exception, which the check that owns it reports (and the checks that need it skip)."""

    def __init__(self, settings: Settings, *, config_file: Path | None = None,
                 embedder: Embedder | None = None) -> None:
        """`embedder`: the one to examine instead of the one `SOURCED_EMBEDDER` names (as bootstrap's override)."""
        self.settings = settings
        self.config_file = config_file
        self._given_embedder = embedder

    @cached_property
    def config(self) -> SourcedConfig | ConfigError:
        try:
            return load_config(config_path(self.config_file, self.settings))
        except ConfigError as failure:
            return failure

    @cached_property
    def engine(self) -> Engine | Exception:
        try:
            engine = make_engine(self.settings.database_url)
            current_revision(engine)  # connects: an unreachable database is found here
        except Exception as failure:  # any driver error is a finding to print, not a crash
            return failure
        return engine

    @cached_property
    def ready_engine(self) -> Engine | None:
        """The engine when the database is reachable and at the schema this installation expects."""
        engine = self.engine
        if isinstance(engine, Exception) or current_revision(engine) != head_revision():
            return None
        return engine

    @cached_property
    def embedder(self) -> EmbedderChoice | Exception:
        if self._given_embedder is not None:
            return EmbedderChoice(embedder=self._given_embedder, reason="given by the caller")
        try:
            return choose_embedder(self.settings.embedder, self.settings)
        except (EmbedderUnavailable, ConfigError) as failure:
            return failure

    @cached_property
    def reader(self) -> Reader | Exception | None:
        try:
            return build_reader(self.settings)
        except ReaderUnavailable as failure:
            return failure

    @cached_property
    def matcher(self) -> Embedder | Exception | None:
        """What the answerability model reads, as bootstrap chooses it (the embedder itself unless the question
        matcher applies)."""
        choice = self.embedder
        if isinstance(choice, Exception):
            return None
        reader = None if isinstance(self.reader, Exception) else self.reader
        try:
            return matcher_for(choice.embedder, kind=self.settings.matcher, reader=reader,
                               path=self.settings.matcher_path)
        except EmbedderUnavailable as failure:
            return failure

    def close(self) -> None:
        engine = self.__dict__.get("engine")  # there only if a check opened it (cached_property)
        if isinstance(engine, Engine):
            engine.dispose()


def configuration(installation: Installation) -> Check:
    config = installation.config
    if isinstance(config, ConfigError):
        return error("configuration", str(config), "correct sourced.yml (format: docs/documents.md)")
    where = config_path(installation.config_file, installation.settings) or "defaults (no sourced.yml)"
    counts = (plural(len(config.roles), "role"), plural(len(config.channels), "channel"),
              plural(len(config.known_gaps), "known gap"))
    return ok("configuration", f"{where}: {', '.join(counts)}", file=str(where))


def database(installation: Installation) -> Check:
    url = _safe_url(installation.settings.database_url)
    engine = installation.engine
    if isinstance(engine, Exception):
        return error("database", f"{url}: {type(engine).__name__}: {engine}",
                     "check SOURCED_DATABASE_URL and that the database server is up", url=url)
    current, head = current_revision(engine), head_revision()
    facts = {"url": url, "backend": engine.dialect.name, "revision": current, "expected": head}
    if current != head:
        return error("database", f"{url}: schema at {current or 'nothing'}, expected {head}",
                     "any other command migrates it, e.g. `sourced ingest PATH`", **facts)
    return ok("database", f"{engine.dialect.name} {url} at schema revision {current}", **facts)


def index(installation: Installation) -> Check | None:
    engine = installation.ready_engine
    if engine is None:
        return None
    size = index_size(engine)
    documents, chunks, last = size.documents, size.chunks, size.last_ingest
    facts = {"documents": documents, "chunks": chunks, "last_ingest": last.isoformat() if last else None}
    if not chunks:
        return error("index", "empty", f"`sourced ingest PATH` (the demo keeps the example handbook apart, in "
                                       f"{DEMO_DATABASE}: `sourced doctor --demo`)", **facts)
    return ok("index", f"{plural(documents, 'document')}, {plural(chunks, 'chunk')}, "
                       f"last ingest {last:%Y-%m-%d %H:%M} UTC", **facts)


def instructions(installation: Installation) -> Check | None:
    """Lines addressed to AI assistants in the indexed documents. A finding, not a failure: they are content
    the pipeline never quotes, but the page's owner should know (`sourced ingest` names file and line)."""
    engine = installation.ready_engine
    if engine is None:
        return None
    found: set[tuple[str, str]] = set()  # (document, line): a long section's windows overlap
    for doc_id, chunk_text in chunk_texts(engine):
        lines = chunk_text.splitlines()
        found.update((doc_id, lines[number - 1].strip()) for number in instruction_lines(chunk_text))
    if not found:
        return ok("instructions", "no text addressed to AI assistants", lines=0)
    documents = len({doc_id for doc_id, _ in found})
    counted = f"{len(found)} {'line' if len(found) == 1 else 'lines'}"
    return ok("instructions", f"{counted} addressed to AI assistants in {documents} "
              f"{'document' if documents == 1 else 'documents'} "
              "(indexed as content, never quoted; `sourced ingest` lists them)", lines=len(found))


def vectors(installation: Installation) -> Check | None:
    """On PostgreSQL with an embedder: pgvector there, or the line `sourced serve` would stop with."""
    engine = installation.ready_engine
    if engine is None or engine.dialect.name != "postgresql" or installation.settings.embedder == "none":
        return None
    with engine.connect() as connection:
        problem = pgvector_problem(connection, database=_safe_url(installation.settings.database_url))
        if problem is not None:
            return error("vectors", problem)
        version = installed_pgvector(connection) or pgvector_available(connection)
        if not vector_schema_ready(connection):
            return ok("vectors", f"pgvector {version} available; its table is made at the next start",
                      pgvector=version)
        stored = stored_vectors(connection)
    return ok("vectors", f"pgvector {version}, {stored} chunk vectors", pgvector=version, stored=stored)


def memory(installation: Installation) -> Check | None:
    """On PostgreSQL: does `shared_buffers` hold the index?"""
    engine = installation.ready_engine
    if engine is None or engine.dialect.name != "postgresql":
        return None
    with engine.connect() as connection:
        return memory_check(*index_memory(connection))


def memory_check(shared_buffers: int, index: int) -> Check:
    """A warning, not a failure, when the index is larger than `shared_buffers`: searches still work, but read
    the index back from the operating system at every question (at 100k chunks, retrieval p95 18 ms became
    34 ms with the default 128 MB; docs/deployment.md, Speed and size)."""
    sizes = f"index {_megabytes(index)}, shared_buffers {_megabytes(shared_buffers)}"
    facts = {"index_bytes": index, "shared_buffers_bytes": shared_buffers}
    if index <= shared_buffers:
        return ok("memory", f"{sizes}: the index fits", **facts)
    return warning("memory", f"{sizes}: searches read the index back from the operating system at every question",
                   f"raise shared_buffers above {_megabytes(index)}", **facts)


def retrieval(installation: Installation) -> Check:
    choice = installation.embedder
    if isinstance(choice, Exception):
        return error("retrieval", f"SOURCED_EMBEDDER={installation.settings.embedder} cannot start: {choice}",
                     mode=None)
    if choice.embedder is None and installation.settings.embedder == "auto":
        return warning("retrieval", choice.describe().removeprefix("retrieval: "),
                       f"{INSTALL_SEMANTIC} for hybrid retrieval, or SOURCED_EMBEDDER=none to choose full text",
                       mode=choice.retrieval, reason=choice.reason)
    return ok("retrieval", choice.describe().removeprefix("retrieval: "), mode=choice.retrieval,
              reason=choice.reason)


def embedder(installation: Installation) -> Check | None:
    choice = installation.embedder
    if isinstance(choice, Exception) or choice.embedder is None:
        return None
    model = uncached(choice.embedder)
    source = MINILM_PACKAGE if isinstance(model, MiniLmEmbedder) else "remote endpoint"
    try:
        dim = model.dim  # a remote embedder without SOURCED_EMBEDDING_DIM learns it with one request
    except Exception as failure:  # an adapter error is the finding
        return error("embedder", f"{model.model_id} did not answer: {failure}",
                     "start the embeddings endpoint or correct SOURCED_EMBEDDING_BASE_URL", name=model.model_id)
    facts: dict[str, Any] = {"name": model.model_id, "dim": dim, "source": source}
    engine = installation.ready_engine
    if engine is None:
        return ok("embedder", f"{model.model_id}, {dim} dimensions, from {source}", **facts)
    embedded, chunks = embedded_chunks(engine, model.model_id)
    facts |= {"vectors": embedded, "chunks": chunks}
    detail = f"{model.model_id}, {dim} dimensions, from {source}; vectors for {embedded} of {plural(chunks, 'chunk')}"
    if embedded < chunks:
        return warning("embedder", detail, "`sourced ingest PATH` embeds the chunks without a vector", **facts)
    return ok("embedder", detail, **facts)


def matcher(installation: Installation) -> Check | None:
    settings, choice, found = installation.settings, installation.embedder, installation.matcher
    if settings.matcher == "none":
        if settings.matcher_path is None:
            return None
        return warning("question matcher", "SOURCED_MATCHER_PATH is set but SOURCED_MATCHER=none: it is not read",
                       "SOURCED_MATCHER=bundled, or unset SOURCED_MATCHER_PATH", name=None)
    fix = "correct SOURCED_MATCHER_PATH" if settings.matcher_path else INSTALL_SEMANTIC
    if isinstance(found, Exception):
        return error("question matcher", str(found), fix, name=None)
    embedder = None if isinstance(choice, Exception) else choice.embedder
    if found is None or found is embedder:
        reader = installation.reader is not None and not isinstance(installation.reader, Exception)
        why, remedy = (("a reader is configured, and its fit reads the embedder", "SOURCED_READER=none") if reader
                       else ("it needs the bundled MiniLM embedder", "SOURCED_EMBEDDER=auto with the semantic extra"))
        return warning("question matcher", f"SOURCED_MATCHER={settings.matcher} does not apply: {why}",
                       f"{remedy}, or SOURCED_MATCHER=none", name=None)
    try:
        found.embed(["Is the question matcher answering?"])  # the session loads on first use: a corrupt file shows here
    except Exception as failure:  # an adapter error is the finding
        return error("question matcher", f"{found.model_id} did not load: {type(failure).__name__}: {failure}", fix,
                     name=found.model_id)
    return ok("question matcher", f"{found.model_id}: the answerability model's semantic features",
              name=found.model_id)


def reader(installation: Installation) -> Check:
    found = installation.reader
    if isinstance(found, Exception):
        return error("reader", str(found), f"{install_extra('semantic')}, or correct SOURCED_READER_PATH")
    if found is None:
        return ok("reader", "none: answerability from today's features (SOURCED_READER=bundled reads with our "
                  "cross-encoder)", name=None)
    return ok("reader", found.name, name=found.name)


def answerability(installation: Installation) -> Check | None:
    choice = installation.embedder
    if isinstance(choice, Exception):
        return None
    if isinstance(installation.matcher, Exception):
        return None  # the question matcher's line has the error: nothing answers until it is fixed
    semantic = choice.embedder is not None
    reading = semantic and installation.reader is not None and not isinstance(installation.reader, Exception)
    matching = installation.matcher is not None and installation.matcher is not choice.embedder
    model = shipped_model(semantic=semantic, reading=reading, matching=matching)
    kind = (("semantic" if semantic else "lexical (words only)") + (" with the question matcher" if matching else "")
            + (" with the reader" if reading else ""))
    return ok("answerability", f"{kind} model {model.version}", version=model.version, semantic=semantic,
              reading=reading, matching=matching)


def answer_model(installation: Installation) -> Check:
    settings = installation.settings
    if settings.model == "llama-cpp":
        return _local_model(settings)
    if settings.model == "openai":
        return _remote_model(settings)
    return ok("answer model", "extractive (quotes the documents; no LLM)", kind="extractive")


def _local_model(settings: Settings) -> Check:
    path = settings.model_path
    if importlib.util.find_spec("xllamacpp") is None:
        return error("answer model", "llama-cpp: the package 'xllamacpp' is not installed; the local model runs on it",
                     install_extra("local"), kind="llama-cpp")
    if path is None or not path.is_file():
        return error("answer model", f"llama-cpp: no GGUF file at {path}", "set SOURCED_MODEL_PATH to a .gguf file",
                     kind="llama-cpp")
    return ok("answer model", f"llama-cpp {path}", kind="llama-cpp", path=str(path))


def _remote_model(settings: Settings) -> Check:
    from core.llm.openai_compat import unreachable  # noqa: PLC0415  # the openai client is slow to import

    base_url, name = settings.model_base_url, settings.model_name
    if not base_url or not name:
        return error("answer model", "SOURCED_MODEL=openai without an endpoint or a model name",
                     "set SOURCED_MODEL_BASE_URL and SOURCED_MODEL_NAME", kind="openai")
    facts = {"kind": "openai", "endpoint": base_url, "name": name}
    problem = unreachable(base_url, timeout_s=PROBE_TIMEOUT_S)
    if problem is not None:
        return error("answer model", f"{name} at {base_url}: unreachable ({problem})",
                     "start the model server or correct SOURCED_MODEL_BASE_URL", reachable=False, **facts)
    return ok("answer model", f"{name} at {base_url}, reachable", reachable=True, **facts)


def audit(installation: Installation) -> Check:
    mode = installation.settings.audit_mode
    meaning = ("no audit record, no reply" if mode == "required"
               else "a failed audit write is logged and the reply still goes")
    return ok("audit", f"{mode}: {meaning}", mode=mode)


def connectors(installation: Installation) -> list[Check]:
    """One line per connector of sourced.yml: its last sync, its lag, its last error (the index it left stays
    in use meanwhile), and whether its credential is in the environment."""
    config, engine = installation.config, installation.ready_engine
    if isinstance(config, ConfigError):
        return []
    names = [entry.name for entry in config.connectors]
    removed = [_removed_connector_check(name, documents)
               for name, documents in SqlConnectorState(engine).unconfigured(names).items()] if engine else []
    statuses = {status.name: status for status in SqlConnectorState(engine).statuses(names)} if engine else {}
    every = parse_duration(config.sync_every) if config.sync_every else None
    return [*(connector_check(entry, statuses.get(entry.name), every) for entry in config.connectors), *removed]


def _removed_connector_check(name: str, documents: int) -> Check:
    """A connector no longer in sourced.yml whose syncs left documents or group members in the database."""
    said = (f"not in sourced.yml, yet {documents} of its documents are still answered" if documents else
            "not in sourced.yml, yet its group members and sync state are still stored")
    return error(f"connector {name}", said, "`sourced sync` (or restarting `sourced serve`) purges them",
                 documents=documents)


def connector_check(entry: ConnectorEntry, status: ConnectorStatus | None, every: timedelta | None) -> Check:
    """One connector's line: its client library and credential, then its last sync (`every`: sourced.yml's
    `sync_every`)."""
    name = f"connector {entry.name}"
    unready = _unready_connector_check(name, entry)
    if unready is not None:
        return unready
    if status is None or status.attempted_at is None:
        return warning(name, f"{entry.kind}: never synced", f"sourced sync {entry.name}")
    facts = {"documents": status.documents, "last_success": status.succeeded_at, "last_error": status.error}
    if status.succeeded_at is None:
        return error(name, f"{entry.kind}: every sync failed; last error: {status.error}",
                     "see docs/connectors.md", **facts)
    lag = datetime.now(UTC) - status.succeeded_at
    said = (f"{entry.kind}: {plural(status.documents, 'document')}; last sync {status.succeeded_at:%Y-%m-%d %H:%M} UTC "
            f"({_ago(lag)} ago)")
    if status.error:
        return warning(name, f"{said}; the last run failed: {status.error}; answers use the index that sync left",
                       "see docs/connectors.md", **facts, lag_s=lag.total_seconds())
    if every is not None and lag > 3 * every:
        return warning(name, f"{said}, over three times sync_every ({entry.name} is behind)",
                       "is `sourced serve` running?", **facts, lag_s=lag.total_seconds())
    return ok(name, said, **facts, lag_s=lag.total_seconds())


def _unready_connector_check(name: str, entry: ConnectorEntry) -> Check | None:
    """What stops the connector before it reaches its source: its client library, or its credential."""
    missing = missing_requirements(entry)
    if missing:
        return error(name, f"{entry.kind}: its client {'library' if len(missing) == 1 else 'libraries'} "
                     f"{', '.join(missing)} not installed (the connectors extra; `make run` leaves it out)",
                     install_command(missing))
    variable = entry.credential_variable
    if not os.environ.get(variable, "").strip():
        return error(name, f"{entry.kind}: {variable} is not set", f"put its credential in {variable}")
    return None


def _ago(lag: timedelta) -> str:
    minutes = int(lag.total_seconds() // 60)
    if minutes < 60:
        return f"{minutes} min"
    if minutes < 48 * 60:
        return f"{minutes // 60} h"
    return f"{minutes // 1440} days"


INSTALLATION_CHECKS: tuple[Callable[[Installation], Check | None], ...] = (
    configuration, database, index, instructions, vectors, memory,
    retrieval, embedder, matcher, reader, answerability, answer_model, audit,
)


def diagnose(settings: Settings, *, config_file: Path | None = None,
             embedder: Embedder | None = None) -> Diagnosis:
    """Every check of the installation these settings and `config_file` (else where the settings point)
    describe; `embedder`: examined instead of the one `SOURCED_EMBEDDER` names."""
    installation = Installation(settings, config_file=config_file, embedder=embedder)
    try:
        found = [examine(installation) for examine in INSTALLATION_CHECKS]
        config = installation.config
        return Diagnosis(installation=[check for check in found if check is not None],
                         connectors=connectors(installation),
                         config=None if isinstance(config, ConfigError) else config)
    finally:
        installation.close()


def _megabytes(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


def _safe_url(url: str) -> str:
    """The database URL without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(unparseable database URL)"
