"""`sourced doctor`: check configuration, database, index and Slack credentials; say what is wrong.

It only reads: it does not migrate the database or ingest anything. Exit 0 when every check passes, else 1.
"""

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from sqlalchemy import Engine, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from bot.commands.common import add_config_option
from bot.settings import SlackSettings, SlackSettingsError, load_slack_settings
from bot.slack_client import verify_bot_token, web_client
from core.application.instructions import instruction_lines
from core.bootstrap import build_index
from core.config import ConfigError, Settings, SourcedConfig, config_path, load_config
from core.storage.database import current_revision, head_revision, make_engine
from core.storage.postgres import (
    index_memory,
    installed_pgvector,
    pgvector_available,
    pgvector_problem,
    vector_schema_ready,
)
from core.storage.tables import ChunkRow


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    warning: bool = False
    """Passes, but something the operator should change."""

    @property
    def status(self) -> str:
        return "FAIL" if not self.ok else "warn" if self.warning else "ok  "


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("doctor", help="check configuration, database, index and Slack tokens")
    add_config_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        slack = load_slack_settings()
    except SlackSettingsError as error:
        print(f"FAIL  slack settings: {error}")
        return 1
    checks = diagnose(Settings(), slack, config_file=args.config)
    for check in checks:
        print(f"{check.status}  {check.name}: {check.detail}")
    return 0 if all(check.ok for check in checks) else 1


def diagnose(settings: Settings, slack: SlackSettings, *, config_file: Any = None) -> list[Check]:
    config: SourcedConfig | None = None
    checks: list[Check] = []
    try:
        path = config_path(config_file, settings)
        config = load_config(path)
        checks.append(Check("configuration", True, f"{path or 'defaults (no sourced.yml)'}: "
                            f"{len(config.roles)} roles, {len(config.channels)} channels, "
                            f"{len(config.known_gaps)} known gaps"))
    except ConfigError as error:
        checks.append(Check("configuration", False, str(error)))
    checks += _database_and_index(settings)
    checks += _slack(slack, config)
    return checks


def _database_and_index(settings: Settings) -> list[Check]:
    url = settings.database_url
    try:
        engine = make_engine(url)
        current, head = current_revision(engine), head_revision()
    except Exception as error:  # any driver error is a finding to print, not a crash
        return [Check("database", False, f"{_safe_url(url)}: {type(error).__name__}: {error}")]
    database = Check("database", True, f"{_safe_url(url)} at {current}")
    try:
        if current != head:
            return [Check("database", False, f"{_safe_url(url)}: schema at {current or 'nothing'}, "
                          f"expected {head}; any other command migrates it")]
        vectors = _vectors(engine, settings)
        if vectors is not None and not vectors.ok:
            return [database, vectors]
        chunks = build_index(engine, None).chunk_count()
        instructions = _instructions(engine)
        memory = _memory(engine)
    except Exception as error:  # same: report, don't crash
        return [database, Check("index", False, f"{type(error).__name__}: {error}")]
    finally:
        engine.dispose()
    index = Check("index", chunks > 0, f"{chunks} chunks" if chunks else "empty: run `sourced ingest PATH`")
    return [database, index, instructions] + [check for check in (vectors, memory) if check is not None]


def _instructions(engine: Engine) -> Check:
    """Lines addressed to AI assistants in the indexed documents. A finding, not a failure: they are content
    the pipeline never quotes, but the page's owner should know (`sourced ingest` names file and line)."""
    found: set[tuple[str, str]] = set()  # (document, line): a long section's windows overlap
    with engine.connect() as connection:
        for doc_id, chunk_text in connection.execute(select(ChunkRow.doc_id, ChunkRow.text)).yield_per(2000):
            lines = chunk_text.splitlines()
            found.update((doc_id, lines[number - 1].strip()) for number in instruction_lines(chunk_text))
    if not found:
        return Check("instructions", True, "no text addressed to AI assistants")
    documents = len({doc_id for doc_id, _ in found})
    lines = f"{len(found)} {'line' if len(found) == 1 else 'lines'}"
    return Check("instructions", True, f"{lines} addressed to AI assistants in {documents} "
                 f"{'document' if documents == 1 else 'documents'} "
                 "(indexed as content, never quoted; `sourced ingest` lists them)")


