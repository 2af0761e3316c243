"""`sourced eval --recorded`: a capable model's recorded replies, replayed on loopback through the real adapter
and the guard. The recording here is our own, written by the test for its own small knowledge base: one request
recorded exactly as the pipeline sends it, one recorded under other sources (its claim's id moved to the source
holding its quote), one whose quote is in no source (stale), and a question never recorded."""

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from core.application.orchestrator import Question
from core.config import SourcedConfig
from core.domain import Audience, Principal
from core.eval.replay import RecordedModel, Recording, load_recordings, question_of
from core.eval.runner import eval_session
from core.eval.scripted_server import ScriptedFailure, ScriptedServer
from core.llm.openai_compat import OpenAICompatModel

GREENHOUSE = """---
id: greenhouse
title: Greenhouse Rota
owner: "#greenhouse"
audience: [everyone]
updated: 2026-03-01
---
# Greenhouse Rota

## Watering

The orchid house is watered every 3 days by the morning shift. It must never be watered after 6 pm.

## Seed orders

Seed orders go to the nursery lead by the first Monday of the month.
"""
CASES = """
- id: g-1
  question: "How often is the orchid house watered?"
  asker: {roles: [everyone]}
  expect: answer
  support: ["greenhouse#Watering"]
  must_include: ["3 days"]
- id: g-2
  question: "Who do seed orders go to?"
  asker: {roles: [everyone]}
  expect: answer
  support: ["greenhouse#Seed orders"]
  must_include: ["nursery lead"]
- id: g-3
  question: "When can the orchid house be watered in the evening?"
  asker: {roles: [everyone]}
  expect: answer
  support: ["greenhouse#Watering"]
- id: g-4
  question: "What is the greenhouse wifi password?"
  asker: {roles: [everyone]}
  expect: not_in_corpus
- id: g-5
  question: "Which shift waters the orchid house?"
  asker: {roles: [everyone]}
  expect: answer
  support: ["greenhouse#Watering"]
"""
WATERED = "The orchid house is watered every 3 days by the morning shift."
SEEDS = "Seed orders go to the nursery lead by the first Monday of the month."


def envelope(text: str, quote: str, chunk_id: str = "greenhouse#watering") -> str:
    return json.dumps({"found": True, "answer": text, "claims": [{"text": text, "chunk_ids": [chunk_id],
                                                                  "quote": quote}],
                       "confidence": "high", "refusal_reason": None})


@pytest.fixture
def set_folder(tmp_path: Path) -> Path:
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "greenhouse.md").write_text(GREENHOUSE, encoding="utf-8")
    (tmp_path / "cases.yaml").write_text(CASES, encoding="utf-8")
    return tmp_path


def user_message_for(kb: Path, question: str) -> str:
    """The user message the pipeline sends the model for this question, as a recorder would have seen it."""
    seen: list[str] = []

    def capture(messages: list[dict[str, Any]]) -> str:
        seen.append(str(messages[-1]["content"]))
        raise ScriptedFailure(503)

    with ScriptedServer(capture) as server:
        model = OpenAICompatModel(base_url=server.base_url, model="recorder", max_retries=0)
        with eval_session(kb=kb, config=SourcedConfig(), known_gaps=(), model=model) as session:
            principal = Principal(user_id="recorder", roles=frozenset({"everyone"}))
            session.sourced.orchestrator.ask(Question(text=question, principal=principal,
                                                      audience=Audience.only(principal)))
    return seen[0]


def test_a_recording_replays_exactly_moved_or_stale_and_the_run_says_how_many(set_folder: Path) -> None:
    exact = user_message_for(set_folder / "kb", "How often is the orchid house watered?")
    lines = [
        {"question": "How often is the orchid house watered?", "user": exact,
         "content": envelope("The orchid house is watered every 3 days.", WATERED)},
        {"question": "Who do seed orders go to?", "user": "<documents>another retrieval</documents>",
         "content": envelope("Seed orders go to the nursery lead.", SEEDS, chunk_id="old-id#3")},
        {"question": "When can the orchid house be watered in the evening?", "user": "<documents></documents>",
         "content": envelope("It may be watered until 9 pm.", "Watering is allowed until 9 pm.", "old-id#9")},
    ]
    recording = set_folder / "recorded.jsonl"
    recording.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["eval", "--kb", str(set_folder / "kb"), "--cases", str(set_folder / "cases.yaml"),
                     "--recorded", str(recording), "--json"])
    report = json.loads(printed.getvalue())

    assert code == 0
    assert report["replayed"] == {"exact": 1, "moved": 1, "stale": 1, "unrecorded": 1}
    got = {failure["id"]: failure for failure in report["failures"]}
    assert "g-1" not in got and "g-2" not in got, got  # answered from the recording, ids moved for g-2
    assert got["g-3"]["got"] == "invalid_citation"  # a stale quote is in no source: its old id is unknown
    assert got["g-5"]["got"] == "model_unavailable"  # reached the model, never recorded
    assert "g-4" not in got  # nothing retrieved: refused before the model, needing no recording
    assert report["guard_refused"] == round(1 / 3, 4)  # of the three the model answered, the stale one
    assert "answer model: recorded:recorded" in report["profile"]


def test_a_question_never_recorded_fails_as_an_unavailable_model_would() -> None:
    recorded = RecordedModel([Recording(question="Q one?", user="<question>\nQ one?\n</question>",
                                        content="{}")])
    with pytest.raises(ScriptedFailure):
        recorded.respond([{"role": "user", "content": "<question>\nQ two?\n</question>"}])
    assert recorded.counts() == {"exact": 0, "moved": 0, "stale": 0, "unrecorded": 1}
    assert question_of("<documents></documents>\n<question>\nQ two?\n</question>") == "Q two?"


def test_a_recording_file_that_is_not_jsonl_names_its_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"question": "q", "user": "u", "content": "c"}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken.jsonl:2"):
        load_recordings(broken)


def test_recorded_claims_falsified_are_refused_and_kept_as_recorded(set_folder: Path) -> None:
    exact = user_message_for(set_folder / "kb", "How often is the orchid house watered?")
    line = {"question": "How often is the orchid house watered?", "user": exact,
            "content": envelope("The orchid house is watered every 3 days by the morning shift.", WATERED)}
    recording = set_folder / "recorded.jsonl"
    recording.write_text(json.dumps(line), encoding="utf-8")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        main(["eval", "--kb", str(set_folder / "kb"), "--cases", str(set_folder / "cases.yaml"),
              "--recorded", str(recording), "--fabrications", "--json"])
    rows = {row["variant"]: row for row in json.loads(printed.getvalue())["variants"]}

    assert rows["recorded"]["right"] == 1.0  # the faithful recording passes
    for variant in ("number", "negation"):  # "every 6 days" (the source's other number), "is not watered"
        assert rows[variant]["cases"] >= 1 and rows[variant]["right"] == 1.0, rows[variant]
