"""The one table of the formats Sourced reads: each suffix, whether it is text or binary, how large one file may
be, and its reader. The folder loader (`core.retrieval.knowledge_base`) and the connectors
(`core.connectors.convert`) both read through it, with the one set of checks below (size, UTF-8, NUL) and the
one error, `Unreadable`; a new format is one row here and one reader module.

Every reader but Markdown's runs in the bounded reading process (`core.documents.bounded`): the parsers of PDF,
Office files, HTML and CSV are libraries whose cost a hostile file can make unbounded. Markdown and plain text
are read in the caller's process: markdown-it-py follows CommonMark's linear-time algorithms with its nesting
capped, a handbook page is kilobytes, and the loader reads their front matter first; sending each page to the
child would double the cost of a Markdown ingest for no bound it lacks.
"""

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from core.documents.bounded import SHARED, ReadingProcess
from core.documents.confluence_storage import read_storage_format
from core.documents.docx import read_docx
from core.documents.html import read_html
from core.documents.limits import Unreadable
from core.documents.markdown import read_markdown
from core.documents.model import Document
from core.documents.notion import read_csv
from core.documents.pdf import read_pdf
from core.documents.pptx import read_pptx

Format = Literal["markdown", "text", "pdf", "docx", "pptx", "html", "csv", "notion"]
"""A document's format as stored; `notion` is a Notion export's page or database, read as Markdown or CSV."""
MAX_TEXT_BYTES: Final = 10_000_000
"""A handbook page is kilobytes; past this a text file is an export or a mistake, and would stall the chunker."""
MAX_BINARY_BYTES: Final = 100_000_000
"""A PDF or Office file with its images: a 300-page report is tens of megabytes. Past this it is refused
unread (a scan of a whole archive, a video renamed), so memory stays bounded."""


@dataclass(frozen=True, kw_only=True)
class FileFormat:
    name: Format
    text: bool
    """Text formats are decoded (UTF-8, no NUL) and their reader is given the text; a binary format's reader
    is given the file's path (pdfplumber, mammoth and python-pptx open files)."""
    max_bytes: int
    reader: Callable[[Any], Document]
    """A module-level function, so that the reading process can be sent it."""
    in_process: bool = False
    """Read in the caller's process rather than the bounded one (Markdown and text: see the module's text)."""
    in_folders: bool = True
    """A file of a knowledge-base folder may be of this format; else only a connector hands it over."""
    media_types: tuple[str, ...] = ()
    """The media types of such files, where a source names files by type (Google Drive)."""


_MARKDOWN: Final = FileFormat(name="markdown", text=True, max_bytes=MAX_TEXT_BYTES, reader=read_markdown,
                              in_process=True, media_types=("text/markdown",))
_HTML: Final = FileFormat(name="html", text=True, max_bytes=MAX_TEXT_BYTES, reader=read_html,
                          media_types=("text/html",))
CONFLUENCE_STORAGE: Final = ".confluence-storage"
"""Not a file's suffix: the name under which the Confluence connector hands over a page's body (its storage
format, XHTML with Confluence's elements), so that it is read as any file is, in the bounded process."""
FORMATS: Final[dict[str, FileFormat]] = {
    ".md": _MARKDOWN, ".markdown": _MARKDOWN, ".mdx": _MARKDOWN,
    ".txt": FileFormat(name="text", text=True, max_bytes=MAX_TEXT_BYTES, reader=read_markdown, in_process=True,
                       media_types=("text/plain",)),
    ".html": _HTML, ".htm": _HTML,
    ".csv": FileFormat(name="csv", text=True, max_bytes=MAX_TEXT_BYTES, reader=read_csv, media_types=("text/csv",)),
    ".pdf": FileFormat(name="pdf", text=False, max_bytes=MAX_BINARY_BYTES, reader=read_pdf,
                       media_types=("application/pdf",)),
    ".docx": FileFormat(name="docx", text=False, max_bytes=MAX_BINARY_BYTES, reader=read_docx,
                        media_types=("application/vnd.openxmlformats-officedocument.wordprocessingml.document",)),
    ".pptx": FileFormat(name="pptx", text=False, max_bytes=MAX_BINARY_BYTES, reader=read_pptx,
                        media_types=("application/vnd.openxmlformats-officedocument.presentationml.presentation",)),
    CONFLUENCE_STORAGE: FileFormat(name="html", text=True, max_bytes=MAX_TEXT_BYTES, reader=read_storage_format,
                                   in_folders=False),
}
SUFFIXES: Final = frozenset(suffix for suffix, found in FORMATS.items() if found.in_folders)
"""The suffixes of the files a knowledge-base folder is read from."""
BY_MEDIA_TYPE: Final = dict(reversed([(media_type, suffix) for suffix, found in FORMATS.items()
                                       for media_type in found.media_types]))
"""The suffix a file of each media type is read as: its first in the table (`.md`, not `.mdx`)."""


def format_for(suffix: str) -> FileFormat:
    found = FORMATS.get(suffix.lower())
    if found is None:
        raise Unreadable(f"is a {suffix.lower()} file, which Sourced does not read")
    return found


def check_size(size: int, suffix: str) -> None:
    """Refuse a file over its format's limit before a byte of it is read."""
    limit = format_for(suffix).max_bytes
    if size > limit:
        raise Unreadable(f"is {size:,} bytes, over the {limit:,}-byte limit for one {suffix.lower()} document; "
                         f"split it into smaller files")


def decoded(raw: bytes) -> str:
    """A text format's bytes as text: UTF-8 (a byte-order mark dropped), without NUL."""
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        raise Unreadable(f"not UTF-8 text (invalid byte at offset {error.start}); save it as UTF-8") from None
    if "\x00" in text:  # valid UTF-8 but binary (an image, a database); PostgreSQL cannot store NUL either
        raise Unreadable(f"holds a NUL byte at offset {raw.index(0)}: a binary file, not text")
    return text


def read_text(text: str, suffix: str, *, process: ReadingProcess = SHARED) -> Document:
    """A text format's text, read by its reader."""
    found = format_for(suffix)
    return found.reader(text) if found.in_process else process.read(found.reader, text)


def read_file(path: Path, *, process: ReadingProcess = SHARED) -> Document:
    """A file of any format, checked and read (a text file without front matter handling: the loader reads
    Markdown's itself)."""
    check_size(path.stat().st_size, path.suffix)
    found = format_for(path.suffix)
    if found.text:
        return read_text(decoded(path.read_bytes()), path.suffix, process=process)
    return process.read(found.reader, path)


def read_content(content: bytes, suffix: str, *, process: ReadingProcess = SHARED) -> Document:
    """A downloaded file's bytes (a connector's item), checked and read as the same file in a folder is. A binary
    format's bytes are read from a temporary file, deleted at once."""
    check_size(len(content), suffix)
    if format_for(suffix).text:
        return read_text(decoded(content), suffix, process=process)
    with tempfile.TemporaryDirectory(prefix="sourced-item-") as folder:
        path = Path(folder) / f"item{suffix.lower()}"
        path.write_bytes(content)
        return read_file(path, process=process)
