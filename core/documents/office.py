"""What Office files (`.docx`, `.pptx`, both zips of XML) say about themselves: the title and last-modified day
of their core properties (`docProps/core.xml`), read with the standard library after `check_zip`."""

import zipfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Final
from xml.etree import ElementTree

from core.documents.html_tree import parse_day
from core.documents.limits import Unreadable

CORE_PROPERTIES: Final = "docProps/core.xml"
_NAMESPACES: Final = {"dc": "http://purl.org/dc/elements/1.1/", "dcterms": "http://purl.org/dc/terms/"}
_PLACEHOLDER_TITLES: Final = frozenset({"", "untitled", "powerpoint presentation", "presentation", "document",
                                        "slide 1", "title"})
"""Titles tools write when the author set none."""


@dataclass(frozen=True, kw_only=True)
class CoreProperties:
    title: str | None = None
    modified: date | None = None


def core_properties(path: Path) -> CoreProperties:
    """The title (unless a tool's placeholder) and the last-modified day, else the created day."""
    try:
        with zipfile.ZipFile(path) as archive:
            if CORE_PROPERTIES not in archive.namelist():
                return CoreProperties()
            root = ElementTree.fromstring(archive.read(CORE_PROPERTIES))
    except (zipfile.BadZipFile, ElementTree.ParseError, KeyError):
        raise Unreadable(f"its {CORE_PROPERTIES} is damaged") from None
    title = " ".join((root.findtext("dc:title", default="", namespaces=_NAMESPACES) or "").split())
    modified = (root.findtext("dcterms:modified", default="", namespaces=_NAMESPACES)
                or root.findtext("dcterms:created", default="", namespaces=_NAMESPACES) or "")
    return CoreProperties(title=None if title.casefold() in _PLACEHOLDER_TITLES else title,
                          modified=parse_day(modified))
