"""Changes to who may read a reply, shared by every worker: a Slack event reaches one worker of one host, yet
all of them cache channels' audiences. The worker that receives it `mark`s the key; each worker asks
`changed_since` before using what it cached."""

from collections.abc import Collection
from datetime import UTC, datetime

from sqlalchemy import Engine, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from core.storage.tables import AudienceChangeRow


class AudienceChanges:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def mark(self, keys: Collection[str], *, at: datetime | None = None) -> None:
        """Record that what `keys` name changed now (or `at`)."""
        if not keys:
            return
        when = at or datetime.now(UTC)
        with self._engine.begin() as connection:
            dialect_insert = pg_insert if connection.dialect.name == "postgresql" else sqlite_insert
            for key in sorted(set(keys)):
                statement = dialect_insert(AudienceChangeRow).values(key=key, changed_at=when)
                connection.execute(statement.on_conflict_do_update(index_elements=["key"],
                                                                   set_={"changed_at": when}))

    def latest(self, keys: Collection[str]) -> datetime | None:
        """The last change to any of `keys`, or None if none was ever marked."""
        if not keys:
            return None
        with self._engine.connect() as connection:
            found: datetime | None = connection.execute(
                select(func.max(AudienceChangeRow.changed_at)).where(AudienceChangeRow.key.in_(list(keys)))
            ).scalar_one_or_none()
        if found is not None and found.tzinfo is None:  # max() over SQLite's naive UTC text skips the type
            found = found.replace(tzinfo=UTC)
        return found
