"""PDFs read into the document model by pdfplumber: words with their font sizes, ruled tables cell by cell,
and link annotations, page by page (each page's caches freed after it, so memory stays bounded by one page).

A PDF has no headings, only type: the body size is the size most characters are set in, a short line set
larger (or all bold) is a heading, and the heading sizes ranked give the levels. Lines close together are one
paragraph (joined across the wrap), a line opening with a bullet or a number is a list item nested by its
indent, a ruled table is a table with its first row as header. Columns are found before tables: two columns of
prose side by side are read left column first, each top to bottom, never as the rows of one table. A table
without rules (word runs starting at the same columns) ends at a heading or a line across its columns, and a
header cell wrapped over lines is read whole. Running headers, footers and page numbers (the same line on most
pages, at the top or bottom) are left out. Every block carries its page.

A PDF with no text layer (a scan) and an encrypted one are refused: there is no OCR here, and no password.
"""

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Final

from core.documents.html_tree import parse_day
from core.documents.limits import FormatSupportMissing, Unreadable
from core.documents.model import (
    Block,
    Document,
    Heading,
    Link,
    ListBlock,
    ListItem,
    Paragraph,
    Table,
    Text,
    sections_of,
)

HEADING_SCALE: Final = 1.12
"""A line set at least this much larger than the body is a heading."""
HEADING_MAX_CHARS: Final = 120
MARGIN_SHARE: Final = 0.12
"""The top and bottom share of a page where running headers and footers stand."""
MAX_PAGES: Final = 5000
COLUMN_GAP: Final = 1.0
"""Words further apart than this many times the font size stand in different columns of a table."""
COLUMN_LINES: Final = 4
"""Lines each side of a gutter holds at least, for a page to be read as columns."""
ALIGNMENT: Final = 3.0
"""Points by which the cells of one column may start apart."""
HEADER_LINES: Final = 2
"""Lines above a borderless table's header that may hold the first words of its wrapped header cells."""
_BULLET: Final = re.compile(r"^(?:[\u2022\u25cf\u25cb\u25e6\u25aa\u25ab\u25a0\u25a1\u2023\u2043\u2013\u2014\u00b7*-]"
                            r"|\(?\d{1,3}[.)]|\(?[a-z][.)])\s+")
_BULLET_ONLY: Final = re.compile(r"^(?:[\u2022\u25cf\u25cb\u25e6\u25aa\u25ab\u25a0\u25a1\u2023\u2043\u2013\u2014"
                                 r"\u00b7*-]|\(?\d{1,3}[.)]|\(?[a-z][.)])$")
_PAGE_NUMBER: Final = re.compile(r"^(?:page\s+)?\d{1,4}(?:\s*(?:/|of)\s*\d{1,4})?$", re.IGNORECASE)
_BOLD: Final = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
_SENTENCE_END: Final = (".", "!", "?", ":", ";")
_PLACEHOLDER_TITLES: Final = frozenset({"untitled", "document", "microsoft word", "slide 1"})


@dataclass(frozen=True, kw_only=True)
class _Word:
    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    bold: bool
    link: str | None = None


@dataclass(kw_only=True)
class _Line:
    words: list[_Word]
    page: int
    flow: int = 0
    """Which of the page's flows (full width, or one column of a run of columns) the line stands in."""
    margin: bool = False

    @property
    def text(self) -> str:
        return " ".join(word.text for word in self.words)

    @property
    def x0(self) -> float:
        return self.words[0].x0

    @property
    def top(self) -> float:
        return min(word.top for word in self.words)

    @property
    def bottom(self) -> float:
        return max(word.bottom for word in self.words)

    @property
    def size(self) -> float:
        sizes = Counter(round(word.size * 2) / 2 for word in self.words for _ in word.text)
        return sizes.most_common(1)[0][0]

    @property
    def bold(self) -> bool:
        return all(word.bold for word in self.words)


@dataclass(frozen=True, kw_only=True)
class _PlacedTable:
    top: float
    page: int
    rows: list[list[str]]


