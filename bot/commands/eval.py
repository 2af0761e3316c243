"""`sourced eval --kb DIR --cases FILE`: score the assistant on a question set, both errors at once."""

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from rich import box
from rich.console import Console
from rich.progress import track
from rich.table import Table

from bot.commands.common import report_console
from core.application.ports import AnswerModel
from core.config import load_config, load_known_gaps
from core.eval.cases import load_cases, load_items
from core.eval.fabrication_bench import (
    METRIC_KEYS,
    PASSING,
    FabricationReport,
    run_fabrications,
    run_recorded_fabrications,
)
from core.eval.replay import REPLAYED, Recording, RecordingError, load_recordings, serve_recordings
from core.eval.report import MAXIMUM_KEYS, RATE_KEYS, Bound, Report, group
from core.eval.runner import eval_session, run_evaluation
from core.retrieval.ingest import plural

FAILURES_SHOWN: Final = 30
LATENCY_KEYS: Final = frozenset({"latency_p50_ms", "latency_p95_ms"})
ROWS: Final = (
    ("correct_answer", "correct answer"), ("wrong_answer", "wrong answer"),
    ("false_abstention", "false abstention"), ("false_abstention_before_model", " ..before the model"),
    ("missed", "missed"), ("citation_precision", "citation precision"),
    ("correct_abstention", "correct abstention"), ("false_answer", "false answer"),
    ("kind_accuracy", "kind accuracy"), ("owner_accuracy", "owner accuracy"), ("leaks", "leaks"),
    ("dead_end_rate", "dead ends"), ("closest_hit", "closest hit"),
    ("closest_shown_unanswerable", "closest shown (unanswerable)"),
    ("clarify_rate", "clarify rate"), ("latency_p50_ms", "latency p50 ms"),
    ("latency_p95_ms", "latency p95 ms"),
)
BOUNDS_HELP: Final = (
    "exit 1 when a measured value is past its bound (repeatable). The bound is a maximum for "
    + ", ".join(sorted(MAXIMUM_KEYS)) + " (e.g. leaks=0 false_answer=0.05) and a minimum for "
    + ", ".join(key for key in RATE_KEYS if key not in MAXIMUM_KEYS) + " (e.g. correct_answer=0.6). "
    "Rates are fractions (0..1); a rate with no cases in its group fails its bound. With --fabrications the "
    "keys are the variants (e.g. number_swap=0.95, negation.omitted=0.9), each a minimum share handled right"
)
FABRICATIONS_HELP: Final = (
    "instead of the cases' own answers, measure the guard: for every answerable case a scripted model on "
    "loopback answers with code-made variants of the supporting sentence (faithful quote and paraphrase; "
    "number, entity, negation, added-clause, other-chunk, blend and other-question fabrications), with and "
    "without quotes, and the report gives per variant the share refused (fabrications) or passed (faithful). "
    "With --recorded: the recorded model's own answers, as recorded and with one claim falsified (a number, "
    "a negation, a bound or modality, the subject, an added condition, another question's sentence)"
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval", help="score answers and refusals on a case file",
        description="Ingest a knowledge base into a fresh temporary database, ask every case as its asker "
                    "through the bot's own pipeline, and report both errors: answering when it should not "
                    "(false answers, leaks) and refusing when the answer was there.")
    parser.add_argument("--kb", type=Path, required=True, metavar="DIR", help="the knowledge-base folder")
    parser.add_argument("--cases", type=Path, required=True, metavar="FILE",
                        help="YAML case file (format: docs/evaluation.md)")
    parser.add_argument("--known-gaps", type=Path, metavar="FILE",
                        help="known gaps (e.g. an evaluation set's owners.yml), added to those of --config")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="sourced.yml: roles, risk words, default owner, known gaps (default: none; "
                             "./sourced.yml is not read, so results do not depend on the working folder)")
    parser.add_argument("--database", metavar="URL",
                        help="a PostgreSQL server (SQLAlchemy URL) to evaluate on instead of SQLite: a database is "
                             "created there for the run and dropped after (needs CREATEDB)")
    parser.add_argument("--json", action="store_true", help="print one JSON object; no progress output")
    parser.add_argument("--fail-under", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
                        help=BOUNDS_HELP)
    parser.add_argument("--fabrications", action="store_true", help=FABRICATIONS_HELP)
    parser.add_argument("--recorded", type=Path, metavar="FILE",
                        help="answer with a recorded model instead of SOURCED_MODEL: a JSONL file of a capable "
                             "model's replies to Sourced's prompts (format: docs/evaluation.md), replayed on "
                             "loopback through the OpenAI-compatible adapter and the guard")
    parser.add_argument("--alone", action="store_true",
                        help="ask every turn of a conversation without its thread, as if no follow-up were read "
                             "(the baseline the followup_* rates compare against)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not args.kb.is_dir():
        print(f"sourced eval: {args.kb} is not a folder", file=sys.stderr)
        return 2
    try:
        bounds = [Bound.parse(text, METRIC_KEYS if args.fabrications else RATE_KEYS) for text in args.fail_under]
    except ValueError as error:
        print(f"sourced eval: --fail-under {error}", file=sys.stderr)
        return 2
    try:
        recordings = load_recordings(args.recorded) if args.recorded else None
    except RecordingError as error:
        print(f"sourced eval: --recorded {error}", file=sys.stderr)
        return 2
    if args.fabrications:
        measured = _fabrications(args, recordings).metrics()
    else:
        report, ingest_errors = _evaluate(args) if recordings is None else _replay(args, recordings)
        for failure in ingest_errors:
            print(f"warning: not ingested: {failure}", file=sys.stderr)
        if args.json:
            print(json.dumps(report.as_dict(), ensure_ascii=False, indent=2))
        else:
            print_report(report_console(), report)
        measured = report.metrics
    violations = [v for bound in bounds if (v := bound.violation(measured))]
    for violation in violations:
        print(f"sourced eval: {violation}", file=sys.stderr)
    return 1 if violations else 0


def _fabrications(args: argparse.Namespace, recordings: tuple[Recording, ...] | None) -> FabricationReport:
    cases = load_cases(args.cases)
    config = load_config(args.config)
    gaps = config.gaps() + (load_known_gaps(args.known_gaps) if args.known_gaps else ())
    progress = (lambda items: items) if args.json else \
        (lambda items: track(list(items), description="fabricating", console=Console(stderr=True), transient=True))
    report = run_fabrications(kb=args.kb, cases=cases, config=config, known_gaps=gaps, progress=progress) \
        if recordings is None else run_recorded_fabrications(kb=args.kb, cases=cases, config=config,
                                                             known_gaps=gaps, recordings=recordings,
                                                             progress=progress)
    if args.json:
        print(json.dumps(report.as_dict(), ensure_ascii=False, indent=2))
    else:
        print_fabrications(report_console(), report)
    return report


def print_fabrications(console: Console, report: FabricationReport) -> None:
    """A row per variant: the share handled right with the model's quotes and without any, and why refused."""
    table = Table(title=f"Fabrications ({report.cases} answerable cases)", title_justify="left",
                  box=box.SIMPLE_HEAD)
    for header in ("variant", "expect", "cases", "right\n(quoted)", "right\n(no quote)", "main reasons (quoted)"):
        table.add_column(header, justify="right" if header.startswith(("cases", "right")) else "left")
    rows = report.rows()
    modes = len(report.quote_modes)
    for given, omitted in zip(rows[::modes], rows[modes - 1::modes], strict=True):
        reasons = ", ".join(f"{reason} ({n})" for reason, n in list(given["reasons"].items())[:2])
        table.add_row(given["variant"], given["expect"], str(given["cases"]), _percent(given["right"]),
                      _percent(omitted["right"]) if omitted is not given else "·", reasons)
    console.print(table)
    latency = report.check_latency_ms()
    console.print(f"claim checks per answer: p50 {latency['p50']} ms, p95 {latency['p95']} ms; "
                  f"{plural(report.model_not_called, 'case')} refused before the model")
    wrong = report.wrong()
    for trial in wrong[:FAILURES_SHOWN]:
        handled = "refused" if trial.variant in PASSING else "passed"
        quoted = "quoted" if trial.with_quotes else "no quote"
        console.print(f"{handled}: {trial.case_id} {trial.variant} ({quoted}): "
                      f"{trial.claims[0]['text'][:140]!r} {trial.detail or ''}", markup=False)
    if len(wrong) > FAILURES_SHOWN:
        console.print(f"… and {len(wrong) - FAILURES_SHOWN} more; --json lists them all.")


def _replay(args: argparse.Namespace, recordings: tuple[Recording, ...]) -> tuple[Report, tuple[str, ...]]:
    """The evaluation answered by the recorded model, its report carrying how each request was replayed."""
    with serve_recordings(recordings) as (model, replay):
        report, ingest_errors = _evaluate(args, model)
    return replace(report, replayed=replay.counts()), ingest_errors


def _evaluate(args: argparse.Namespace, model: AnswerModel | None = None) -> tuple[Report, tuple[str, ...]]:
    items = load_items(args.cases)
    config = load_config(args.config)
    gaps = config.gaps() + (load_known_gaps(args.known_gaps) if args.known_gaps else ())
    if args.json:
        return run_evaluation(kb=args.kb, cases=items, config=config, known_gaps=gaps, database=args.database,
                              alone=args.alone, model=model)
    with eval_session(kb=args.kb, config=config, known_gaps=gaps, progress=True, database=args.database,
                      model=model) as session:
        session.check_support(items)
        asking = track(items, description="asking", console=Console(stderr=True), transient=True)
        results = tuple(result for item in asking for result in session.score_item(item, alone=args.alone))
        return Report(results=results, profile=tuple(session.sourced.components())), session.ingest_errors


def print_report(console: Console, report: Report) -> None:
    """The profile that answered, a column per expected kind, then a row per tag, then the follow-ups of
    conversations, then the failures."""
    for line in report.profile:
        console.print(line, style="dim", markup=False, highlight=False)
    shown = report.as_dict()
    by_kind = shown["by_kind"]
    console.print(_kind_table({**by_kind, "all": group(report.results)}))
    tag_rows = [(kind, tag, values) for kind, kind_values in by_kind.items()
                for tag, values in kind_values["tags"].items()]
    if tag_rows:
        console.print(_tag_table(tag_rows))
    if shown["followups"]["all"]["cases"]:
        console.print(_followup_line(shown))
    if report.replayed is not None:
        console.print("Recorded model: " + ", ".join(f"{report.replayed[kind]} {kind}" for kind in REPLAYED)
                      + f"; of the answer cases it answered, refused by the guard "
                        f"{_percent(shown['guard_refused'])}")
    _print_failures(console, report.failures())


def _followup_line(shown: dict[str, Any]) -> str:
    later = shown["followups"]
    return (f"Follow-ups ({plural(later['all']['cases'], 'turn')} after the first): correct answer "
            f"{_percent(shown['followup_correct_answer'])}, wrong answer {_percent(shown['followup_wrong_answer'])}, "
            f"false answer {_percent(shown['followup_false_answer'])}; questions of their own read as "
            f"follow-ups {_percent(shown['standalone_misread'])} of {later['standalone']['cases']}")


def _kind_table(groups: dict[str, dict[str, Any]]) -> Table:
    table = Table(title="By expected kind", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("", no_wrap=True)
    for kind in groups:
        table.add_column(kind.replace("_", " "), justify="right")
    table.add_row("cases", *(str(values["cases"]) for values in groups.values()), end_section=True)
    for key, label in ROWS:
        table.add_row(label, *(_cell(key, values[key]) for values in groups.values()))
    return table


def _tag_table(rows: list[tuple[str, str, dict[str, Any]]]) -> Table:
    """Per tag: the share right, and the error of its kind (wrong answer, or answer where none is due)."""
    table = Table(title="By tag", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("expected")
    table.add_column("tag")
    for header in ("cases", "correct", "wrong or\nfalse ans.", "false\nabstain", "missed", "kind\nacc."):
        table.add_column(header, justify="right")
    shown = None
    for kind, tag, values in rows:
        correct, error = ("correct_answer", "wrong_answer") if kind == "answer" else \
            ("correct_abstention", "false_answer")
        table.add_row("" if kind == shown else kind, tag, str(values["cases"]),
                      *(_percent(values[key]) for key in (correct, error, "false_abstention", "missed",
                                                          "kind_accuracy")))
        shown = kind
    return table


def _percent(value: float | None) -> str:
    return "·" if value is None else f"{value:.0%}"


def _cell(key: str, value: float | None) -> str:
    if value is None:
        return "·"
    return f"{value:.0f}" if key in LATENCY_KEYS else f"{value:.1%}"


def _print_failures(console: Console, failures: list[dict[str, str]]) -> None:
    if not failures:
        console.print("No failures.")
        return
    table = Table(title=f"Failures ({len(failures)})", title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("id", "expected", "got", "reason"):
        table.add_column(column, overflow="fold")
    for failure in failures[:FAILURES_SHOWN]:
        table.add_row(failure["id"], failure["expected"], failure["got"], failure["reason"])
    console.print(table)
    if len(failures) > FAILURES_SHOWN:
        console.print(f"… and {len(failures) - FAILURES_SHOWN} more; --json lists them all.")
