"""A Notion export (Export > Markdown & CSV) read into the document model.

Notion names every file after its page and the page's id ("Travel policy 0f3a...e9.md", a folder of the same
name for its sub-pages, "Expenses 9b2c...41.csv" for a database, with a "..._all.csv" beside it holding every
view's rows). A page is Markdown, read by the Markdown reader; its title is its first heading, or the file name
without the id. A database is a table, its first row the header, so each record reads as a row with its
headers. The "Last edited time" property, where the page or database shows it, is its `updated`.
"""

import csv
import io
import re
from dataclasses import replace
from datetime import date
from pathlib import PurePath
from typing import Final

from core.documents.html_tree import parse_day, parse_written_day
from core.documents.limits import Unreadable
from core.documents.markdown import read_markdown
from core.documents.model import Document, Section, Table, Text

NOTION_ID: Final = re.compile(r"\s+[0-9a-f]{32}$")
"""The page id Notion appends to a file or folder name."""
_EDITED: Final = re.compile(r"^(?:last edited time|last edited|updated|last updated)\s*:\s*(.+)$",
                            re.IGNORECASE | re.MULTILINE)
_PROPERTY: Final = re.compile(r"^[A-Z][\w ]{0,40}: \S")
_TIMES: Final = re.compile(r"^(?:last edited time|last edited|created time|created|last updated|updated)\s*:",
                           re.IGNORECASE)
_WRITTEN_DAYS: Final = ("%B %d, %Y %I:%M %p", "%B %d, %Y", "%b %d, %Y %I:%M %p", "%b %d, %Y", "%d/%m/%Y",
                        "%Y/%m/%d")
_EDITED_COLUMNS: Final = ("last edited time", "last edited", "updated", "last updated")
MAX_CELL_CHARS: Final = 10_000


def is_notion_name(path: PurePath) -> bool:
    """Does the file (or a folder it is in) carry a Notion page id in its name?"""
    return any(NOTION_ID.search(PurePath(part).stem if index == len(path.parts) - 1 else part)
               for index, part in enumerate(path.parts))


def without_id(name: str) -> str:
    """"Travel policy 0f3a...e9" as "Travel policy"."""
    return NOTION_ID.sub("", name).strip() or name


def read_notion_page(body: str) -> Document:
    edited = _EDITED.search(body[:4000])
    document = read_markdown(_properties_apart(body))
    return replace(document, updated=_day(edited.group(1)) if edited else None)


def _properties_apart(body: str) -> str:
    """The page's properties (the "Owner: IT Desk" lines Notion writes under the title) each a paragraph of
    its own, so one never runs into the next; the edit times are metadata and go."""
    lines = body.split("\n")
    start = next((index + 1 for index, line in enumerate(lines) if line.startswith("# ")), 0)
    index = start
    while index < len(lines) and not lines[index].strip():
        index += 1
    kept = lines[:index]
    while index < len(lines) and _PROPERTY.match(lines[index]):
        if not _TIMES.match(lines[index]):
            kept += [lines[index], ""]
        index += 1
    return "\n".join(kept + lines[index:])


def read_csv(text: str) -> Document:
    """A table of records (a Notion database, a spreadsheet saved as CSV): the first row is the header."""
    csv.field_size_limit(MAX_CELL_CHARS)
    try:
        rows = [row for row in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in row)]
    except csv.Error as error:
        raise Unreadable(f"is not valid CSV ({error})") from None
    if not rows:
        return Document(sections=())
    header, *body = rows
    table = Table(header=tuple(_cell(cell) for cell in header), rows=tuple(tuple(_cell(cell) for cell in row)
                                                                          for row in body))
    return Document(sections=(Section(headings=(), blocks=(table,)),), updated=_latest_edit(header, body))


def _cell(text: str) -> Text:
    return Text(text=" ".join(text.split()))


def _latest_edit(header: list[str], rows: list[list[str]]) -> date | None:
    columns = [index for index, name in enumerate(header) if name.strip().casefold() in _EDITED_COLUMNS]
    days = [day for row in rows for index in columns if index < len(row) and (day := _day(row[index]))]
    return max(days) if days else None


def _day(text: str) -> date | None:
    return parse_day(text) or parse_written_day(text.strip(), _WRITTEN_DAYS)
