"""Does a restricted document change what anyone who may not see it is told or can read? (issues 13 and 31)

For every `not_permitted` case of the evaluation sets, the case's question is asked as its asker twice: on the
knowledge base as it is, and on a copy without the documents the asker may not see (the restricted documents
holding the answer among them). Everything read of it must be the same: the reply (the `ask --json` view
without the correlation id and the true kind, which the audit alone may hold, and the Slack blocks the bot
would send), and what operators and scrapers read afterwards (`everything_read`): the operators' Home tab of
an operator with the asker's own roles, the metrics a scrape shows moved, the feedback export once the asker
and another reader have clicked, and the log lines at INFO. Timing is no part of it (latency differs between
any two runs). Prints how many differ, and the first difference of each. With `--model abstaining` a scripted
OpenAI-compatible model on loopback that always abstains answers, so the replies compared are the model's
refusals with their closest passages.

    python -m benchmarks.restricted_absence ../shared/eval/dev ../shared/eval/dev2 [--model abstaining]
"""

import argparse
import logging
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from benchmarks.abstaining_model import always_abstains
from bot import views
from bot.blocks import render
from core.application.feedback import Click, Verdict, why_not_counted
from core.application.orchestrator import Evidence, Question, answerability_note
from core.application.ports import AnswerModel, Embedder
from core.application.presenting import outcome_as_dict
from core.bootstrap import Sourced, bootstrap, build_embedder
from core.config import Settings, SourcedConfig, load_config, load_known_gaps
from core.domain import Answered, Audience, Outcome, Principal, Refused, is_visible
from core.eval.cases import Case, load_cases
from core.eval.runner import case_principal
from core.eval.scripted_server import ScriptedServer
from core.llm.openai_compat import OpenAICompatModel
from core.observability import PrometheusMetrics
from core.retrieval.knowledge_base import load_knowledge_base

CORRELATION_ID = "restricted-absence"
"""Prefix of the correlation ids: a case is asked with the same id on both knowledge bases (an answer's feedback
buttons carry it), each database's audit holding it once."""


READER_KEY = b"restricted-absence"
"""The export's key for readers' hashes: the same on both deployments, as one operator's exports would be."""
ANOTHER_READER = "U-ANOTHER-READER"
INGESTED = datetime(2026, 1, 1, tzinfo=UTC)
"""Home shows the last ingest's minute; each copy of the knowledge base was ingested at its own moment."""
TIMING = ("sourced_answer_seconds",)
"""Samples a scrape reads that are times, not counts: the latency histogram, and each series' `_created`."""


@dataclass(frozen=True, kw_only=True)
class Observed:
    """A deployment, and the metrics registry it alone counts into (two deployments share one process)."""

    sourced: Sourced
    registry: CollectorRegistry


def observed(build: Callable[[PrometheusMetrics], Sourced]) -> Observed:
    registry = CollectorRegistry()
    return Observed(sourced=build(PrometheusMetrics(registry)), registry=registry)


def everything_read(deployment: Observed, question: Question) -> dict[str, Any]:
    """One question, and everything read of it: the reply as its audience gets it (`what_the_audience_gets`),
    then the operators' Home, the metrics a scrape shows moved, the feedback export after the readers' clicks,
    and the INFO log lines it wrote."""
    since = datetime.now(UTC)
    before = scraped(deployment.registry)
    with logged() as lines:
        outcome, evidence = deployment.sourced.orchestrator.ask_with_evidence(question)
    click_as_readers(deployment.sourced, outcome, question.principal)
    exported = deployment.sourced.feedback.labelled_pairs(reader_key=READER_KEY,
                                                           correlation_ids={outcome.correlation_id})
    return {**what_the_audience_gets(outcome, evidence, question.text),
            "home": operators_home(deployment.sourced, question.audience, since),
            "metrics": moved(before, scraped(deployment.registry)),
            "export": [asdict(pair) for pair in exported], "logs": lines}


