"""What a format reader refuses, and why: the one exception every reader raises for a file it cannot read, and
the bounds that keep a hostile file (a zip bomb named `.docx`, a 200 MB upload) from exhausting memory.

A refusal is one line naming the reason in words the file's owner can act on; the loader puts the path in front.
"""

import zipfile
from pathlib import Path
from typing import Final

from core.domain.errors import SourceError
from core.install import install_extra

MAX_UNPACKED_BYTES: Final = 200_000_000
"""What an Office file (a zip) may unpack to in all: a 300-page report with its images is tens of megabytes."""
MAX_PACKING_RATIO: Final = 200
"""A member that unpacks to more than this many times its packed size, past `RATIO_FLOOR`, is a zip bomb: XML
packs 10 to 30 times, an image not at all."""
RATIO_FLOOR: Final = 10_000_000
MAX_MEMBERS: Final = 20_000


class Unreadable(SourceError, ValueError):
    """A file its format's reader cannot read; the message is the reason, in one line."""


class FormatSupportMissing(Unreadable):
    """The file's format needs a library of the `formats` extra that is not installed."""

    def __init__(self, suffix: str, library: str) -> None:
        super().__init__(f"reading {suffix} files needs {library!r}, which is not installed: "
                         f"{install_extra('formats')}")


def check_zip(path: Path, kind: str) -> None:
    """Refuse an Office file that is not a sound zip, or that would unpack past the bounds, before any library
    reads a member of it."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError):
        raise Unreadable(f"is not a valid {kind} file (its zip container is damaged or truncated)") from None
    if len(members) > MAX_MEMBERS:
        raise Unreadable(f"holds {len(members):,} parts, over the {MAX_MEMBERS:,} a {kind} file may have")
    unpacked = sum(member.file_size for member in members)
    if unpacked > MAX_UNPACKED_BYTES:
        raise Unreadable(f"would unpack to {unpacked:,} bytes, over the {MAX_UNPACKED_BYTES:,}-byte limit "
                         f"(a zip bomb, or not a document)")
    for member in members:
        if member.file_size > RATIO_FLOOR and member.file_size > MAX_PACKING_RATIO * max(1, member.compress_size):
            raise Unreadable(f"part {member.filename!r} unpacks {member.file_size // max(1, member.compress_size):,}"
                             f" times its size (a zip bomb)")
