"""Every command-line example the README and docs/ mark runnable (```sh runnable) runs, as written, and every
question the README shows gets the outcome it shows: each `sourced ask` line's comment (`# answered, citing
DOC#SECTION`, `# refused: #owner can help`), the opening conversation (its answer's sentences and source, its
refusal's owner and closest passage), and the demo's examples and suggestions (issue 56: the README's first
question was refused by the README's own set-up).

Each block runs in bash (`-euo pipefail`) in a folder of its own laid out as a clone after `make run`:
`.venv/bin/sourced` is this suite's `sourced`, `examples/` the example handbook, the demo's own database
(`sourced-demo.db`) already holds the handbook and `sourced.db` nothing (as `make run` leaves them). The
environment is the suite's without any Slack or Sourced variable, so a block sees the defaults a newcomer sees.
A few seconds a block: the whole module is `slow`.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

import pytest

from bot.commands.demo import EXAMPLE_QUESTIONS, SUGGESTED, suggestion
from core.config import DEMO_DATABASE
from tests.markdown_docs import ROOT, AskExample, Block, ask_examples, exchanges, runnable_blocks

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


RESULTS: Final[dict[str, subprocess.CompletedProcess[str]]] = {}
"""Each script runs once, whichever tests read its result."""


def run(block: Block, handbook: Path) -> subprocess.CompletedProcess[str]:
    return run_code(block.code, handbook)


def run_code(code: str, handbook: Path) -> subprocess.CompletedProcess[str]:
    if code not in RESULTS:
        with tempfile.TemporaryDirectory(prefix="sourced-docs-") as folder:
            database = a_clone_after_make_run(Path(folder))
            shutil.copyfile(handbook, database.with_name(DEMO_DATABASE))
            RESULTS[code] = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=folder, check=False,
                                           env=clean_environment(database), capture_output=True, text=True,
                                           timeout=TIMEOUT_S)  # the test reports the exit code with the output
    return RESULTS[code]


_PROMISE: Final = re.compile(r"\s+#\s*(?:answered|refused)\b.*$")


def with_replies_marked(code: str) -> str:
    """The block's code with each `sourced ask` line that promises an outcome asking for JSON between marks, so
    each reply is read apart from what the other commands print."""
    lines, asked = [], 0
    for line in code.splitlines():
        if _PROMISE.search(line) and "sourced ask " in line:
            lines += [f"echo '@@reply {asked}'", _PROMISE.sub("", line) + " --json", "echo '@@end'"]
            asked += 1
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def replies(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert done.returncode == 0, f"exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return [json.loads(reply) for reply in re.findall(r"^@@reply \d+\n(.*?)^@@end$", done.stdout, re.M | re.S)]


def gives_what_it_says(example: AskExample, reply: dict[str, Any]) -> None:
    said = f"{example.line!r} gave {reply['outcome']} ({reply['kind']}): {reply['text']}"
    assert reply["outcome"] == example.expect, said
    if example.citing:
        assert example.citing in [citation["chunk_id"] for citation in reply["citations"]], said
    if example.owner:
        assert reply["owner"] == example.owner, said


def test_the_suite_has_the_sourced_command_the_docs_call() -> None:
    assert SOURCED.exists(), f"{SOURCED}: install the project (make .venv/.installed-dev) to run the docs' examples"


@pytest.mark.parametrize("block", runnable_blocks(), ids=lambda block: block.name)
def test_the_example_runs(block: Block, handbook: Path) -> None:
    done = run(block, handbook)
    assert done.returncode == 0, f"{block.name} exited {done.returncode}\n{done.stdout}\n{done.stderr}"


PROMISING: Final = [block for block in runnable_blocks() if ask_examples(block)]


def test_the_readme_shows_questions_with_the_outcome_each_gets() -> None:
    """Every `sourced ask "..."` of a runnable README block says what it gives, so none goes unchecked."""
    readme = [block for block in runnable_blocks() if block.path.name == "README.md"]
    asks = [line for block in readme for line in block.code.splitlines() if 'sourced ask "' in line]
    assert len(asks) >= 4
    assert [line for line in asks if not _PROMISE.search(line)] == []


@pytest.mark.parametrize("block", PROMISING, ids=lambda block: block.name)
def test_each_question_shown_gets_the_outcome_its_comment_says(block: Block, handbook: Path) -> None:
    examples = ask_examples(block)
    got = replies(run_code(with_replies_marked(block.code), handbook))
    assert len(got) == len(examples)
    for example, reply in zip(examples, got, strict=True):
        gives_what_it_says(example, reply)


def test_the_readmes_opening_conversation_is_what_the_example_handbook_gives(handbook: Path) -> None:
    """The answer's sentences and its source, the refusal's owner and the passage that came closest, as the
    README's first lines show them, asked of the example handbook as staff."""
    shown = exchanges(ROOT / "README.md")
    assert [exchange.answered for exchange in shown] == [True, False]
    script = "".join(f"echo '@@reply {n}'\n.venv/bin/sourced ask {shlex.quote(exchange.question)} --demo --json\n"
                     "echo '@@end'\n" for n, exchange in enumerate(shown))
    for exchange, reply in zip(shown, replies(run_code(script, handbook)), strict=True):
        said = f"{exchange.question!r} gave {reply['outcome']} ({reply['kind']}): {reply['text']}"
        first = (reply["citations"] or reply["nearest"] or [{}])[0]
        assert (first.get("title"), first.get("heading", "").split(" > ")[-1]) == exchange.source, said
        if exchange.answered:
            assert reply["outcome"] == "answered", said
            missing = [sentence for sentence in exchange.sentences if sentence not in reply["text"]]
            assert missing == [], said
        else:
            assert (reply["outcome"], reply["presented_as"], reply["owner"]) == (
                "refused", "not_in_corpus", exchange.owner), said


def test_the_demos_examples_get_the_outcome_each_says_and_its_suggestions_are_the_readmes(handbook: Path) -> None:
    """`make run` and `sourced demo` (the pip path's first command) ask the handbook their examples: each gets
    the kind its line says; what the demo suggests asking next is among the README's checked questions, and the
    question the pip path asks is one of the demo's answered ones."""
    printed = run_code(".venv/bin/sourced demo\n", handbook).stdout.splitlines()
    for number, example in enumerate(EXAMPLE_QUESTIONS, start=1):
        start = next(index for index, line in enumerate(printed) if line.startswith(f"{number}. "))
        headline = next(line for line in printed[start:] if re.fullmatch(r"(answered|refused|clarify) \(\w+\)", line))
        assert headline.split()[1] == f"({example.expect})", f"{example.question!r}: {headline}"
    shown = {example.line.split("sourced ", 1)[1].split("  #")[0].strip() for block in PROMISING
             if block.path.name == "README.md" for example in ask_examples(block) if example.expect == "answered"}
    for question, roles in SUGGESTED:
        assert suggestion(question, roles).removeprefix("sourced ") in shown
        assert suggestion(question, roles) in "\n".join(printed)
    pip_path = re.findall(r'ask "([^"]+)" --json --demo', (ROOT / ".ci" / "pip-path").read_text(encoding="utf-8"))
    assert pip_path and set(pip_path) <= {example.question for example in EXAMPLE_QUESTIONS
                                          if example.expect == "answered"}  # the pip path's question, answered above
