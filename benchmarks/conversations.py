"""Follow-ups on conversation sets, three ways: every message read alone (Sourced before follow-ups), read by the
offline rewrite, and read by a generative model through the OpenAI-compatible adapter. The extractive model
answers in all three, so only the reading differs.

The model is scripted (`core.eval.scripted_server`, on loopback): it replies to each rewrite request with the
`reading:` the case gives the turn, and says "not a follow-up" for a turn without one. It stands for a model that
reads every turn as the case's author did: an upper bound for the rewrite, measured through the real prompt,
HTTP client, strict parser and pipeline.

    .venv/bin/python -m benchmarks.conversations            # the three bundled sets, tuned and held-out parts
    .venv/bin/python -m benchmarks.conversations --json
"""

import argparse
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Any

from core.application.answerability.followups import ModelFollowUps
from core.application.ports import FollowUps
from core.config import SourcedConfig, load_config, load_known_gaps
from core.eval.cases import Conversation, load_items
from core.eval.report import Report, followups
from core.eval.runner import eval_session
from core.eval.scripted_server import ScriptedServer
from core.llm.openai_compat import OpenAICompatModel

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "eval"
KEYS = ("followup_correct_answer", "followup_wrong_answer", "followup_false_answer", "standalone_misread")


@dataclass(frozen=True, kw_only=True)
class ConversationSet:
    name: str
    kb: Path
    cases: Path
    config: SourcedConfig
    gaps: Path | None = None


def bundled_sets(shared: Path = SHARED) -> list[ConversationSet]:
    """The example handbook's conversations, and dev's and dev2's when their knowledge bases are there."""
    examples = ROOT / "bot" / "examples"
    sets = [ConversationSet(name="examples", kb=examples / "handbook", cases=examples / "conversations.yaml",
                            config=load_config(examples / "sourced.yml"))]
    for name in ("dev", "dev2"):
        if (shared / name / "kb").is_dir():
            sets.append(ConversationSet(name=name, kb=shared / name / "kb", gaps=shared / name / "owners.yml",
                                        cases=ROOT / "benchmarks" / "conversations" / f"{name}.yaml",
                                        config=SourcedConfig()))
    return sets


class ScriptedReadings:
    """The reply of a model that reads each turn as its case says: found by the message and the turn before."""

    def __init__(self, conversations: Sequence[Conversation]) -> None:
        self._readings: dict[tuple[str, str], str | None] = {}
        for conversation in conversations:
            for before, turn in itertools.pairwise(conversation.turns):
                self._readings[(before.reading or before.question, turn.question)] = turn.reading

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        prompt = str(messages[-1]["content"])
        message = unescape(_between(prompt, "<message>\n", "\n</message>"))
        asked = [unescape(found) for found in re.findall(r"<question>(.*?)</question>", prompt, re.DOTALL)]
        reading = self._readings.get((asked[-1] if asked else "", message))
        if reading is None:
            return json.dumps({"followup": False, "question": message})
        return json.dumps({"followup": True, "question": reading})


def _between(text: str, start: str, end: str) -> str:
    head = text.index(start) + len(start)
    return text[head: text.index(end, head)]


def measure(chosen: ConversationSet, *, mode: str, reader: FollowUps | None = None) -> dict[str, dict[str, Any]]:
    """`mode`: alone, offline or model; the figures of the tuned part, the held-out part and both."""
    items = [item for item in load_items(chosen.cases) if isinstance(item, Conversation)]
    gaps = chosen.config.gaps() + (load_known_gaps(chosen.gaps) if chosen.gaps else ())
    parts: dict[str, dict[str, Any]] = {}
    with eval_session(kb=chosen.kb, config=chosen.config, known_gaps=gaps, followups=reader) as session:
        scored = {item.id: session.score_conversation(item, alone=mode == "alone") for item in items}
    for part, keep in (("tuned", False), ("heldout", True), ("all", None)):
        chosen_items = [item for item in items if keep is None or ("heldout" in item.tags) == keep]
        results = tuple(r for item in chosen_items for r in scored[item.id])
        report = Report(results=results)
        parts[part] = {"conversations": len(chosen_items),
                       "turns_after_first": sum(r.followup for r in results),
                       **{key: report.metrics[key] for key in KEYS},
                       "first_turn_correct_answer": Report(results=tuple(r for r in results if not r.followup)
                                                           ).metrics["correct_answer"],
                       "elliptical": {key: followups(results)["elliptical"][key]
                                      for key in ("cases", "correct_answer", "wrong_answer", "false_answer")}}
    return parts


def run(sets: Sequence[ConversationSet]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for chosen in sets:
        conversations = [item for item in load_items(chosen.cases) if isinstance(item, Conversation)]
        with ScriptedServer(ScriptedReadings(conversations)) as server:
            model = OpenAICompatModel(base_url=server.base_url, model="scripted-rewriter", max_retries=0)
            report[chosen.name] = {"alone": measure(chosen, mode="alone"), "offline": measure(chosen, mode="offline"),
                                   "model": measure(chosen, mode="model", reader=ModelFollowUps(model.rewriter()))}
    return report


def _percent(value: float | None) -> str:
    return "  · " if value is None else f"{value:4.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--shared", type=Path, default=SHARED, help="where dev/ and dev2/ are (their kb/)")
    args = parser.parse_args()
    report = run(bundled_sets(args.shared))
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{'set':9} {'part':8} {'mode':8} {'turns':>5} {'correct':>8} {'wrong':>6} {'false':>6} {'misread':>8}")
    for name, modes in report.items():
        for part in ("tuned", "heldout", "all"):
            for mode in ("alone", "offline", "model"):
                row = modes[mode][part]
                print(f"{name:9} {part:8} {mode:8} {row['turns_after_first']:5} "
                      f"{_percent(row['followup_correct_answer']):>8} {_percent(row['followup_wrong_answer']):>6} "
                      f"{_percent(row['followup_false_answer']):>6} {_percent(row['standalone_misread']):>8}")


if __name__ == "__main__":
    main()
