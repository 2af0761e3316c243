"""Loading the knowledge base: a folder of Markdown and text files with optional YAML front matter.

Each file is read by a parser into the document model (`core.documents`); chunking works on that model. A bad
file never stops the others: it becomes a `LoadError` naming its path and saying, in one line, what
to fix. Loading is deterministic (files sorted by relative path) so ingestion and its reports are too.
"""

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from functools import cached_property
from pathlib import Path
from typing import Any, Final

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.documents.markdown import read_markdown
from core.documents.model import Document
from core.domain import EVERYONE
from core.domain.text import storable

SUFFIXES: Final = frozenset({".md", ".txt"})
MAX_FILE_BYTES: Final = 10_000_000
"""A handbook page is kilobytes; past this a file is an export or a mistake, and would stall the chunker."""
SUPERSESSION_REACH: Final = 120
"""How far after the word "supersedes" a document id may appear and still be what is superseded."""

_DOC_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
_SUPERSEDES: Final = re.compile(r"\bsupersedes\b", re.IGNORECASE)
_ID_TAIL: Final = re.compile(r"[A-Za-z0-9._/-]*")
_EDITION: Final = re.compile(r"\((?=[^)]*\d)[^)]*\)|\b(?:19|20)\d{2}\b|\b(?:v|version|rev|revision)\s*\d+(?:\.\d+)*\b")


@dataclass(frozen=True, kw_only=True)
class SourceDocument:
    """One document, ready to chunk. `path` is relative to the knowledge-base root."""

    doc_id: str
    path: Path
    title: str
    owner: str | None
    audience: frozenset[str]
    updated: date | None
    url: str | None
    body: str
    file_sha256: str
    supersedes: tuple[str, ...] = ()
    body_line: int = 1
    """The file's line number of the body's first line (after any front matter), for messages."""
    structure: Document | None = None
    """The document as its format's reader read it; None for a Markdown body read on first use."""

    @cached_property
    def content(self) -> Document:
        return self.structure if self.structure is not None else read_markdown(self.body)

    @property
    def warnings(self) -> tuple[str, ...]:
        """What reading the file left out, each with its place: worth telling the page's owner."""
        return self.content.warnings


@dataclass(frozen=True, kw_only=True)
class LoadError:
    """A file that could not be loaded, and why, in words its author can act on."""

    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True, kw_only=True)
class LoadResult:
    documents: tuple[SourceDocument, ...]
    errors: tuple[LoadError, ...]