_Item = _Line | _PlacedTable


@dataclass(kw_only=True)
class _Pages:
    items: list[_Item] = field(default_factory=list)
    sizes: Counter[float] = field(default_factory=Counter)
    pages: int = 0
    blank_pages: list[int] = field(default_factory=list)


def read_pdf(path: Path) -> Document:
    try:
        import pdfplumber  # noqa: PLC0415  # the formats extra is optional
        from pdfplumber.utils.exceptions import PdfminerException  # noqa: PLC0415
    except ImportError:
        raise FormatSupportMissing(".pdf", "pdfplumber") from None
    try:
        with pdfplumber.open(path) as pdf:
            metadata = dict(pdf.metadata)
            read = _read_pages(pdf)
    except PdfminerException as error:
        cause = error.args[0] if error.args else error
        if isinstance(cause, MemoryError):
            raise cause from None  # a memory limit is the reading process's to name (`core.documents.bounded`)
        raise _refusal(cause) from None
    except (Unreadable, MemoryError):
        raise
    except Exception as error:  # pdfminer raises many kinds on a damaged file
        raise Unreadable(f"could not be read as a PDF ({type(error).__name__}: {error})") from None
    if not read.items:  # a scan, or text drawn as outlines
        raise Unreadable("has no text layer (scanned?); Sourced does not OCR: give it a text layer first (e.g. "
                         "ocrmypdf) and ingest that")
    warnings = [f"pages {_ranges(read.blank_pages)} have no text layer (scanned?) and were left out; give the file "
                f"a text layer (OCR, e.g. ocrmypdf) to have them read"] if read.blank_pages else []
    return _document(read, metadata, warnings)


def _refusal(cause: object) -> Unreadable:
    name = type(cause).__name__
    if name in ("PDFPasswordIncorrect", "PDFEncryptionError", "PDFEncryptionWarning"):
        return Unreadable("is encrypted (password-protected); save a copy without a password")
    return Unreadable(f"could not be read as a PDF ({name}: {cause})")


# -- pages ----------------------------------------------------------------------------------------------------


def _read_pages(pdf: Any) -> _Pages:
    read = _Pages()
    for number, page in enumerate(pdf.pages, start=1):
        if number > MAX_PAGES:
            raise Unreadable(f"has more than {MAX_PAGES:,} pages; split it into smaller files")
        read.pages = number
        try:
            items = _page_items(page, number)
            if not items and page.images:
                read.blank_pages.append(number)
        finally:
            page.close()
        for item in items:
            for word in item.words if isinstance(item, _Line) else ():
                read.sizes[round(word.size * 2) / 2] += len(word.text)
        read.items.extend(items)
    _drop_running_lines(read)
    return read


def _page_items(page: Any, number: int) -> list[_Item]:
    """A page's lines and ruled tables in reading order: flow by flow (full width, then a run of columns left
    to right), top to bottom within each, table text apart from the lines."""
    tables = _tables(page) if page.rects or page.lines else []
    boxes = [table.bbox for table in tables]
    words = page.extract_words(extra_attrs=["size", "fontname"], keep_blank_chars=False)
    links = [link for link in page.hyperlinks if link.get("uri")]
    kept = [_word(word, links) for word in words if not any(_inside(word, box) for box in boxes)]
    items: list[_Item] = []
    for index, flow in enumerate(_flows(list(_lines(kept, number, page.height)))):
        lines = _lines([word for word in kept if flow.holds((word.x0, word.top, word.x1, word.bottom))], number,
                       page.height, flow=index)
        placed = [_PlacedTable(top=float(table.bbox[1]), page=number, rows=rows) for table in tables
                  if flow.holds(table.bbox) and (rows := _rows(table))]
        items.extend(sorted([*lines, *placed], key=lambda item: item.top))
    return items


