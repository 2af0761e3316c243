"""Every install hint is a command for the Python running Sourced with the requirements pyproject lists, never
`pip install 'sourced[...]'`: a project of that name on PyPI is another one."""

import shlex
import sys
import tomllib
from pathlib import Path

import pytest

from core.install import install_extra

EXTRAS = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
                       )["project"]["optional-dependencies"]


@pytest.mark.parametrize("extra", ["semantic", "formats", "local", "bench", "postgres", "connectors"])
def test_an_extras_hint_installs_its_requirements_into_this_python(extra: str) -> None:
    command = shlex.split(install_extra(extra))
    assert command[:4] == [sys.executable, "-m", "pip", "install"]
    assert command[4:] == EXTRAS[extra]
    assert not any(word.startswith("sourced[") for word in command)
