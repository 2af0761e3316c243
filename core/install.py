"""The exact command that installs what an optional feature needs, into the Python running Sourced.

Never `pip install 'sourced[extra]'`: a project named `sourced` on PyPI is another one, and installing it would
run a stranger's code. An extra's requirements are read from our own distribution's metadata (pyproject's
`optional-dependencies`), so a hint cannot drift from what pyproject asks for.
"""

import re
import shlex
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Final

DISTRIBUTION: Final = "sourced"
_EXTRA_MARKER: Final = re.compile(r"""\s*;\s*extra\s*==\s*["']([^"']+)["']\s*$""")


def install_command(requirements: Sequence[str]) -> str:
    """`PYTHON -m pip install REQUIREMENT...` for the interpreter running this process, whatever venv or image
    it lives in."""
    return " ".join([shlex.quote(sys.executable), "-m", "pip", "install", *map(shlex.quote, requirements)])


def extra_requirements(extra: str) -> list[str]:
    """The requirements pyproject lists under `extra`, as installed metadata says ([] when Sourced runs from a
    checkout that was never installed)."""
    try:
        declared = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return []
    found = []
    for requirement in declared:
        marker = _EXTRA_MARKER.search(requirement)
        if marker is not None and marker.group(1) == extra:
            found.append(requirement[:marker.start()].strip())
    return found


def install_extra(extra: str) -> str:
    """The command that installs an extra's requirements; from an uninstalled checkout, the editable install of
    that checkout with the extra."""
    requirements = extra_requirements(extra)
    if requirements:
        return install_command(requirements)
    checkout = Path(__file__).resolve().parents[1]
    return install_command(["-e", f"{checkout}[{extra}]"])
