"""The Slack Web API client, built one way for every caller: the configured base URL and slack_sdk's
retry handlers, so a 429 waits for `Retry-After`, and a dropped connection or a 500/503 is tried again.

Retrying a 5xx could in principle post a reply twice (Slack failing after it stored the message); without it,
one transient 5xx on `chat.postMessage` loses the answer and the person is only told to try again. Slack's 5xx
answers are overwhelmingly requests it did not carry out, so the lost reply is the likelier harm."""

import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)

from bot.settings import SlackSettingsError

TIMEOUT_S = 15
RATE_LIMIT_RETRIES = 3
CONNECTION_RETRIES = 2
SERVER_ERROR_RETRIES = 2


def web_client(token: str | None, *, base_url: str) -> WebClient:
    return WebClient(
        token=token,
        base_url=base_url,
        timeout=TIMEOUT_S,
        retry_handlers=[
            RateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
            ConnectionErrorRetryHandler(max_retry_count=CONNECTION_RETRIES),
            ServerErrorRetryHandler(max_retry_count=SERVER_ERROR_RETRIES),
        ],
    )


class SlackUnreachable(SlackSettingsError):
    """The Slack API could not be reached (DNS, a refused or timed-out connection, TLS): a fault of the network
    between here and Slack, which says nothing of the token."""


def network_fault(error: OSError, url: str) -> str:
    """What failed on the way to `url`, as a network fault is named: "the DNS lookup of slack.com failed",
    "the connection to slack.com was refused"."""
    host = urlsplit(url).hostname or url
    reason: object = getattr(error, "reason", None) or error
    if isinstance(reason, socket.gaierror):
        return f"the DNS lookup of {host} failed ({reason.strerror or reason})"
    if isinstance(reason, ConnectionRefusedError):
        return f"the connection to {host} was refused"
    if isinstance(reason, TimeoutError | socket.timeout):
        return f"the connection to {host} timed out"
    if isinstance(reason, ssl.SSLError):
        return f"the TLS handshake with {host} failed ({reason})"
    return f"{host} could not be reached ({reason})"


@dataclass(frozen=True, kw_only=True)
class BotIdentity:
    """Who the bot is and which workspace installed it, from `auth.test`."""

    user_id: str
    bot_id: str | None
    team_id: str | None
    enterprise_id: str | None
    auth_test: dict[str, object]


def verify_bot_token(client: WebClient) -> BotIdentity:
    """Call `auth.test` once; a rejected or unreachable token becomes one line naming the variable."""
    try:
        response = client.auth_test()
    except SlackApiError as error:
        code = error.response.get("error", "unknown error") if error.response is not None else "unknown error"
        raise SlackSettingsError(f"SLACK_BOT_TOKEN was rejected by Slack (auth.test: {code})") from error
    except OSError as error:
        raise SlackUnreachable(f"SLACK_BOT_TOKEN could not be checked: {network_fault(error, client.base_url)} "
                               f"(Slack API at {client.base_url})") from error
    data = dict(response.data) if isinstance(response.data, dict) else {}
    return BotIdentity(user_id=str(data.get("user_id", "")), bot_id=_text(data.get("bot_id")),
                       team_id=_text(data.get("team_id")), enterprise_id=_text(data.get("enterprise_id")),
                       auth_test=data)


def _text(value: object) -> str | None:
    return str(value) if value else None
