"""Who may read something changed, as Slack said it in an event: shared by every worker through the database
(`core.storage.AudienceChanges`), since an event reaches one worker of one host and each caches audiences.

A cached value read before a change to its key is read again (`changed_since`, with `bot.cache.TtlMemo`).
"""

from collections.abc import Collection
from datetime import datetime
from typing import Final, Protocol

from bot.cache import ChangedSince


class Changes(Protocol):
    """When Slack last said something about `keys` changed (`core.storage.AudienceChanges`)."""

    def latest(self, keys: Collection[str]) -> datetime | None: ...

    def mark(self, keys: Collection[str], *, at: datetime | None = None) -> None: ...


CLOCK_SKEW_S: Final = 5.0
"""A change marked by another host is compared with this host's clock: a value read up to this long before a
change counts as read before it."""


def changed_since(changes: Changes | None, *keys: str) -> ChangedSince | None:
    """Whether a value read at a given instant predates a change to `keys` (None without a change record)."""
    if changes is None:
        return None

    def check(started: float) -> bool:
        latest = changes.latest(keys)
        return latest is not None and latest.timestamp() >= started - CLOCK_SKEW_S

    return check


def channel_key(channel_id: str) -> str:
    return f"channel:{channel_id}"


def user_key(user_id: str) -> str:
    return f"user:{user_id}"


def group_key(group_id: str) -> str:
    return f"group:{group_id}"


WORKSPACE_KEY: Final = "workspace"
"""Who is a guest changed somewhere (a member turned guest, someone new): every channel's audience is read again."""
