"""SQLAlchemy 2 storage: tables, migrations, the audit log and the bot's small repositories.

Portable across SQLite and PostgreSQL; only the full-text index (`core.retrieval.index`) is SQLite-only.
"""

from core.storage.audit_log import SqlAuditLog
from core.storage.database import (
    current_revision,
    head_revision,
    make_engine,
    migrate,
    session_factory,
    supports_full_text,
)
from core.storage.repositories import (
    CLARIFICATION_TTL,
    FeedbackEntry,
    FeedbackLog,
    PendingClarification,
    PendingClarifications,
    ProcessedEvents,
    Verdict,
)

__all__ = [
    "CLARIFICATION_TTL",
    "FeedbackEntry",
    "FeedbackLog",
    "PendingClarification",
    "PendingClarifications",
    "ProcessedEvents",
    "SqlAuditLog",
    "Verdict",
    "current_revision",
    "head_revision",
    "make_engine",
    "migrate",
    "session_factory",
    "supports_full_text",
]
