"""The HTML tree every HTML-shaped reader shares (web pages, Confluence pages and storage format, Word through
mammoth): the parse with its nesting bound, an element as Markdown, heading anchors, and written days.

A page whose elements nest deeper than `MAX_NESTING` is refused (`Unreadable`) before any converter walks it:
the converters recurse once an element, and a few hundred nested lists or divs would overflow Python's stack.
"""

import re
from collections.abc import Iterable
from dataclasses import replace
from datetime import date, datetime
from typing import Any, Final

from core.documents.limits import FormatSupportMissing, Unreadable
from core.documents.model import Document

_DROPPED: Final = ("script", "style", "noscript", "template", "svg", "iframe", "form", "button")
HEADING_TAGS: Final = ("h1", "h2", "h3", "h4", "h5", "h6")
_ISO_DAY: Final = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
MAX_NESTING: Final = 128
"""How deep elements may nest in a page. Real pages (Confluence's macros and layouts, a site's wrappers) stay well
under 60; markdownify and trafilatura recurse once an element, and overflow the stack a little past 300."""


def parse(html: str) -> Any:
    """The page as a BeautifulSoup tree (a dependency of markdownify, so of the `formats` extra); `Unreadable`
    when its elements nest deeper than `MAX_NESTING`."""
    try:
        from bs4 import BeautifulSoup  # noqa: PLC0415  # the formats extra is optional
    except ImportError:
        raise FormatSupportMissing(".html", "beautifulsoup4") from None
    soup = BeautifulSoup(html, "html.parser")
    depth = nesting(soup)
    if depth > MAX_NESTING:
        raise Unreadable(f"nests its elements {depth:,} deep, over the {MAX_NESTING} a page may nest")
    return soup


def nesting(root: Any) -> int:
    """How deep the elements under `root` nest, counted without recursion (html.parser builds any depth)."""
    from bs4 import Tag  # noqa: PLC0415  # the formats extra is optional

    deepest = 0
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        element, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in element.contents if isinstance(child, Tag))
    return deepest


def element_markdown(element: Any) -> str:
    """One element's content as Markdown, for the Markdown reader: headings `#`, lists `-`, tables with the
    first row as header where the table has none, images and scripts left out."""
    try:
        from markdownify import MarkdownConverter  # noqa: PLC0415  # the formats extra is optional
    except ImportError:
        raise FormatSupportMissing(".html", "markdownify") from None
    if element is None:
        return ""
    for tag in element.find_all(_DROPPED):
        tag.decompose()
    converter = MarkdownConverter(heading_style="ATX", bullets="-", table_infer_header=True, strip=["img"],
                                  escape_misc=False)
    try:
        return str(converter.convert_soup(element))
    except RecursionError:  # a tree built by hand past `parse`'s bound: the page's refusal, not the process's
        raise Unreadable(f"nests its elements too deep to read (over {MAX_NESTING})") from None


def heading_anchors(element: Any) -> dict[str, str]:
    """Each heading's text (folded) and its anchor: its `id`, or a named anchor inside it. The first heading
    of a text keeps it; a repeated heading's later anchors are not guessed."""
    anchors: dict[str, str] = {}
    for heading in element.find_all(HEADING_TAGS):
        anchor = heading.get("id")
        if not anchor:
            inner = heading.find("a", attrs={"id": True}) or heading.find("a", attrs={"name": True})
            anchor = inner.get("id") or inner.get("name") if inner is not None else None
        text = fold(heading.get_text(" "))
        if anchor and text and text not in anchors:
            anchors[text] = str(anchor)
    return anchors


def with_anchors(document: Document, anchors: dict[str, str]) -> Document:
    """The sections whose own heading has an anchor in the page, with it."""
    if not anchors:
        return document
    sections = tuple(replace(section, anchor=anchors.get(fold(section.headings[-1])) if section.headings else None)
                     for section in document.sections)
    return replace(document, sections=sections)


def parse_day(text: str) -> date | None:
    """The first ISO day in a text ("2026-03-14", "2026-03-14T10:00:00Z"), else None."""
    match = _ISO_DAY.search(text)
    if match is None:
        return None
    try:
        return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def parse_written_day(text: str, formats: Iterable[str]) -> date | None:
    """A day written in words ("Mar 14, 2026"), tried against each `strptime` format in turn."""
    cleaned = " ".join(text.replace(",", " , ").split()).replace(" ,", ",")
    for form in formats:
        try:
            return datetime.strptime(cleaned, form).date()
        except ValueError:
            continue
    return None


def fold(text: str) -> str:
    return " ".join(text.split()).casefold()

