"""`sourced audit list|show ID|purge --older-than DAYS`: read and prune the decision log (the purge also deletes
expired conversation turns and clarifications, the short-lived state that holds raw questions)."""

import argparse
import json
import sys
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.commands.common import add_config_option, application


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("audit", help="list, show or purge audit records")
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="the latest records")
    listing.add_argument("--limit", type=int, default=20)
    show = actions.add_parser("show", help="one record in full")
    show.add_argument("correlation_id")
    purge = actions.add_parser("purge", help="delete records older than N days")
    purge.add_argument("--older-than", type=int, required=True, metavar="DAYS")
    for sub in (listing, show, purge):
        add_config_option(sub)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    sourced = application(args, progress=False)
    log = sourced.audit_log
    if args.action == "list":
        for record in log.list(limit=args.limit):
            read_as = f" (read as: {record.reading.preview})" if record.reading and record.reading.followup else ""
            print(f"{record.at:%Y-%m-%d %H:%M:%S} {record.correlation_id} {record.kind:<20} "
                  f"{record.risk or '-':<6} {record.question_preview}{read_as}")
        return 0
    if args.action == "show":
        found = log.get(args.correlation_id)
        if found is None:
            print(f"sourced audit: no record {args.correlation_id!r}", file=sys.stderr)
            return 1
        print(json.dumps(asdict(found), default=str, indent=2, ensure_ascii=False))
        return 0
    if args.older_than < 0:
        print("sourced audit purge: --older-than must be zero or more days", file=sys.stderr)
        return 2
    removed = log.purge_older_than(datetime.now(UTC) - timedelta(days=args.older_than))
    print(f"purged {removed} audit records older than {args.older_than} days")
    turns = sourced.turns.purge_expired()  # kept turns purge themselves too; this covers an idle bot
    clarifications = sourced.pending.purge_expired()
    print(f"purged {turns} expired conversation turns and {clarifications} expired clarifications")
    return 0
