"""Connectors built from their `connectors:` entries in sourced.yml, with their credentials from the environment
(a token, or the path of a key file, in the variable the entry names). A missing credential is a configuration
error naming the variable; its value is never printed or logged.

Which module connects an entry is the entry's own `module` (the table of connectors is `ConnectorEntry` in
`core/config.py`); it is imported only when that kind is configured, since the client libraries load slowly."""

import importlib
import os
from collections.abc import Mapping

from core.config import ConfigError, ConnectorEntry
from core.connectors.port import Connector


def build_connector(entry: ConnectorEntry, environ: Mapping[str, str] | None = None) -> Connector:
    environ = os.environ if environ is None else environ
    credential = _secret(environ, entry.credential_variable, entry.name)
    connector: Connector = importlib.import_module(entry.module).connect(entry, credential)
    return connector


def _secret(environ: Mapping[str, str], variable: str, name: str) -> str:
    value = environ.get(variable, "").strip()
    if not value:
        raise ConfigError(f"connector {name!r}: set {variable} in the environment (its credential)")
    return value
