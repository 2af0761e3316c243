"""HTML read into the document model: a web page through trafilatura (which drops navigation, banners and
footers), a clean export's content element through markdownify, both then read by the Markdown reader, so a
page's headings, lists, tables and links become the same sections and blocks as a Markdown page's.

A heading's `id` (or the named anchor inside it) becomes its section's `anchor`, so a citation can link to the
place. The title is the page's `<title>`, shortened to its first `<h1>` where the `<title>` carries a site's
suffix ("Travel policy - Wiki"). A Confluence space export's pages are read by `core.documents.confluence`.

A page whose elements nest deeper than `MAX_NESTING` is refused (`Unreadable`) before any converter walks it:
the converters recurse once an element, and a few hundred nested lists or divs would overflow Python's stack.
"""

import re
from collections.abc import Iterable
from dataclasses import replace
from datetime import date, datetime
from typing import Any, Final

from core.documents.limits import FormatSupportMissing, Unreadable
from core.documents.markdown import read_markdown
from core.documents.model import Document

_DROPPED: Final = ("script", "style", "noscript", "template", "svg", "iframe", "form", "button")
_BOILERPLATE: Final = ("nav", "header", "footer", "aside")
_BOILERPLATE_ROLES: Final = ("navigation", "banner", "contentinfo", "search", "complementary")
_HEADING_TAGS: Final = ("h1", "h2", "h3", "h4", "h5", "h6")
_MODIFIED_META: Final = ("last-modified", "article:modified_time", "og:updated_time", "dc.date.modified",
                         "dcterms.modified", "date")
_ISO_DAY: Final = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
MAX_NESTING: Final = 128
"""How deep elements may nest in a page. Real pages (Confluence's macros and layouts, a site's wrappers) stay well
under 60; markdownify and trafilatura recurse once an element, and overflow the stack a little past 300."""


def read_html(html: str) -> Document:
    """A web page or an HTML file: its main text, without the site's navigation and footer."""
    soup = parse(html)
    from core.documents.confluence import is_confluence_page, read_confluence_page  # noqa: PLC0415  # a cycle
    if is_confluence_page(soup):
        return read_confluence_page(soup)
    anchors = heading_anchors(soup)
    headings = sum(1 for _ in soup.find_all(_HEADING_TAGS))
    markdown = _main_text(str(soup), headings=headings) or element_markdown(_main_element(soup))
    document = read_markdown(markdown)
    title = page_title(soup, document.title)
    return replace(with_anchors(document, anchors), title=title, updated=meta_updated(soup))


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


def _main_text(html: str, *, headings: int) -> str:
    """trafilatura's Markdown of the page's main text; empty when it finds none or loses every heading the
    page has (a short page it takes for boilerplate), so the caller reads the main element itself."""
    try:
        import trafilatura  # noqa: PLC0415  # the formats extra is optional
    except ImportError:
        raise FormatSupportMissing(".html", "trafilatura") from None
    text = trafilatura.extract(html, output_format="markdown", include_tables=True, include_links=True,
                               include_formatting=True, include_comments=False, include_images=False) or ""
    if headings and not re.search(r"^#{1,6} ", text, re.MULTILINE):
        return ""
    return str(text)


def _main_element(soup: Any) -> Any:
    """The page's main content element (`<main>`, `<article>`, `role=main`), else its body without the site's
    navigation, banner, sidebars and footer."""
    main = soup.find("main") or soup.find(attrs={"role": "main"}) or soup.find("article")
    if main is not None:
        return main
    body = soup.body or soup
    for tag in body.find_all(_BOILERPLATE):
        tag.decompose()
    for tag in body.find_all(attrs={"role": list(_BOILERPLATE_ROLES)}):
        tag.decompose()
    return body


def heading_anchors(element: Any) -> dict[str, str]:
    """Each heading's text (folded) and its anchor: its `id`, or a named anchor inside it. The first heading
    of a text keeps it; a repeated heading's later anchors are not guessed."""
    anchors: dict[str, str] = {}
    for heading in element.find_all(_HEADING_TAGS):
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


def page_title(soup: Any, first_heading: str | None) -> str | None:
    """The `<title>`, or the first `<h1>` where the `<title>` is that heading with a site's name added."""
    title = " ".join(soup.title.get_text(" ").split()) if soup.title is not None else ""
    if first_heading and (not title or fold(first_heading) in fold(title)):
        return first_heading
    return title or first_heading


def meta_updated(soup: Any) -> date | None:
    """The last-modified date a page's `<meta>` tags state, if any."""
    for meta in soup.find_all("meta"):
        name = str(meta.get("name") or meta.get("property") or meta.get("http-equiv") or "").lower()
        if name in _MODIFIED_META:
            day = parse_day(str(meta.get("content") or ""))
            if day is not None:
                return day
    return None


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

