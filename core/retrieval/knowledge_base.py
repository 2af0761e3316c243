"""Loading the knowledge base: a folder of documents (Markdown and text with optional YAML front matter, and
with the `formats` extra PDF, Word, PowerPoint, HTML, CSV and wiki exports), each read by its format's reader
(the one format table, `core.documents.formats`, which the connectors read through too) into the document model;
chunking works on that model whatever the format was.

A document's metadata comes from, in order: its front matter, the first `sources:` rule of sourced.yml that
matches its path (`core.documents.sources`), what the format records (a PDF's title and dates, Office core
properties, an HTML `<title>`, an export's page dates), and last its path (the id, the title from the file
name) and the file's modification time. A bad file never stops the others: it becomes a `LoadError` naming its
path and saying, in one line, what to fix. Loading is deterministic (files sorted by relative path) so
ingestion and its reports are too.
"""

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Any, Final, Literal
from urllib.parse import unquote, urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.documents.bounded import SHARED, ReadingProcess
from core.documents.formats import SUFFIXES, Format, check_size, decoded, format_for, read_file
from core.documents.limits import Unreadable
from core.documents.links import retargeted
from core.documents.markdown import read_markdown
from core.documents.mdx import without_module_lines
from core.documents.model import Document
from core.documents.notion import is_notion_name, read_notion_page, without_id
from core.documents.reading import pieces, render
from core.documents.sources import SourceRule, first_match
from core.domain import EVERYONE
from core.domain.errors import SourceError
from core.domain.text import storable

PAGE_FORMATS: Final[frozenset[Format]] = frozenset({"markdown", "text", "notion"})
"""Formats whose default id is the path without its extension, as it always was; the others keep it
(`report.pdf`, `report.docx`), since an export often stands beside the file it was made from."""
UpdatedFrom = Literal["front matter", "metadata", "file"]
_OURS_CASE_SENSITIVE_FROM: Final = 4
"""Our keys of this length or more are compared for one-edit typos (`audiance`); `id` and `url` would match
too many keys of other sites (`ip`, `uri`)."""
_DOC_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
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
    format: Format = "markdown"
    updated_from: UpdatedFrom | None = None
    """Where `updated` came from: the file's modification time says when it was copied, not edited, so a date
    from it shows the age but never decides which edition supersedes which."""
    ignored_keys: tuple[str, ...] = ()
    """Front-matter keys of other tools (a site generator's `sidebar`, `slug`), read past."""
    origin: str | None = None
    """The connector the document came from (`core.connectors`); None for a file of the knowledge-base folder."""
    source_version: str | None = None
    """The source's version of the item, so an item listed again unchanged is not downloaded again."""
    trail: tuple[str, ...] = ()
    """Where the document stands in its source (a Confluence page's space and ancestors): the root of its
    chunks' heading paths, before the title."""

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
    skipped: tuple[tuple[str, int], ...] = ()
    """Files of types Sourced does not read (a legacy `.doc`, a spreadsheet), by suffix, most first; hidden files
    and folders (`.git`, `.DS_Store`) are not counted."""

    @property
    def ignored_keys(self) -> Counter[str]:
        """Each front-matter key of another tool, and how many files carry it."""
        return Counter(key for document in self.documents for key in document.ignored_keys)

    def notes(self) -> tuple[str, ...]:
        """What an operator is told once per ingest, beside the files' own warnings."""
        notes: list[str] = []
        if self.skipped:
            notes.append(skipped_line(self.skipped))
        if self.ignored_keys:
            keys = ", ".join(f"{key} ({count} {'file' if count == 1 else 'files'})"
                             for key, count in sorted(self.ignored_keys.items()))
            notes.append(f"front-matter keys that are not Sourced's were ignored: {keys}")
        return tuple(notes)


SKIPPED_TYPES_SHOWN: Final = 8
"""Types named in the skipped line; past this, how many more there are."""