class FrontMatter(BaseModel):
    """The YAML header of a document (DESIGN section 5). Unknown keys are errors: a typo must not pass."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    id: str | None = Field(default=None, min_length=1)
    title: str | None = Field(default=None, min_length=1)
    owner: str | None = Field(default=None, min_length=1)
    audience: list[str] = Field(default_factory=lambda: [EVERYONE])
    updated: date | None = None
    url: str | None = Field(default=None, min_length=1)

    @field_validator("id")
    @classmethod
    def _safe_id(cls, value: str | None) -> str | None:
        if value is not None and not _DOC_ID.fullmatch(value):
            raise ValueError("use ASCII letters, digits and . _ - / only, starting with a letter or digit")
        return value

    @field_validator("audience")
    @classmethod
    def _some_role(cls, value: list[str]) -> list[str]:
        roles = [role.strip() for role in value if role.strip()]
        if not roles:
            raise ValueError("needs at least one role (default: [everyone])")
        return roles


class InvalidDocument(ValueError):
    """Why one file cannot be loaded; the message is the one-line reason of its `LoadError`."""


def load_knowledge_base(root: Path) -> LoadResult:
    """Every `.md` and `.txt` file under `root`, recursively, in path order; bad files become errors."""
    documents: list[SourceDocument] = []
    errors: list[LoadError] = []
    seen: dict[str, Path] = {}
    inside = root.resolve()
    for path in _source_files(root):
        relative = path.relative_to(root)
        try:
            _check_place(path, inside, relative)
            document = _load_file(path, relative)
        except InvalidDocument as error:
            errors.append(LoadError(path=relative, reason=str(error)))
            continue
        except OSError as error:  # unreadable, or gone since it was listed: that file's error, not the run's
            errors.append(LoadError(path=relative, reason=f"could not be read ({error.strerror or error})"))
            continue
        if document.doc_id in seen:
            reason = f"document id {document.doc_id!r} is already used by {seen[document.doc_id]}"
            errors.append(LoadError(path=relative, reason=reason))
            continue
        seen[document.doc_id] = relative
        documents.append(document)
    return LoadResult(documents=_with_supersession(documents), errors=tuple(errors))


def _source_files(root: Path) -> list[Path]:
    if not root.is_dir():
        raise NotADirectoryError(f"knowledge base folder not found: {root}")
    files = (p for p in root.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _check_place(path: Path, inside: Path, relative: Path) -> None:
    """Found by fuzzing: a symbolic link was followed wherever it led (`ln -s /etc/passwd kb/x.txt` ingested
    the file for everyone), and a name that is not UTF-8 could not be stored."""
    if not path.resolve().is_relative_to(inside):
        raise InvalidDocument("is a link to a file outside the knowledge-base folder; copy the file in instead")
    try:
        relative.as_posix().encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidDocument("the file name is not valid UTF-8; rename the file") from None
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise InvalidDocument(f"is {size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit for one document; "
                              f"split it into smaller files")


def _load_file(path: Path, relative: Path) -> SourceDocument:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        raise InvalidDocument(f"not UTF-8 text (invalid byte at offset {error.start}); save it as UTF-8"
                              ) from None
    if "\x00" in text:  # valid UTF-8 but binary (an image, a database); PostgreSQL cannot store NUL either
        raise InvalidDocument(f"holds a NUL byte at offset {raw.index(0)}: a binary file, not text")
    header, body = _split_front_matter(text)
    meta = _front_matter(header)
    body_line = len(text[: len(text) - len(body)].splitlines()) + 1  # as `instruction_lines` splits them
    structure = read_markdown(body, first_line=body_line)
    return SourceDocument(
        doc_id=meta.id or default_doc_id(relative),
        path=relative,
        title=meta.title or structure.title or relative.stem,
        owner=meta.owner,
        audience=frozenset(meta.audience),
        updated=meta.updated,
        url=meta.url,
        body=body,
        file_sha256=hashlib.sha256(raw).hexdigest(),
        body_line=body_line,
        structure=structure,
    )


def default_doc_id(relative: Path) -> str:
    """The relative path without its extension, "/" kept, each part made ASCII and space-free."""
    parts = [_id_part(part) for part in relative.with_suffix("").parts]
    return "/".join(part for part in parts if part) or "document"


def _id_part(part: str) -> str:
    ascii_part = unicodedata.normalize("NFKD", part).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^A-Za-z0-9._-]+", "-", ascii_part).strip("-.")


def _split_front_matter(text: str) -> tuple[str | None, str]:
    """The YAML between a first line `---` and the next `---` (or `...`) line, and the body after it."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() in ("---", "..."):
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise InvalidDocument("front matter starts with '---' but has no closing '---' line")


def _front_matter(header: str | None) -> FrontMatter:
    if header is None:
        return FrontMatter()
    data = _parse_yaml(header)
    empty = [key for key, value in data.items() if value is None]
    if empty:
        raise InvalidDocument(f"front-matter key {empty[0]!r} has no value (quote values that start with "
                              f"'#', e.g. owner: \"#finance-ops\")")
    try:
        return FrontMatter.model_validate(data)
    except ValidationError as error:
        raise InvalidDocument(_describe(error)) from None


