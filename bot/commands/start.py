"""`sourced start`: what `make run` does. The local demo on the embedded defaults."""

import argparse
from typing import Any

from bot.commands import demo

SLACK_HINT = """\
To use Sourced in Slack: create an app at api.slack.com/apps "From an app manifest" with manifest.yml,
install it to your workspace, then put SLACK_BOT_TOKEN (xoxb-...) and SLACK_APP_TOKEN (xapp-..., Socket Mode)
in the environment or in .env and run `make run` again."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("start", help="the Slack bot when tokens are set, else the local demo")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    code = demo.run(args)
    print()
    print(SLACK_HINT)
    return code