def skipped_line(skipped: Sequence[tuple[str, int]]) -> str:
    """One line for the files left unread: `skipped 3 files of types Sourced does not read: .doc (2), .xlsx (1)`.
    A folder of legacy Word files or spreadsheets otherwise ingests as nothing, with no hint why."""
    total = sum(count for _, count in skipped)
    kinds = "a type" if len(skipped) == 1 else "types"
    named = ", ".join(f"{suffix} ({count})" for suffix, count in skipped[:SKIPPED_TYPES_SHOWN])
    more = len(skipped) - SKIPPED_TYPES_SHOWN
    if more > 0:
        named += f" and {more} more {'type' if more == 1 else 'types'}"
    return f"skipped {total} {'file' if total == 1 else 'files'} of {kinds} Sourced does not read: {named}"


class FrontMatter(BaseModel):
    """The YAML header of a document (DESIGN section 5). Keys of other tools are read past by `_front_matter`
    (and listed once per ingest); a key one typo away from ours is an error, since a mistyped `audience` would
    open a restricted document to everyone."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    id: str | None = Field(default=None, min_length=1)
    title: str | None = Field(default=None, min_length=1)
    owner: str | None = Field(default=None, min_length=1)
    audience: list[str] = Field(default_factory=lambda: [EVERYONE])
    updated: date | None = None
    url: str | None = Field(default=None, min_length=1)
    supersedes: list[str] = Field(default_factory=list)
    """Ids of the documents this one replaces. Only metadata declares it: a sentence in a page's text ("This page
    supersedes ...") is content anyone who edits the page wrote, and never retires another document."""

    @field_validator("id")
    @classmethod
    def _safe_id(cls, value: str | None) -> str | None:
        if value is not None and not _DOC_ID.fullmatch(value):
            raise ValueError("use ASCII letters, digits and . _ - / only, starting with a letter or digit")
        return value

    @field_validator("supersedes")
    @classmethod
    def _safe_ids(cls, value: list[str]) -> list[str]:
        for doc_id in value:
            if not _DOC_ID.fullmatch(doc_id):
                raise ValueError(f"{doc_id!r} is not a document id (ASCII letters, digits and . _ - /)")
        return value

    @field_validator("audience")
    @classmethod
    def _some_role(cls, value: list[str]) -> list[str]:
        roles = [role.strip() for role in value if role.strip()]
        if not roles:
            raise ValueError("needs at least one role (default: [everyone])")
        return roles


class InvalidDocument(SourceError, ValueError):
    """Why one file cannot be loaded; the message is the one-line reason of its `LoadError`."""


Progress = Callable[[Path], None]
"""Told each file's relative path as it is read (a progress bar)."""


def load_knowledge_base(root: Path, *, rules: Sequence[SourceRule] = (), progress: Progress | None = None,
                        process: ReadingProcess = SHARED) -> LoadResult:
    """Every document file under `root`, recursively, in path order; bad files become errors. Formats other than
    Markdown are read in `process`, under its limits (`core.documents.bounded`)."""
    documents: list[SourceDocument] = []
    errors: list[LoadError] = []
    seen: dict[str, Path] = {}
    inside = root.resolve()
    for path in _source_files(root):
        relative = path.relative_to(root)
        if progress is not None:
            progress(relative)
        try:
            _check_place(path, inside, relative)
            document = _load_file(path, relative, tuple(rules), process)
        except (InvalidDocument, Unreadable) as error:
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
    return LoadResult(documents=_with_supersession(_with_resolved_links(documents)), errors=tuple(errors),
                      skipped=skipped_types(root))


def count_source_files(root: Path) -> int:
    return len(_source_files(root))


NO_SUFFIX: Final = "(no extension)"


def skipped_types(root: Path) -> tuple[tuple[str, int], ...]:
    """The files under `root` whose type Sourced does not read, counted by suffix (most first, then by name).
    Hidden files and anything in a hidden folder are left out: they are a tool's, not a document."""
    counts: Counter[str] = Counter()
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts) or path.suffix.lower() in SUFFIXES:
            continue
        if path.is_file():
            counts[path.suffix.lower() or NO_SUFFIX] += 1
    return tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _source_files(root: Path) -> list[Path]:
    if not root.is_dir():
        raise NotADirectoryError(f"knowledge base folder not found: {root}")
    files = [p for p in root.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file()]
    names = {p.relative_to(root).as_posix() for p in files}
    files = [p for p in files if not _view_copy(p.relative_to(root), names)]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _view_copy(relative: Path, names: set[str]) -> bool:
    """A Notion database's "_all.csv", which repeats the rows of the ".csv" beside it."""
    name = relative.as_posix()
    return name.endswith("_all.csv") and name.removesuffix("_all.csv") + ".csv" in names


