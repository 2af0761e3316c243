"""Confluence's storage format (the XHTML the REST API returns as `body.storage`) read into the document model.

It is HTML with Confluence's own elements among it: macros (`ac:structured-macro`) whose text is in a rich-text
body (an info panel, an expand) or a plain-text body (code), links to other pages (`ac:link` around an
`ri:page`), task lists, images and emoticons. Each becomes the HTML a reader would see: a macro's body stays in
place (with its title, where it has one, as a bold lead-in), code stays code, a link to a page keeps its words,
task lists are lists, and images, emoticons and placeholders go. The result is read as any HTML fragment is
(`core.documents.html_tree`), so headings, lists and tables are those of a Markdown page.
"""

from typing import Any, Final

from core.documents.html_tree import element_markdown, parse
from core.documents.markdown import read_markdown
from core.documents.model import Document

_CODE_MACROS: Final = frozenset({"code", "noformat"})
_DROPPED: Final = ("ac:image", "ac:emoticon", "ac:placeholder", "ac:parameter", "ac:task-id", "ac:task-status",
                   "ri:attachment", "ri:user")
_TITLED: Final = frozenset({"info", "note", "warning", "tip", "panel", "expand"})


def read_storage_format(xhtml: str) -> Document:
    """A page's storage-format body as a document (the body holds no title: the page's comes with the item)."""
    soup = parse(f"<div>{xhtml}</div>")
    root = soup.div
    for macro in root.find_all("ac:structured-macro"):
        _replace_macro(soup, macro)
    for link in root.find_all("ac:link"):
        _replace_link(soup, link)
    for tasks in root.find_all("ac:task-list"):
        tasks.name = "ul"
    for task in root.find_all("ac:task"):
        task.name = "li"
    for tag in root.find_all(_DROPPED):
        tag.decompose()
    for tag in root.find_all(lambda element: ":" in element.name):
        tag.unwrap()  # any other Confluence element: its text stays where it stood
    return read_markdown(element_markdown(root))


def _replace_macro(soup: Any, macro: Any) -> None:
    name = str(macro.get("ac:name") or "")
    parameters = {str(parameter.get("ac:name")): parameter.get_text(" ", strip=True)
                  for parameter in macro.find_all("ac:parameter", recursive=False)}
    plain = macro.find("ac:plain-text-body", recursive=False)
    if name in _CODE_MACROS or (plain is not None and macro.find("ac:rich-text-body") is None):
        block = soup.new_tag("pre")
        code = soup.new_tag("code")
        code.string = plain.get_text() if plain is not None else ""
        block.append(code)
        macro.replace_with(block)
        return
    body = macro.find("ac:rich-text-body", recursive=False)
    replacement = soup.new_tag("div")
    title = parameters.get("title")
    if title and name in _TITLED:
        lead = soup.new_tag("p")
        strong = soup.new_tag("strong")
        strong.string = title
        lead.append(strong)
        replacement.append(lead)
    if body is not None:
        for child in list(body.contents):
            replacement.append(child.extract())
    macro.replace_with(replacement)


def _replace_link(soup: Any, link: Any) -> None:
    """A link to another page or a URL: its words, and for a URL its target."""
    body = link.find(["ac:plain-text-link-body", "ac:link-body"])
    page = link.find("ri:page")
    words = body.get_text(" ", strip=True) if body is not None else ""
    if not words and page is not None:
        words = str(page.get("ri:content-title") or "")
    url = link.find("ri:url")
    if url is not None and url.get("ri:value"):
        anchor = soup.new_tag("a", href=str(url.get("ri:value")))
        anchor.string = words or str(url.get("ri:value"))
        link.replace_with(anchor)
        return
    link.replace_with(words)
