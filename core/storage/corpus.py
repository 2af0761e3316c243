"""The `Corpus` port over the chunks table: the names the organisation behind the documents goes by.

Read whole and counted in Python, once per state of the knowledge base: it is computed again only when the
documents change (their number or the latest ingestion time), so a question pays for one small query.
"""

import threading

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from core.application.language.quote_context import organisation_names
from core.storage.tables import ChunkRow, DocumentRow


class SqlCorpus:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self._state: tuple[object, ...] | None = None
        self._names: frozenset[str] = frozenset()

    def organisation_names(self) -> frozenset[str]:
        with self._lock, Session(self._engine) as session:
            state = tuple(session.execute(select(func.count(DocumentRow.doc_id),
                                                 func.max(DocumentRow.ingested_at))).one())
            if state != self._state:
                rows = session.execute(select(ChunkRow.doc_id, ChunkRow.text))
                self._names = organisation_names((row.doc_id, row.text) for row in rows)
                self._state = state
            return self._names