def _check_place(path: Path, inside: Path, relative: Path) -> None:
    """Found by fuzzing: a symbolic link was followed wherever it led (`ln -s /etc/passwd kb/x.txt` ingested
    the file for everyone), and a name that is not UTF-8 could not be stored."""
    if not path.resolve().is_relative_to(inside):
        raise InvalidDocument("is a link to a file outside the knowledge-base folder; copy the file in instead")
    try:
        relative.as_posix().encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidDocument("the file name is not valid UTF-8; rename the file") from None


@dataclass(frozen=True, kw_only=True)
class _Read:
    """A file as its reader read it, before the metadata rules: the model, the text and its front matter."""

    structure: Document
    body: str
    body_line: int
    meta: "FrontMatter"
    format: Format
    ignored_keys: tuple[str, ...] = ()


def _load_file(path: Path, relative: Path, rules: tuple[SourceRule, ...], process: ReadingProcess
               ) -> SourceDocument:
    found = format_for(path.suffix)
    read = (_read_page(path, relative) if found.in_process
            else _read_structure(read_file(path, process=process), _stored_format(found.name, relative)))
    meta = read.meta
    doc_id = meta.id or default_doc_id(relative) + ("" if read.format in PAGE_FORMATS else path.suffix.lower())
    posix = PurePosixPath(relative.as_posix())
    rule = first_match(rules, posix)
    updated, updated_from = _updated(meta, read.structure, path)
    audience = (meta.audience if "audience" in meta.model_fields_set
                else list(rule.audience) if rule is not None and rule.audience else meta.audience)
    return SourceDocument(
        doc_id=doc_id,
        path=relative,
        title=meta.title or read.structure.title or _file_title(relative),
        owner=meta.owner or (rule.owner if rule is not None else None),
        audience=frozenset(audience),
        updated=updated,
        updated_from=updated_from,
        url=meta.url or (rule.url_for(posix, doc_id) if rule is not None else None),
        body=read.body,
        file_sha256=_file_sha256(path),
        body_line=read.body_line,
        structure=read.structure,
        format=read.format,
        ignored_keys=read.ignored_keys,
        supersedes=tuple(meta.supersedes if "supersedes" in meta.model_fields_set
                         else rule.supersedes if rule is not None else ()),
    )


def _read_page(path: Path, relative: Path) -> _Read:
    """A Markdown or text file: its front matter, then its body (a Notion export's page as such)."""
    check_size(path.stat().st_size, path.suffix)
    text = decoded(path.read_bytes())
    header, body = _split_front_matter(text)
    meta, ignored = _front_matter(header)
    words = without_module_lines(body)
    body_line = len(text[: len(text) - len(body)].splitlines()) + 1  # as `instruction_lines` splits them
    kind = format_for(path.suffix).name
    if _notion_name(relative):
        structure, kind = read_notion_page(words), "notion"
    else:
        structure = read_markdown(words, first_line=body_line)
    return _Read(structure=structure, body=body, meta=meta, format=kind, ignored_keys=ignored, body_line=body_line)


def _stored_format(name: Format, relative: Path) -> Format:
    """A Notion export's database is stored as `notion`, as its pages are."""
    return "notion" if name == "csv" and _notion_name(relative) else name


def _read_structure(structure: Document, kind: Format) -> _Read:
    """A format without front matter: its text for the instruction and supersession checks is its reading form,
    one section after another."""
    body = "\n\n".join(render(pieces(section.blocks)).text for section in structure.sections)
    if not body.strip():
        raise Unreadable("holds no text to read")
    return _Read(structure=structure, body=body, body_line=1, meta=FrontMatter(), format=kind)


def _notion_name(relative: Path) -> bool:
    return is_notion_name(PurePosixPath(relative.as_posix()))


def _file_title(relative: Path) -> str:
    """The file name as a title, without a Notion page id."""
    return without_id(relative.stem)


def _updated(meta: "FrontMatter", structure: Document, path: Path) -> tuple[date, UpdatedFrom]:
    if meta.updated is not None:
        return meta.updated, "front matter"
    if structure.updated is not None:
        return structure.updated, "metadata"
    return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).date(), "file"


