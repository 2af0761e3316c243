"""Connectors built from their `connectors:` entries in sourced.yml, with their credentials from the environment
(a token, or the path of a key file, in the variable the entry names). A missing credential is a configuration
error naming the variable; its value is never printed or logged.

Which module connects an entry is the entry's own `module` (the table of connectors is `ConnectorEntry` in
`core/config.py`); it is imported only when that kind is configured, since the client libraries load slowly.
Those libraries are the `connectors` extra, which `make run` does not install: a connector configured without
them fails in one line that gives the command installing them into this very Python."""

import importlib
import importlib.util
import os
import sys
from collections.abc import Mapping

from core.config import ConfigError, ConnectorEntry
from core.connectors.port import Connector, ConnectorError
from core.install import install_command


def build_connector(entry: ConnectorEntry, environ: Mapping[str, str] | None = None) -> Connector:
    environ = os.environ if environ is None else environ
    missing = libraries_missing(entry)
    if missing is not None:
        raise ConnectorError(missing)
    credential = _secret(environ, entry.credential_variable, entry.name)
    connector: Connector = importlib.import_module(entry.module).connect(entry, credential)
    return connector


def libraries_missing(entry: ConnectorEntry) -> str | None:
    """What a connector without its client libraries says, in one line: the exact command that installs the
    missing ones. None when every library it needs can be imported."""
    missing = missing_requirements(entry)
    if not missing:
        return None
    return (f"the {entry.kind} connector {entry.name!r} needs its client "
            f"{'library' if len(missing) == 1 else 'libraries'} (the connectors extra): {install_command(missing)}")


def missing_requirements(entry: ConnectorEntry) -> list[str]:
    """The pip requirements of the entry's client libraries that this Python cannot import."""
    return [requirement for module, requirement in entry.libraries if not _importable(module)]


def _importable(module: str) -> bool:
    """Whether `module` can be imported, without importing it (a parent package is imported to look: for
    `google.oauth2`, `google`). A module set to None in `sys.modules` is one Python treats as absent."""
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a missing parent package, or a module whose __spec__ is unset
        return False


def _secret(environ: Mapping[str, str], variable: str, name: str) -> str:
    value = environ.get(variable, "").strip()
    if not value:
        raise ConfigError(f"connector {name!r}: set {variable} in the environment (its credential)")
    return value
