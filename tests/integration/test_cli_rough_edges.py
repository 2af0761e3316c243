"""Small rough edges of the command line (issue 56): a closed pipe, the top-level help, `sourced eval`'s
messages about its case files, replies wrapped to 80 columns with their sources explained, and no progress
bar's blank lines on a stderr that is not a terminal."""

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from tests.cli_runs import ingested_workspace

PARKING = """---
title: Parking
owner: "#facilities"
---
# Parking

## Spaces
Visitors park in the spaces marked with a blue sign by the north entrance.
"""


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[Path]:
    yield ingested_workspace(tmp_path, {"parking.md": PARKING}, monkeypatch, capsys)


def test_a_reader_that_closes_the_pipe_ends_ask_json_quietly(workspace: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """`sourced ask --json ... | head` (plain `ask` prints through rich, which already exits quietly): the pipe's
    reader has gone before the reply is written. No traceback, the shell's code for a pipe closed under a command,
    and stdout left where the interpreter's last flush cannot fail."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # `head` has read its lines and exited
    closed_pipe = io.TextIOWrapper(io.FileIO(write_end, "w"), encoding="utf-8")
    monkeypatch.setattr("sys.stdout", closed_pipe)
    assert main(["ask", "--json", "Where do visitors park?"]) == 141
    closed_pipe.write("flushed at exit\n")
    closed_pipe.flush()  # now the null device: the interpreter's own flush at exit raises nothing
    closed_pipe.close()
    assert capsys.readouterr().err == ""


def test_the_top_level_help_says_what_sourced_is_for_and_where_to_start(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "answers questions from your company's documents" in help_text
    assert "`sourced demo`" in help_text and "`sourced ingest FOLDER`" in help_text
    assert "Run `sourced COMMAND --help`" in help_text
    assert "entry point" not in help_text and "bot.commands" not in help_text  # nothing for the developer only


def evaluated(workspace: Path, capsys: pytest.CaptureFixture[str], cases: str, *, code: int = 0) -> str:
    (workspace / "cases.yaml").write_text(cases)
    assert main(["eval", "--kb", str(workspace / "kb"), "--cases", str(workspace / "cases.yaml"), "--json"]) == code
    return capsys.readouterr().out


def test_support_dropped_before_answering_is_not_said_to_miss_a_model_when_none_runs(
        workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The default profile runs no model; the failure says the support was not passed on to answer."""
    report = json.loads(evaluated(workspace, capsys, """
- id: sign-count
  question: "How many blue signs are there?"
  asker: {roles: [everyone]}
  expect: answer
  support: ["parking#Spaces"]
"""))
    assert "answer model: extractive" in " ".join(report["profile"])  # no model runs
    reasons = json.dumps(report)
    assert "support retrieved at rank 1" in reasons and "not passed on to answer" in reasons
    assert "given to the model" not in reasons


def test_a_case_may_expect_not_retrieved_and_its_kind_is_scored(
        workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Only loose matches (below the retrieval floor, here with the semantic retrieval) is a kind a case can
    expect: it loads, has its own group, and a refusal of another kind is a kind error."""
    monkeypatch.setenv("SOURCED_EMBEDDER", "minilm")
    report = json.loads(evaluated(workspace, capsys, """
- id: blue-chairs
  question: "Where are the blue chairs?"
  asker: {roles: [everyone]}
  expect: not_retrieved
- id: no-match
  question: "Which entrance?"
  asker: {roles: [everyone]}
  expect: not_retrieved
"""))
    assert list(report["by_kind"]) == ["not_retrieved"]
    assert report["correct_abstention"] == 1.0 and report["kind_accuracy"] == 0.5
    assert [(f["id"], f["reason"]) for f in report["failures"]] == [
        ("no-match", "kind not_in_corpus, expected not_retrieved")]


@pytest.mark.parametrize("json_output", [True, False])
def test_a_support_naming_no_document_of_the_knowledge_base_is_an_error_naming_the_case(
        workspace: Path, capsys: pytest.CaptureFixture[str], json_output: bool) -> None:
    (workspace / "cases.yaml").write_text("""
- id: spaces
  question: "Where do visitors park?"
  asker: {roles: [everyone]}
  expect: answer
  support: ["parking#Spaces"]
- id: typo
  question: "Where do visitors park?"
  asker: {roles: [everyone]}
  expect: answer
  support: ["parkng#Spaces"]
""")
    command = ["eval", "--kb", str(workspace / "kb"), "--cases", str(workspace / "cases.yaml")]
    assert main([*command, *(["--json"] if json_output else [])]) == 2
    printed = capsys.readouterr()
    assert "case 'typo': support 'parkng#Spaces': no document 'parkng' in the knowledge base" in printed.err
    assert printed.out == ""


@pytest.mark.parametrize(("case", "message"), [
    ("""
- id: misspelt
  questoin: "Where do visitors park?"
  asker: {roles: [everyone]}
  expect: not_in_corpus
""", "case 'misspelt': unknown key 'questoin' (a misspelling of 'question'?)"),
    ("""
- id: conversation
  asker: {roles: [everyone]}
  turns:
    - {question: "Where do visitors park?", expect: answer, support: ["parking#Spaces"]}
    - {question: "And staff?", expcet: not_in_corpus}
""", "case 'conversation': unknown key 'turns.1.expcet' (a misspelling of 'turns.1.expect'?)"),
    ("""
- id: extra
  question: "Where do visitors park?"
  asker: {roles: [everyone]}
  expect: not_in_corpus
  colour: blue
""", "case 'extra': unknown key 'colour'"),
])
def test_a_misspelt_case_key_is_reported_by_the_name_written(workspace: Path, capsys: pytest.CaptureFixture[str],
                                                             case: str, message: str) -> None:
    (workspace / "cases.yaml").write_text(case)
    assert main(["eval", "--kb", str(workspace / "kb"), "--cases", str(workspace / "cases.yaml"), "--json"]) == 2
    error = capsys.readouterr().err
    assert message in error
    assert "missing" not in error.casefold()


def test_doctor_counts_one_document_and_one_chunk_in_the_singular(workspace: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    main(["doctor"])
    lines = capsys.readouterr().out.splitlines()
    index = next(line for line in lines if "index:" in line)
    assert "index: 1 document, 1 chunk, last ingest" in index
    configuration = next(line for line in lines if "configuration:" in line)
    assert configuration.endswith("0 roles, 0 channels, 0 known gaps")


def test_a_reply_fits_80_columns_and_says_how_and_where_it_cites(workspace: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Wrapped at word boundaries with each source's lines indented under it; the citation's tier said in words
    (`quoted`, not `direct`) beside its owner and chunk id."""
    monkeypatch.setenv("COLUMNS", "80")
    (workspace / "kb" / "parking.md").write_text(PARKING.replace(
        "north entrance.", "north entrance, and staff with a permit park on levels two and three of the garage "
                           "behind the building, where the spaces nearest the lifts are kept for staff with a "
                           "disability badge."))
    assert main(["ingest", str(workspace / "kb")]) == 0
    capsys.readouterr()
    assert main(["ask", "Where do visitors park?"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "answered (answered)" and len(lines) > 4
    assert max(len(line) for line in lines) <= 80
    source = lines.index("Sources")
    assert lines[source + 1] == "  [1] Parking > Spaces"
    details = lines[source + 2]
    assert details.startswith("      quoted · owner #facilities · updated ") and details.endswith(" · parking#spaces")


def test_no_blank_lines_reach_a_stderr_that_is_not_a_terminal(workspace: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The progress bars are for a person at a terminal: in a pipe or a log they would only leave blank lines."""
    (workspace / "kb" / "badges.md").write_text(PARKING.replace("Parking", "Badges"))
    assert main(["ingest", str(workspace / "kb")]) == 0
    assert capsys.readouterr().err == ""