# -- columns --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Flow:
    """A part of a page read top to bottom on its own: the full width between two heights, or one column."""
    top: float = -math.inf
    bottom: float = math.inf
    left: float = -math.inf
    right: float = math.inf

    def holds(self, box: tuple[float, float, float, float]) -> bool:
        """Does the middle of `box` (x0, top, x1, bottom, as pdfplumber gives it) stand in this flow?"""
        middle_x, middle_y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        return self.left <= middle_x < self.right and self.top <= middle_y < self.bottom


@dataclass(frozen=True, kw_only=True)
class _ColumnRun:
    """Consecutive lines `start`..`end` (exclusive) that no word crosses at `gutter`, text on both sides."""
    start: int
    end: int
    gutter: float


def _flows(lines: Sequence[_Line], flow: _Flow | None = None) -> list[_Flow]:
    """The page's flows in reading order: full width down to a run of columns, its left column, its right
    column, then the rest of the page (which may hold another run). Found before tables, so the lines of two
    columns side by side are never read as the rows of one table."""
    area = flow or _Flow()
    run = _column_run(lines)
    if run is None:
        return [area]
    top, bottom = lines[run.start].top, lines[run.end - 1].bottom
    columns = [_Flow(top=top, bottom=bottom, right=run.gutter), _Flow(top=top, bottom=bottom, left=run.gutter)]
    above = [_Flow(top=area.top, bottom=top)]
    return [*above, *columns, *_flows(lines[run.end:], _Flow(top=bottom, bottom=area.bottom))]


def _column_run(lines: Sequence[_Line]) -> _ColumnRun | None:
    """The longest run of two columns of prose, if any: its gutter stands in the middle of the text (30% to 70%
    of its width), each side holds COLUMN_LINES lines at least, and each side reads as prose (a borderless
    table's columns stay a table)."""
    body = [line for line in lines if not line.margin]
    if not body:
        return None
    left_edge, right_edge = min(line.x0 for line in body), max(line.words[-1].x1 for line in body)
    middle = (left_edge + (right_edge - left_edge) * 0.3, left_edge + (right_edge - left_edge) * 0.7)
    runs = [_run_at(lines, start - 1) for start in _column_starts(body, middle)]
    found = [run for run in runs if run is not None and _reads_as_prose(lines, run, left_edge)]
    return max(found, key=lambda run: run.end - run.start, default=None)


def _column_starts(lines: Sequence[_Line], middle: tuple[float, float]) -> list[int]:
    """Where three lines or more start a run of words in the middle of the text: a column's left edge."""
    starts = Counter(round(cell[0].x0) for line in lines for cell in _cells(line) if
                     middle[0] <= cell[0].x0 <= middle[1])
    return sorted(start for start, count in starts.items() if count >= 3)


def _run_at(lines: Sequence[_Line], gutter: float) -> _ColumnRun | None:
    """The longest run of lines clear at `gutter` with COLUMN_LINES on each side; a line that continues a
    full-width paragraph above is left to it."""
    best: _ColumnRun | None = None
    start = 0
    for end in range(len(lines) + 1):
        if end < len(lines) and not _crosses(lines[end], gutter):
            continue
        if start < end and _ends_paragraph_above(lines, start):
            start += 1
        if _sides(lines[start:end], gutter) and (best is None or end - start > best.end - best.start):
            best = _ColumnRun(start=start, end=end, gutter=gutter)
        start = end + 1
    return best


def _ends_paragraph_above(lines: Sequence[_Line], index: int) -> bool:
    """Is the line at `index` the last line of the full-width paragraph just above it?"""
    return index > 0 and lines[index].size == lines[index - 1].size and _close(lines[index - 1], lines[index])


def _crosses(line: _Line, gutter: float) -> bool:
    return any(word.x0 < gutter < word.x1 for word in line.words)


def _sides(lines: Sequence[_Line], gutter: float) -> bool:
    left = sum(1 for line in lines if line.words[0].x1 <= gutter)
    right = sum(1 for line in lines if line.words[-1].x0 >= gutter)
    return min(left, right) >= COLUMN_LINES


