"""`sourced feedback export [--output FILE] [--with-previews]`: readers' verdicts as labelled pairs (JSONL)."""

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from bot.commands.common import add_config_option, application
from core.application.feedback import LabelledPair


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("feedback", help="export readers' feedback")
    actions = parser.add_subparsers(dest="action", required=True)
    export = actions.add_parser(
        "export", help="one JSON line per (question, chunk, label), for refitting answerability",
        description="Every stored verdict as JSON lines: the question's SHA-256, a chunk id, the label "
                    "(answered_it: a refusal's closest passage answered; helpful / not_helpful: an answer's "
                    "cited chunks) and the reader as a keyed hash (SOURCED_FEEDBACK_EXPORT_KEY; unset, a key "
                    "used for this export only), so a refit can weigh readers rather than clicks. Never the "
                    "question as typed, never who the reader is.")
    export.add_argument("--output", type=Path, metavar="FILE", help="write here (default: standard output)")
    export.add_argument("--with-previews", action="store_true",
                        help="add each question's redacted audit preview (80 characters at most)")
    add_config_option(export)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    export = application(args, progress=False).service.feedback_export(with_previews=args.with_previews)
    if not export.keyed:
        print("readers hashed with a key for this export only: set SOURCED_FEEDBACK_EXPORT_KEY to compare them "
              "across exports", file=sys.stderr)
    if args.output is None:
        written = write_jsonl(export.pairs, sys.stdout)
    else:
        with args.output.open("w", encoding="utf-8") as out:
            written = write_jsonl(export.pairs, out)
        print(f"wrote {written} labelled pairs to {args.output}", file=sys.stderr)
    return 0


def write_jsonl(pairs: Iterable[LabelledPair], out: TextIO) -> int:
    """One object per line, without the preview unless it was asked for; returns how many lines."""
    written = 0
    for pair in pairs:
        line = {key: value for key, value in asdict(pair).items() if value is not None}
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        written += 1
    return written
