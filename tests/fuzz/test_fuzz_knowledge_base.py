"""Knowledge-base folders under search, through the real ingestion (`Ingestor` on SQLite with full text):
broken or hostile front matter, binary bytes, symbolic links leaving the folder, duplicate ids, deep heading
nesting. Ingestion never raises; each bad file gets one error naming it; every other file goes in."""

import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from core.retrieval.ingest import Ingestor, IngestReport
from core.storage import make_engine, migrate
from tests.fuzz.conftest import scaled

GOOD = {f"good-{n}.md": f"---\nid: good-{n}\ntitle: Good {n}\n---\n# Good {n}\n## Rule\nRule {n} holds.\n"
        for n in range(2)}
ANY_CHAR = st.characters(codec=None, exclude_categories=("Cs",))  # file contents are written as UTF-8
KEYS = st.sampled_from(["id", "title", "owner", "audience", "updated", "url", "typo", "ID"]) | st.text(max_size=6)
SCALARS = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(ANY_CHAR, max_size=20)
           | st.sampled_from(["good-0", "good-1", "dup", "#ops", "2026-03-14", "2026-13-45", "everyone"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
                      max_leaves=6)
HOSTILE_HEADERS = st.sampled_from([
    "updated: 2026-13-45\n", "updated: 2026-02-30\n", "title: " + "[" * 3000 + "\n", "title: " + "{a: " * 2000 + "\n",
    "title: !!python/object/apply:os.system ['true']\n", "a: &a [1, *a]\n", 'title: "x\\0y"\n',
    'title: "\\ud800"\n', "audience: ['\\0']\n", "- a\n- b\n", "just text\n", "id: ../../etc\n", "id: dup\n",
    "id: good-0\n", ": :\n", "\t- ]\n", "title: |\n  multi\n  line\n", "? [a]\n: b\n", "!!binary aGk=\n",
    "updated: 99999-01-01\n", "id: ' spaced '\n", "audience: []\n", "audience: [' ']\n", "url: ''\n",
])
HEADERS = st.one_of(
    HOSTILE_HEADERS,
    st.dictionaries(KEYS, VALUES, max_size=4).map(lambda data: yaml.safe_dump(data, allow_unicode=True)),
    st.text(ANY_CHAR, max_size=80),
)
LINES = st.one_of(
    st.integers(1, 9).map(lambda depth: "#" * depth + " Heading"),
    st.text(ANY_CHAR, max_size=60),
    st.sampled_from(["```", "~~~", "| a | b |", "|---|---|", "| 1 | 2 |", "---", "...", "supersedes good-0"]),
)
BODIES = st.lists(LINES, max_size=25).map("\n".join)
TEXT_FILES = st.tuples(st.booleans(), HEADERS, BODIES, st.booleans()).map(
    lambda parts: (("---\n" + parts[1] + ("---\n" if parts[3] else "")) if parts[0] else "") + parts[2])
DEEP = st.integers(1, 3000).map(lambda n: "".join(f"{'#' * (i % 6 + 1)} Level {i}\ntext {i}.\n" for i in range(n)))
FILES = st.one_of(
    TEXT_FILES.map(lambda text: text.encode("utf-8")),
    DEEP.map(lambda text: text.encode("utf-8")),
    st.binary(max_size=300),
    st.binary(max_size=40).map(lambda raw: b"# Title\n" + raw + b"\nmore text\n"),
    st.sampled_from([b"\xef\xbb\xbf# BOM\nbody\n", b"\x00" * 10, b"# a\x00b\n", b"\xff\xfe#\x00 \x00a\x00"]),
)
NAMES = st.sampled_from(["a.md", "b.txt", "C.MD", "sub/d.md", "sub/deeper/e.txt", "dup.md", "x y.md", "good-0.txt",
                         "\u00e9t\u00e9.md", "-.md", "..md", "sub/good-1.md"])
ENTRIES = st.dictionaries(NAMES, FILES | st.just(b"LINK-OUT") | st.just(b"LINK-IN"), min_size=1, max_size=5)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One migrated database, copied for each example: migrating per example would be most of the cost."""
    path = tmp_path_factory.mktemp("template") / "template.db"
    engine = make_engine(f"sqlite:///{path}")
    migrate(engine)
    engine.dispose()
    return path


def _ingest(template: Path, folder: Path, root: Path) -> IngestReport:
    shutil.copy(template, folder / "kb.db")
    engine = make_engine(f"sqlite:///{folder / 'kb.db'}")
    try:
        return Ingestor(engine, progress=False).ingest(root)
    finally:
        engine.dispose()


def _build(root: Path, outside: Path, entries: dict[str, bytes]) -> None:
    for name, content in GOOD.items():
        (root / name).write_text(content, encoding="utf-8")
    for name, raw in entries.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if raw == b"LINK-OUT":
            path.symlink_to(outside)
        elif raw == b"LINK-IN":
            path.symlink_to(root / "good-0.md")
        else:
            path.write_bytes(raw)


@settings(max_examples=scaled(2.0))
@given(ENTRIES)
def test_ingestion_never_raises_names_each_bad_file_once_and_keeps_the_others(template: Path,
                                                                             entries: dict[str, bytes]) -> None:
    folder = Path(tempfile.mkdtemp(prefix="sourced-fuzz-kb-"))
    try:
        root, outside = folder / "kb", folder / "outside.md"
        root.mkdir()
        outside.write_text("---\nid: outside-secret\n---\n# Outside\nNot for the index.\n", encoding="utf-8")
        _build(root, outside, entries)
        report = _ingest(template, folder, root)
        files = {path.relative_to(root) for path in root.rglob("*") if path.is_file() or path.is_symlink()}
        failed = [error.path for error in report.errors]
        assert len(failed) == len(set(failed)), report.errors  # one message per bad file
        for error in report.errors:
            assert error.path in files and error.reason.strip() and "\n" not in error.reason
            assert str(error).startswith(str(error.path))
        assert "outside-secret" not in report.added  # a link never brings in what lies outside
        if "good-0.md" not in entries and "sub/good-1.md" not in entries and "good-0.txt" not in entries:
            assert {"good-0", "good-1"} <= set(report.added) or any(  # unless a fuzzed file took the id first
                error.reason.startswith("document id 'good-") for error in report.errors)
        loaded = len(report.added) + len(report.updated) + len(report.unchanged)
        sources = [f for f in files if f.suffix.lower() in {".md", ".txt"}]
        assert loaded + len(failed) == len(sources)  # every file either went in or was named as bad
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@settings(max_examples=scaled(0.4))
@given(st.integers(3, 9000))
def test_deep_and_repeated_headings_ingest_in_bounded_time(template: Path, count: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="sourced-fuzz-kb-"))
    try:
        (folder / "kb").mkdir()
        body = "".join(f"{'#' * (i % 6 + 1)} Same\nline {i}.\n" for i in range(count))
        (folder / "kb" / "deep.md").write_text(body, encoding="utf-8")
        report = _ingest(template, folder, folder / "kb")
        assert report.added == ("deep",) and report.chunks == count
    finally:
        shutil.rmtree(folder, ignore_errors=True)

