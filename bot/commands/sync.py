"""`sourced sync [NAME]`: bring the index in step with the configured connectors (sourced.yml `connectors:`),
incrementally from each one's stored cursor; `--full` also lists everything each source still has. The documents
of a connector no longer in sourced.yml are purged first."""

import argparse
import sys
from datetime import UTC, datetime
from typing import Any

from bot.commands.common import add_config_option, application
from core.bootstrap import Sourced
from core.config import ConfigError
from core.connectors.build import build_connector
from core.connectors.port import ConnectorError
from core.connectors.sync import Purged, SyncReport
from core.storage.locks import IngestBusy


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("sync", help="sync the connectors of sourced.yml (Confluence, Google Drive, "
                                                "Notion) into the index")
    parser.add_argument("name", nargs="?", help="one connector's name (default: every connector)")
    parser.add_argument("--full", action="store_true",
                        help="also list everything the source still has, removing what it no longer has or shares "
                             "and re-reading permissions (otherwise done every full_sync_every)")
    add_config_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    sourced = application(args)
    try:
        purge_unconfigured(sourced)
    except IngestBusy as error:
        print(f"sourced sync: {error}", file=sys.stderr)
        return 1
    entries = [sourced.config.connector(args.name)] if args.name else list(sourced.config.connectors)
    if not entries:
        print("sourced sync: no connectors in sourced.yml (see docs/connectors.md)", file=sys.stderr)
        return 2
    failed = False
    for entry in entries:
        try:
            report = sync_one(sourced, entry.name, full=args.full)
        except IngestBusy as error:
            print(f"sourced sync: {error}", file=sys.stderr)
            return 1
        for failure in report.errors:
            print(f"warning: {failure.path}: {failure.reason}", file=sys.stderr)
        print(report.summary())
        failed = failed or not report.ok
    return 1 if failed else 0


def purge_unconfigured(sourced: Sourced) -> list[Purged]:
    """Documents of connectors no longer in sourced.yml taken out of the index, one line each on stderr.
    Raises `IngestBusy` when another sync or ingestion holds the database."""
    purged = sourced.syncer.purge_unconfigured([entry.name for entry in sourced.config.connectors])
    for each in purged:
        print(f"sourced: {each.summary()}", file=sys.stderr, flush=True)
    return purged


def sync_one(sourced: Sourced, name: str, *, full: bool = False) -> SyncReport:
    """One connector's sync; a connector that cannot even be built (a credential missing, a key file missing or
    unreadable) is a failed sync too, in one line, recorded for doctor and the Home view."""
    try:
        connector = build_connector(sourced.config.connector(name))
    except (ConfigError, ConnectorError) as error:  # ConnectorError: a key file missing or unreadable
        sourced.connector_state.started(name, datetime.now(UTC))
        sourced.connector_state.failed(name, str(error))
        return SyncReport(name=name, failure=str(error))
    return sourced.syncer.sync(connector, full=full)
