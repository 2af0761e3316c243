"""A slow or failing OpenAI-compatible model cannot hold a reply: the scripted model on loopback, wired from
settings through `bootstrap`, sleeping past the call's deadline or failing, gives `model_unavailable` within the
deadline; after the configured failures the breaker refuses at once, without a request, until its cool-down."""

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.commands.common import EXAMPLES
from core.application.orchestrator import Question
from core.bootstrap import Sourced, bootstrap
from core.config import Settings
from core.domain import EVERYONE, Audience, Outcome, Principal, Refused
from core.eval.scripted_server import ScriptedFailure, ScriptedServer

QUESTION = "What's the daily meal allowance when I travel for work?"
STAFF = Principal(user_id="U1", roles=frozenset({EVERYONE}))
DEADLINE_S = 1.0


@pytest.fixture
def handbook(tmp_path: Path) -> Path:
    return tmp_path / "sourced.db"


def deployed(database: Path, server: ScriptedServer, **settings: float) -> Sourced:
    """The travel policy alone, answered by the scripted model."""
    sourced = bootstrap(Settings(database_url=f"sqlite:///{database}", embedder="none", model="openai",
                                 model_base_url=server.base_url, model_name="scripted", **settings),
                        config_file=EXAMPLES / "sourced.yml", progress=False)
    knowledge = database.parent / "kb"
    knowledge.mkdir()
    shutil.copy(EXAMPLES / "handbook" / "expenses-2025.md", knowledge)
    assert not sourced.ingestor.ingest(knowledge).errors
    return sourced


def ask(sourced: Sourced) -> tuple[Outcome, float]:
    started = time.monotonic()
    outcome = sourced.orchestrator.ask(Question(text=QUESTION, principal=STAFF, audience=Audience.only(STAFF)))
    return outcome, time.monotonic() - started


@pytest.fixture
def sleeping_model() -> Iterator[ScriptedServer]:
    def sleep_past_the_deadline(_messages: object) -> str:
        time.sleep(DEADLINE_S * 4)
        return "{}"

    with ScriptedServer(sleep_past_the_deadline) as server:
        yield server


@pytest.fixture
def failing_model() -> Iterator[ScriptedServer]:
    def fail(_messages: object) -> str:
        raise ScriptedFailure(503, retry_after_ms=10)

    with ScriptedServer(fail) as server:
        yield server


def test_a_model_sleeping_past_the_deadline_is_model_unavailable_within_the_deadline(
        handbook: Path, sleeping_model: ScriptedServer) -> None:
    sourced = deployed(handbook, sleeping_model, model_deadline_s=DEADLINE_S)

    outcome, took = ask(sourced)

    assert isinstance(outcome, Refused) and outcome.kind == "model_unavailable"
    assert DEADLINE_S * 0.9 < took < DEADLINE_S + 0.5
    assert sleeping_model.requests == 1  # no retry could fit in what was left
    sourced.engine.dispose()


def test_after_the_configured_failures_the_breaker_refuses_at_once_without_asking_the_model(
        handbook: Path, failing_model: ScriptedServer) -> None:
    sourced = deployed(handbook, failing_model, breaker_failures=2, breaker_cool_down_s=60.0)

    for _ in range(2):
        outcome, _ = ask(sourced)
        assert isinstance(outcome, Refused) and outcome.kind == "model_unavailable"
    asked = failing_model.requests
    assert asked == 2 * 3  # each call: one attempt and two retries of the 503, 10 ms apart as the server asks
    outcome, took = ask(sourced)

    assert isinstance(outcome, Refused) and outcome.kind == "model_unavailable"
    assert failing_model.requests == asked
    assert took < 0.5
    [record, *_] = sourced.audit_log.list(limit=1)
    assert record.kind == "model_unavailable"
    sourced.engine.dispose()


def test_after_the_cool_down_a_probe_reaches_the_model_again(handbook: Path, failing_model: ScriptedServer) -> None:
    sourced = deployed(handbook, failing_model, breaker_failures=1, breaker_cool_down_s=0.3)
    ask(sourced)
    asked = failing_model.requests
    ask(sourced)
    assert failing_model.requests == asked  # open
    time.sleep(0.35)

    ask(sourced)

    assert failing_model.requests > asked  # the probe went through (and failed: open again)
    sourced.engine.dispose()
