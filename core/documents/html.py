"""HTML read into the document model: a web page through trafilatura (which drops navigation, banners and
footers), a clean export's content element through markdownify, both then read by the Markdown reader, so a
page's headings, lists, tables and links become the same sections and blocks as a Markdown page's.

A heading's `id` (or the named anchor inside it) becomes its section's `anchor`, so a citation can link to the
place. The title is the page's `<title>`, shortened to its first `<h1>` where the `<title>` carries a site's
suffix ("Travel policy - Wiki"). A Confluence space export's pages are read by `core.documents.confluence`.

The tree itself, and what every HTML-shaped reader shares (Confluence's, Word's through mammoth, Notion's),
is in `core.documents.html_tree`.
"""

import re
from dataclasses import replace
from datetime import date
from typing import Any, Final

from core.documents.confluence import is_confluence_page, read_confluence_page
from core.documents.html_tree import (
    HEADING_TAGS,
    element_markdown,
    fold,
    heading_anchors,
    parse,
    parse_day,
    with_anchors,
)
from core.documents.limits import FormatSupportMissing
from core.documents.markdown import read_markdown
from core.documents.model import Document

_BOILERPLATE: Final = ("nav", "header", "footer", "aside")
_BOILERPLATE_ROLES: Final = ("navigation", "banner", "contentinfo", "search", "complementary")
_MODIFIED_META: Final = ("last-modified", "article:modified_time", "og:updated_time", "dc.date.modified",
                         "dcterms.modified", "date")


def read_html(html: str) -> Document:
    """A web page or an HTML file: its main text, without the site's navigation and footer."""
    soup = parse(html)
    if is_confluence_page(soup):
        return read_confluence_page(soup)
    anchors = heading_anchors(soup)
    headings = sum(1 for _ in soup.find_all(HEADING_TAGS))
    markdown = _main_text(str(soup), headings=headings) or element_markdown(_main_element(soup))
    document = read_markdown(markdown)
    title = page_title(soup, document.title)
    return replace(with_anchors(document, anchors), title=title, updated=meta_updated(soup))


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
