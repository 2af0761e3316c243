"""Dependencies point inward (DESIGN section 4): checked on the source, not just written down."""

import ast
import subprocess
import sys
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


def test_importing_the_application_loads_no_adapter() -> None:
    """What the source's imports say must also hold when it runs: no package data read through an adapter
    package (which imports it, and everything it imports)."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, core.application.orchestrator, core.application.answerability; "
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
