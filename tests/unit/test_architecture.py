"""Dependencies point inward (DESIGN section 4): checked on the source, not just written down."""

import ast
import importlib
import subprocess
import sys
import typing
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(package: str) -> dict[str, set[str]]:
    """Every top-level-qualified module each file of a package imports."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / package.replace(".", "/")).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
        found[str(path.relative_to(ROOT))] = names
    return found


def offenders(package: str, allowed: Callable[[str], bool]) -> list[str]:
    return [f"{file}: {name}" for file, names in imported_modules(package).items()
            for name in sorted(names) if not allowed(name)]


def test_the_domain_imports_only_the_standard_library_and_itself() -> None:
    def allowed(name: str) -> bool:
        top = name.split(".", maxsplit=1)[0]
        return top in sys.stdlib_module_names or name.startswith("core.domain")

    assert offenders("core.domain", allowed) == []


@pytest.mark.parametrize("forbidden", ["slack_bolt", "slack_sdk", "bot", "flask", "gunicorn"])
def test_core_never_imports_slack_or_the_bot(forbidden: str) -> None:
    assert offenders("core", lambda name: name.split(".")[0] != forbidden) == []


def test_the_application_layer_depends_only_on_the_domain_and_shared_text() -> None:
    adapters = ("core.storage", "core.retrieval", "core.llm", "core.bootstrap", "core.eval", "sqlalchemy")
    assert offenders("core.application", lambda name: not name.startswith(adapters)) == []


@pytest.mark.parametrize("package", ["bot.replies", "bot.listeners"])
def test_the_slack_replies_reach_the_core_through_its_door_only(package: str) -> None:
    """A front end knows one object and its verbs (`core.application.service`), never the container built in
    `core.bootstrap` nor an adapter behind it."""
    container = ("core.bootstrap", "core.storage", "core.retrieval", "core.llm", "core.connectors", "core.eval",
                 "sqlalchemy")
    assert offenders(package, lambda name: not name.startswith(container)) == []


def test_importing_the_application_loads_no_adapter() -> None:
    """What the source's imports say must also hold when it runs: no package data read through an adapter
    package (which imports it, and everything it imports)."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, core.application.orchestrator, core.application.answerability.model; "
         "print(' '.join(m for m in sys.modules if m.startswith(('core.retrieval', 'core.storage', 'core.llm', "
         "'sqlalchemy'))))"], capture_output=True, text=True, check=True, cwd=ROOT)
    assert loaded.stdout.split() == []


def test_the_document_model_and_the_reading_form_import_only_the_standard_library_and_the_domain() -> None:
    """The application reads statements through `core.documents.reading`: it must stay as plain as the domain,
    while the format readers beside it (`markdown`, ...) may use their parsers."""
    def allowed(name: str) -> bool:
        top = name.split(".", maxsplit=1)[0]
        return top in sys.stdlib_module_names or name.startswith(("core.domain", "core.documents.model"))

    pure = [file for file in offenders("core.documents", allowed)
            if file.startswith(("core/documents/model.py", "core/documents/reading.py"))]
    assert pure == []


def test_the_application_reads_documents_only_through_the_reading_form() -> None:
    assert offenders("core.application", lambda name: not name.startswith("core.documents")
                     or name in {"core.documents", "core.documents.reading"}) == []


def application_offenders(room: str, allowed_rooms: tuple[str, ...]) -> list[str]:
    """Imports of the application from `room` that reach outside it and the rooms it stands on."""
    own = ("core.application." + room, *(f"core.application.{below}" for below in allowed_rooms))
    return offenders(f"core.application.{room}",
                     lambda name: not name.startswith("core.application") or name.startswith(own))


def test_the_language_room_imports_nothing_else_of_the_application() -> None:
    """Pure functions over text: what a sentence states, its numbers, negations and kinds of value."""
    assert application_offenders("language", ()) == []


def test_the_answerability_room_stands_on_language_and_the_ports_only() -> None:
    assert application_offenders("answerability", ("language", "ports", "audit")) == []


