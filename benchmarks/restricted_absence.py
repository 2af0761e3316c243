"""Does a restricted document change what anyone who may not see it is told? (issue 13)

For every `not_permitted` case of the evaluation sets, the case's question is asked as its asker twice: on the
knowledge base as it is, and on a copy without the documents the asker may not see (the restricted documents
holding the answer among them). The two replies must be the same: the `ask --json` view without the correlation
id and the true kind (the audit's, which alone may say `not_permitted`), and the Slack blocks the bot would
send. Prints how many differ, and the first difference of each. With `--model abstaining` a scripted
OpenAI-compatible model on loopback that always abstains answers, so the replies compared are the model's
refusals with their closest passages.

    python -m benchmarks.restricted_absence ../shared/eval/dev ../shared/eval/dev2 [--model abstaining]
"""

import argparse
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from benchmarks.abstaining_model import always_abstains
from bot.blocks import render
from core.application.orchestrator import Evidence, Question, answerability_note
from core.application.ports import AnswerModel, Embedder
from core.application.presenting import outcome_as_dict
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig, load_config, load_known_gaps
from core.domain import Audience, Outcome, is_visible
from core.eval.cases import Case, load_cases
from core.eval.runner import case_principal
from core.eval.scripted_server import ScriptedServer
from core.llm.openai_compat import OpenAICompatModel
from core.retrieval.embeddings import build_embedder
from core.retrieval.knowledge_base import load_knowledge_base

CORRELATION_ID = "restricted-absence"
"""Prefix of the correlation ids: a case is asked with the same id on both knowledge bases (an answer's feedback
buttons carry it), each database's audit holding it once."""


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
                embedder: Embedder | None, model: AnswerModel | None) -> Iterator[Sourced]:
    owners = evalset / "owners.yml"
    gaps = config.gaps() + (load_known_gaps(owners) if owners.exists() else ())  # as `sourced eval` reads them
    sourced = bootstrap(Settings(database_url=f"sqlite:///{database}"), config=config, known_gaps=gaps,
                        progress=False, embedder=embedder, model=model)
    try:
        errors = sourced.ingestor.ingest(kb).errors
        if errors:
            raise RuntimeError(f"{kb}: {errors[0]}")
        yield sourced
    finally:
        sourced.engine.dispose()


def ask(sourced: Sourced, case: Case) -> dict[str, Any]:
    principal = case_principal(case)
    outcome, evidence = sourced.orchestrator.ask_with_evidence(Question(
        text=case.question, principal=principal, audience=Audience.only(principal),
        correlation_id=f"{CORRELATION_ID}-{case.id}"))
    return what_the_audience_gets(outcome, evidence, case.question)


def compare_set(evalset: Path, embedder: Embedder | None, model: AnswerModel | None = None
                ) -> tuple[int, int, list[str]]:
    """(cases, differing replies, a line per difference) for one evaluation set."""
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
    return len(cases), len(differences), differences


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
    print(f"all: {total} cases, {differing} replies differ")
    return 1 if differing else 0


def compare_sets(sets: list[Path], embedder: Embedder | None, model: AnswerModel | None) -> tuple[int, int]:
    total = differing = 0
    for evalset in sets:
        cases, differ, lines = compare_set(evalset, embedder, model)
        total, differing = total + cases, differing + differ
        print(f"{evalset.name}: {cases} not_permitted cases, {differ} replies differ")
        for line in lines:
            print(f"  {line}")
    return total, differing


if __name__ == "__main__":
    sys.exit(main())
