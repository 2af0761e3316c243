"""Alembic environment: runs on the connection `core.storage.database.migrate` passes in.

Without one (the `alembic` command line with a `sqlalchemy.url`) it opens its own. The SQLite full-text
tables are created by hand in the revisions and hidden from autogenerate, which cannot reflect them.
"""

from alembic import context
from sqlalchemy import Connection

from core.storage.database import make_engine
from core.storage.migrations import include_name
from core.storage.tables import Base


def run_on(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=Base.metadata, include_name=include_name,
                      render_as_batch=connection.dialect.name == "sqlite", compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


def run_offline() -> None:
    context.configure(url=context.config.get_main_option("sqlalchemy.url"), target_metadata=Base.metadata,
                      include_name=include_name, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    given = context.config.attributes.get("connection")
    if isinstance(given, Connection):
        run_on(given)
        return
    url = context.config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no connection in config.attributes['connection'] and no sqlalchemy.url")
    with make_engine(url).begin() as connection:
        run_on(connection)


if context.is_offline_mode():
    run_offline()
else:
    run_online()
