"""`sourced doctor`: the operator's first stop. What is running (database, index, retrieval, embedder,
answerability model, answer model, audit mode, Slack), each line `ok`, `warning` or `error` with the fix.

It only reads: it does not migrate the database or ingest anything. `--json` prints the same as one object.
Exit 0 unless a line is an error.

The installation's checks are the core's (`core.diagnosis`); this command adds Slack's (the token asked of Slack,
the connection the tokens configure, the user groups sourced.yml names), between the installation's lines and the
connectors', and prints them. Each Slack line is a small check function of a `SlackSide` returning a `Check` or
None (not applicable here); `BOT_CHECKS` is the order they print in.
"""

import argparse
import json
from collections.abc import Callable
from dataclasses import asdict
from functools import cached_property
from pathlib import Path
from typing import Any, Final

from slack_sdk.errors import SlackApiError

from bot.commands.common import DEMO_CONFIG, add_config_option, add_demo_option, demo_settings
from bot.settings import SlackSettings, SlackSettingsError, load_slack_settings
from bot.slack_client import BotIdentity, SlackUnreachable, verify_bot_token, web_client
from core import diagnosis
from core.config import Settings, SourcedConfig
from core.diagnosis import Check, error, ok, warning


class SlackSide:
    """What the Slack checks look at: the Slack settings, sourced.yml's roles (None when it could not be read) and
    the bot's identity, asked of Slack once, on first use."""

    def __init__(self, slack: SlackSettings, config: SourcedConfig | None) -> None:
        self.slack = slack
        self.config = config

    @cached_property
    def identity(self) -> BotIdentity | SlackSettingsError:
        try:
            return verify_bot_token(web_client(self.slack.require_bot_token(), base_url=self.slack.api_url))
        except SlackSettingsError as failure:
            return failure


def slack_token(side: SlackSide) -> Check:
    if side.slack.bot_token is None:
        return warning("slack token", "SLACK_BOT_TOKEN is not set: the command line works, the bot cannot start",
                       "set SLACK_BOT_TOKEN (xoxb-...; docs/slack.md)", configured=False)
    identity = side.identity
    if isinstance(identity, SlackUnreachable):
        return error("slack token", str(identity), "check the network, DNS, proxy (HTTPS_PROXY) or firewall between "
                     "here and Slack; the token itself was not checked", configured=True, reachable=False)
    if isinstance(identity, SlackSettingsError):
        return error("slack token", str(identity), "install the app again and copy its bot token", configured=True)
    return ok("slack token", f"bot <@{identity.user_id}> in workspace {identity.team_id}", configured=True,
              user=identity.user_id, team=identity.team_id)


def slack_mode(side: SlackSide) -> Check | None:
    """Which connection the tokens configure: read from the environment alone, so it is checked when Slack
    cannot be reached too."""
    identity = side.identity
    if side.slack.bot_token is None or (isinstance(identity, SlackSettingsError)
                                        and not isinstance(identity, SlackUnreachable)):
        return None
    found = [name for name, require in (("Socket Mode", side.slack.require_app_token),
                                        ("HTTP", side.slack.require_signing_secret)) if _passes(require)]
    if not found:
        return error("slack mode", "neither Socket Mode nor HTTP is configured",
                     "set SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP)", modes=[])
    return ok("slack mode", " and ".join(found) + " configured", modes=found)


NO_USER_GROUPS: Final = frozenset({"plan_upgrade_required", "paid_teams_only"})
"""usergroups.list's answers on a workspace whose plan has no user groups (Slack's free plan)."""


def user_groups(side: SlackSide) -> Check | None:
    """Every user group named in `roles` exists, or its role silently belongs to nobody."""
    config = side.config
    if side.slack.bot_token is None or config is None or not config.roles:
        return None
    if isinstance(side.identity, SlackSettingsError):  # rejected: said above; unreachable: said here
        return (warning("user groups", "not checked: Slack could not be reached (above)")
                if isinstance(side.identity, SlackUnreachable) else None)
    client = web_client(side.slack.require_bot_token(), base_url=side.slack.api_url)
    try:
        groups = client.usergroups_list()["usergroups"] or []
    except SlackApiError as failure:
        code = failure.response.get("error")
        if code in NO_USER_GROUPS:
            return error("user groups", f"usergroups.list failed: {code}: this Slack plan has no user groups, so "
                         "the roles of sourced.yml belong to nobody", "user groups need a paid Slack plan; "
                         "on this one give roles by channel instead (channels: in sourced.yml, docs/slack.md)")
        return error("user groups", f"usergroups.list failed: {code}",
                     "add the usergroups:read scope (manifest.yml) and reinstall the app")
    known = {str(g["handle"]) for g in groups} | {str(g["id"]) for g in groups}
    missing = [f"{role}: {group}" for role, names in config.roles.items() for group in names
               if group.removeprefix("@") not in known]
    if missing:
        return error("user groups", "not found in Slack: " + ", ".join(missing),
                     "correct the handles under roles in sourced.yml", missing=missing)
    return ok("user groups", f"all {sum(len(v) for v in config.roles.values())} found")


BOT_CHECKS: tuple[Callable[[SlackSide], Check | None], ...] = (slack_token, slack_mode, user_groups)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("doctor", help="say what is running and what is wrong, with the fix")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_config_option(parser)
    add_demo_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        slack = load_slack_settings()
    except SlackSettingsError as failure:
        checks = [error("slack settings", str(failure))]
    else:
        checks = (diagnose(demo_settings(), slack, config_file=DEMO_CONFIG) if args.demo
                  else diagnose(Settings(), slack, config_file=args.config))
    healthy = all(check.status != "error" for check in checks)
    if args.json:
        print(json.dumps({"ok": healthy, "checks": [asdict(check) for check in checks]}, indent=2, default=str))
    else:
        for check in checks:
            print(line(check))
    return 0 if healthy else 1


def diagnose(settings: Settings, slack: SlackSettings, *, config_file: Path | None = None) -> list[Check]:
    """The installation's checks, then Slack's, then the connectors'."""
    found = diagnosis.diagnose(settings, config_file=config_file)
    side = SlackSide(slack, found.config)
    slack_checks = [check for examine in BOT_CHECKS if (check := examine(side)) is not None]
    return [*found.installation, *slack_checks, *found.connectors]


def line(check: Check) -> str:
    return f"{check.status:<8}{check.name}: {check.detail}" + (f"; fix: {check.fix}" if check.fix else "")


def _passes(require: Callable[[], str]) -> bool:
    try:
        require()
    except SlackSettingsError:
        return False
    return True
