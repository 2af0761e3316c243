"""What the connectors' syncs keep between runs: each connector's cursor and last outcome, and the members of the
sources' groups, by e-mail, which decide who holds a `group:` audience role (`core.domain.principal`)."""

from collections.abc import Collection, Mapping
from datetime import datetime

from sqlalchemy import Engine, delete, func, insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from core.application.catalog import ConnectorStatus
from core.domain import email_principals, group_principal
from core.storage.tables import (
    ConnectorItemFailureRow,
    ConnectorStateRow,
    DocumentRoleRow,
    DocumentRow,
    SourceGroupMemberRow,
)


class SqlConnectorState:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def status(self, name: str) -> ConnectorStatus:
        """The connector's state; one that never ran has no cursor and no dates."""
        return self.statuses([name])[0]

    def statuses(self, names: Collection[str]) -> list[ConnectorStatus]:
        with Session(self._engine) as session:
            rows = {row.name: row for row in session.scalars(
                select(ConnectorStateRow).where(ConnectorStateRow.name.in_(list(names))))}
            documents = dict(session.execute(select(DocumentRow.origin, func.count())
                                                .where(DocumentRow.origin.in_(list(names)))
                                                .group_by(DocumentRow.origin)).all())
            unreadable = dict(session.execute(
                select(ConnectorItemFailureRow.connector, func.count())
                .where(ConnectorItemFailureRow.connector.in_(list(names)))
                .group_by(ConnectorItemFailureRow.connector)).all())
        return [ConnectorStatus(name=name, cursor=row.cursor, full_pass_at=row.full_pass_at,
                                attempted_at=row.attempted_at, succeeded_at=row.succeeded_at, error=row.error,
                                summary=row.summary, documents=documents.get(name, 0),
                                unreadable=unreadable.get(name, 0))
                if (row := rows.get(name)) is not None else ConnectorStatus(name=name) for name in names]

    def started(self, name: str, at: datetime) -> None:
        self._upsert(name, attempted_at=at)

    def save_cursor(self, name: str, cursor: str) -> None:
        self._upsert(name, cursor=cursor)

    def full_pass_done(self, name: str, at: datetime) -> None:
        self._upsert(name, full_pass_at=at)

    def full_pass_due(self, name: str) -> None:
        """A full pass is due at once (the source asked for one), until one is done."""
        self._upsert(name, full_pass_at=None)

    def succeeded(self, name: str, at: datetime, summary: str) -> None:
        self._upsert(name, succeeded_at=at, error=None, summary=summary)

    def failed(self, name: str, error: str) -> None:
        self._upsert(name, error=error)

    # -- connectors no longer configured ------------------------------------------------------------------

    def unconfigured(self, configured: Collection[str]) -> dict[str, int]:
        """Connectors that left something in this database (documents, group members, state) and are not among
        `configured`: each with how many documents it still has."""
        keep = list(configured)
        with self._engine.connect() as connection:
            documents: dict[str, int] = {
                str(origin): int(count) for origin, count in connection.execute(
                    select(DocumentRow.origin, func.count()).where(DocumentRow.origin.is_not(None),
                                                                    DocumentRow.origin.not_in(keep))
                    .group_by(DocumentRow.origin)).all()}
            for column in (ConnectorStateRow.name, SourceGroupMemberRow.connector, ConnectorItemFailureRow.connector):
                for name in connection.execute(select(column).distinct().where(column.not_in(keep))).scalars():
                    documents.setdefault(str(name), 0)
        return dict(sorted(documents.items()))

    def group_count(self, name: str) -> int:
        """How many of the connector's groups have members stored."""
        with self._engine.connect() as connection:
            return int(connection.execute(select(func.count(SourceGroupMemberRow.group_id.distinct()))
                                          .where(SourceGroupMemberRow.connector == name)).scalar_one())

    def forget(self, name: str) -> None:
        """Everything the connector's syncs kept but its documents: its state, its groups' members (who held
        its `group:` roles), its unreadable items."""
        with self._engine.begin() as connection:
            connection.execute(delete(SourceGroupMemberRow).where(SourceGroupMemberRow.connector == name))
            connection.execute(delete(ConnectorItemFailureRow).where(ConnectorItemFailureRow.connector == name))
            connection.execute(delete(ConnectorStateRow).where(ConnectorStateRow.name == name))

    # -- items that could not be read ---------------------------------------------------------------------

    def unreadable_items(self, name: str) -> dict[str, str]:
        """The connector's items that a sync could not read, with why: each is tried again at the next sync."""
        with self._engine.connect() as connection:
            rows = connection.execute(select(ConnectorItemFailureRow.item_id, ConnectorItemFailureRow.reason)
                                      .where(ConnectorItemFailureRow.connector == name)
                                      .order_by(ConnectorItemFailureRow.item_id)).all()
        return {item_id: reason for item_id, reason in rows}

    def item_unreadable(self, name: str, item_id: str, reason: str, at: datetime) -> None:
        with self._engine.begin() as connection:
            dialect_insert = pg_insert if connection.dialect.name == "postgresql" else sqlite_insert
            statement = dialect_insert(ConnectorItemFailureRow).values(connector=name, item_id=item_id,
                                                                       reason=reason, failed_at=at)
            connection.execute(statement.on_conflict_do_update(index_elements=["connector", "item_id"],
                                                               set_={"reason": reason, "failed_at": at}))

    def item_read(self, name: str, item_ids: Collection[str]) -> None:
        """These items read again (or are gone from the source): no longer unreadable."""
        if not item_ids:
            return
        with self._engine.begin() as connection:
            connection.execute(delete(ConnectorItemFailureRow).where(
                ConnectorItemFailureRow.connector == name, ConnectorItemFailureRow.item_id.in_(list(item_ids))))

    def _upsert(self, name: str, **values: object) -> None:
        """One write per call, in its own transaction: a cursor saved stays saved whatever happens next."""
        with self._engine.begin() as connection:
            dialect_insert = pg_insert if connection.dialect.name == "postgresql" else sqlite_insert
            statement = dialect_insert(ConnectorStateRow).values(name=name, **values)
            connection.execute(statement.on_conflict_do_update(index_elements=["name"], set_=values))

    # -- the sources' groups ------------------------------------------------------------------------------

    def referenced_groups(self, connector: str) -> frozenset[str]:
        """The ids of the connector's groups that some stored document's audience names."""
        prefix = group_principal(connector, "")
        with self._engine.connect() as connection:
            roles = connection.execute(select(DocumentRoleRow.role).distinct()
                                       .where(DocumentRoleRow.role.startswith(prefix, autoescape=True))).scalars()
            return frozenset(role.removeprefix(prefix) for role in roles)

    def replace_members(self, connector: str, members: Mapping[str, frozenset[str]], *,
                        keep_others: bool = False) -> None:
        """The connector's groups' members as just read, in one transaction: a member removed in the source holds
        the group's role no more. With `keep_others`, groups not in `members` keep theirs."""
        with self._engine.begin() as connection:
            removal = delete(SourceGroupMemberRow).where(SourceGroupMemberRow.connector == connector)
            if keep_others:
                removal = removal.where(SourceGroupMemberRow.group_id.in_(list(members)))
            connection.execute(removal)
            rows = [{"connector": connector, "group_id": group, "email": email.strip().casefold()}
                    for group, emails in sorted(members.items()) for email in sorted(emails)]
            if rows:
                connection.execute(insert(SourceGroupMemberRow), _unique(rows))


def _unique(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """Two addresses that differ only in case are one member."""
    return list({(row["group_id"], row["email"]): row for row in rows}.values())


class SqlSourcePrincipals:
    """The audience roles a verified e-mail address holds in the sources: the address, its domain, and the
    groups of every connector that list it. An address the sources do not know holds only the first two, which
    no document names unless a source shares it with the address or the domain."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def principals(self, email: str | None) -> frozenset[str]:
        if not email:
            return frozenset()
        own = email_principals(email)
        if not own:
            return frozenset()
        with self._engine.connect() as connection:
            groups = connection.execute(select(SourceGroupMemberRow.connector, SourceGroupMemberRow.group_id)
                                        .where(SourceGroupMemberRow.email == email.strip().casefold())).all()
        return own | {group_principal(connector, group) for connector, group in groups}

