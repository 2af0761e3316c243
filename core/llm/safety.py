"""The global switch that keeps tests away from real hosted models.

Every model adapter calls `ensure_model_url_allowed` before it sends anything. Once `block_remote_models()`
has been called (the test suite does it for every run), only loopback addresses may be reached: a scripted
server or a local llama.cpp in a test is fine, a hosted API is an error raised before a byte leaves the
machine. The
switch only ever turns on, so no test can forget to turn it back.
"""

import ipaddress
from urllib.parse import urlsplit

from core.domain.errors import ModelError

_remote_blocked = False


class RemoteModelBlocked(ModelError, RuntimeError):
    """A model request to a non-loopback address while remote models are blocked."""


def block_remote_models() -> None:
    """From now on, in this process, model adapters may only reach loopback addresses."""
    global _remote_blocked  # noqa: PLW0603  # one process-wide switch is the point of this module
    _remote_blocked = True


def remote_models_blocked() -> bool:
    return _remote_blocked


def is_loopback_url(url: str) -> bool:
    """True for `localhost`, 127.0.0.0/8 and ::1; a name that merely starts with `localhost` is not."""
    host = urlsplit(url).hostname
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def ensure_model_url_allowed(base_url: str) -> None:
    """Raise unless the switch is off or `base_url` is on loopback."""
    if _remote_blocked and not is_loopback_url(base_url):
        raise RemoteModelBlocked(
            f"model requests to {base_url!r} are blocked: only loopback addresses are allowed "
            "(block_remote_models() is on, as in the test suite)"
        )
