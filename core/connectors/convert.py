"""An item downloaded by a connector, read into a document by the formats' readers (`core.documents`).

A connector hands over either a `Document` it built (Notion's blocks, read from JSON by our own code) or bytes
with their suffix (Drive's exports and files, Confluence's pages and attachments), which are read through the one
format table (`core.documents.formats`) as the loader reads the same file in a folder: the same checks, the same
readers, in the same bounded reading process.
"""

import hashlib
from pathlib import Path
from typing import Final

from core.connectors.port import Item
from core.documents.bounded import SHARED, ReadingProcess
from core.documents.formats import FORMATS, Format, read_content
from core.documents.limits import Unreadable
from core.documents.model import Document
from core.documents.reading import pieces, render
from core.retrieval.knowledge_base import SourceDocument

ID_SEPARATOR: Final = ":"
"""Between a connector's name and an item's id in a document id. No id of a folder's file holds it (front matter
ids and paths allow letters, digits and `. _ - /`), so a sync and an ingest never take each other's documents."""


def document_id(connector: str, item_id: str) -> str:
    return f"{connector}{ID_SEPARATOR}{item_id}"


def to_source_document(connector: str, item: Item, *, audience: frozenset[str], owner: str | None = None,
                       process: ReadingProcess = SHARED) -> SourceDocument:
    """The item as the ingestor stores it; `Unreadable` (one line) when its content cannot be read, or reading it
    goes past `process`'s limits."""
    structure, kind, digest = _read(item, process)
    body = "\n\n".join(render(pieces(section.blocks)).text for section in structure.sections)
    if not body.strip():
        raise Unreadable("holds no text to read")
    doc_id = document_id(connector, item.item_id)
    return SourceDocument(
        doc_id=doc_id, path=Path(connector) / item.item_id, title=item.title or structure.title or item.item_id,
        owner=item.owner or owner, audience=audience, updated=item.updated or structure.updated,
        updated_from="metadata", url=item.url, body=body, file_sha256=digest, structure=structure,
        format=kind, origin=connector, source_version=item.version, trail=item.trail,
    )


def _read(item: Item, process: ReadingProcess) -> tuple[Document, Format, str]:
    """The item's document, its format's name and the hash of what was read (of a built document, its
    representation, which holds every word, link and heading)."""
    if item.document is not None:
        digest = hashlib.sha256(repr(item.document).encode("utf-8")).hexdigest()
        found = FORMATS.get((item.suffix or ".html").lower())
        return item.document, found.name if found is not None else "html", digest
    if item.content is None or item.suffix is None:
        raise Unreadable("has no content")
    document = read_content(item.content, item.suffix, process=process)
    return document, FORMATS[item.suffix.lower()].name, hashlib.sha256(item.content).hexdigest()
