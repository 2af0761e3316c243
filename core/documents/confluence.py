"""A page of a Confluence space export (Space settings > Export space > HTML) read into the document model.

Such an export is a folder of `Page-Title_123456.html` files, an `index.html` for the space, and
`attachments/<page id>/` holding the pages' files (which the loader reads as documents of their own). Each page
wraps its text in `<div id="main-content">`, between breadcrumbs, a "Created by ..., last modified on <day>"
line and the attachments list; only the text is read. The title drops the space's name ("Engineering :
Onboarding" is "Onboarding"), and the page's last-modified day is its `updated`. Links between pages stay
relative paths; the loader points them at the documents they name.
"""

import re
from dataclasses import replace
from datetime import date
from typing import Any, Final

from core.documents.html_tree import element_markdown, fold, heading_anchors, parse_written_day, with_anchors
from core.documents.markdown import read_markdown
from core.documents.model import Document

_WRITTEN_DAYS: Final = ("%b %d, %Y", "%B %d, %Y", "%d %b %Y", "%d %B %Y", "%Y-%m-%d")
_ON_DAY: Final = re.compile(r"\bon\s+([A-Za-z]{3,9}\.?\s+\d{1,2},\s*\d{4}|\d{1,2}\s+[A-Za-z]{3,9}\s+\d{4}|"
                            r"\d{4}-\d{2}-\d{2})")


def is_confluence_page(soup: Any) -> bool:
    """Confluence's export markup: the page text in `#main-content`, the title in `#title-text`."""
    return soup.find(id="main-content") is not None and (
        soup.find(id="title-text") is not None or "confluence" in str(soup.find(id="footer") or "").lower())


def read_confluence_page(soup: Any) -> Document:
    title = _title(soup)
    main = soup.find(id="main-content")
    anchors = heading_anchors(main)
    document = read_markdown(element_markdown(main))
    return replace(with_anchors(document, anchors), title=title or document.title, updated=_last_modified(soup))


def _title(soup: Any) -> str | None:
    """The page's title without the space's name in front ("Engineering : Onboarding")."""
    element = soup.find(id="title-text") or soup.title
    if element is None:
        return None
    text = " ".join(element.get_text(" ").split())
    space = _space_name(soup)
    if space and fold(text).startswith(fold(space) + " :"):
        text = text[len(space):].lstrip(" :")
    elif " : " in text:
        text = text.split(" : ", 1)[1]
    return text or None


def _space_name(soup: Any) -> str | None:
    crumbs = soup.find(id="breadcrumbs")
    first = crumbs.find("a") if crumbs is not None else None
    return " ".join(first.get_text(" ").split()) if first is not None else None


def _last_modified(soup: Any) -> date | None:
    """The last day the page metadata line names: "last modified by Ben on Mar 14, 2026" wins over its
    "Created by Ana on ..." day, which stands first."""
    metadata = soup.find(class_="page-metadata")
    if metadata is None:
        return None
    days = _ON_DAY.findall(" ".join(metadata.get_text(" ").split()))
    return parse_written_day(days[-1], _WRITTEN_DAYS) if days else None
