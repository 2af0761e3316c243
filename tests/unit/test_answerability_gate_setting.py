"""Where the answerability gate stands: the operator's setting, else by the kind of model configured."""

import pytest

from core.bootstrap import answerability_gate
from core.config import Settings
from core.llm.extractive import ExtractiveModel
from tests.unit.fakes import ScriptedModel


def test_the_extractive_model_keeps_the_gate_before_it_since_the_assessment_is_its_decision() -> None:
    assert answerability_gate(Settings(), ExtractiveModel()) == "before_model"


def test_a_generative_model_decides_itself_and_the_gate_stands_after_it() -> None:
    assert answerability_gate(Settings(), ScriptedModel()) == "after_model"


@pytest.mark.parametrize("gate", ["before_model", "after_model", "off"])
def test_the_operators_setting_wins_for_any_model(gate: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCED_ANSWERABILITY_GATE", gate)
    assert answerability_gate(Settings(), ScriptedModel()) == gate
    assert answerability_gate(Settings(), ExtractiveModel()) == gate


def test_an_unknown_gate_setting_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCED_ANSWERABILITY_GATE", "sometimes")
    with pytest.raises(ValueError, match="answerability_gate"):
        Settings()