def _reads_as_prose(lines: Sequence[_Line], run: _ColumnRun, left_edge: float) -> bool:
    """Each side a column of prose: its lines one run of words each (a table's rows break into cells), and half
    the left side's lines, or more, ending in the last quarter of its width (wrapped text fills its column)."""
    sides = [_side(line, run.gutter, left=left) for line in lines[run.start:run.end] for left in (True, False)]
    parts = [part for part in sides if part]
    if sum(1 for part in parts if len(_cells(part)) > 1) * 5 > len(parts):
        return False
    ends = [part.words[-1].x1 for part in sides[::2] if part]
    reach = run.gutter - (run.gutter - left_edge) * 0.25
    return sum(1 for end in ends if end >= reach) * 2 >= len(ends)


def _side(line: _Line, gutter: float, *, left: bool) -> _Line | None:
    """The part of a line on one side of a gutter, None when it has no word there."""
    words = [word for word in line.words if (word.x1 <= gutter) == left]
    return _Line(words=words, page=line.page, flow=line.flow) if words else None


# -- tables ---------------------------------------------------------------------------------------------------


def _tables(page: Any) -> list[Any]:
    return [table for table in page.find_tables() if len(table.rows) > 1 and len(table.columns) > 1]


def _rows(table: Any) -> list[list[str]]:
    rows = [[" ".join((cell or "").split()) for cell in row] for row in table.extract()]
    return [row for row in rows if any(row)]


def _inside(word: dict[str, Any], box: tuple[float, float, float, float]) -> bool:
    middle_x = (float(word["x0"]) + float(word["x1"])) / 2
    middle_y = (float(word["top"]) + float(word["bottom"])) / 2
    return bool(box[0] <= middle_x <= box[2] and box[1] <= middle_y <= box[3])


def _word(word: dict[str, Any], links: Sequence[dict[str, Any]]) -> _Word:
    target = next((str(link["uri"]) for link in links if _inside(word, (link["x0"], link["top"], link["x1"],
                                                                           link["bottom"]))), None)
    return _Word(text=word["text"], x0=float(word["x0"]), x1=float(word["x1"]), top=float(word["top"]),
                 bottom=float(word["bottom"]), size=float(word["size"]), bold=bool(_BOLD.search(word["fontname"])),
                 link=target)


def _lines(words: Sequence[_Word], page: int, height: float, *, flow: int = 0) -> Iterator[_Line]:
    """Words on about the same baseline, left to right, as one line."""
    current: list[_Word] = []
    for word in sorted(words, key=lambda w: (round(w.top), w.x0)):
        if current and (abs(word.top - current[-1].top) > 0.5 * max(word.size, 1) or word.x0 < current[-1].x0):
            yield _line(current, page, height, flow)
            current = []
        current.append(word)
    if current:
        yield _line(current, page, height, flow)


def _line(words: list[_Word], page: int, height: float, flow: int) -> _Line:
    line = _Line(words=words, page=page, flow=flow)
    line.margin = line.bottom < height * MARGIN_SHARE or line.top > height * (1 - MARGIN_SHARE)
    return line


def _cells(line: _Line) -> list[list[_Word]]:
    """A line's words in runs apart by more than a column gap (about a letter's height; a space is a third)."""
    cells: list[list[_Word]] = [[line.words[0]]]
    for word in line.words[1:]:
        if word.x0 - cells[-1][-1].x1 > COLUMN_GAP * max(word.size, 1):
            cells.append([word])
        else:
            cells[-1].append(word)
    return cells


@dataclass(kw_only=True)
class _Grid:
    """A table drawn without rules, as it is read line by line: where its columns start, and its rows."""
    starts: list[float]
    rows: list[list[str]]
    top: float
    page: int


def _with_aligned_tables(items: Sequence[_Item], body: float) -> list[_Item]:
    """Tables drawn without rules (as Word and pandoc write them): three lines or more, close together, whose
    word runs start at the same columns. A line with nothing in the first column continues the row above (a
    cell's text wrapped); a bullet and its text are a list item, never two columns. The table ends at a heading
    or at a line running across its columns (a full-width paragraph); a header cell wrapped upwards (set at the
    bottom of its row) is joined from the lines just above."""
    found: list[_Item] = []
    index = 0
    while index < len(items):
        item = items[index]
        if isinstance(item, _Line) and (table := _aligned_table(items, index, body)) is not None:
            grid, index = table
            _join_header_above(found, grid, item)
            found.append(_PlacedTable(top=grid.top, page=grid.page, rows=grid.rows))
        else:
            found.append(item)
            index += 1
    return found


