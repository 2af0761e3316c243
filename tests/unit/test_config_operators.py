"""`operators:` in `sourced.yml` names roles that exist, and never all staff unless that is said outright."""

from pathlib import Path

import pytest

from core.config import ConfigError, load_config


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sourced.yml"
    path.write_text(text, encoding="utf-8")
    return path


def test_operators_naming_a_role_of_roles_are_accepted(tmp_path: Path) -> None:
    config = load_config(written(tmp_path, "roles: {ops: ['@sourced-ops']}\noperators: [ops]\n"))
    assert config.operators == ["ops"]


def test_an_operator_role_that_roles_does_not_define_is_an_error_naming_it_and_the_roles(tmp_path: Path) -> None:
    path = written(tmp_path, "roles: {ops: ['@sourced-ops'], hr: ['@people']}\noperators: [opps]\n")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(raised.value) == f"{path}: operators: 'opps' is not a role of `roles` (roles: 'hr', 'ops')"


def test_everyone_as_operators_is_an_error_unless_it_is_explicitly_allowed(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="operators: 'everyone' would show every member of staff"):
        load_config(written(tmp_path, "operators: [everyone]\n"))
    allowed = load_config(written(tmp_path, "operators: [everyone]\nallow_everyone_operators: true\n"))
    assert allowed.operators == ["everyone"]
