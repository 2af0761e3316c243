"""Metadata by path (`sources:` in sourced.yml): the owner, audience, link and supersession of documents
that carry no front matter (a PDF, a wiki export), by globs relative to the knowledge-base root. The first rule
that matches a file is its rule; the file's own front matter, where it has one, overrides it key by key.

Globs: `*` is any run of characters within one folder or file name, `?` one character, `**` any number of
folders (`hr/**` is everything under `hr/`, `**/*.pdf` every PDF). A glob matches the whole relative path: `*.pdf`
is the PDFs at the root only.
"""

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import PurePosixPath
from typing import Final

URL_FIELDS: Final = ("stem", "name", "path", "id")
"""What a rule's `url` template may name: the file's stem, its name, its path without extension, its id."""


@dataclass(frozen=True, kw_only=True)
class SourceRule:
    path: str
    owner: str | None = None
    audience: tuple[str, ...] | None = None
    url: str | None = None
    supersedes: tuple[str, ...] = ()
    """Ids of the documents the matched files replace: metadata, never read from a document's text."""

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        return glob_pattern(self.path)

    def matches(self, relative: PurePosixPath) -> bool:
        return self._pattern.fullmatch(relative.as_posix()) is not None

    def url_for(self, relative: PurePosixPath, doc_id: str) -> str | None:
        if self.url is None:
            return None
        return self.url.format(stem=relative.stem, name=relative.name,
                               path=relative.with_suffix("").as_posix(), id=doc_id)


def glob_pattern(glob: str) -> re.Pattern[str]:
    """A glob as a regular expression over a relative POSIX path."""
    parts: list[str] = []
    index = 0
    while index < len(glob):
        if glob.startswith("**/", index):
            parts.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            parts.append(".*")
            index += 2
        elif glob[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            parts.append("[^/]")
            index += 1
        else:
            parts.append(re.escape(glob[index]))
            index += 1
    return re.compile("".join(parts))


def first_match(rules: tuple[SourceRule, ...], relative: PurePosixPath) -> SourceRule | None:
    return next((rule for rule in rules if rule.matches(relative)), None)
