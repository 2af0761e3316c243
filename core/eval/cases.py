"""Evaluation cases (DESIGN section 5): a YAML list, validated strictly so a typo never goes unnoticed.

A conversation is a case with `turns:` instead of `question:`: the asker once, then each turn with the keys of a
case (`question`, `expect`, `support`, `must_include`, ...). Every turn is scored as a case of its own, asked
after the turns before it in one thread; turns after the first are reported apart (`followup_*`). A later turn
gives the standalone question a careful reader takes it for as `reading:`; a later turn without one is a
question of its own, asked in the same thread (a follow-up reader must read it alone).
"""

import difflib
from pathlib import Path
from typing import Any, Final, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.config import ConfigError

Expectation = Literal["answer", "not_in_corpus", "not_retrieved", "not_permitted", "not_answerable", "ambiguous"]
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
        """Same document, and the chunk lies anywhere under this heading: any element of its heading path is
        this heading (any case), so a sub-section or bold lead-in the reader found under it is within it."""
        under = (element.strip().casefold() for element in heading_path.split(" > "))
        return doc_id == self.doc_id and self.heading.casefold() in under

    def __str__(self) -> str:
        return f"{self.doc_id}#{self.heading}"


class Asker(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    roles: list[str] = Field(min_length=1)


class _Asked(BaseModel):
    """The keys of one question: a case's, and each turn's of a conversation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question: str
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
    def _answer_cases_name_their_support(self) -> "_Asked":
        if self.expect == "answer" and not self.support:
            raise ValueError("an answer case needs at least one `support` section")
        return self


class Case(_Asked):
    id: str = Field(min_length=1)
    asker: Asker


class ConversationTurn(_Asked):
    """One turn of a conversation: the keys of a case without `id` and `asker`, and its `reading`."""

    reading: str | None = None
    """The standalone question this follow-up asks (a scripted model's rewrite); absent on a question of its
    own. The first turn has none."""


class Conversation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    asker: Asker
    turns: list[ConversationTurn] = Field(min_length=2)
    tags: list[str] = Field(default_factory=list)
    note: str | None = None

    @model_validator(mode="after")
    def _the_first_turn_stands_alone(self) -> "Conversation":
        if self.turns[0].reading is not None:
            raise ValueError("turns.0.reading: the first turn has no earlier turn to be read against")
        return self

    def case(self, number: int) -> Case:
        """Turn `number` (from 1) as a case of its own: id `c-001/2`, the conversation's asker and tags, and
        the tag `followup` on every turn after the first."""
        turn = self.turns[number - 1]
        tags = [*turn.tags, *self.tags, *(["followup"] if number > 1 else [])]
        fields = turn.model_dump(exclude={"reading", "tags"})
        return Case.model_validate({**fields, "id": f"{self.id}/{number}", "asker": self.asker,
                                    "tags": list(dict.fromkeys(tags))})

    def standalone(self, number: int) -> bool:
        """A later turn that asks a question of its own (no `reading`)."""
        return number > 1 and self.turns[number - 1].reading is None


Item = Case | Conversation


def load_items(path: Path) -> tuple[Item, ...]:
    """Every case and conversation of a YAML case file, in order. Unknown keys, duplicate ids and bad values
    are errors that name the case and the key."""
    items = _read_list(path)
    loaded: list[Item] = []
    seen: set[str] = set()
    for position, item in enumerate(items, start=1):
        case = _validate(path, position, item)
        if case.id in seen:
            raise CaseFileError(f"{path}: case {case.id!r}: duplicate id")
        seen.add(case.id)
        loaded.append(case)
    return tuple(loaded)


def load_cases(path: Path) -> tuple[Case, ...]:
    """Every case of a file of single questions; a conversation there is an error (read it with
    `load_items`, as `sourced eval` does)."""
    items = load_items(path)
    conversations = [item.id for item in items if isinstance(item, Conversation)]
    if conversations:
        raise CaseFileError(f"{path}: case {conversations[0]!r}: a conversation (`turns:`); this reads single "
                            "questions only")
    return tuple(item for item in items if isinstance(item, Case))


def _read_list(path: Path) -> list[object]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise CaseFileError(f"{path}: {error}") from error
    if not isinstance(data, list):
        raise CaseFileError(f"{path}: expected a YAML list of cases")
    return data


def _validate(path: Path, position: int, item: object) -> Item:
    name = repr(item.get("id")) if isinstance(item, dict) and item.get("id") else f"#{position}"
    model: type[Case] | type[Conversation] = Conversation if isinstance(item, dict) and "turns" in item else Case
    try:
        return model.model_validate(item)
    except ValidationError as error:
        errors = error.errors()
        unknown = [e for e in errors if e["type"] == "extra_forbidden"]
        first = (unknown or errors)[0]  # a misspelt key is also a missing one: name the key as written
        where = _where(first)
        if first["type"] == "extra_forbidden":
            missing = [_where(e) for e in errors if e["type"] == "missing" and e["loc"][:-1] == first["loc"][:-1]]
            meant = difflib.get_close_matches(where, missing, n=1)
            hint = f" (a misspelling of {meant[0]!r}?)" if meant else ""
            raise CaseFileError(f"{path}: case {name}: unknown key {where!r}{hint}") from error
        raise CaseFileError(f"{path}: case {name}: {where}: {first['msg']}") from error


def _where(error: Any) -> str:
    return ".".join(str(part) for part in error["loc"]) or "<case>"
