"""Markdown (CommonMark with GFM tables) read by a parser into the document model, never line by line.

What a reader does not read as words is not kept as words: a paragraph wrapped at 80 columns is one paragraph,
a link is its text with the target kept apart, emphasis and code marks go, inline HTML is reduced to its text
(`<br>` a space, `<a href>` a link, a site component such as `<TeamMember name="Ana" />` its name), and an
HTML block becomes the paragraphs, headings and lists of its text (or is left out with a warning when it has
none). Headings are sections wherever they stand, inside a blockquote too. A page with no headings below its
title is divided at its bold lead-ins ("**Travel.** Book through..."), the author's own headings on such a page.
"""

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from itertools import pairwise
from typing import Final

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

from core.documents.html_table import html_tables
from core.documents.model import (
    Block,
    Code,
    Document,
    Heading,
    Link,
    ListBlock,
    ListItem,
    Paragraph,
    Quote,
    Table,
    Text,
    sections_of,
)
from core.documents.reading import ends_open

LEAD_LIMIT: Final = 80
"""A bold run longer than this opens a paragraph for emphasis, not as its title."""
_PARSER: Final = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_NAMING_ATTRIBUTES: Final = ("name", "title", "label", "alt", "slug")
"""Attributes whose value a site component shows as its text (`<TeamMember name="Ana" photo />`)."""
_LINK_ATTRIBUTES: Final = ("href", "url")
_BREAK_TAGS: Final = frozenset({"br", "p", "div", "li", "tr", "table", "ul", "ol", "section", "details",
                                "summary", "blockquote", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "dd", "dt"})
_SKIPPED_TAGS: Final = frozenset({"script", "style", "svg", "iframe"})
_TASK_BOX: Final = ("[ ] ", "[x] ", "[X] ")
_WHITESPACE: Final = re.compile(r"\s+")


@dataclass(frozen=True)
class _Warnings:
    """Where the reader notes what it left out, and the file line the body starts at."""

    found: list[str]
    first_line: int

    def add(self, line: int | None, text: str) -> None:
        where = f"line {self.first_line + line}: " if line is not None else ""
        self.found.append(where + text)


_Event = Heading | Block


def read_markdown(body: str, *, first_line: int = 1) -> Document:
    """The document model of a Markdown body (front matter already removed); warnings name lines counted from
    `first_line`, the body's first line in its file."""
    warnings: list[str] = []
    root = SyntaxTreeNode(_PARSER.parse(body))
    events = list(_events(root.children, _Warnings(warnings, first_line)))
    if not any(isinstance(event, Heading) and event.level > 1 for event in events):
        events = list(_leads_as_headings(events))
    title = next((event.text for event in events if isinstance(event, Heading) and event.level == 1), None)
    return Document(sections=tuple(sections_of(events)), title=title, warnings=tuple(warnings))


# -- sections -----------------------------------------------------------------------------------------------



def _leads_as_headings(events: Sequence[_Event]) -> Iterator[_Event]:
    """On a page without headings below its title, a paragraph that opens with a bold run starts a section
    named by it; a paragraph that is only that run is the heading alone."""
    for event in events:
        if isinstance(event, Paragraph) and 0 < event.text.lead <= LEAD_LIMIT:
            name = event.text.text[: event.text.lead].strip().rstrip(".:")
            if name:
                yield Heading(level=2, text=name)
                rest = event.text.text[event.text.lead:].strip()
                if len(rest) > 1:
                    yield event
                continue
        yield event


# -- blocks -------------------------------------------------------------------------------------------------


def _events(nodes: Sequence[SyntaxTreeNode], warnings: _Warnings) -> Iterator[_Event]:
    for node in nodes:
        yield from _node_events(node, warnings)


def _node_events(node: SyntaxTreeNode, warnings: _Warnings) -> Iterator[_Event]:
    match node.type:
        case "heading":
            heading = _inline(node.children[0] if node.children else None).text
            if heading:
                yield Heading(level=int(node.tag[1:]), text=heading)
        case "paragraph":
            words = _inline(node.children[0] if node.children else None)
            if words:
                yield Paragraph(text=words)
        case "bullet_list" | "ordered_list":
            yield from _list(node, warnings)
        case "blockquote":
            yield from _quoted(node, warnings)
        case "table":
            yield from _table(node)
        case "fence" | "code_block":
            if node.content.strip():
                yield Code(text=node.content.rstrip("\n"), language=(node.info or "").strip())
        case "html_block":
            yield from _html_block(node, warnings)
        case _:  # thematic breaks and anything without words
            return


