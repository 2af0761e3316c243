"""`sourced serve [--http --port N --workers W]`: run the Slack bot.

Socket Mode (the default, needs SLACK_APP_TOKEN) suits development: no public URL. `--http` serves
`/slack/events` and `/healthz` with gunicorn behind a load balancer (needs SLACK_SIGNING_SECRET), and `/metrics`
on a port of its own (loopback unless `--metrics-host` says otherwise, and then only with SOURCED_METRICS_TOKEN).
Both need SLACK_BOT_TOKEN. Anything missing or rejected stops the start with one line naming it.
"""

import argparse
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_sdk.errors import SlackApiError

from bot.app import create_bot
from bot.commands.common import add_config_option, application
from bot.commands.sync import purge_unconfigured
from bot.http import GunicornServer, by_listener, metrics_app, wsgi_app
from bot.schedule import SyncSchedule
from bot.settings import SlackSettings, SlackSettingsError, load_slack_settings
from bot.slack_client import verify_bot_token, web_client
from core.bootstrap import Sourced
from core.storage.locks import IngestBusy

if TYPE_CHECKING:
    from wsgiref.types import WSGIApplication


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("serve", help="run the Slack bot (Socket Mode, or HTTP with --http)")
    parser.add_argument("--http", action="store_true", help="serve /slack/events over HTTP with gunicorn")
    parser.add_argument("--host", default="0.0.0.0", help="address for --http (default 0.0.0.0)")
    parser.add_argument("--port", type=int, default=3000, help="port to listen on with --http (default 3000)")
    parser.add_argument("--workers", type=int, default=None,
                        help="gunicorn worker processes (default $SOURCED_HTTP_WORKERS, else 2)")
    parser.add_argument("--threads", type=int, default=None,
                        help="request threads per worker (default $SOURCED_HTTP_THREADS, else 8)")
    parser.add_argument("--metrics-host", default=None,
                        help="address of /metrics with --http (default $SOURCED_METRICS_HOST, else 127.0.0.1; "
                             "beyond loopback SOURCED_METRICS_TOKEN is required)")
    parser.add_argument("--metrics-port", type=int, default=None,
                        help="port of /metrics with --http, apart from --port (default $SOURCED_METRICS_PORT, "
                             "else 9464; 0 serves no metrics)")
    add_config_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = load_slack_settings()
        return serve_http(args, settings) if args.http else serve_socket_mode(args, settings)
    except SlackSettingsError as error:
        print(f"sourced serve: {error}", file=sys.stderr)
        return 2


def print_components(sourced: Sourced) -> None:
    """What this bot answers with, and why (an `auto` that fell back to full text says so here too)."""
    for line in sourced.components():
        print(line, flush=True)


def purge_removed_connectors(sourced: Sourced) -> None:
    """The documents of connectors no longer in sourced.yml leave the index before the bot answers (one line
    each). Another sync or ingestion holding the database defers it to the next `sourced sync` or start."""
    try:
        purge_unconfigured(sourced)
    except IngestBusy as error:
        print(f"sourced serve: connectors no longer in sourced.yml not purged yet: {error}", file=sys.stderr)


def serve_socket_mode(args: argparse.Namespace, settings: SlackSettings) -> int:
    app_token = settings.require_app_token()
    sourced = application(args, progress=False)
    print_components(sourced)
    purge_removed_connectors(sourced)
    bot = create_bot(sourced, settings, socket_mode=True)
    handler = SocketModeHandler(bot.app, app_token=app_token)
    try:
        handler.connect()  # type: ignore[no-untyped-call]  # slack_bolt leaves it unannotated
    except SlackApiError as error:
        code = error.response.get("error") if error.response is not None else error
        raise SlackSettingsError(f"SLACK_APP_TOKEN was rejected by Slack (apps.connections.open: {code})"
                                 ) from error
    print(f"Sourced is connected to Slack (Socket Mode) as <@{bot.identity.user_id}>. Ctrl-C stops it.")
    schedule = SyncSchedule.of(sourced)
    if schedule is not None:
        print(f"Connectors sync every {sourced.config.sync_every}.", flush=True)
        schedule.start()
    try:
        threading.Event().wait()  # the handler's threads do the work; this one only waits for Ctrl-C
    except KeyboardInterrupt:
        pass
    finally:
        if schedule is not None:
            schedule.close()
        handler.close()  # type: ignore[no-untyped-call]  # slack_bolt leaves it unannotated
        bot.close()
    return 0


def serve_http(args: argparse.Namespace, settings: SlackSettings) -> int:
    """Check everything once in the parent (so a mistake is one line, not a worker crash loop), then fork."""
    token = settings.require_bot_token()
    settings.require_signing_secret()
    metrics = _metrics_listener(args, settings)
    verify_bot_token(web_client(token, base_url=settings.api_url))
    sourced = application(args, progress=False)  # config readable, schema migrated, before the fork
    print_components(sourced)
    purge_removed_connectors(sourced)
    sourced.engine.dispose()
    workers = args.workers or settings.http_workers
    threads = args.threads or settings.http_threads
    where = (f"/metrics on http://{metrics.host}:{metrics.port}/metrics{' (bearer token)' if metrics.token else ''}"
             if metrics else "no /metrics (port 0)")
    print(f"Sourced listens on http://{args.host}:{args.port}/slack/events ({workers} workers x {threads} "
          f"threads), /healthz beside it; {where}.", flush=True)
    binds = [f"{args.host}:{args.port}", *([f"{metrics.host}:{metrics.port}"] if metrics else [])]
    GunicornServer(_builder(args, settings, metrics), binds=binds, workers=workers, threads=threads).run()
    return 0


@dataclass(frozen=True, kw_only=True)
class MetricsListener:
    host: str
    port: int
    token: str | None


def _metrics_listener(args: argparse.Namespace, settings: SlackSettings) -> MetricsListener | None:
    host = args.metrics_host or settings.metrics_host
    port = settings.metrics_port if args.metrics_port is None else args.metrics_port
    if port == 0:
        return None
    if port == args.port:
        raise SlackSettingsError(f"/metrics needs a port of its own: the metrics port {port} is --port")
    return MetricsListener(host=host, port=port, token=settings.metrics_bearer(host))


def _builder(args: argparse.Namespace, settings: SlackSettings, metrics: MetricsListener | None
             ) -> Callable[[], tuple["WSGIApplication", Callable[[], None]]]:
    """What each worker runs after the fork: its own container, app and reply pool."""

    def build() -> tuple["WSGIApplication", Callable[[], None]]:
        sourced = application(args, progress=False)
        bot = create_bot(sourced, settings)
        schedule = SyncSchedule.of(sourced)  # each worker tries; the lock lets one sync at a time
        if schedule is not None:
            schedule.start()

        def close() -> None:
            if schedule is not None:
                schedule.close()
            bot.close()
            sourced.engine.dispose()

        slack = wsgi_app(bot.app)
        if metrics is None:
            return slack, close
        return by_listener({metrics.port: metrics_app(metrics.token)}, default=slack), close

    return build
