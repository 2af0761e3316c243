"""SQLAlchemy 2 storage: tables, migrations, the audit log and the bot's small repositories.

Portable across SQLite and PostgreSQL; what one of them alone has (SQLite's FTS5 tables, PostgreSQL's chunk
terms, audience classes and pgvector tables) is created by the migrations (`core.storage.postgres`).
"""

from core.storage.audience_changes import AudienceChanges
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
    CONVERSATION_TTL,
    ConversationTurns,
    FeedbackLog,
    PendingClarifications,
    ProcessedEvents,
)

__all__ = [
    "CLARIFICATION_TTL",
    "CONVERSATION_TTL",
    "AudienceChanges",
    "ConversationTurns",
    "FeedbackLog",
    "PendingClarifications",
    "ProcessedEvents",
    "SqlAuditLog",
    "current_revision",
    "head_revision",
    "make_engine",
    "migrate",
    "session_factory",
    "supports_full_text",
]