def _quoted(node: SyntaxTreeNode, warnings: _Warnings) -> Iterator[_Event]:
    """A blockquote's blocks as quotes; a heading inside it is a section heading like any other."""
    run: list[Block] = []
    for event in _events(node.children, warnings):
        if isinstance(event, Heading):
            if run:
                yield Quote(blocks=tuple(run))
                run = []
            yield event
        else:
            run.append(event)
    if run:
        yield Quote(blocks=tuple(run))


def _list(node: SyntaxTreeNode, warnings: _Warnings) -> Iterator[Block]:
    items = [_item(child, warnings) for child in node.children if child.type == "list_item"]
    if items:
        start = int(node.attrs.get("start", 1) or 1) if node.type == "ordered_list" else 1
        yield ListBlock(items=tuple(items), ordered=node.type == "ordered_list", start=start)


def _item(node: SyntaxTreeNode, warnings: _Warnings) -> ListItem:
    """An item's paragraphs are its words; the other blocks in it (a sub-list, code) are its children."""
    words: list[Text] = []
    children: list[Block] = []
    for event in _events(node.children, warnings):
        if isinstance(event, Paragraph) and not children:
            words.append(event.text)
        elif isinstance(event, Heading):
            words.append(Text(text=event.text))
        else:
            children.append(event)
    text, checked = _task_box(_joined(words))
    return ListItem(text=text, children=tuple(children), checked=checked)


def _task_box(text: Text) -> tuple[Text, bool | None]:
    for box in _TASK_BOX:
        if text.text.startswith(box):
            return _shifted(text, len(box)), box != "[ ] "
    return text, None


def _table(node: SyntaxTreeNode) -> Iterator[Block]:
    rows: list[tuple[Text, ...]] = []
    for part in node.children:  # thead, tbody
        for row in part.children:
            rows.append(tuple(_inline(cell.children[0] if cell.children else None) for cell in row.children))
    if rows:
        yield Table(header=rows[0], rows=tuple(rows[1:]))


def _html_block(node: SyntaxTreeNode, warnings: _Warnings) -> Iterator[_Event]:
    tables = html_tables(node.content) if "<table" in node.content.lower() else None
    if tables is not None:  # a table written in HTML is a table, its rows read with their header
        yield from tables
        return
    reader = _HtmlText()
    reader.feed(node.content)
    reader.close()
    events = reader.events()
    if not events and not node.content.lstrip().startswith("<!--"):
        first = node.content.strip().splitlines()[0][:60] if node.content.strip() else ""
        warnings.add(node.map[0] if node.map else None, f"an HTML block without text was left out ({first})")
    yield from events


# -- inline text --------------------------------------------------------------------------------------------


