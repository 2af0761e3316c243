"""Every command-line example the README and docs/ mark runnable (```sh runnable) runs, as written.

Each block runs in bash (`-euo pipefail`) in a folder of its own laid out as a clone after `make run`:
`.venv/bin/sourced` is this suite's `sourced`, `examples/` the example handbook, the demo's own database
(`sourced-demo.db`) already holds the handbook and `sourced.db` nothing (as `make run` leaves them). The
environment is the suite's without any Slack or Sourced variable, so a block sees the defaults a newcomer sees.
A few seconds a block: the whole module is `slow`.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

import pytest

from bot.commands.common import DEMO_DATABASE
from tests.markdown_docs import ROOT, Block, runnable_blocks

pytestmark = pytest.mark.slow

SOURCED: Final = Path(sys.executable).with_name("sourced")
TIMEOUT_S: Final = 300


def clean_environment(database: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SLACK_", "SOURCED_"))}
    return {**env, "SOURCED_DATABASE_URL": f"sqlite:///{database}", "PATH": f"{SOURCED.parent}:{env['PATH']}"}


def a_clone_after_make_run(folder: Path) -> Path:
    """The folder laid out as the docs assume, and the path of its database."""
    (folder / ".venv" / "bin").mkdir(parents=True)
    (folder / ".venv" / "bin" / "sourced").symlink_to(SOURCED)
    (folder / "examples").symlink_to(ROOT / "bot" / "examples", target_is_directory=True)
    return folder / "sourced.db"


@pytest.fixture(scope="module")
def handbook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example handbook ingested once into a demo database, copied for every block."""
    database = a_clone_after_make_run(tmp_path_factory.mktemp("handbook")).with_name(DEMO_DATABASE)
    subprocess.run([str(SOURCED), "ingest", "examples/handbook", "--config", "examples/sourced.yml"],
                   cwd=database.parent, env=clean_environment(database), check=True, capture_output=True,
                   timeout=TIMEOUT_S)
    return database


RESULTS: Final[dict[Block, subprocess.CompletedProcess[str]]] = {}
"""Each block runs once, whichever tests read its result."""


def run(block: Block, handbook: Path) -> subprocess.CompletedProcess[str]:
    if block not in RESULTS:
        with tempfile.TemporaryDirectory(prefix="sourced-docs-") as folder:
            database = a_clone_after_make_run(Path(folder))
            shutil.copyfile(handbook, database.with_name(DEMO_DATABASE))
            RESULTS[block] = subprocess.run(["bash", "-euo", "pipefail", "-c", block.code], cwd=folder, check=False,
                                            env=clean_environment(database), capture_output=True, text=True,
                                            timeout=TIMEOUT_S)  # the test reports the exit code with the output
    return RESULTS[block]


def test_the_suite_has_the_sourced_command_the_docs_call() -> None:
    assert SOURCED.exists(), f"{SOURCED}: install the project (make .venv/.installed) to run the docs' examples"


@pytest.mark.parametrize("block", runnable_blocks(), ids=lambda block: block.name)
def test_the_example_runs(block: Block, handbook: Path) -> None:
    done = run(block, handbook)
    assert done.returncode == 0, f"{block.name} exited {done.returncode}\n{done.stdout}\n{done.stderr}"


def test_the_readmes_own_documents_are_answered_and_the_rest_refused_with_the_owner(handbook: Path) -> None:
    """What the README promises a newcomer: their own folder, ingested, answers from it and refuses the rest."""
    [own] = [block for block in runnable_blocks() if block.path.name == "README.md" and "my-docs" in block.code]
    printed = run(own, handbook).stdout
    assert "answered (answered)" in printed
    assert "travel#meals" in printed
    assert "refused (not_in_corpus)" in printed
    assert "#help-desk can help" in printed