def _parse_yaml(header: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(header)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""  # +1 for 0-based, +1 for '---'
        problem = getattr(error, "problem", None) or "invalid syntax"
        raise InvalidDocument(f"front matter is not valid YAML{where}: {problem}") from None
    except RecursionError:  # found by fuzzing: `[[[[...` a few thousand deep overflows PyYAML's composer
        raise InvalidDocument("front matter is not valid YAML: nested too deeply") from None
    except ValueError as error:  # found by fuzzing: `updated: 2026-13-45` is a YAML date PyYAML cannot build
        raise InvalidDocument(f"front matter is not valid YAML: {error}") from None
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(key, str) for key in data):
        raise InvalidDocument("front matter must be a mapping of keys to values")
    for key, value in data.items():
        if any(isinstance(item, str) and not storable(item) for item in (value if isinstance(value, list)
                                                                            else [value])):
            raise InvalidDocument(f"front-matter key {key!r} holds a NUL or half a surrogate pair (a YAML "
                                  f"escape such as \\0 or \\ud800), not text")
    return data


def _describe(error: ValidationError) -> str:
    """The first problem, in words: which key, and what is wrong with it."""
    first = error.errors()[0]
    key = ".".join(str(part) for part in first["loc"]) or "front matter"
    if first["type"] == "extra_forbidden":
        allowed = ", ".join(FrontMatter.model_fields)
        return f"unknown front-matter key {key!r} (allowed: {allowed})"
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"front-matter key {key!r}: {message}"


def _reach(body: str, start: int) -> str:
    """The text after "supersedes" that may name what is superseded; an id cut at the limit is completed."""
    end = start + SUPERSESSION_REACH
    cut = _ID_TAIL.match(body, end)
    tail = cut.group(0) if cut else ""
    return (body[start:end] + tail).split("\n\n", 1)[0]


def _with_supersession(documents: list[SourceDocument]) -> tuple[SourceDocument, ...]:
    """Record, for each document, the other documents it supersedes: those its body says it supersedes, and
    older documents on the same subject (`subject_key` of the title)."""
    known = {document.doc_id.lower(): document.doc_id for document in documents}
    newer = older_editions(documents)
    resolved = []
    for document in documents:
        stated = superseded_ids(document.body, known, own_id=document.doc_id)
        implied = tuple(other for other in newer.get(document.doc_id, ()) if other not in stated)
        resolved.append(replace(document, supersedes=stated + implied))
    return tuple(resolved)


def subject_key(title: str) -> str:
    """A title without what tells editions apart: years, versions, and parentheses holding them.
    "Travel Policy (2024)" and "Travel Policy v2" are both "travel policy"."""
    plain = _EDITION.sub(" ", title.casefold())
    return " ".join(re.sub(r"[^\w\s]", " ", plain).split())


def older_editions(documents: Sequence[SourceDocument]) -> dict[str, tuple[str, ...]]:
    """For each dated document, the dated documents on the same subject strictly older than it, newest first.

    Pairwise, so whether one edition supersedes another depends on the two alone: a third edition (one the
    asker may not see, say) never changes it. A "newest of the subject" rule would: a restricted edition dated
    the same day as the newest permitted one would make it a tie, and the older permitted edition current again,
    telling the asker that the restricted one exists. Two editions of the same day supersede neither.
    """
    by_subject: dict[str, list[SourceDocument]] = {}
    for document in documents:
        if document.updated is not None and subject_key(document.title):
            by_subject.setdefault(subject_key(document.title), []).append(document)
    older: dict[str, tuple[str, ...]] = {}
    for editions in by_subject.values():
        editions.sort(key=lambda document: (document.updated or date.min, document.doc_id), reverse=True)
        for document in editions:
            superseded = tuple(other.doc_id for other in editions
                               if other.updated is not None and document.updated is not None
                               and other.updated < document.updated)
            if superseded:
                older[document.doc_id] = superseded
    return older


def superseded_ids(body: str, known: dict[str, str], *, own_id: str) -> tuple[str, ...]:
    """Ids of known documents named within `SUPERSESSION_REACH` characters after "supersedes".

    `known` maps lower-cased ids to ids. A paragraph break ends the reach: the next paragraph is about
    something else. "superseded by" is the opposite relation and does not match.
    """
    found: dict[str, None] = {}
    for match in _SUPERSEDES.finditer(body):
        reach = _reach(body, match.end())
        for candidate in _DOC_ID.findall(reach):
            doc_id = known.get(candidate.rstrip("._/-").lower())
            if doc_id is not None and doc_id != own_id:
                found[doc_id] = None
    return tuple(found)
