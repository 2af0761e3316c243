"""The project's own evaluation, in CI: the example handbook with its cases, as `sourced eval` runs it.

It fails when any reply leaks a document its asker may not see, answers a question it should refuse, or
refuses too many it should answer: a build that refuses everything does not pass.
"""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from core.config import load_config
from core.eval.cases import EXPECTATIONS, load_cases
from core.eval.runner import run_evaluation

pytestmark = pytest.mark.slow  # the whole example evaluation set, with and without MiniLM

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CASES = load_cases(EXAMPLES / "cases.yaml")
EVAL = ["eval", "--kb", str(EXAMPLES / "handbook"), "--cases", str(EXAMPLES / "cases.yaml"),
        "--config", str(EXAMPLES / "sourced.yml")]


@pytest.fixture(scope="module", params=["minilm", "none"])
def report(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """The report with the default semantic retrieval, and with plain BM25 (`SOURCED_EMBEDDER=none`): the
    gate holds for both. The variable stays set while the module's tests of that parameter run."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SOURCED_EMBEDDER", request.param)
        config = load_config(EXAMPLES / "sourced.yml")
        evaluated, ingest_errors = run_evaluation(kb=EXAMPLES / "handbook", cases=CASES, config=config,
                                                  known_gaps=config.gaps())
        assert ingest_errors == ()
        yield evaluated.as_dict()


def reasons(report: dict[str, Any], *, where: str) -> list[str]:
    return [f"{f['id']} ({f['got']}): {f['reason']}" for f in report["failures"] if where in f["reason"]]


def test_the_example_cases_cover_every_kind_with_thirty_or_more() -> None:
    assert len(CASES) >= 30
    # `not_retrieved` hangs on the retrieval floor, which differs between the two embedders this set runs with
    assert {case.expect for case in CASES} == set(EXPECTATIONS) - {"not_retrieved"}


def test_no_reply_leaks_a_document_its_asker_may_not_see(report: dict[str, Any]) -> None:
    assert report["leaks"] == 0, reasons(report, where="leak:")


def test_no_question_that_should_be_refused_is_answered(report: dict[str, Any]) -> None:
    assert report["false_answer"] == 0, reasons(report, where="answered, citing")


CORRECT_ANSWER_FLOOR = {"minilm": 0.7, "none": 0.4}
"""Below the committed fit's figures on the handbook (0.79 and 0.50, `training/fit_answerability.py`), with
room for one or two cases; the handbook is one of the sets it is fitted on, so this guards against a broken
build, not for generalisation (that is the leave-one-set-out table)."""


def test_most_answerable_questions_are_answered_correctly(report: dict[str, Any], request: pytest.FixtureRequest
                                                          ) -> None:
    embedder = request.node.callspec.params["report"]
    assert report["correct_answer"] >= CORRECT_ANSWER_FLOOR[embedder], reasons(report, where="")
    assert report["wrong_answer"] <= 0.05, reasons(report, where="missing")


def test_every_case_is_in_its_kind_and_the_json_has_the_documented_keys(
        report: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert report["cases"] == len(CASES) == sum(group["cases"] for group in report["by_kind"].values())

    assert main([*EVAL, "--json"]) == 0

    printed = json.loads(capsys.readouterr().out)
    assert list(printed) == list(report)
    assert printed["false_answer"] == report["false_answer"]


def test_the_report_names_the_profile_that_answered(report: dict[str, Any], request: pytest.FixtureRequest) -> None:
    retrieval, *components = report["profile"]
    hybrid = request.node.callspec.params["report"] == "minilm"
    assert retrieval.startswith("retrieval: hybrid" if hybrid else "retrieval: full text only")
    assert [line.split(":")[0] for line in components] == [
        "question matcher", "reader", "answerability model", "answer model", "follow-ups"]
    fit = f"answerability model: {'semantic' if hybrid else 'lexical'}-"
    assert any(line.startswith(fit) for line in components), components


def test_the_printed_report_opens_with_the_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(EVAL) == 0

    first, second = capsys.readouterr().out.splitlines()[:2]
    assert first.startswith("retrieval: ")
    assert second == "question matcher: none"


def test_a_bound_that_is_not_met_makes_the_command_fail(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*EVAL, "--json", "--fail-under", "correct_answer=1.01", "leaks=0"]) == 1

    assert "correct_answer = " in capsys.readouterr().err