def _aligned_table(items: Sequence[_Item], index: int, body: float) -> tuple[_Grid, int] | None:
    """The borderless table starting at the line `items[index]`, and the index after it; None when there is
    none."""
    first = items[index]
    header = _cells(first) if isinstance(first, _Line) else []
    if len(header) < 2 or _BULLET_ONLY.match(_cell_text(header[0])):
        return None
    grid = _Grid(starts=[cell[0].x0 for cell in header], rows=[[_cell_text(cell) for cell in header]],
                 top=first.top, page=first.page)
    end = index + 1
    while end < len(items) and _adds_row(grid, items[end - 1], items[end], body):
        end += 1
    return (grid, end) if len(grid.rows) >= 3 else None


def _adds_row(grid: _Grid, previous: _Item, line: _Item, body: float) -> bool:
    """Add `line` to the table as a row, or to the row above as its cells' wrapped text; False when it is no
    part of the table (far below, out of the columns, a heading)."""
    if not (isinstance(previous, _Line) and isinstance(line, _Line) and _close(previous, line, spacing=1.4)):
        return False
    columns = _columns(_cells(line), grid.starts)
    if columns is None or (list(columns) == [0] and _is_heading(line, body)):
        return False
    if 0 in columns:
        grid.rows.append([columns.get(column, "") for column in range(len(grid.starts))])
    else:
        for column, text in columns.items():
            grid.rows[-1][column] = f"{grid.rows[-1][column]} {text}".strip()
    return True


def _join_header_above(found: list[_Item], grid: _Grid, first: _Line) -> None:
    """Header cells wrapped over lines and set at the bottom of their row ("Paid days per" above "year"): the
    lines just above the header, as close as one cell's lines and within its columns, are the cells' first
    words."""
    lower = first
    for _ in range(HEADER_LINES):
        upper = found[-1] if found else None
        if not (isinstance(upper, _Line) and _close(upper, lower, spacing=0.5)):
            return
        columns = _columns(_cells(upper), grid.starts)
        if columns is None:
            return
        for column, text in columns.items():
            grid.rows[0][column] = f"{text} {grid.rows[0][column]}".strip()
        grid.top = upper.top
        found.pop()
        lower = upper


def _columns(cells: list[list[_Word]], starts: Sequence[float]) -> dict[int, str] | None:
    """The cells of a line by the column each starts in; None when one starts between columns, two share one,
    or one runs on into the next column (a paragraph across the table)."""
    found: dict[int, str] = {}
    for cell in cells:
        column = next((number for number, start in enumerate(starts) if abs(cell[0].x0 - start) <= ALIGNMENT),
                      None)
        if column is None or column in found or (column + 1 < len(starts) and cell[-1].x1 > starts[column + 1]):
            return None
        found[column] = _cell_text(cell)
    return found


def _cell_text(words: Sequence[_Word]) -> str:
    return " ".join(word.text for word in words)


def _drop_running_lines(read: _Pages) -> None:
    """Page numbers, and the same line in a margin on at least half the pages (three at least)."""
    pattern = Counter(_shape(item.text) for item in read.items if isinstance(item, _Line) and item.margin)
    repeated = {shape for shape, count in pattern.items() if count >= max(3, read.pages / 2)}
    read.items = [item for item in read.items if not (
        isinstance(item, _Line) and item.margin and (_PAGE_NUMBER.match(item.text) or _shape(item.text) in repeated))]


def _shape(text: str) -> str:
    return re.sub(r"\d+", "#", text.casefold())


# -- structure ------------------------------------------------------------------------------------------------


