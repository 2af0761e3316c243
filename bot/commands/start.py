"""`sourced start`: what `make run` does. The Slack bot when both Slack tokens are set, the local demo (in its own
database) when neither is, and a line naming the missing one when only one is: running the demo then would
only hide the typo."""

import argparse
import sys
from typing import Any

from bot.commands import demo, serve
from bot.commands.common import EXAMPLES, demo_application
from bot.settings import SlackSettingsError, load_slack_settings
from core.bootstrap import indexed_chunks
from core.config import DEMO_DATABASE, Settings, config_path
from core.storage import make_engine, migrate

SLACK_HINT = """\
To use Sourced in Slack: create an app at api.slack.com/apps "From an app manifest" with manifest.yml,
install it to your workspace, then put SLACK_BOT_TOKEN (xoxb-...) and SLACK_APP_TOKEN (xapp-..., Socket Mode)
in the environment or in .env and run `make run` again; `sourced doctor` says what is still missing."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("start", help="the Slack bot when both Slack tokens are set, else the local "
                                                 "demo (which has a database of its own)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        slack = load_slack_settings()
    except SlackSettingsError as error:
        print(f"sourced start: {error}", file=sys.stderr)
        return 2
    if slack.has_socket_mode_tokens:
        return serve.run(first_run_args())
    if slack.bot_token is not None or slack.app_token is not None:
        present, require = (("SLACK_BOT_TOKEN", slack.require_app_token) if slack.bot_token is not None
                            else ("SLACK_APP_TOKEN", slack.require_bot_token))
        try:
            require()
        except SlackSettingsError as error:
            print(f"sourced start: {error} ({present} is set; Socket Mode needs both)", file=sys.stderr)
        return 2
    code = demo.run(args)
    print()
    print(SLACK_HINT)
    return code


def first_run_args() -> argparse.Namespace:
    """What the bot serves on a first run. Your `sourced.yml` when there is one (or `SOURCED_CONFIG`), with your
    database. Without one: your database with the example handbook's configuration when it holds documents, and
    when it holds none the demo's own database with the handbook in it, so the first command gives a bot that
    can answer something without writing the handbook into the database your own documents go to."""
    if config_path(None, Settings()) is not None:
        return argparse.Namespace(http=False, config=None)
    engine = make_engine(Settings().database_url)
    try:
        migrate(engine)
        empty = indexed_chunks(engine) == 0
    finally:
        engine.dispose()
    if not empty:
        return argparse.Namespace(http=False, config=EXAMPLES / "sourced.yml")
    print(f"Nothing ingested yet: the bot answers from the example handbook ({EXAMPLES / 'handbook'}), kept in "
          f"{DEMO_DATABASE}, until you run `sourced ingest FOLDER` and start it again.", file=sys.stderr)
    sourced = demo_application(progress=False)
    sourced.ingestor.ingest(EXAMPLES / "handbook")
    sourced.engine.dispose()
    return argparse.Namespace(http=False, config=None, demo=True)
