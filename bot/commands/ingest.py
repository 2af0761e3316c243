"""`sourced ingest PATH`: load a knowledge-base folder into the index, incrementally; `--dry-run` shows what
each file would become (id, title, owner, audience, format) and what could not be read, and stores nothing.

An ingest that would remove more than half of the indexed documents, or all of them (an empty or unmounted
folder, a folder of types Sourced does not read), stops and changes nothing unless `--allow-removal` is given."""

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bot.commands.common import add_config_option, application
from core.bootstrap import reading_process
from core.config import Settings, config_path, load_config
from core.retrieval.ingest import plural
from core.retrieval.knowledge_base import LoadResult, load_knowledge_base
from core.storage.locks import IngestBusy

ALLOW_REMOVAL = "--allow-removal"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ingest", help="ingest a folder of documents (Markdown, text; PDF, Word, PowerPoint, HTML, CSV and wiki "
                       "exports with the formats extra)")
    parser.add_argument("path", type=Path)
    parser.add_argument("--dry-run", action="store_true",
                        help="print what each file would be ingested as, and what cannot be read; store nothing")
    parser.add_argument(ALLOW_REMOVAL, action="store_true",
                        help="go ahead even when the folder would remove more than half of the indexed documents "
                             "(or all of them, when it yields none); without it such an ingest changes nothing")
    add_config_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not args.path.is_dir():
        print(f"sourced ingest: {args.path} is not a folder", file=sys.stderr)
        return 2
    if args.dry_run:
        settings = Settings()
        rules = load_config(config_path(args.config, settings)).source_rules()
        return _dry_run(load_knowledge_base(args.path, rules=rules, process=reading_process(settings)))
    try:
        report = application(args).ingestor.ingest(args.path, guard_removal=not args.allow_removal)
    except IngestBusy as error:
        print(f"sourced ingest: {error}", file=sys.stderr)
        return 1
    for failure in report.errors:
        print(f"error: {failure.path}: {failure.reason}", file=sys.stderr)
    for line in report.instructions:
        print(f"warning: {line}", file=sys.stderr)
    for warning in report.warnings:
        print(f"warning: {warning.path}: {warning.reason}", file=sys.stderr)
    for note in report.notes:
        print(f"warning: {note}", file=sys.stderr)
    if report.held is not None:
        print(f"sourced ingest: {report.held}; if that is what you want, run it again with {ALLOW_REMOVAL}",
              file=sys.stderr)
        return 1
    print(report.summary())
    return 1 if report.errors else 0


def _dry_run(loaded: LoadResult) -> int:
    """One row per document as it would be stored, then one line per file that would fail; the database is
    not opened."""
    table = Table(box=None, pad_edge=False)
    for column in ("file", "id", "title", "owner", "audience", "format", "updated"):
        table.add_column(column, overflow="fold")  # an id is shown whole, never cut with an ellipsis
    for document in loaded.documents:
        table.add_row(document.path.as_posix(), document.doc_id, document.title, document.owner or "(default)",
                      ", ".join(sorted(document.audience)), document.format,
                      f"{document.updated} ({document.updated_from})" if document.updated else "")
    Console(width=200).print(table, markup=False, highlight=False)
    errors = Console(stderr=True, width=200)
    for error in loaded.errors:
        errors.print(f"error: {error.path}: {error.reason}", markup=False, highlight=False)
    for document in loaded.documents:
        for warning in document.warnings:
            errors.print(f"warning: {document.path}: {warning}", markup=False, highlight=False)
    for note in loaded.notes():
        errors.print(f"warning: {note}", markup=False, highlight=False)
    print(f"{plural(len(loaded.documents), 'document')} would be ingested; {plural(len(loaded.errors), 'file')} "
          f"could not be read; nothing was stored")
    return 1 if loaded.errors else 0
