"""Loggers of libraries that write payloads (questions, replies, rows) at their chattiest levels. Their records
at or below that level are dropped, so `sourced -v` never writes a question or a secret into the logs
(tests/e2e/test_no_secrets_in_logs.py found them).

The connectors' HTTP libraries are kept at INFO at least, whatever `-v` asks: at DEBUG, atlassian-python-api
logs every Confluence response whole (restricted pages' text, people's e-mail addresses), notion-client and
httpcore their bodies and traffic, urllib3 and requests each connection."""

import logging
from typing import Final


class _AboveLevel(logging.Filter):
    def __init__(self, level: int) -> None:
        super().__init__()
        self._level = level

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > self._level


def drop_records_up_to(level: int, *logger_names: str) -> None:
    """Drop the named loggers' records at `level` and below."""
    for name in logger_names:
        logging.getLogger(name).addFilter(_AboveLevel(level))


LIBRARY_LOGGERS: Final = ("atlassian", "urllib3", "requests", "httpx", "httpcore", "notion_client",
                          "googleapiclient", "google_auth_httplib2")
"""The HTTP clients of the connectors, by their top-level logger (a child without a level of its own follows)."""


def quiet_libraries(level: int = logging.INFO) -> None:
    """Keep the connectors' HTTP libraries at `level` or above (a level they set higher themselves stays)."""
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(max(level, logger.level))