def _memory(engine: Engine) -> Check | None:
    """On PostgreSQL: does `shared_buffers` hold the index?"""
    if engine.dialect.name != "postgresql":
        return None
    with engine.connect() as connection:
        return memory_check(*index_memory(connection))


def memory_check(shared_buffers: int, index: int) -> Check:
    """A warning, not a failure, when the index is larger than `shared_buffers`: searches still work, but read
    the index back from the operating system at every question (at 100k chunks, retrieval p95 18 ms became
    34 ms with the default 128 MB; README, Deployment)."""
    sizes = f"index {_megabytes(index)}, shared_buffers {_megabytes(shared_buffers)}"
    if index <= shared_buffers:
        return Check("memory", True, f"{sizes}: the index fits")
    return Check("memory", True, f"{sizes}: searches read the index back from the operating system at every question; "
                 f"raise shared_buffers above {_megabytes(index)}", warning=True)


def _megabytes(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


def _vectors(engine: Engine, settings: Settings) -> Check | None:
    """On PostgreSQL with an embedder: pgvector there, or the line `sourced serve` would stop with."""
    if engine.dialect.name != "postgresql" or settings.embedder == "none":
        return None
    with engine.connect() as connection:
        problem = pgvector_problem(connection, database=_safe_url(settings.database_url))
        if problem is not None:
            return Check("vectors", False, problem)
        version = installed_pgvector(connection) or pgvector_available(connection)
        if not vector_schema_ready(connection):
            return Check("vectors", True, f"pgvector {version} available; its table is made at the next start")
        stored = connection.execute(text("SELECT count(*) FROM chunk_vectors")).scalar_one()
    return Check("vectors", True, f"pgvector {version}, {stored} chunk vectors")


def _slack(slack: SlackSettings, config: SourcedConfig | None) -> list[Check]:
    try:
        token = slack.require_bot_token()
        identity = verify_bot_token(web_client(token, base_url=slack.api_url))
    except SlackSettingsError as error:
        return [Check("slack token", False, str(error))]
    checks = [Check("slack token", True, f"bot <@{identity.user_id}> in workspace {identity.team_id}"),
              _mode(slack)]
    if config is not None and config.roles:
        checks.append(_user_groups(web_client(token, base_url=slack.api_url), config))
    return checks


def _mode(slack: SlackSettings) -> Check:
    found = []
    for name, require in (("Socket Mode", slack.require_app_token), ("HTTP", slack.require_signing_secret)):
        if _passes(require):
            found.append(name)
    if not found:
        return Check("slack mode", False, "set SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP)")
    return Check("slack mode", True, " and ".join(found) + " configured")


def _passes(require: Callable[[], str]) -> bool:
    try:
        require()
    except SlackSettingsError:
        return False
    return True


def _user_groups(client: Any, config: SourcedConfig) -> Check:
    """Every user group named in `roles` exists, or its role silently belongs to nobody."""
    try:
        groups = client.usergroups_list()["usergroups"] or []
    except SlackApiError as error:
        return Check("user groups", False, f"usergroups.list failed: {error.response.get('error')}")
    known = {str(g["handle"]) for g in groups} | {str(g["id"]) for g in groups}
    missing = [f"{role}: {group}" for role, names in config.roles.items() for group in names
               if group.removeprefix("@") not in known]
    if missing:
        return Check("user groups", False, "not found in Slack: " + ", ".join(missing))
    return Check("user groups", True, f"all {sum(len(v) for v in config.roles.values())} found")


def _safe_url(url: str) -> str:
    """The database URL without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(unparseable database URL)"
