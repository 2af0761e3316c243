"""The example handbook's conversations, as `sourced eval` runs them: follow-ups read in their thread answer
what every message read alone cannot, without leaking, without answering what should be refused, and without
taking questions of their own for follow-ups."""

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from core.config import load_config
from core.eval.cases import load_items
from core.eval.runner import run_evaluation

pytestmark = pytest.mark.slow  # every turn of 24 conversations, twice

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CONVERSATIONS = load_items(EXAMPLES / "conversations.yaml")
EVAL = ["eval", "--kb", str(EXAMPLES / "handbook"), "--cases", str(EXAMPLES / "conversations.yaml"),
        "--config", str(EXAMPLES / "sourced.yml"), "--json"]


@pytest.fixture(scope="module")
def reports() -> dict[str, dict[str, Any]]:
    config = load_config(EXAMPLES / "sourced.yml")
    found = {}
    for mode in ("thread", "alone"):
        report, errors = run_evaluation(kb=EXAMPLES / "handbook", cases=CONVERSATIONS, config=config,
                                        known_gaps=config.gaps(), alone=mode == "alone")
        assert errors == ()
        found[mode] = report.as_dict()
    return found


def test_the_set_has_forty_or_more_turns_after_the_first_and_questions_of_their_own_among_them() -> None:
    later = [(item, n) for item in CONVERSATIONS for n in range(2, len(item.turns) + 1)]  # type: ignore[union-attr]
    assert len(CONVERSATIONS) >= 20 and len(later) >= 30
    assert any(item.standalone(n) for item, n in later)  # type: ignore[union-attr]


def test_follow_ups_read_in_their_thread_are_answered_far_more_often_than_read_alone(
        reports: dict[str, dict[str, Any]]) -> None:
    thread, alone = reports["thread"], reports["alone"]
    assert thread["followup_correct_answer"] >= 0.55  # 0.62 measured; alone 0.16
    assert thread["followup_correct_answer"] >= alone["followup_correct_answer"] + 0.3


def test_reading_in_the_thread_leaks_nothing_and_answers_nothing_it_should_refuse(
        reports: dict[str, dict[str, Any]]) -> None:
    assert reports["thread"]["leaks"] == 0
    assert reports["thread"]["followup_false_answer"] == 0
    assert reports["thread"]["followup_wrong_answer"] <= 0.2  # 0.12 measured; the reading line shows each


def test_questions_of_their_own_asked_in_a_thread_are_read_alone(reports: dict[str, dict[str, Any]]) -> None:
    assert reports["thread"]["standalone_misread"] < 0.05


def test_the_cli_prints_the_follow_up_rates(capsys: pytest.CaptureFixture[str],
                                            reports: dict[str, dict[str, Any]]) -> None:
    assert main(EVAL) == 0
    printed = json.loads(capsys.readouterr().out)
    for key in ("followup_correct_answer", "followup_wrong_answer", "followup_false_answer", "standalone_misread"):
        assert printed[key] == reports["thread"][key]
    assert printed["followups"]["standalone"]["cases"] >= 1
