"""`sourced eval --fabrications` on the example handbook: a scripted model on loopback, behind the real
OpenAI-compatible adapter, answers every answerable case with code-made variants, and the guard passes the
faithful ones and refuses the fabrications the sentence-local rules are for."""

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main

pytestmark = pytest.mark.slow  # the fabrication benchmark over the example cases

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CHECKED_BY_THE_GUARD = ("number_swap", "negation", "other_chunk")
"""Exact rules; a role swapped for a word from outside the chunk ("engineer" for "manager") can pass."""


@pytest.fixture(scope="module")
def run() -> tuple[int, dict[str, Any], str]:
    """One run (module-scoped: it asks every case 18 times), its exit code, JSON report and error output."""
    printed, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(errors):
        code = main(["eval", "--kb", str(EXAMPLES / "handbook"), "--cases", str(EXAMPLES / "cases.yaml"),
                     "--config", str(EXAMPLES / "sourced.yml"), "--fabrications", "--json",
                     "--fail-under", "faithful_quote=1", "negation=1", "other_question=0.9"])
    return code, json.loads(printed.getvalue()), errors.getvalue()


def rows(report: dict[str, Any], quotes: str = "given") -> dict[str, dict[str, Any]]:
    return {row["variant"]: row for row in report["variants"] if row["quotes"] == quotes}


def test_every_variant_is_reported_with_and_without_quotes(run: tuple[int, dict[str, Any], str]) -> None:
    _, report, _ = run
    assert report["cases"] >= 15
    assert len(report["variants"]) == 18
    assert all(row["cases"] > 0 for row in report["variants"])


def test_faithful_answers_pass_and_the_fabrications_the_rules_target_are_refused(
        run: tuple[int, dict[str, Any], str]) -> None:
    _, report, _ = run
    for quotes in ("given", "omitted"):
        measured = rows(report, quotes)
        assert measured["faithful_quote"]["right"] == 1.0
        assert measured["faithful_paraphrase"]["right"] >= 0.9
        for variant in CHECKED_BY_THE_GUARD:
            assert measured[variant]["right"] >= 0.9, (quotes, variant, measured[variant])
        assert measured["other_question"]["right"] > 0, "the ranking check refuses some true off-question answers"
    assert report["check_latency_ms"]["p50"] is not None


def test_a_bound_not_met_fails_the_run_and_names_the_variant(run: tuple[int, dict[str, Any], str]) -> None:
    code, _, errors = run
    assert code == 1
    assert "other_question" in errors and "faithful_quote" not in errors
