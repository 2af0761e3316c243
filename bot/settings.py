"""Slack settings: secrets and sizing from the environment (and `.env`), never from `sourced.yml`."""

import ipaddress
from typing import Final

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.domain.errors import OperatorError

SLACK_API_URL: Final = "https://slack.com/api/"


class SlackSettingsError(OperatorError, ValueError):
    """A Slack setting is missing or malformed; the message is one line naming the variable."""


class SlackSettings(BaseSettings):
    """What the Slack adapter needs. Each field names its variable so an error can name it too."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)

    bot_token: SecretStr | None = Field(default=None, validation_alias=AliasChoices("SLACK_BOT_TOKEN"))
    app_token: SecretStr | None = Field(default=None, validation_alias=AliasChoices("SLACK_APP_TOKEN"))
    signing_secret: SecretStr | None = Field(default=None,
                                             validation_alias=AliasChoices("SLACK_SIGNING_SECRET"))
    api_url: str = Field(default=SLACK_API_URL, validation_alias=AliasChoices("SOURCED_SLACK_API_URL"))
    reply_workers: int = Field(default=8, ge=1, le=64,
                               validation_alias=AliasChoices("SOURCED_SLACK_REPLY_WORKERS"))
    """Threads computing answers per process, apart from the threads that acknowledge requests."""
    cache_ttl_s: float = Field(default=300.0, gt=0,
                               validation_alias=AliasChoices("SOURCED_SLACK_CACHE_TTL_S"))
    """How long user flags, user-group members and channel facts are reused before asking Slack again."""
    event_lease_s: float = Field(default=15.0, gt=0, validation_alias=AliasChoices("SOURCED_SLACK_EVENT_LEASE_S"))
    """How long a claim on an event outlives its worker: a question whose worker died is answered by another
    worker about this much later (`bot.exactly_once`)."""
    working_after_s: float = Field(default=4.0, gt=0, validation_alias=AliasChoices("SOURCED_SLACK_WORKING_AFTER_S"))
    """A reply not ready after this long first shows "still working", which the reply then replaces."""
    http_workers: int = Field(default=2, ge=1, le=32, validation_alias=AliasChoices("SOURCED_HTTP_WORKERS"))
    http_threads: int = Field(default=8, ge=1, le=256, validation_alias=AliasChoices("SOURCED_HTTP_THREADS"))
    metrics_host: str = Field(default="127.0.0.1", validation_alias=AliasChoices("SOURCED_METRICS_HOST"))
    metrics_port: int = Field(default=9464, ge=0, le=65535, validation_alias=AliasChoices("SOURCED_METRICS_PORT"))
    """`/metrics` listens here, never on the port Slack reaches; 0 serves no metrics."""
    metrics_token: SecretStr | None = Field(default=None, validation_alias=AliasChoices("SOURCED_METRICS_TOKEN"))
    """A scraper must send `Authorization: Bearer <token>`; required when `/metrics` listens beyond loopback."""

    @field_validator("api_url")
    @classmethod
    def _ends_with_slash(cls, value: str) -> str:
        """The Web API client joins method names to this URL, so it must end with "/"."""
        return value if value.endswith("/") else value + "/"

    @property
    def has_socket_mode_tokens(self) -> bool:
        return self.bot_token is not None and self.app_token is not None

    def require_bot_token(self) -> str:
        return _require(self.bot_token, "SLACK_BOT_TOKEN", "the bot token (xoxb-...)", prefix="xoxb-")

    def require_app_token(self) -> str:
        return _require(self.app_token, "SLACK_APP_TOKEN", "the app-level token for Socket Mode (xapp-...)",
                        prefix="xapp-")

    def require_signing_secret(self) -> str:
        return _require(self.signing_secret, "SLACK_SIGNING_SECRET", "the app's signing secret", prefix="")

    def metrics_bearer(self, host: str) -> str | None:
        """The token `/metrics` on `host` requires (None: none). A listener beyond loopback without one is
        refused: the counters say how questions were decided, which is nobody's to read unasked."""
        token = self.metrics_token.get_secret_value().strip() if self.metrics_token is not None else ""
        if token and any(ch.isspace() for ch in token):
            raise SlackSettingsError("SOURCED_METRICS_TOKEN does not look like a bearer token: expected no spaces")
        if not token and not is_loopback(host):
            raise SlackSettingsError(f"/metrics would listen on {host}, beyond loopback, without a token: set "
                                     "SOURCED_METRICS_TOKEN (scrapers send it as a bearer token), or "
                                     "SOURCED_METRICS_HOST=127.0.0.1")
        return token or None


def load_slack_settings() -> SlackSettings:
    """The settings from the environment and `.env`; a malformed value is one line naming its variable."""
    try:
        return SlackSettings()
    except ValidationError as error:
        first = error.errors()[0]
        variable = ".".join(str(part) for part in first["loc"])
        raise SlackSettingsError(f"{variable}: {first['msg']}") from error


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve anywhere
        return False


def _require(value: SecretStr | None, variable: str, what: str, *, prefix: str) -> str:
    secret = value.get_secret_value().strip() if value is not None else ""
    if not secret:
        raise SlackSettingsError(f"{variable} is not set: {what}, from the app's settings page")
    if not secret.startswith(prefix) or any(ch.isspace() for ch in secret):
        expected = f"starting with {prefix!r}" if prefix else "without spaces"
        raise SlackSettingsError(f"{variable} does not look like {what}: expected a value {expected}")
    return secret
