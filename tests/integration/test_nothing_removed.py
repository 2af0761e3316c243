"""Nothing is removed without being asked (issue 56), through the command line on a real SQLite file:

- an ingest that would remove most of a non-empty index (an empty folder, a folder of types Sourced does not
  read, a folder left with fewer than half of its documents) stops, changes nothing and names `--allow-removal`;
  the flag goes ahead; a small removal goes ahead without it;
- every skipped file type is counted and named in one line, in `--dry-run` too;
- `sourced start` with one Slack token names the other, and neither `sourced demo` nor `sourced start` (a second
  `make run`) writes into the database the user's documents are in.
"""

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from bot.commands import start
from core.config import DEMO_DATABASE


def page(name: str, fact: str) -> str:
    return f"---\ntitle: {name.title()} Policy\nowner: \"#ops\"\n---\n# {name.title()} Policy\n\n## Rule\n{fact}\n"


def write_folder(folder: Path, names: tuple[str, ...]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"{name}.md").write_text(page(name, f"The {name} allowance is {len(name)} days a year."))
    return folder


def stored(database: Path) -> list[tuple[str, str]]:
    """Every stored chunk, by document: what "the index as it was" means."""
    with sqlite3.connect(database) as connection:
        return sorted(connection.execute("SELECT doc_id, text FROM chunks").fetchall())


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working folder of its own (no `.env`, no `sourced.yml` of the clone), plain full-text retrieval, and the
    user's database in it."""
    monkeypatch.chdir(tmp_path)
    for variable in ("SOURCED_CONFIG", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("SOURCED_EMBEDDER", "none")
    monkeypatch.setenv("SOURCED_DATABASE_URL", f"sqlite:///{tmp_path / 'sourced.db'}")
    yield tmp_path


@pytest.fixture
def ingested(workspace: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The user's own four documents, ingested; the database's path."""
    assert main(["ingest", str(write_folder(workspace / "kb", ("travel", "leave", "parking", "badges")))]) == 0
    capsys.readouterr()
    return workspace / "sourced.db"


def ingest(folder: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str, str]:
    code = main(["ingest", str(folder), *flags])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_an_empty_folder_leaves_the_index_as_it_was(ingested: Path, workspace: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    before = stored(ingested)
    (workspace / "unmounted").mkdir()
    code, out, err = ingest(workspace / "unmounted", capsys)
    assert code == 1
    assert stored(ingested) == before
    [line] = [line for line in err.splitlines() if "--allow-removal" in line]
    assert line == ("sourced ingest: stopped: the folder yields no document and ingesting it would remove 4 of the "
                    "4 documents in the index; nothing was changed; if that is what you want, run it again with "
                    "--allow-removal")
    assert "removed" not in out


def test_a_folder_of_types_sourced_does_not_read_leaves_the_index_as_it_was_and_says_why(
        ingested: Path, workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = stored(ingested)
    legacy = workspace / "legacy"
    (legacy / "finance").mkdir(parents=True)
    for name in ("travel.doc", "finance/leave.doc", "finance/budget.xlsx"):
        (legacy / name).write_bytes(b"\xd0\xcf\x11\xe0 an old Office file")
    code, _, err = ingest(legacy, capsys)
    assert code == 1
    assert stored(ingested) == before
    assert "warning: skipped 3 files of types Sourced does not read: .doc (2), .xlsx (1)" in err.splitlines()
    assert "would remove 4 of the 4 documents" in err


def test_allow_removal_confirms_it(ingested: Path, workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "unmounted").mkdir()
    code, out, _ = ingest(workspace / "unmounted", capsys, "--allow-removal")
    assert code == 0
    assert stored(ingested) == []
    assert out.strip() == "0 documents: 0 added, 0 updated, 0 unchanged, 4 removed; 0 chunks"


def test_more_than_half_going_is_held_and_a_few_going_is_an_ordinary_edit(
        ingested: Path, workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = stored(ingested)
    code, _, err = ingest(write_folder(workspace / "one-left", ("travel",)), capsys)
    assert (code, stored(ingested)) == (1, before)
    assert "the folder yields 1 document and ingesting it would remove 3 of the 4 documents" in err

    (workspace / "kb" / "badges.md").unlink()
    (workspace / "kb" / "parking.md").unlink()  # half of them: an edit, not an accident
    code, out, _ = ingest(workspace / "kb", capsys)
    assert code == 0
    assert out.strip() == "2 documents: 0 added, 0 updated, 2 unchanged, 2 removed; 2 chunks"
    assert {doc_id for doc_id, _ in stored(ingested)} == {"travel", "leave"}


def test_an_empty_index_is_filled_from_any_folder_and_an_empty_folder_into_it_is_no_removal(
        workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "empty").mkdir()
    assert ingest(workspace / "empty", capsys)[0] == 0
    code, out, _ = ingest(write_folder(workspace / "kb", ("travel",)), capsys)
    assert code == 0
    assert out.strip() == "1 document: 1 added, 0 updated, 0 unchanged, 0 removed; 1 chunk"


def test_skipped_types_are_counted_and_named_in_one_line_in_a_dry_run_too(
        workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_folder(workspace / "mixed", ("travel",))
    for name in ("a.odt", "b.odt", "c.rtf", "notes", "d.XLSX"):
        (folder / name).write_text("not read")
    (folder / ".DS_Store").write_bytes(b"\0")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    expected = "warning: skipped 5 files of types Sourced does not read: .odt (2), (no extension) (1), .rtf (1), " \
               ".xlsx (1)"
    code, out, err = ingest(folder, capsys, "--dry-run")
    assert code == 0
    assert [line for line in err.splitlines() if "skipped" in line] == [expected]
    assert "1 document would be ingested; 0 files could not be read; nothing was stored" in out
    code, out, err = ingest(folder, capsys)
    assert code == 0
    assert [line for line in err.splitlines() if "skipped" in line] == [expected]
    assert out.strip() == "1 document: 1 added, 0 updated, 0 unchanged, 0 removed; 1 chunk"


@pytest.mark.parametrize(("present", "missing"), [("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"),
                                                  ("SLACK_APP_TOKEN", "SLACK_BOT_TOKEN")])
def test_start_with_one_token_names_the_other_and_leaves_the_index_as_it_was(
        present: str, missing: str, ingested: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    before = stored(ingested)
    monkeypatch.setenv(present, "xoxb-1-2-abc" if present == "SLACK_BOT_TOKEN" else "xapp-1-A1-2-abc")
    assert main(["start"]) == 2
    err = capsys.readouterr().err
    [line] = err.strip().splitlines()
    assert line.startswith(f"sourced start: {missing} is not set: ") and f"({present} is set" in line
    assert stored(ingested) == before
    assert not (ingested.parent / DEMO_DATABASE).exists()


def test_the_demo_run_twice_never_touches_the_users_database(ingested: Path, workspace: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """`make run` without tokens is `sourced start`, which runs the demo: a second `make run` after the user
    ingested their own documents leaves them, and the handbook goes to the demo's own database."""
    before = stored(ingested)
    assert main(["start"]) == 0
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "0 removed" in out and DEMO_DATABASE in out
    assert stored(ingested) == before
    handbook = {doc_id for doc_id, _ in stored(workspace / DEMO_DATABASE)}
    assert len(handbook) >= 10 and not handbook & {"travel", "leave", "parking", "badges"}

    assert main(["doctor", "--json", "--demo"]) == 0
    checks = {check["name"]: check for check in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["database"]["facts"]["url"].endswith(DEMO_DATABASE) and checks["index"]["status"] == "ok"

    assert main(["ask", "how many days of leave?", "--json", "--demo"]) == 0
    assert '"leave#rule"' not in capsys.readouterr().out  # the demo's handbook, not the user's documents
    assert main(["ask", "what is the leave allowance?", "--json"]) == 0
    assert '"leave#rule"' in capsys.readouterr().out


def test_the_bot_on_a_first_run_answers_from_the_demo_database_and_leaves_an_empty_one_empty(
        workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With both tokens and no `sourced.yml`, `sourced start` serves the handbook from the demo's database:
    the user's, empty, stays empty, so their first `sourced ingest` removes nothing."""
    args = start.first_run_args()
    assert args.demo is True
    assert stored(workspace / "sourced.db") == []
    assert stored(workspace / DEMO_DATABASE)
    assert DEMO_DATABASE in capsys.readouterr().err


def test_the_bot_on_a_first_run_serves_the_users_documents_once_there_are_some(ingested: Path) -> None:
    args = start.first_run_args()
    assert not getattr(args, "demo", False)
    assert not (ingested.parent / DEMO_DATABASE).exists()
