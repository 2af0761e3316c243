"""PowerPoint decks (`.pptx`) read into the document model by python-pptx: one section per slide, headed by the
slide's title (or "Slide N" where it has none), its text boxes as paragraphs, a body placeholder's bullets as a
list nested by indent level, its tables as tables, the speaker notes after them; every block carries its slide
number as its page. The title and `updated` come from the core properties, else the first slide's title.
"""

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from core.documents.limits import FormatSupportMissing, Unreadable, check_zip
from core.documents.model import Block, Document, Link, ListBlock, ListItem, Paragraph, Section, Table, Text
from core.documents.office import core_properties

_SPACE: Final = re.compile(r"\s+")
_CHROME: Final = frozenset({"DATE", "FOOTER", "SLIDE_NUMBER", "HEADER"})
"""Placeholders a slide master repeats on every slide: not the slide's words."""
_BULLETED: Final = frozenset({"BODY", "OBJECT", "VERTICAL_BODY", "VERTICAL_OBJECT"})
_TITLES: Final = frozenset({"TITLE", "CENTER_TITLE", "VERTICAL_TITLE"})


def read_pptx(path: Path) -> Document:
    check_zip(path, ".pptx")
    try:
        from pptx import Presentation  # noqa: PLC0415  # the formats extra is optional
    except ImportError:
        raise FormatSupportMissing(".pptx", "python-pptx") from None
    properties = core_properties(path)
    try:
        deck = Presentation(str(path))
        sections = [_slide(slide, number) for number, slide in enumerate(deck.slides, start=1)]
    except KeyError as error:
        raise Unreadable(f"is not a PowerPoint deck (it has no {error.args[0] if error.args else 'slides'})"
                         ) from None
    except MemoryError:
        raise  # a memory limit is the reading process's to name (`core.documents.bounded`), not a damaged file
    except Exception as error:  # python-pptx and lxml raise many kinds on a damaged file
        raise Unreadable(f"could not be read as a PowerPoint deck ({type(error).__name__}: {error})") from None
    first_title = next((section.headings[0] for section in sections if section.headings
                        and not section.headings[0].startswith("Slide ")), None)
    return Document(sections=tuple(section for section in sections if section.blocks),  # a divider slide: none
                    title=properties.title or first_title, updated=properties.modified)


def _slide(slide: Any, number: int) -> Section:
    title = ""
    blocks: list[Block] = []
    for shape in _reading_order(slide.shapes):
        kind = _placeholder_kind(shape)
        if kind in _CHROME:
            continue
        if kind in _TITLES and not title:
            title = _text(shape.text_frame.paragraphs).text if shape.has_text_frame else ""
            continue
        blocks.extend(_shape_blocks(shape, kind, number))
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        blocks.extend(Paragraph(text=text, page=number) for text in _paragraphs(slide.notes_slide.notes_text_frame))
    return Section(headings=(title or f"Slide {number}",), blocks=tuple(blocks))


def _reading_order(shapes: Any) -> list[Any]:
    """Top to bottom, then left to right, as a reader's eye goes; groups opened in place."""
    flat: list[Any] = []
    for shape in shapes:
        if shape.shape_type is not None and shape.shape_type.name == "GROUP":
            flat.extend(_reading_order(shape.shapes))
        else:
            flat.append(shape)
    return sorted(flat, key=lambda shape: (shape.top or 0, shape.left or 0))


def _placeholder_kind(shape: Any) -> str | None:
    if not shape.is_placeholder:
        return None
    kind = shape.placeholder_format.type
    return kind.name if kind is not None else None


def _shape_blocks(shape: Any, kind: str | None, page: int) -> Iterator[Block]:
    if shape.has_table:
        rows = [tuple(_text(cell.text_frame.paragraphs) for cell in row.cells) for row in shape.table.rows]
        if rows:
            yield Table(header=rows[0], rows=tuple(rows[1:]), page=page)
        return
    if not shape.has_text_frame:
        return
    paragraphs = [(paragraph.level, _text([paragraph])) for paragraph in shape.text_frame.paragraphs]
    paragraphs = [(level, text) for level, text in paragraphs if text]
    if not paragraphs:
        return
    bulleted = kind in _BULLETED or any(level > 0 or _has_bullet(p) for (level, _), p in
                                        zip(paragraphs, shape.text_frame.paragraphs, strict=False))
    if bulleted and len(paragraphs) > 1:
        yield ListBlock(items=_nested(paragraphs), page=page)
    else:
        yield from (Paragraph(text=text, page=page) for _, text in paragraphs)


def _has_bullet(paragraph: Any) -> bool:
    properties = paragraph._p.pPr  # python-pptx exposes no bullet property
    return properties is not None and any(child.tag.endswith(("}buChar", "}buAutoNum")) for child in properties)


def _nested(entries: Sequence[tuple[int, Text]]) -> tuple[ListItem, ...]:
    """Items at the shallowest level, each with the deeper entries after it as its sub-list."""
    items: list[ListItem] = []
    top = min(level for level, _ in entries)
    index = 0
    while index < len(entries):
        _, text = entries[index]
        end = index + 1
        while end < len(entries) and entries[end][0] > top:
            end += 1
        children = (ListBlock(items=_nested(entries[index + 1:end])),) if end > index + 1 else ()
        items.append(ListItem(text=text, children=children))
        index = end
    return tuple(items)


def _paragraphs(frame: Any) -> Iterator[Text]:
    for paragraph in frame.paragraphs:
        text = _text([paragraph])
        if text:
            yield text


def _text(paragraphs: Sequence[Any]) -> Text:
    """The runs of the paragraphs as one text, whitespace collapsed, each run's hyperlink kept as a link."""
    text = ""
    links: list[Link] = []
    for paragraph in paragraphs:
        for run in paragraph.runs:
            words = _SPACE.sub(" ", run.text)
            if text.endswith(" ") and words.startswith(" "):
                words = words[1:]
            start = len(text) + (len(words) - len(words.lstrip()))
            text += words
            address = run.hyperlink.address if run.hyperlink is not None else None
            if address and len(text.rstrip()) > start:
                links.append(Link(start=start, end=len(text.rstrip()), target=address))
        if text and not text.endswith(" "):
            text += " "
    shift = len(text) - len(text.lstrip())
    stripped = text.strip()
    return Text(text=stripped, links=tuple(Link(start=link.start - shift, end=min(link.end - shift, len(stripped)),
                                                target=link.target) for link in links))
