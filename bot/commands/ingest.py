"""`sourced ingest PATH`: load a knowledge-base folder into the index, incrementally."""

import argparse
import sys
from pathlib import Path
from typing import Any

from bot.commands.common import add_config_option, application
from core.storage.locks import IngestBusy


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("ingest", help="ingest a folder of .md/.txt documents")
    parser.add_argument("path", type=Path)
    add_config_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not args.path.is_dir():
        print(f"sourced ingest: {args.path} is not a folder", file=sys.stderr)
        return 2
    try:
        report = application(args).ingestor.ingest(args.path)
    except IngestBusy as error:
        print(f"sourced ingest: {error}", file=sys.stderr)
        return 1
    for error in report.errors:
        print(f"error: {error.path}: {error.reason}", file=sys.stderr)
    for line in report.instructions:
        print(f"warning: {line}", file=sys.stderr)
    for warning in report.warnings:
        print(f"warning: {warning.path}: {warning.reason}", file=sys.stderr)
    print(report.summary())
    return 1 if report.errors else 0