def _document(read: _Pages, metadata: dict[str, Any], warnings: list[str]) -> Document:
    body = read.sizes.most_common(1)[0][0] if read.sizes else 0.0
    items = _with_aligned_tables(read.items, body)
    levels = _heading_levels(items, body)
    events = list(_events(items, body, levels))
    first = next((event for event in events if isinstance(event, Heading)), None)
    title = _metadata_title(metadata) or (first.text if first is not None and first.level == 1 else None)
    return Document(sections=tuple(sections_of(events)), title=title, updated=_metadata_day(metadata),
                    warnings=tuple(warnings))


def _is_heading(line: _Line, body: float) -> bool:
    text = line.text
    if len(text) > HEADING_MAX_CHARS or not any(char.isalpha() for char in text) or text.endswith((".", ",", ";")):
        return False
    return line.size >= body * HEADING_SCALE or (line.bold and line.size >= body and len(text) <= 80
                                                 and not _BULLET.match(text))


def _heading_levels(items: Sequence[_Item], body: float) -> dict[tuple[float, bool], int]:
    """Heading styles (size, bold) ranked: the largest is level 1 when it stands once (the title), else level 2,
    as a page's sections are; a bold line at body size is the lowest level."""
    styles = Counter((line.size, line.bold) for line in items if isinstance(line, _Line) and _is_heading(line, body))
    ranked = sorted(styles, key=lambda style: (style[0], style[1]), reverse=True)
    first = 1 if ranked and styles[ranked[0]] == 1 else 2
    return {style: min(first + rank, 6) for rank, style in enumerate(ranked)}


def _events(items: Sequence[_Item], body: float, levels: dict[tuple[float, bool], int]
            ) -> Iterator[Heading | Block]:
    run: list[_Line] = []
    index = 0
    while index < len(items):
        item = items[index]
        index += 1
        if isinstance(item, _PlacedTable):
            yield from _blocks(run, body)
            run = []
            header, *rows = item.rows
            yield Table(header=tuple(Text(text=cell) for cell in header),
                        rows=tuple(tuple(Text(text=cell) for cell in row) for row in rows), page=item.page)
        elif _is_heading(item, body):
            yield from _blocks(run, body)
            run = []
            parts, last = [item.text], item
            while index < len(items) and _same_heading(last, items[index], body):  # a heading wrapped
                last = items[index]  # type: ignore[assignment]  # _same_heading saw a line
                parts.append(last.text)
                index += 1
            yield Heading(level=levels[(item.size, item.bold)], text=" ".join(parts))
        else:
            run.append(item)
    yield from _blocks(run, body)


def _same_heading(line: _Line, following: _Item, body: float) -> bool:
    return (isinstance(following, _Line) and _is_heading(following, body) and following.size == line.size
            and following.bold == line.bold and _close(line, following))


def _close(upper: _Line, lower: _Line, *, spacing: float = 0.7) -> bool:
    """Is `lower` the next line of the same paragraph as `upper` (no blank line between, same page and flow)?"""
    return ((upper.page, upper.flow) == (lower.page, lower.flow)
            and lower.top - upper.bottom < spacing * max(upper.size, lower.size))


def _blocks(lines: Sequence[_Line], body: float) -> Iterator[Block]:
    """Lines into paragraphs and lists: a gap, a change of page or a bullet starts a new one."""
    paragraph: list[_Line] = []
    items: list[tuple[float, list[_Line]]] = []
    for line in lines:
        bullet = _BULLET.match(line.text)
        if bullet:
            yield from _paragraph(paragraph)
            paragraph = []
            items.append((line.x0, [line]))
        elif items and _close(items[-1][1][-1], line) and line.x0 > items[-1][0] + 1:
            items[-1][1].append(line)  # an item's wrapped line, indented under its text
        else:
            yield from _list(items)
            items = []
            if paragraph and not _continues(paragraph[-1], line):
                yield from _paragraph(paragraph)
                paragraph = []
            paragraph.append(line)
    yield from _paragraph(paragraph)
    yield from _list(items)


