"""Connectors built from their `connectors:` entries in sourced.yml, with their credentials from the environment
(a token, or the path of a key file, in the variable the entry names). A missing credential is a configuration
error naming the variable; its value is never printed or logged."""

import os
from collections.abc import Mapping

from core.config import ConfigError, ConfluenceEntry, ConnectorEntry, DriveEntry, NotionEntry
from core.connectors.port import Connector


def build_connector(entry: ConnectorEntry, environ: Mapping[str, str] | None = None) -> Connector:
    environ = os.environ if environ is None else environ
    if isinstance(entry, ConfluenceEntry):
        from core.connectors.confluence import ConfluenceConnector  # noqa: PLC0415  # its library loads slowly

        return ConfluenceConnector(name=entry.name, url=entry.url, spaces=entry.spaces, user=entry.user,
                                   token=_secret(environ, entry.token_env, entry.name))
    if isinstance(entry, DriveEntry):
        from core.connectors.drive import DriveConnector  # noqa: PLC0415

        return DriveConnector(name=entry.name, key_file=_secret(environ, entry.credentials_env, entry.name),
                              subject=entry.subject, drives=entry.drives, api_url=entry.api_url,
                              link_sharing=entry.link_sharing)
    if isinstance(entry, NotionEntry):
        from core.connectors.notion import NotionConnector  # noqa: PLC0415

        return NotionConnector(name=entry.name, token=_secret(environ, entry.token_env, entry.name),
                               roots={root.page: tuple(root.audience) for root in entry.roots},
                               audience=tuple(entry.audience) if entry.audience else None, api_url=entry.api_url)
    raise ConfigError(f"connector {entry.name!r}: unknown kind")


def _secret(environ: Mapping[str, str], variable: str, name: str) -> str:
    value = environ.get(variable, "").strip()
    if not value:
        raise ConfigError(f"connector {name!r}: set {variable} in the environment (its credential)")
    return value