def _file_sha256(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def _with_resolved_links(documents: list[SourceDocument]) -> list[SourceDocument]:
    """Links between files of the knowledge base (a wiki export's pages, a page's attachment) pointed at the
    document they name: its `url` where it has one, else its path in the knowledge base."""
    by_path = {document.path.as_posix(): document for document in documents}
    resolved = []
    for document in documents:
        folder = PurePosixPath(document.path.as_posix()).parent
        structure = document.content

        def retarget(target: str, folder: PurePosixPath = folder) -> str:
            return _internal_target(target, folder, by_path) or target

        changed = retargeted(structure, retarget)
        resolved.append(document if changed == structure else replace(document, structure=changed))
    return resolved


def _internal_target(target: str, folder: PurePosixPath, by_path: dict[str, SourceDocument]) -> str | None:
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path or parts.path.startswith("/"):
        return None
    path = _normalised(folder / unquote(parts.path))
    document = by_path.get(path) if path is not None else None
    if document is None:
        return None
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    return (document.url or document.path.as_posix()) + fragment


def _normalised(path: PurePosixPath) -> str | None:
    """`a/b/../c.html` as `a/c.html`; None when it climbs out of the knowledge base."""
    kept: list[str] = []
    for part in path.parts:
        if part == "..":
            if not kept:
                return None
            kept.pop()
        elif part not in (".", ""):
            kept.append(part)
    return "/".join(kept)


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


def _front_matter(header: str | None) -> tuple[FrontMatter, tuple[str, ...]]:
    """Our keys validated, and the other tools' keys read past (returned, to be listed once per ingest)."""
    if header is None:
        return FrontMatter(), ()
    data = _parse_yaml(header)
    ours = {key: value for key, value in data.items() if key in FrontMatter.model_fields}
    others = tuple(key for key in data if key not in ours)
    for key in others:
        near = _near_miss(key)
        if near is not None:
            raise InvalidDocument(f"front-matter key {key!r} looks like a typo of {near!r}; a mistyped key would "
                                  f"be ignored, so it is refused (allowed: {', '.join(FrontMatter.model_fields)})")
    empty = [key for key, value in ours.items() if value is None]
    if empty:
        raise InvalidDocument(f"front-matter key {empty[0]!r} has no value (quote values that start with "
                              f"'#', e.g. owner: \"#finance-ops\")")
    try:
        return FrontMatter.model_validate(ours), others
    except ValidationError as error:
        raise InvalidDocument(_describe(error)) from None


def _near_miss(key: str) -> str | None:
    """Our key that `key` is one edit (a letter added, dropped, changed or two swapped) or a case away from."""
    for ours in FrontMatter.model_fields:
        if key.casefold() == ours or (len(ours) >= _OURS_CASE_SENSITIVE_FROM and _one_edit(key.casefold(), ours)):
            return ours
    return None


def _one_edit(a: str, b: str) -> bool:
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        differ = [index for index in range(len(a)) if a[index] != b[index]]
        return len(differ) == 1 or (len(differ) == 2 and differ[1] == differ[0] + 1
                                    and a[differ[0]] == b[differ[1]] and a[differ[1]] == b[differ[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:index] + long[index + 1:] == short for index in range(len(long)))


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


def _with_supersession(documents: list[SourceDocument]) -> tuple[SourceDocument, ...]:
    """Record, for each document, the other documents it supersedes: those its metadata (front matter or its
    `sources:` rule) names, and older documents on the same subject (`subject_key` of the title). Its text is
    never read for this: "This page supersedes ..." in a body is content, not a declaration."""
    known = {document.doc_id.lower(): document.doc_id for document in documents}
    newer = older_editions(documents)
    resolved = []
    for document in documents:
        stated = declared_ids(document.supersedes, known, own_id=document.doc_id)
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
        if document.updated is not None and document.updated_from != "file" and subject_key(document.title):
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


def declared_ids(declared: Sequence[str], known: dict[str, str], *, own_id: str) -> tuple[str, ...]:
    """The ids metadata declares superseded that name another known document (`known` maps lower-cased ids to
    ids), in the order declared, each once."""
    found: dict[str, None] = {}
    for candidate in declared:
        doc_id = known.get(candidate.lower())
        if doc_id is not None and doc_id != own_id:
            found[doc_id] = None
    return tuple(found)
