"""What several commands share: the `--config` option and building the application from it."""

import argparse
from importlib import resources
from pathlib import Path
from typing import Final

from rich.console import Console

from core.bootstrap import Sourced, bootstrap
from core.domain import EVERYONE, Principal

EXAMPLES = Path(str(resources.files("bot") / "examples"))
"""The Northwind Labs example handbook and its `sourced.yml`: package data, so a pip install has them too."""
PIPE_WIDTH: Final = 120


def add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, default=None,
                        help="sourced.yml (default: $SOURCED_CONFIG, else ./sourced.yml)")


def application(args: argparse.Namespace, *, progress: bool = True) -> Sourced:
    return bootstrap(config_file=args.config, progress=progress)


def operator_principal(roles: str, *, guest: bool, user: str, sources: frozenset[str] = frozenset()) -> Principal:
    """The principal an operator asks as, from the command line (never from the question's text); `sources` are
    what the connectors' sources grant an e-mail address (`core.storage.connectors.SqlSourcePrincipals`)."""
    named = {role.strip() for role in roles.split(",") if role.strip()} | sources
    return Principal(user_id=user, roles=frozenset(named if guest else named | {EVERYONE}), is_guest=guest)


def report_console() -> Console:
    """Standard output at the terminal's width, or 120 columns into a file or a pipe (which have none)."""
    console = Console()
    return console if console.is_terminal else Console(width=PIPE_WIDTH)
