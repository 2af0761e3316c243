"""An HTML `<table>` written inside Markdown (a site's handbook page does this for tables with styled cells)
read as a table of the document model: its first row the header, each cell its text. Standard library only,
like the Markdown reader that calls it."""

from html.parser import HTMLParser

from core.documents.model import Table, Text


def html_tables(html: str) -> list[Table] | None:
    """The tables of an HTML block when tables are all it holds (any text outside them: None, read as text)."""
    reader = _TableReader()
    reader.feed(html)
    reader.close()
    if not reader.tables or reader.outside.strip():
        return None
    return [Table(header=tuple(rows[0]), rows=tuple(tuple(row) for row in rows[1:]))
            for rows in reader.tables if rows]


class _TableReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[Text]]] = []
        self.outside = ""
        self._depth = 0
        self._row: list[Text] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._depth += 1
            if self._depth == 1:
                self.tables.append([])
        elif self._depth == 1 and tag == "tr":
            self._row = []
        elif self._depth == 1 and tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._depth = max(0, self._depth - 1)
        elif self._depth == 1 and tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(Text(text=" ".join("".join(self._cell).split())))
            self._cell = None
        elif self._depth == 1 and tag == "tr" and self._row is not None:
            if any(cell.text for cell in self._row):
                self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        elif self._depth == 0:
            self.outside += data
