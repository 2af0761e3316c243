"""Evaluation cases (DESIGN section 5): a YAML list, validated strictly so a typo never goes unnoticed."""

from pathlib import Path
from typing import Final, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.config import ConfigError

Expectation = Literal["answer", "not_in_corpus", "not_permitted", "not_answerable", "ambiguous"]
EXPECTATIONS: Final[tuple[Expectation, ...]] = get_args(Expectation)

Alternatives = str | list[str]


class CaseFileError(ConfigError):
    """A case file cannot be read or a case is invalid; the message names the file, the case and the key."""


class Section(BaseModel):
    """A supporting section, written `doc-id#Heading text` in a case."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    doc_id: str
    heading: str

    @classmethod
    def parse(cls, reference: str) -> "Section":
        doc_id, sep, heading = reference.partition("#")
        if not sep or not doc_id.strip() or not heading.strip():
            raise ValueError(f"{reference!r} is not of the form 'doc-id#Heading text'")
        return cls(doc_id=doc_id.strip(), heading=heading.strip())

    def matches(self, doc_id: str, heading_path: str) -> bool:
        """Same document, and the last element of the chunk's heading path is this heading (any case)."""
        last = heading_path.rsplit(" > ", maxsplit=1)[-1].strip()
        return doc_id == self.doc_id and last.casefold() == self.heading.casefold()

    def __str__(self) -> str:
        return f"{self.doc_id}#{self.heading}"


class Asker(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    roles: list[str] = Field(min_length=1)


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    question: str
    asker: Asker
    expect: Expectation
    support: list[Section] = Field(default_factory=list)
    must_include: list[Alternatives] = Field(default_factory=list)
    answer_doc: str | None = None
    owner: str | None = None
    candidates: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    note: str | None = None

    @field_validator("support", mode="before")
    @classmethod
    def _parse_sections(cls, value: object) -> object:
        if isinstance(value, list):
            return [Section.parse(item) if isinstance(item, str) else item for item in value]
        return value

    @model_validator(mode="after")
    def _answer_cases_name_their_support(self) -> "Case":
        if self.expect == "answer" and not self.support:
            raise ValueError("an answer case needs at least one `support` section")
        return self


def load_cases(path: Path) -> tuple[Case, ...]:
    """Every case of a YAML case file, in order. Unknown keys, duplicate ids and bad values are errors."""
    items = _read_list(path)
    cases: list[Case] = []
    seen: set[str] = set()
    for position, item in enumerate(items, start=1):
        case = _validate(path, position, item)
        if case.id in seen:
            raise CaseFileError(f"{path}: case {case.id!r}: duplicate id")
        seen.add(case.id)
        cases.append(case)
    return tuple(cases)


def _read_list(path: Path) -> list[object]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise CaseFileError(f"{path}: {error}") from error
    if not isinstance(data, list):
        raise CaseFileError(f"{path}: expected a YAML list of cases")
    return data


def _validate(path: Path, position: int, item: object) -> Case:
    name = repr(item.get("id")) if isinstance(item, dict) and item.get("id") else f"#{position}"
    try:
        return Case.model_validate(item)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "<case>"
        if first["type"] == "extra_forbidden":
            raise CaseFileError(f"{path}: case {name}: unknown key {where!r}") from error
        raise CaseFileError(f"{path}: case {name}: {where}: {first['msg']}") from error
