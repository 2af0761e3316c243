"""Links of a read document pointed somewhere else: a wiki export's page-to-page links, written as relative
file names, pointed at the documents they name once the loader knows them."""

from collections.abc import Callable
from dataclasses import replace

from core.documents.model import Block, Document, Link, ListBlock, ListItem, Paragraph, Quote, Table, Text

Retarget = Callable[[str], str]
"""A link's target as written, to the target to keep (itself when it stays)."""


def retargeted(document: Document, retarget: Retarget) -> Document:
    sections = tuple(replace(section, blocks=tuple(_block(block, retarget) for block in section.blocks))
                     for section in document.sections)
    return replace(document, sections=sections)


def _text(text: Text, retarget: Retarget) -> Text:
    if not text.links:
        return text
    return replace(text, links=tuple(Link(start=link.start, end=link.end, target=retarget(link.target))
                                     for link in text.links))


def _block(block: Block, retarget: Retarget) -> Block:
    match block:
        case Paragraph():
            return replace(block, text=_text(block.text, retarget))
        case ListBlock():
            return replace(block, items=tuple(_item(item, retarget) for item in block.items))
        case Table():
            return replace(block, header=tuple(_text(cell, retarget) for cell in block.header),
                           rows=tuple(tuple(_text(cell, retarget) for cell in row) for row in block.rows))
        case Quote():
            return replace(block, blocks=tuple(_block(inner, retarget) for inner in block.blocks))
        case _:
            return block


def _item(item: ListItem, retarget: Retarget) -> ListItem:
    return replace(item, text=_text(item.text, retarget),
                   children=tuple(_block(child, retarget) for child in item.children))

