"""Word documents (`.docx`, as Word, Google Docs, LibreOffice and pandoc write them) read into the document
model: mammoth turns the document into HTML by its paragraph styles, markdownify that into Markdown, and the
Markdown reader into sections and blocks, so a Word table is a table and a Word list a nested list.

The style map makes Word's "Title" the document's title (a level-1 heading) and "Heading 1".."Heading 5" the
levels below it, so a document with a Title and Heading 1 sections has the same heading paths as a Markdown page
with `#` and `##`. Images are left out without being read. Word has no pages until it lays a document out, so
the locator is the heading path. The title and `updated` come from the core properties where they are set.
"""

from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from core.documents.html_tree import element_markdown, parse
from core.documents.limits import FormatSupportMissing, Unreadable, check_zip
from core.documents.markdown import read_markdown
from core.documents.model import Document
from core.documents.office import core_properties

STYLE_MAP: Final = "\n".join([
    "p[style-name='Title'] => h1:fresh",
    "p[style-name='title'] => h1:fresh",
    "p.Title => h1:fresh",
    "p[style-name='Subtitle'] => p:fresh",
    *(f"p[style-name='{name} {level}'] => h{min(level + 1, 6)}:fresh"
      for level in range(1, 7) for name in ("Heading", "heading")),
    *(f"p.Heading{level} => h{min(level + 1, 6)}:fresh" for level in range(1, 7)),
])
"""Mammoth's own map puts "Heading 1" at `h1`, beside the Title; here the Title is the document's `h1`."""


def read_docx(path: Path) -> Document:
    check_zip(path, ".docx")
    try:
        import mammoth  # noqa: PLC0415  # the formats extra is optional
    except ImportError:
        raise FormatSupportMissing(".docx", "mammoth") from None
    properties = core_properties(path)
    try:
        with path.open("rb") as file:
            result = mammoth.convert_to_html(file, style_map=STYLE_MAP,
                                             convert_image=mammoth.images.img_element(_no_image))
    except MemoryError:
        raise  # a memory limit is the reading process's to name (`core.documents.bounded`), not a damaged file
    except KeyError as error:  # a zip without word/document.xml: another Office file renamed
        raise Unreadable(f"is not a Word document (it has no {error.args[0] if error.args else 'body'})") from None
    except Exception as error:  # mammoth and lxml raise many kinds on a damaged file
        raise Unreadable(f"could not be read as a Word document ({type(error).__name__}: {error})") from None
    document = read_markdown(element_markdown(parse(str(result.value))))
    return replace(document, title=properties.title or document.title, updated=properties.modified)


def _no_image(image: Any) -> dict[str, str]:
    """An image's attributes without reading its bytes (mammoth would inline them as base64)."""
    return {}