class _TextBuilder:
    """Text with whitespace runs collapsed as it is written, and links by offsets into it."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._last = ""
        self._links: list[Link] = []
        self._open: list[tuple[int, str, str]] = []
        self.lead = 0

    def write(self, text: str) -> None:
        collapsed = _WHITESPACE.sub(" ", text)
        if collapsed.startswith(" ") and self._last in ("", " ", "\n"):
            collapsed = collapsed[1:]
        self._append(collapsed)

    def break_line(self) -> None:
        """A line break the author meant (a hard break, or a new line opened by a bold label)."""
        if self._last == " ":
            self._parts[-1] = self._parts[-1][:-1]
            self._length -= 1
            self._last = self._parts[-1][-1:] if self._parts[-1] else self._previous_last()
        if self._last not in ("", "\n"):
            self._append("\n")

    def _append(self, text: str) -> None:
        if text:
            self._parts.append(text)
            self._length += len(text)
            self._last = text[-1]

    def _previous_last(self) -> str:
        return next((part[-1] for part in reversed(self._parts) if part), "")

    def open_link(self, target: str, *, tag: str) -> None:
        self._open.append((self._length, target, tag))

    def close_link(self, *, tag: str) -> None:
        """Close the innermost link opened by `tag` (a Markdown link, `<a>`, a component with a `url`)."""
        for index in range(len(self._open) - 1, -1, -1):
            start, target, opened_by = self._open[index]
            if opened_by == tag:
                del self._open[index]
                end = self._length_without_space()
                if end > start and target:
                    self._links.append(Link(start=start, end=end, target=target))
                return

    def _length_without_space(self) -> int:
        return self._length - (1 if self._last in (" ", "\n") else 0)

    def build(self) -> Text:
        text = "".join(self._parts)
        stripped = text.lstrip()
        shift = len(text) - len(stripped)
        text = stripped.rstrip()
        links = tuple(Link(start=max(0, link.start - shift), end=min(len(text), link.end - shift),
                           target=link.target) for link in self._links)
        return Text(text=text, links=tuple(link for link in links if link.end > link.start),
                    lead=min(max(0, self.lead - shift), len(text)))


def _inline(node: SyntaxTreeNode | None) -> Text:
    builder = _TextBuilder()
    if node is not None:
        _write_inline(node.children, builder, ended=_ended_lines(node))
        opening = [child for child in node.children if not (child.type == "text" and not child.content.strip())]
        if opening and opening[0].type == "strong":
            builder.lead = len(_plain(opening[0]))
    return builder.build()


def _write_inline(nodes: Sequence[SyntaxTreeNode], builder: _TextBuilder, *,
                  ended: frozenset[int] = frozenset()) -> None:
    """`ended`: the soft breaks (by `id`) where the author ended a line (`_ended_lines`)."""
    for index, node in enumerate(nodes):
        match node.type:
            case "text" | "code_inline":
                builder.write(node.content)
            case "hardbreak":
                builder.break_line()
            case "softbreak":
                if id(node) in ended or _opens_labelled_line(nodes[index + 1:]):
                    builder.break_line()
                else:
                    builder.write(" ")
            case "link":
                builder.open_link(str(node.attrs.get("href", "")), tag="")
                _write_inline(node.children, builder, ended=ended)
                builder.close_link(tag="")
            case "image" | "s":  # an image's alt text is not the sentence's words; struck-out text is withdrawn
                continue
            case "html_inline":
                _write_html_inline(node.content, builder)
            case _:  # strong, em and other wrappers: their words, without the marks
                _write_inline(node.children, builder, ended=ended)


def _ended_lines(inline: SyntaxTreeNode) -> frozenset[int]:
    """The soft breaks of a paragraph that end a line its author ended, not one an editor wrapped: a wrapping
    editor moves the next word up whenever it fits, so a line it would have fitted on, which ends on no
    punctuation before a capital, ends a sentence whose full stop was left out ("Email sales@example.com" above
    "Account Executives forward it ..."). A line that ends on a word needing more ("... send it to" above
    "Jane Doe") goes on."""
    breaks = [node for node in inline.walk() if node.type in ("softbreak", "hardbreak")]
    lines = [line.rstrip() for line in inline.content.split("\n")]
    if len(breaks) != len(lines) - 1:  # a break inside a code span or a tag: the lines are not the breaks
        return frozenset()
    width = max(len(line) for line in lines)
    return frozenset(id(node) for node, (line, following) in zip(breaks, pairwise(lines), strict=True)
                     if node.type == "softbreak" and _ended_by_author(line, following.lstrip(), width))


def _ended_by_author(line: str, following: str, width: int) -> bool:
    next_word = following.split(maxsplit=1)[0] if following else ""
    return (bool(line) and line[-1].isalnum() and following.lstrip("*_`[(\"'")[:1].isupper()
            and len(line) + 1 + len(next_word) <= width and not ends_open(line))


def _opens_labelled_line(following: Sequence[SyntaxTreeNode]) -> bool:
    """Does a wrapped line open with a bold label ("**Owner:** People Ops")? Then it is a line of its own, as
    in a list of facts written without list markers; a line wrapped mid-sentence never opens that way."""
    opening = [node for node in following if not (node.type == "text" and not node.content.strip())][:1]
    return bool(opening) and opening[0].type == "strong" and _plain(opening[0]).rstrip().endswith((":", "."))


def _plain(node: SyntaxTreeNode) -> str:
    builder = _TextBuilder()
    _write_inline(node.children, builder)
    return builder.build().text


def _write_html_inline(tag: str, builder: _TextBuilder) -> None:
    """One inline tag: `<br>` is a space, a link tag opens or closes a link, a component shows its name."""
    parser = _TagReader()
    parser.feed(tag)
    parser.close()
    if parser.name is None:
        return
    if parser.closing:
        builder.close_link(tag=parser.name)
        return
    if parser.name == "br":
        builder.write(" ")
    elif parser.link is not None and not parser.self_closing:
        builder.open_link(parser.link, tag=parser.name)
    elif parser.naming is not None:
        builder.write(f" {parser.naming} " if parser.self_closing else parser.naming)


class _TagReader(HTMLParser):
    """What one HTML tag says: its name, whether it closes, a link target, a name to show."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.name: str | None = None
        self.closing = False
        self.self_closing = False
        self.link: str | None = None
        self.naming: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._take(tag, attrs)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._take(tag, attrs)
        self.self_closing = True

    def handle_endtag(self, tag: str) -> None:
        self.name, self.closing = tag, True

    def _take(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {key: value for key, value in attrs if value}
        self.name = tag
        self.link = next((values[key] for key in _LINK_ATTRIBUTES if key in values), None)
        self.naming = next((values[key] for key in _NAMING_ATTRIBUTES if key in values), None)


@dataclass(kw_only=True)
class _OpenList:
    """An HTML list being read: its finished items, and the open item's words and nested blocks."""

    ordered: bool
    items: list[ListItem] = field(default_factory=list)
    text: Text | None = None
    children: list[Block] = field(default_factory=list)

    def close_item(self) -> None:
        if self.text is not None or self.children:
            self.items.append(ListItem(text=self.text or Text(text=""), children=tuple(self.children)))
        self.text, self.children = None, []


class _HtmlText(HTMLParser):
    """An HTML block's text: block tags end a paragraph, headings are headings, lists are lists (`<li>` under
    `<ul>` or `<ol>`, nested ones under their item), links are links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._events: list[_Event] = []
        self._builder = _TextBuilder()
        self._heading: int | None = None
        self._skipping = 0
        self._lists: list[_OpenList] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping += 1
            return
        if tag in _BREAK_TAGS or (tag[:1] == "h" and tag[1:].isdigit()):
            self._flush()
        if tag in ("ul", "ol"):
            self._lists.append(_OpenList(ordered=tag == "ol"))
        elif tag == "li" and self._lists:
            self._lists[-1].close_item()
        if tag[:1] == "h" and tag[1:].isdigit():
            self._heading = int(tag[1:])
        values = {key: value for key, value in attrs if value}
        if tag == "a" and values.get("href"):
            self._builder.open_link(str(values["href"]), tag="a")
        elif tag not in _BREAK_TAGS:
            naming = next((values[key] for key in _NAMING_ATTRIBUTES if key in values), None)
            if naming is not None:
                self._builder.write(f" {naming} ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag in _SKIPPED_TAGS:
            self._skipping -= 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping = max(0, self._skipping - 1)
        elif tag == "a":
            self._builder.close_link(tag="a")
        elif tag in _BREAK_TAGS or (tag[:1] == "h" and tag[1:].isdigit()):
            self._flush()
            if tag == "li" and self._lists:
                self._lists[-1].close_item()
            elif tag in ("ul", "ol") and self._lists:
                self._close_list()

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self._builder.write(data)

    def events(self) -> list[_Event]:
        self._flush()
        while self._lists:  # a list the block leaves open ends with it
            self._close_list()
        return self._events

    def _flush(self) -> None:
        text = self._builder.build()
        self._builder = _TextBuilder()
        if text:
            if self._heading:
                self._events.append(Heading(level=self._heading, text=text.text))
            else:
                self._add(Paragraph(text=replace(text, lead=0)))
        self._heading = None

    def _close_list(self) -> None:
        closed = self._lists.pop()
        closed.close_item()
        if closed.items:
            self._add(ListBlock(items=tuple(closed.items), ordered=closed.ordered))

    def _add(self, block: Block) -> None:
        """A block where it stands: an open item's words or nested block, or a block of the page."""
        if not self._lists:
            self._events.append(block)
            return
        item = self._lists[-1]
        if isinstance(block, Paragraph) and item.text is None and not item.children:
            item.text = block.text
        else:
            item.children.append(block)


# -- helpers ------------------------------------------------------------------------------------------------


def _joined(parts: Sequence[Text]) -> Text:
    """Texts joined by single spaces, their links moved with them."""
    text = ""
    links: list[Link] = []
    for part in parts:
        if not part:
            continue
        offset = len(text) + (1 if text else 0)
        text = f"{text} {part.text}" if text else part.text
        links.extend(Link(start=link.start + offset, end=link.end + offset, target=link.target)
                     for link in part.links)
    lead = parts[0].lead if parts else 0
    return Text(text=text, links=tuple(links), lead=lead)


def _shifted(text: Text, cut: int) -> Text:
    """The text without its first `cut` characters."""
    links = tuple(Link(start=link.start - cut, end=link.end - cut, target=link.target)
                  for link in text.links if link.start >= cut)
    return Text(text=text.text[cut:], links=links, lead=max(0, text.lead - cut))
