"""Loggers of libraries that write payloads (questions, replies, rows) at their chattiest levels. Their records
at or below that level are dropped, so `sourced -v` never writes a question or a secret into the logs
(tests/e2e/test_no_secrets_in_logs.py found them)."""

import logging


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
