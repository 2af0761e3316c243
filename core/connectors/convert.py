"""An item downloaded by a connector, read into a document by the formats' readers (`core.documents`).

A connector hands over either a `Document` it built (Confluence's storage format, Notion's blocks) or a file's
bytes with its suffix (Drive's exports and files, Confluence's attachments), which are read as the loader reads
the same file in a folder, with the same size limits. Binary formats are read from a temporary file, since their
readers open a path; it is deleted at once.
"""

import hashlib
import tempfile
from pathlib import Path
from typing import Final

from core.connectors.port import Item
from core.documents.docx import read_docx
from core.documents.html import read_html
from core.documents.limits import Unreadable
from core.documents.markdown import read_markdown
from core.documents.model import Document
from core.documents.notion import read_csv
from core.documents.pdf import read_pdf
from core.documents.pptx import read_pptx
from core.documents.reading import pieces, render
from core.retrieval.knowledge_base import (
    FORMATS,
    MAX_BINARY_BYTES,
    MAX_FILE_BYTES,
    TEXT_FORMATS,
    Format,
    SourceDocument,
)

ID_SEPARATOR: Final = ":"
"""Between a connector's name and an item's id in a document id. No id of a folder's file holds it (front matter
ids and paths allow letters, digits and `. _ - /`), so a sync and an ingest never take each other's documents."""


def document_id(connector: str, item_id: str) -> str:
    return f"{connector}{ID_SEPARATOR}{item_id}"


def to_source_document(connector: str, item: Item, *, audience: frozenset[str],
                       owner: str | None = None) -> SourceDocument:
    """The item as the ingestor stores it; `Unreadable` (one line) when its content cannot be read."""
    structure, kind, digest = _read(item)
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


def _read(item: Item) -> tuple[Document, Format, str]:
    """The item's document, its format's name and the hash of what was read (of a built document, its
    representation, which holds every word, link and heading)."""
    if item.document is not None:
        digest = hashlib.sha256(repr(item.document).encode("utf-8")).hexdigest()
        return item.document, FORMATS.get((item.suffix or ".html").lower(), "html"), digest
    if item.content is None or item.suffix is None:
        raise Unreadable("has no content")
    suffix = item.suffix.lower()
    kind = FORMATS.get(suffix)
    if kind is None:
        raise Unreadable(f"is a {suffix} file, which Sourced does not read")
    limit = MAX_FILE_BYTES if kind in TEXT_FORMATS else MAX_BINARY_BYTES
    if len(item.content) > limit:
        raise Unreadable(f"is {len(item.content):,} bytes, over the {limit:,}-byte limit for one {suffix} document")
    digest = hashlib.sha256(item.content).hexdigest()
    if kind in TEXT_FORMATS:
        return _read_text(item.content, kind), kind, digest
    with tempfile.TemporaryDirectory(prefix="sourced-item-") as folder:
        path = Path(folder) / f"item{suffix}"
        path.write_bytes(item.content)
        reader = {"pdf": read_pdf, "docx": read_docx, "pptx": read_pptx}[kind]
        return reader(path), kind, digest


def _read_text(content: bytes, kind: Format) -> Document:
    try:
        text = content.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        raise Unreadable(f"is not UTF-8 text (invalid byte at offset {error.start})") from None
    if "\x00" in text:
        raise Unreadable("holds a NUL byte: a binary file, not text")
    if kind == "html":
        return read_html(text)
    if kind == "csv":
        return read_csv(text)
    return read_markdown(text)