def operators_home(sourced: Sourced, audience: Audience, since: datetime) -> dict[str, Any]:
    """The Home tab of an operator with the audience's roles, over the decisions since `since` (this one)."""
    documents = [replace(document, ingested_at=INGESTED) for document in sourced.catalog.documents(audience)]
    activity = replace(sourced.activity.since(since), p95_latency_ms=None)
    home: dict[str, Any] = views.home_view(documents, activity).to_dict()
    return home


def scraped(registry: CollectorRegistry) -> dict[str, float]:
    """Every sample a scrape of `registry` reads, but timing."""
    return {f"{sample.name}{sorted(sample.labels.items())}": sample.value for metric in registry.collect()
            for sample in metric.samples
            if not sample.name.startswith(TIMING) and not sample.name.endswith("_created")}


def moved(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {name: value - before.get(name, 0.0) for name, value in after.items() if value != before.get(name, 0.0)}


def click_as_readers(sourced: Sourced, outcome: Outcome, asker: Principal) -> None:
    """The asker says the first closest passage answered (or that an answer helped), and someone else clicks
    too; each click counts or not by `core.application.feedback`, as the bot's would."""
    clicks: list[tuple[str, Verdict, str | None]] = [(ANOTHER_READER, "helpful", None)]
    if isinstance(outcome, Refused) and outcome.nearest:
        clicks.insert(0, (asker.user_id, "answered_it", outcome.nearest[0].chunk_id))
    elif isinstance(outcome, Answered):
        clicks.insert(0, (asker.user_id, "helpful", None))
    for reader, verdict, chunk_id in clicks:
        click = Click(reader=reader, channel_id=None, ephemeral=True)
        if why_not_counted(outcome.correlation_id, click, decisions=sourced.audit_log, chunk_id=chunk_id) is None:
            sourced.feedback.record(outcome.correlation_id, reader, verdict, chunk_id=chunk_id)


@contextmanager
def logged() -> Iterator[list[str]]:
    """The log lines written at INFO and above meanwhile, as an operator's log shows them."""
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(f"{record.levelname} {record.name}: {record.getMessage()}")

    root = logging.getLogger()
    handler, level = Collect(logging.INFO), root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def what_the_audience_gets(outcome: Outcome, evidence: Evidence, question: str) -> dict[str, Any]:
    """The reply as the people reading it get it: the operator's JSON view without what only the audit may hold
    (the true kind) or what differs per request (the correlation id), and the Slack message."""
    view = outcome_as_dict(outcome, answerability_note(evidence.assessment))
    del view["kind"], view["correlation_id"]
    message = render(outcome, question=question, clarification_id="pending", shareable=True)
    return {"view": view, "text": message.text, "blocks": message.block_dicts()}


def first_difference(left: Any, right: Any, path: str = "") -> str | None:
    """Where two JSON-like values first differ, as a path and the two values."""
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right)):
            found = first_difference(left.get(key), right.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for n, (a, b) in enumerate(zip(left, right, strict=True)):
            found = first_difference(a, b, f"{path}[{n}]")
            if found:
                return found
        return None
    if left == right:
        return None
    a, b = str(left), str(right)
    at = next((n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(0, at - 40)  # where the two first differ, with some context
    return f"{path}: {a[start:at + 80]!r} != {b[start:at + 80]!r}"


def visible_copy(kb: Path, destination: Path, audience: Audience) -> Path:
    """The knowledge base without the files of the documents `audience` may not see."""
    loaded = load_knowledge_base(kb)
    destination.mkdir(parents=True)
    for document in loaded.documents:
        if is_visible(document.audience, audience):
            target = destination / document.path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(kb / document.path, target)
    return destination


@contextmanager
def application(kb: Path, database: Path, *, config: SourcedConfig, evalset: Path,
                embedder: Embedder | None, model: AnswerModel | None) -> Iterator[Observed]:
    owners = evalset / "owners.yml"
    gaps = config.gaps() + (load_known_gaps(owners) if owners.exists() else ())  # as `sourced eval` reads them
    deployment = observed(lambda metrics: bootstrap(Settings(database_url=f"sqlite:///{database}"), config=config,
                                                    known_gaps=gaps, progress=False, embedder=embedder,
                                                    model=model, metrics=metrics))
    try:
        errors = deployment.sourced.ingestor.ingest(kb).errors
        if errors:
            raise RuntimeError(f"{kb}: {errors[0]}")
        yield deployment
    finally:
        deployment.sourced.engine.dispose()


def ask(deployment: Observed, case: Case) -> dict[str, Any]:
    principal = case_principal(case)
    return everything_read(deployment, Question(text=case.question, principal=principal,
                                                audience=Audience.only(principal),
                                                correlation_id=f"{CORRELATION_ID}-{case.id}"))


@dataclass(frozen=True, kw_only=True)
class Compared:
    cases: int
    differences: list[str]
    """One line per case whose reply or any surface read after it differs."""
    exported: int
    """Cases whose readers' clicks reached the export (so the export was compared on something)."""
    logged: int
    """Cases that wrote log lines at INFO."""


def compare_set(evalset: Path, embedder: Embedder | None, model: AnswerModel | None = None) -> Compared:
    """Every `not_permitted` case of one evaluation set, read everywhere on both knowledge bases."""
    cases = [case for case in load_cases(evalset / "cases.yaml") if case.expect == "not_permitted"]
    config = load_config(None)
    kb = evalset / "kb"
    differences: list[str] = []
    with tempfile.TemporaryDirectory(prefix="restricted-absence-") as tmp:
        folder = Path(tmp)
        with application(kb, folder / "whole.db", config=config, evalset=evalset, embedder=embedder,
                         model=model) as whole:
            replies = {case.id: ask(whole, case) for case in cases}
        for n, case in enumerate(cases):
            audience = Audience.only(case_principal(case))
            copy = visible_copy(kb, folder / f"kb-{n}", audience)
            with application(copy, folder / f"visible-{n}.db", config=config, evalset=evalset,
                             embedder=embedder, model=model) as visible:
                alone = ask(visible, case)
            found = first_difference(replies[case.id], alone)
            if found:
                differences.append(f"{evalset.name}/{case.id}: {found}")
    return Compared(cases=len(cases), differences=differences,
                    exported=sum(1 for reply in replies.values() if reply["export"]),
                    logged=sum(1 for reply in replies.values() if reply["logs"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", type=Path, nargs="+", help="evaluation set folders (kb/, cases.yaml, owners.yml)")
    parser.add_argument("--embedder", choices=("auto", "none", "minilm"), default="auto")
    parser.add_argument("--model", choices=("default", "abstaining"), default="default",
                        help="abstaining: a scripted model on loopback that always abstains")
    args = parser.parse_args()
    embedder = build_embedder(args.embedder)  # one for every database: each text is embedded once
    total = differing = 0
    with ExitStack() as stack:
        model = None
        if args.model == "abstaining":
            server = stack.enter_context(ScriptedServer(always_abstains))
            model = OpenAICompatModel(base_url=server.base_url, model="always-abstains")
        total, differing = compare_sets(args.sets, embedder, model)
    print(f"all: {total} cases, {differing} differ")
    return 1 if differing else 0


def compare_sets(sets: list[Path], embedder: Embedder | None, model: AnswerModel | None) -> tuple[int, int]:
    total = differing = 0
    for evalset in sets:
        compared = compare_set(evalset, embedder, model)
        total, differing = total + compared.cases, differing + len(compared.differences)
        print(f"{evalset.name}: {compared.cases} not_permitted cases, {len(compared.differences)} differ (reply, "
              f"Home, metrics, export or logs); {compared.exported} left feedback in the export, "
              f"{compared.logged} wrote log lines at INFO")
        for line in compared.differences:
            print(f"  {line}")
    return total, differing


if __name__ == "__main__":
    sys.exit(main())
