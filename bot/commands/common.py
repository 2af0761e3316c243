"""What several commands share: the `--config` option and building the application from it, and the demo's own
database."""

import argparse
from importlib import resources
from pathlib import Path
from typing import Final

from rich.console import Console

from core.bootstrap import Sourced, bootstrap
from core.config import DEMO_DATABASE, Settings
from core.domain import EVERYONE, Principal

EXAMPLES = Path(str(resources.files("bot") / "examples"))
"""The Northwind Labs example handbook and its `sourced.yml`: package data, so a pip install has them too."""
DEMO_CONFIG: Final = EXAMPLES / "sourced.yml"
PIPE_WIDTH: Final = 120


def add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, default=None,
                        help="sourced.yml (default: $SOURCED_CONFIG, else ./sourced.yml)")


def add_demo_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--demo", action="store_true",
                        help=f"use the demo's example handbook ({DEMO_DATABASE}, filled by `sourced demo`, with the "
                             "handbook's sourced.yml) instead of your database and configuration")


def application(args: argparse.Namespace, *, progress: bool = True) -> Sourced:
    if getattr(args, "demo", False):
        return demo_application(progress=progress)
    return bootstrap(config_file=args.config, progress=progress)


def demo_application(*, progress: bool = True) -> Sourced:
    """The example handbook's application: its `sourced.yml` and the demo's own database, whatever
    `SOURCED_DATABASE_URL` and `SOURCED_CONFIG` say (the other settings, the model and embedder, still apply)."""
    return bootstrap(demo_settings(), config_file=DEMO_CONFIG, progress=progress)


def demo_settings() -> Settings:
    return Settings(database_url=f"sqlite:///{DEMO_DATABASE}")


def operator_principal(roles: str, *, guest: bool, user: str, sources: frozenset[str] = frozenset()) -> Principal:
    """The principal an operator asks as, from the command line (never from the question's text); `sources` are
    what the connectors' sources grant an e-mail address (`core.storage.connectors.SqlSourcePrincipals`)."""
    named = {role.strip() for role in roles.split(",") if role.strip()} | sources
    return Principal(user_id=user, roles=frozenset(named if guest else named | {EVERYONE}), is_guest=guest)


def report_console() -> Console:
    """Standard output at the terminal's width, or 120 columns into a file or a pipe (which have none)."""
    console = Console()
    return console if console.is_terminal else Console(width=PIPE_WIDTH)
