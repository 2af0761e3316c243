"""What a model can do is asked of the model, not read from `SOURCED_MODEL`: front ends stream an answer when the
model bootstrap built (or was given) says its answers stream."""

from pathlib import Path

from core.bootstrap import bootstrap
from core.config import Settings
from tests.unit.fakes import ScriptedModel


def settings(tmp_path: Path) -> Settings:
    return Settings(database_url=f"sqlite:///{tmp_path / 'sourced.db'}", embedder="none")


def test_the_extractive_default_is_posted_at_once(tmp_path: Path) -> None:
    sourced = bootstrap(settings(tmp_path), progress=False)
    try:
        assert not sourced.service.streams_answers
    finally:
        sourced.engine.dispose()


def test_a_generative_model_given_in_code_streams_though_the_environment_names_the_extractive_one(
        tmp_path: Path) -> None:
    sourced = bootstrap(settings(tmp_path), model=ScriptedModel(), progress=False)
    try:
        assert sourced.service.streams_answers
    finally:
        sourced.engine.dispose()
