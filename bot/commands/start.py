"""`sourced start`: what `make run` does. The Slack bot when Slack tokens are set, else the local demo."""

import argparse
import sys
from pathlib import Path
from typing import Any

from bot.commands import demo, serve
from bot.commands.common import EXAMPLES
from bot.settings import SlackSettingsError, load_slack_settings
from core.bootstrap import bootstrap, build_index
from core.config import Settings, config_path

SLACK_HINT = """\
To use Sourced in Slack: create an app at api.slack.com/apps "From an app manifest" with manifest.yml,
install it to your workspace, then put SLACK_BOT_TOKEN (xoxb-...) and SLACK_APP_TOKEN (xapp-..., Socket Mode)
in the environment or in .env and run `make run` again; `sourced doctor` says what is still missing."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("start", help="the Slack bot when tokens are set, else the local demo")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        slack = load_slack_settings()
    except SlackSettingsError as error:
        print(f"sourced start: {error}", file=sys.stderr)
        return 2
    if slack.has_socket_mode_tokens:
        return serve.run(argparse.Namespace(http=False, config=first_run_config()))
    code = demo.run(args)
    print()
    print(SLACK_HINT)
    return code


def first_run_config() -> Path | None:
    """Your `sourced.yml` when there is one (or `SOURCED_CONFIG`). Without one, the example handbook's
    configuration, and the handbook itself when nothing is ingested yet, so the first command gives a bot
    that can answer something."""
    if config_path(None, Settings()) is not None:
        return None
    config = EXAMPLES / "sourced.yml"
    sourced = bootstrap(config_file=config, progress=False)
    if build_index(sourced.engine, None).chunk_count() == 0:
        print(f"Nothing ingested yet: loading the example handbook ({EXAMPLES / 'handbook'}).", file=sys.stderr)
        sourced.ingestor.ingest(EXAMPLES / "handbook")
    sourced.engine.dispose()
    return config
