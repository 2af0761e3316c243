"""A deployment for end-to-end tests: a small knowledge base of our own, a temporary SQLite database, the
real WSGI app served on loopback by a threaded server, and the fake Slack beside it."""

import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest

from bot.app import SlackBot, create_bot
from bot.http import metrics_app, wsgi_app
from bot.settings import SlackSettings
from bot.work import ReplyWorkers
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig
from tests.e2e.fake_slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack, Workspace

DOCUMENTS = {
    "refunds.md": """\
        ---
        id: refund-policy
        title: Refund Policy
        owner: "#support-ops"
        audience: [everyone]
        updated: 2026-03-14
        url: https://wiki.example/refunds
        ---
        # Refund Policy
        ## Return window
        Customers may return items within 30 days of delivery for a full refund.
        """,
    "salary-bands.md": """\
        ---
        id: salary-bands
        title: Salary Bands
        owner: "#people-ops"
        audience: [hr]
        updated: 2026-01-10
        ---
        # Salary Bands
        ## Engineering
        The base salary band for a Senior Engineer is 150,000 to 190,000 dollars per year.
        ## Raise limit
        The annual raise limit is 10 percent of base salary.
        """,
    "legal-hold.md": """\
        ---
        id: litigation-hold
        title: Litigation Hold
        owner: "#legal-desk"
        audience: [legal]
        updated: 2025-11-02
        ---
        # Litigation Hold
        ## Hold notices
        A litigation hold notice requires employees to preserve every document about the named matter.
        """,
    "visitor-wifi.md": """\
        ---
        id: visitor-wifi
        title: Visitor Wi-Fi
        owner: "#it-help"
        audience: [everyone, guests]
        updated: 2026-02-01
        ---
        # Visitor Wi-Fi
        ## Network
        The visitor Wi-Fi network is called Northwind-Guest and its password is posted at reception.
        """,
    "travel.md": """\
        ---
        id: travel-expenses
        title: Travel Expenses
        owner: "#finance-ops"
        audience: [everyone]
        updated: 2026-03-01
        ---
        # Travel Expenses
        ## Meal limit
        The daily meal limit when travelling is 50 dollars per day.
        """,
}

CONFIG = SourcedConfig.model_validate({
    "default_owner": "C0HELPDESK",
    "roles": {"hr": ["@people-team"], "legal": ["@legal"], "operators": ["@sourced-operators"]},
    "channels": {"CHR": ["hr"]},
    "operators": ["operators"],
    "known_gaps": [{"topic": "Payroll", "keywords": ["payslip", "payroll"], "owner": "C0PAYROLL"}],
})


def workspace() -> Workspace:
    return Workspace(
        users={"UALICE": {"name": "alice"}, "UBOB": {"name": "bob"}, "ULARA": {"name": "lara"},
               "UGUEST": {"name": "gus", "is_restricted": True}, "UROBOT": {"name": "robot", "is_bot": True},
               "UGONE": {"name": "gone", "deleted": True}},
        groups={"S0PEOPLE": ("people-team", ["UALICE"]), "S0LEGAL": ("legal", ["ULARA"]),
                "S0OPERATORS": ("sourced-operators", ["ULARA"])},
        channels={"CPUBLIC": {"is_channel": True}, "CHR": {"is_private": True},
                  "CSHARED": {"is_channel": True, "is_ext_shared": True}, "CGUESTS": {"is_channel": True}},
        members={"CPUBLIC": ["UALICE", "UBOB"], "CHR": ["UALICE", "UBOB"], "CGUESTS": ["UALICE", "UGUEST"]},
    )


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: assertions read the fake's records."""


@dataclass
class Deployment:
    sourced: Sourced
    bot: SlackBot
    url: str
    metrics_url: str
    """`/metrics`, on its own loopback server as `sourced serve --http` gives it its own port."""

    def settle(self, timeout_s: float = 10.0) -> None:
        """Wait (bounded) until every submitted reply has finished."""
        assert self.bot.workers.wait_idle(timeout_s), "replies still running"


def write_kb(root: Path, names: tuple[str, ...] | None = None, extra: dict[str, str] | None = None) -> Path:
    """`DOCUMENTS` (those named, or all), and a test's own `extra` documents beside them."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in {**DOCUMENTS, **(extra or {})}.items():
        if names is None or name in names or name in (extra or {}):
            (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    fake = FakeSlack(workspace()).start()
    yield fake
    fake.stop()


@pytest.fixture
def deploy(tmp_path: Path, slack: FakeSlack) -> Iterator[Any]:
    """A factory: `deploy(documents=...)` starts one deployment; all are stopped at the end of the test."""
    stops: list[Any] = []

    def start(documents: tuple[str, ...] | None = None, name: str = "main", *, settings: Settings | None = None,
              slack_settings: dict[str, Any] | None = None, extra: dict[str, str] | None = None,
              config: SourcedConfig = CONFIG) -> Deployment:
        """`settings`: the core's (audit mode, model, embedder); its database URL is replaced by this test's.
        `extra`: documents of the test's own, ingested beside `DOCUMENTS`."""
        database_url = f"sqlite:///{tmp_path / name}.db"
        core = (settings.model_copy(update={"database_url": database_url}) if settings is not None
                else Settings(database_url=database_url))
        sourced = bootstrap(core, config=config, progress=False)
        report = sourced.ingestor.ingest(write_kb(tmp_path / f"kb-{name}", documents, extra))
        assert not report.errors
        # no "still working" notice unless a test asks for one: a loaded machine must not change what is posted
        quiet = {"working_after_s": 60.0}
        settings_ = SlackSettings(bot_token=BOT_TOKEN, signing_secret=SIGNING_SECRET, api_url=slack.api_url,
                                  **(quiet | (slack_settings or {})))
        bot = create_bot(sourced, settings_, workers=ReplyWorkers(workers=4))
        server = serving(wsgi_app(bot.app))
        metrics = serving(metrics_app(settings_.metrics_bearer("127.0.0.1")))
        stops.append(([server, metrics], bot, sourced))
        return Deployment(sourced=sourced, bot=bot, url=f"http://127.0.0.1:{server.server_port}/slack/events",
                          metrics_url=f"http://127.0.0.1:{metrics.server_port}/metrics")

    yield start
    for servers, bot, sourced in stops:
        for server in servers:
            server.shutdown()
            server.server_close()
        bot.close()
        sourced.engine.dispose()


def serving(application: Any) -> WSGIServer:
    """A threaded WSGI server on a free loopback port, serving until the test ends."""
    server = make_server("127.0.0.1", 0, application, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def northwind(deploy: Any) -> Deployment:
    deployment: Deployment = deploy()
    return deployment