def test_the_guard_stands_on_language_answerability_and_the_ports_only() -> None:
    assert application_offenders("guard", ("language", "answerability", "ports", "audit")) == []


def test_no_level_of_the_application_holds_more_than_twelve_modules() -> None:
    """A newcomer sees where the guard ends and answerability begins from the folders, not from 25 flat files."""
    crowded = {str(folder.relative_to(ROOT)): count
               for folder in [ROOT / "core" / "application", *(ROOT / "core" / "application").glob("*/")]
               if folder.is_dir() and (count := len(list(folder.glob("*.py")))) > 12}
    assert crowded == {}


def import_graph(*packages: str) -> dict[str, set[str]]:
    """Each module of these packages and the modules of them it imports: `from a.b import c` names `a.b.c`
    when that is a module, else `a.b`. Every import counts, lazy ones inside functions included: a cycle
    broken only by importing late is still a cycle."""
    files = {path: ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
             for package in packages for path in sorted((ROOT / package).rglob("*.py"))}
    modules = set(files.values())
    graph: dict[str, set[str]] = {}
    for path, module in files.items():
        named: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                named.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                named.update(f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules
                             else node.module for alias in node.names)
        graph[module] = (named & modules) - {module}
    return graph


def import_cycles(*packages: str) -> list[list[str]]:
    """Strongly connected groups of more than one module in the import graph of these packages."""
    edges = import_graph(*packages)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in edges[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return groups


def test_nothing_of_the_product_imports_in_a_circle() -> None:
    assert import_cycles("core", "bot") == []


def test_training_and_benchmarks_do_not_import_each_other_in_a_circle() -> None:
    """Benchmarks measure with what training fits; training never reaches back into the benchmarks."""
    assert offenders("training", lambda name: name.split(".")[0] != "benchmarks") == []


@pytest.mark.parametrize("forbidden", ["benchmarks", "training"])
def test_the_product_never_imports_the_benchmarks_or_training(forbidden: str) -> None:
    assert offenders("core", lambda name: name.split(".")[0] != forbidden) == []
    assert offenders("bot", lambda name: name.split(".")[0] != forbidden) == []


@pytest.mark.parametrize("package", ["core.application", "core.documents", "core.retrieval", "core.llm",
                                     "core.storage", "core.connectors"])
def test_only_the_composition_root_reads_settings(package: str) -> None:
    """Adapters take plain values; bootstrap (and the front ends above it) turn the environment into them."""
    readers = [str(path.relative_to(ROOT)) for path in sorted((ROOT / package.replace(".", "/")).rglob("*.py"))
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.ImportFrom) and node.module == "core.config"
               and any(alias.name == "Settings" for alias in node.names)]
    assert readers == []


def test_every_error_of_the_product_derives_from_one_base() -> None:
    """A front end catches what is ours by one name (`SourcedError`, or its operator-facing `OperatorError`)
    and tells it from a bug; the tree and who acts on each branch are in `core/domain/errors.py`."""
    from core.domain import SourcedError  # noqa: PLC0415  # imported by the test that checks it

    outside = []
    for package in ("core", "bot"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue  # Alembic's revisions run inside its context only, and define no errors
            module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts)
                                             .removesuffix(".__init__"))
            outside += [f"{module.__name__}.{name}" for name, value in vars(module).items()
                        if isinstance(value, type) and issubclass(value, BaseException)
                        and value.__module__ == module.__name__ and not issubclass(value, SourcedError)]
    assert outside == []


def test_each_connector_kind_is_its_entry_and_one_module_that_connects_it() -> None:
    """The table of connectors is `ConnectorEntry` (core/config.py): each entry names the module whose
    `connect(entry, credential)` builds it, so a new kind touches that table and one file."""
    from core.config import ConnectorEntry  # noqa: PLC0415

    union = typing.get_args(typing.get_args(ConnectorEntry)[0])
    modules = {entry.module for entry in union}
    assert len(modules) == len(union) >= 3
    assert all(module.startswith("core.connectors.") and callable(importlib.import_module(module).connect)
               for module in modules)
