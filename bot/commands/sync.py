"""`sourced sync [NAME]`: bring the index in step with the configured connectors (sourced.yml `connectors:`),
incrementally from each one's stored cursor; `--full` also lists everything each source still has. The documents
of a connector no longer in sourced.yml are purged first."""

import argparse
import sys
from typing import Any

from bot.commands.common import add_config_option, application
from core.bootstrap import Sourced
from core.config import ConnectorEntry
from core.connectors.build import build_connector
from core.connectors.sync import Purged
from core.retrieval.ingest import plural
from core.storage.locks import IngestBusy

DESCRIPTION = """\
Bring the index in step with the connectors listed under `connectors:` in
sourced.yml: `kind: confluence` (Confluence Cloud spaces), `kind: drive`
(Google Drive, through a service account) and `kind: notion` (Notion pages
shared with an integration), each with a `name` of your choosing. Their
secrets are read from the environment, never from sourced.yml:
SOURCED_CONFLUENCE_TOKEN, GOOGLE_APPLICATION_CREDENTIALS (the key file's path)
and SOURCED_NOTION_TOKEN by default (`token_env` / `credentials_env` name
others). Each sync reads what changed since the last one; `sourced serve`
syncs every `sync_every`. Set-up, scopes and permissions: docs/connectors.md."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("sync", help="sync the connectors of sourced.yml (Confluence, Google Drive, "
                                                "Notion) into the index", description=DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", nargs="?", help="one connector's name (default: every connector)")
    parser.add_argument("--full", action="store_true",
                        help="also list everything the source still has, removing what it no longer has or shares "
                             "and re-reading permissions (otherwise done every full_sync_every)")
    parser.add_argument("--check", action="store_true",
                        help="only check each connector's credentials and access: read the first page of what it "
                             "lists, store nothing, and say what failed")
    add_config_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    sourced = application(args)
    if args.check:
        return check(sourced, args.name)
    try:
        purge_unconfigured(sourced)
    except IngestBusy as error:
        print(f"sourced sync: {error}", file=sys.stderr)
        return 1
    entries = configured(sourced, args.name)
    if not entries:
        return 2
    failed = False
    for entry in entries:
        try:
            report = sourced.syncer.sync_configured(entry, full=args.full)
        except IngestBusy as error:
            print(f"sourced sync: {error}", file=sys.stderr)
            return 1
        for failure in report.errors:
            print(f"warning: {failure.path}: {failure.reason}", file=sys.stderr)
        print(report.summary())
        failed = failed or not report.ok
    return 1 if failed else 0


def configured(sourced: Sourced, name: str | None) -> list[ConnectorEntry]:
    """The connector `name` (a ConfigError when sourced.yml has none of that name), else every one; when there is
    none at all, says so on stderr."""
    entries = [sourced.config.connector(name)] if name else list(sourced.config.connectors)
    if not entries:
        print("sourced sync: no connectors in sourced.yml (see docs/connectors.md)", file=sys.stderr)
    return entries


def purge_unconfigured(sourced: Sourced) -> list[Purged]:
    """Documents of connectors no longer in sourced.yml taken out of the index, one line each on stderr.
    Raises `IngestBusy` when another sync or ingestion holds the database."""
    purged = sourced.syncer.purge_unconfigured([entry.name for entry in sourced.config.connectors])
    for each in purged:
        print(f"sourced: {each.summary()}", file=sys.stderr, flush=True)
    return purged

def check(sourced: Sourced, name: str | None) -> int:
    """Each connector built from sourced.yml with its credential, and the first page of its listing read (the
    first request a sync makes): a wrong token, a missing scope or an unshared space fails here, in one line,
    without a sync's cost. Nothing is stored; exit 1 if any failed."""
    entries = configured(sourced, name)
    if not entries:
        return 2
    failed = False
    for entry in entries:
        try:
            connector = build_connector(entry)
            first = next(iter(connector.changes(None)), None)
        except Exception as error:  # a library's own error too (DNS, TLS, a 401 it raises): that check's finding
            reason = " ".join(str(error).split()) or type(error).__name__
            print(f"{entry.name} ({entry.kind}): failed: {reason}")
            failed = True
            continue
        listed = len(first.refs) if first is not None else 0
        print(f"{entry.name} ({entry.kind}): ok: credentials accepted; the first page lists "
              f"{plural(listed, 'item')} (nothing stored)")
    return 1 if failed else 0
