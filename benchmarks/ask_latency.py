"""`ask` latency on an evaluation set, as `sourced eval` asks it: each question asked once with the sentence
embeddings not yet cached (the first time anyone asks about those passages), then again with them cached (a
running bot, where popular passages recur).

Then what reading a message against its thread costs: each message asked after a turn (a conversation's
earlier turn, or for a file of single cases the case before it), the reading step timed on its own (the turns'
citations checked against the audience through the index, then the offline rewrite), the first time and in
four more rounds, in wall time and in CPU time, and the whole `ask` with and without the turn. The whole `ask`
after a turn answers another question (the reading), first asked, so its difference from the message alone is
not the reading's cost.

    .venv/bin/python -m benchmarks.ask_latency --kb ../shared/eval/dev/kb --cases ../shared/eval/dev/cases.yaml
    .venv/bin/python -m benchmarks.ask_latency --kb examples/handbook --cases examples/conversations.yaml \
        --config examples/sourced.yml
"""

import argparse
import itertools
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from core.application.answerability.followups import OfflineFollowUps
from core.application.orchestrator import Question
from core.config import SourcedConfig, load_config, load_known_gaps
from core.domain import Answered, Audience, Outcome, Refused, Turn
from core.eval.cases import Case, Conversation, Item, load_items
from core.eval.runner import EvalSession, case_principal, eval_session
from core.eval.stats import percentile


def line(label: str, milliseconds: Sequence[float]) -> str:
    return (f"{label:34} n {len(milliseconds):4}  p50 {percentile(milliseconds, 50):6.2f} ms  "
            f"p95 {percentile(milliseconds, 95):6.2f} ms  max {max(milliseconds):6.2f} ms")


def as_turn(question: str, outcome: Outcome) -> Turn:
    kind = outcome.presented_kind if isinstance(outcome, Refused) else outcome.kind
    cited = tuple(c.passage.chunk_id for c in outcome.citations) if isinstance(outcome, Answered) else ()
    return Turn(question=outcome.reading or question, kind=kind, cited=cited)


def pairs(items: Sequence[Item]) -> Iterator[tuple[Case, Case]]:
    """(earlier, message): each later turn of a conversation after the one before it; each single case after
    the case before it."""
    singles = [item for item in items if isinstance(item, Case)]
    yield from itertools.pairwise(singles)
    for conversation in (item for item in items if isinstance(item, Conversation)):
        cases = [conversation.case(n) for n in range(1, len(conversation.turns) + 1)]
        yield from itertools.pairwise(cases)


def single_cases(items: Sequence[Item]) -> list[Case]:
    return [case for item in items for case in
            ([item] if isinstance(item, Case) else [item.case(n) for n in range(1, len(item.turns) + 1)])]


def reading_costs(session: EvalSession, items: Sequence[Item], *, rounds: int = 5) -> dict[str, list[float]]:
    """Milliseconds per message: the reading step the first time its words are seen and in `rounds - 1` more
    rounds, in wall time and in this thread's CPU time (which a busy machine's other processes do not inflate),
    and the whole `ask` without and with the turn."""
    orchestrator = session.sourced.orchestrator
    reader = OfflineFollowUps()
    costs: dict[str, list[float]] = {key: [] for key in ("first", "again", "cpu", "rewritten", "alone", "after")}
    asked = []
    for earlier, case in pairs(items):
        principal = case_principal(case)
        audience = Audience.only(principal)
        turn = as_turn(earlier.question, orchestrator.ask(Question(text=earlier.question, principal=principal,
                                                                   audience=audience)))
        asked.append((case, audience, turn))
    for round_ in range(rounds):
        for case, audience, turn in asked:
            started, cpu = time.perf_counter(), time.thread_time()
            reading = reader.read(case.question, orchestrator.turns_in_view((turn,), audience))
            wall_ms = (time.perf_counter() - started) * 1000
            costs["first" if round_ == 0 else "again"].append(wall_ms)
            costs["cpu"].append((time.thread_time() - cpu) * 1000)
            if round_ == 0 and reading.followup:
                costs["rewritten"].append(wall_ms)
    for case, audience, turn in asked:
        for label, context in (("alone", ()), ("after", (turn,))):
            started = time.perf_counter()
            orchestrator.ask(Question(text=case.question, principal=case_principal(case), audience=audience,
                                      context=context))
            costs[label].append((time.perf_counter() - started) * 1000)
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--cases", type=Path, required=True, help="single cases or conversations")
    parser.add_argument("--known-gaps", type=Path)
    parser.add_argument("--config", type=Path)
    args = parser.parse_args()
    items = load_items(args.cases)
    config = load_config(args.config) if args.config else SourcedConfig()
    gaps = config.gaps() + (load_known_gaps(args.known_gaps) if args.known_gaps else ())
    with eval_session(kb=args.kb, config=config, known_gaps=gaps) as session:
        for label in ("first asked", "asked again"):
            seconds = []
            for case in single_cases(items):
                principal = case_principal(case)
                question = Question(text=case.question, principal=principal, audience=Audience.only(principal))
                started = time.perf_counter()
                session.sourced.orchestrator.ask(question)
                seconds.append((time.perf_counter() - started) * 1000)
            print(line(label, seconds))
        costs = reading_costs(session, items)
    print(line("reading against a turn, first", costs["first"]))
    if costs["rewritten"]:
        print(line("  of which rewritten", costs["rewritten"]))
    print(line("reading against a turn, again", costs["again"]))
    print(line("reading, CPU time (all rounds)", costs["cpu"]))
    print(line("ask, the message alone", costs["alone"]))
    print(line("ask, after a turn", costs["after"]))


if __name__ == "__main__":
    main()