def _continues(upper: _Line, lower: _Line) -> bool:
    """Same paragraph: close below in the same flow, or, across a page or column break, a sentence not yet
    ended."""
    if (upper.page, upper.flow) != (lower.page, lower.flow):
        return not upper.text.endswith(_SENTENCE_END) and lower.text[:1].islower()
    return _close(upper, lower) and abs(upper.size - lower.size) < 0.5


def _paragraph(lines: Sequence[_Line]) -> Iterator[Paragraph]:
    if lines:
        yield Paragraph(text=_text([word for line in lines for word in line.words]), page=lines[0].page)


def _list(items: Sequence[tuple[float, list[_Line]]]) -> Iterator[ListBlock]:
    if not items:
        return
    indents = sorted({round(x0) for x0, _ in items})
    entries = [(_level(indents, x0), lines) for x0, lines in items]
    first = entries[0][1][0]
    yield ListBlock(items=_nested(entries), ordered=_numbered(first), page=first.page)


def _level(indents: Sequence[int], x0: float) -> int:
    """An item's depth: how many distinct indents, 6 points apart at least, stand to its left."""
    depth = 0
    last = indents[0]
    for indent in indents[1:]:
        if indent > round(x0):
            break
        if indent - last >= 6:
            depth += 1
            last = indent
    return depth


def _nested(entries: Sequence[tuple[int, list[_Line]]]) -> tuple[ListItem, ...]:
    items: list[ListItem] = []
    top = min(level for level, _ in entries)
    index = 0
    while index < len(entries):
        end = index + 1
        while end < len(entries) and entries[end][0] > top:
            end += 1
        lines = entries[index][1]
        words = [word for line in lines for word in line.words]
        marker = _BULLET.match(lines[0].text)
        text = _text(words, skip=len(marker.group(0).split()) if marker else 0)
        below = entries[index + 1:end]
        children = (ListBlock(items=_nested(below), ordered=_numbered(below[0][1][0])),) if below else ()
        items.append(ListItem(text=text, children=children))
        index = end
    return tuple(items)


def _numbered(line: _Line) -> bool:
    return bool(re.match(r"^\(?\d", line.text))


def _text(words: Sequence[_Word], *, skip: int = 0) -> Text:
    """Words joined by spaces (a word broken at a line's end by a hyphen joined again), links kept."""
    text = ""
    links: list[Link] = []
    for index, word in enumerate(words[skip:]):
        joiner = "" if not text or (text.endswith("-") and index and word.text[:1].islower()) else " "
        start = len(text) + len(joiner)
        text += joiner + word.text
        if word.link:
            if links and links[-1].target == word.link and links[-1].end >= start - 1:
                links[-1] = Link(start=links[-1].start, end=len(text), target=word.link)
            else:
                links.append(Link(start=start, end=len(text), target=word.link))
    return Text(text=text, links=tuple(links))



# -- metadata -------------------------------------------------------------------------------------------------


def _metadata_title(metadata: dict[str, Any]) -> str | None:
    title = " ".join(str(metadata.get("Title") or "").split())
    if not title or title.casefold() in _PLACEHOLDER_TITLES or title.casefold().startswith("microsoft word -"):
        return None
    return title


def _metadata_day(metadata: dict[str, Any]) -> date | None:
    """The ModDate (else CreationDate) of the document information: "D:20260314101500Z"."""
    for key in ("ModDate", "CreationDate"):
        value = str(metadata.get(key) or "")
        match = re.match(r"^(?:D:)?(\d{4})(\d{2})(\d{2})", value)
        if match:
            day = parse_day(f"{match.group(1)}-{match.group(2)}-{match.group(3)}")
            if day is not None:
                return day
    return None


def _ranges(numbers: Sequence[int]) -> str:
    """[1, 2, 3, 7] as "1-3, 7"."""
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][-1] + 1:
            spans[-1].append(number)
        else:
            spans.append([number])
    return ", ".join(f"{span[0]}-{span[-1]}" if len(span) > 1 else str(span[0]) for span in spans)
