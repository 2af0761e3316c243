"""The Bolt app factory: one `App` wired to the `Sourced` container, for Socket Mode and HTTP alike."""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from slack_bolt import App, BoltContext, BoltRequest, BoltResponse
from slack_bolt.authorization import AuthorizeResult
from slack_sdk import WebClient
from slack_sdk.signature import SignatureVerifier

from bot.audience import AudiencePolicy, GuestDirectory
from bot.exactly_once import EventClaims, Sweeper
from bot.identity import Home, IdentityResolver, no_sources
from bot.listeners import actions, assistant, commands, events, home, membership, messages, shortcuts
from bot.membership import AudienceFollower
from bot.replies import Replies
from bot.settings import SlackSettings
from bot.slack_client import BotIdentity, verify_bot_token, web_client
from bot.work import ReplyWorkers
from core.bootstrap import Sourced
from core.log_privacy import drop_records_up_to

log = logging.getLogger(__name__)

LISTENERS = (assistant, events, membership, messages, home, commands, actions, shortcuts)
"""`assistant` first: Bolt's `Assistant` is a middleware, and takes the messages of assistant threads before
`messages` (plain DMs) could."""


class _TokenNotice(logging.Filter):
    """Bolt reads SLACK_BOT_TOKEN itself and warns that `client` wins; here that is the intent, not news."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "`token` will be unused" not in record.getMessage()


_BOLT_LOG = logging.getLogger("sourced.slack_bolt")
_BOLT_LOG.addFilter(_TokenNotice())


# slack_sdk logs request and response bodies at DEBUG, and Socket Mode each envelope: a reply echoes the question
# ("You asked: ...") and the share button carries it whole. Bolt logs a request whose signature fails, body and
# all, at INFO (a rotated secret, a replayed request).
drop_records_up_to(logging.DEBUG, "slack_sdk.web.base_client", "slack_sdk.webhook.client",
                   "slack_sdk.socket_mode.builtin.client", "slack_sdk.socket_mode.builtin.internals")
drop_records_up_to(logging.INFO, "slack_bolt.RequestVerification")


@dataclass(frozen=True, kw_only=True)
class SlackBot:
    """The app and what outlives a request: the reply pool and the sweep for abandoned events (both stopped
    with the process, `close`)."""

    app: App
    replies: Replies
    workers: ReplyWorkers
    identity: BotIdentity
    sweeper: Sweeper

    def close(self) -> None:
        """Stop taking over abandoned events, then finish the replies accepted: each is a person waiting."""
        self.sweeper.stop()
        self.workers.shutdown()


def create_app(sourced: Sourced, slack_settings: SlackSettings, *, socket_mode: bool = False,
               workers: ReplyWorkers | None = None) -> App:
    """The Bolt `App`; see `create_bot` for the pieces that outlive a request."""
    return create_bot(sourced, slack_settings, socket_mode=socket_mode, workers=workers).app


def create_bot(sourced: Sourced, slack_settings: SlackSettings, *, socket_mode: bool = False,
               workers: ReplyWorkers | None = None) -> SlackBot:
    """Check the token with `auth.test` (a bad one stops here, with one line naming it), then wire the app.

    Raises `SlackSettingsError` for a missing or rejected token or secret.
    """
    token = slack_settings.require_bot_token()
    secret = "" if socket_mode else slack_settings.require_signing_secret()
    client = web_client(token, base_url=slack_settings.api_url)
    identity = verify_bot_token(client)
    workers = workers or ReplyWorkers(workers=slack_settings.reply_workers)
    lease = timedelta(seconds=slack_settings.event_lease_s)
    claims = EventClaims(sourced.processed_events, lease=lease)
    replies, follower = _replies(sourced, slack_settings, client, identity, workers=workers, claims=claims)
    app = App(
        name="sourced",
        logger=_BOLT_LOG,
        signing_secret=secret,
        client=web_client(None, base_url=slack_settings.api_url),
        authorize=_authorized_as(identity, token),
        # listeners only acknowledge and submit, so running them before the response costs nothing
        # and spares Bolt's hand-off to its own listener threads
        process_before_response=True,
    )
    app.use(_provide(replies, follower))
    app.error(_unreadable_payloads(secret or None))
    for listener in LISTENERS:
        listener.register(app)
    sweeper = Sweeper(sourced.processed_events, claims, resume=replies.resume, lease=lease).start()
    return SlackBot(app=app, replies=replies, workers=workers, identity=identity, sweeper=sweeper)


def _replies(sourced: Sourced, settings: SlackSettings, client: WebClient, identity: BotIdentity, *,
             workers: ReplyWorkers, claims: EventClaims) -> tuple[Replies, AudienceFollower]:
    ttl = settings.cache_ttl_s
    changes = sourced.audience_changes
    sources = sourced.service.source_roles if sourced.config.connectors else None
    resolver = IdentityResolver(client, roles=sourced.config.roles, ttl_s=ttl, sources=sources or no_sources,
                                home=Home(team_id=identity.team_id, enterprise_id=identity.enterprise_id),
                                changes=changes)
    audience = AudiencePolicy(client, channels=sourced.config.channels, ttl_s=ttl, sources=sources,
                              guests=GuestDirectory(client, ttl_s=ttl, changes=changes), changes=changes)
    replies = Replies(service=sourced.service, client=client, identity=resolver, audience=audience, workers=workers,
                      claims=claims, working_after_s=settings.working_after_s, bot_user_id=identity.user_id or None)
    return replies, AudienceFollower(changes, audience=audience, identity=resolver)


def _authorized_as(identity: BotIdentity, token: str) -> Callable[[], AuthorizeResult]:
    """Every request is for the one installation `auth.test` described at start: no call per request."""
    result = AuthorizeResult(enterprise_id=identity.enterprise_id, team_id=identity.team_id,
                             bot_user_id=identity.user_id, bot_id=identity.bot_id, bot_token=token)

    def authorize() -> AuthorizeResult:
        return result

    return authorize


_PAYLOAD_ERRORS = (KeyError, TypeError, AttributeError, ValueError, IndexError)
"""What reading a payload of an unexpected shape raises, in Bolt or in our listeners."""


def _unreadable_payloads(secret: str | None) -> Callable[[Exception, BoltRequest], BoltResponse]:
    """Bolt's error handler. A *signed* request whose payload Bolt or our listeners could not read (found by
    fuzzing: `"event": null`, `"authorizations": {}`) is acknowledged with 200, since Slack retries a 5xx with
    the same body. The signature is checked here again because Bolt's own check may be what failed (a missing
    or non-numeric timestamp raises before it compares): unsigned stays 401. Any other error stays a 500, which
    Slack retries, perhaps on a healthy worker. Logged by type and place only: a message may quote the payload.
    Without a secret (Socket Mode) the connection itself is authenticated."""
    verifier = SignatureVerifier(secret) if secret else None

    def handle(error: Exception, request: BoltRequest) -> BoltResponse:
        if verifier is not None and not _signed(verifier, request):
            return BoltResponse(status=401, body="")
        if not isinstance(error, _PAYLOAD_ERRORS):
            log.error("Slack request failed: %s at %s", type(error).__name__, _where(error))
            return BoltResponse(status=500, body="")
        log.error("signed Slack request not handled: %s at %s", type(error).__name__, _where(error))
        return BoltResponse(status=200, body="")

    return handle


def _signed(verifier: SignatureVerifier, request: BoltRequest) -> bool:
    def header(name: str) -> str | None:
        values = request.headers.get(name)
        return values[0] if values else None

    try:
        return verifier.is_valid(body=request.raw_body, timestamp=header("x-slack-request-timestamp"),
                                 signature=header("x-slack-signature"))
    except (TypeError, ValueError):  # a missing or non-numeric timestamp
        return False


def _where(error: BaseException) -> str:
    trace = error.__traceback__
    while trace is not None and trace.tb_next is not None:
        trace = trace.tb_next
    if trace is None:
        return "?"
    return f"{trace.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{trace.tb_lineno}"


def _provide(replies: Replies, membership: AudienceFollower,
             ) -> Callable[[BoltContext, Callable[[], BoltResponse]], BoltResponse]:
    """A global middleware putting `replies` (and `membership`) into the context, where listeners take them by
    name."""

    def provide(context: BoltContext, next: Callable[[], BoltResponse]) -> BoltResponse:
        context["replies"] = replies
        context["membership"] = membership
        return next()

    return provide
