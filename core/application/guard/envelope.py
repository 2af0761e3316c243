"""The model's answer envelope, and the verifier's verdict: each exactly one strict JSON object, nothing around
it, no extra field."""

import json
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.application.language.markers import without_markers
from core.domain.errors import ModelError


class EnvelopeClaim(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    text: str = Field(min_length=1)
    """What the answer says, without citation-looking markers: the answer's markers come from code alone."""
    chunk_ids: list[str] = Field(min_length=1)
    quote: str | None = None
    """The verbatim span of a cited chunk that states the claim. Optional so that a model answering under an
    older prompt still parses; such a claim is checked against its best-aligned sentence instead."""

    @field_validator("text")
    @classmethod
    def _no_markers(cls, text: str) -> str:
        cleaned = without_markers(text)
        if not cleaned:
            raise ValueError("a claim holds nothing but citation markers")
        return cleaned


class Envelope(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    found: bool
    answer: str
    claims: list[EnvelopeClaim]
    confidence: Literal["high", "medium", "low"]
    refusal_reason: str | None


class MalformedEnvelope(ModelError, ValueError):
    """The model's output is not exactly one object of the expected schema."""


class Verdict(BaseModel):
    """The verifier's second opinion on an answer that passed the guard: "no" to either question refuses."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    quotes_state_claims: Literal["yes", "no"]
    answers_question: Literal["yes", "no"]


_Parsed = TypeVar("_Parsed", Envelope, Verdict)


def parse_envelope(raw: str) -> Envelope:
    """Parse the whole output as one JSON object; prose before or after it is a failure, not noise to skip."""
    return _parse_object(raw, Envelope)


def parse_verdict(raw: str) -> Verdict:
    return _parse_object(raw, Verdict)


def _parse_object(raw: str, model: type[_Parsed]) -> _Parsed:
    try:
        data = json.loads(raw, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise MalformedEnvelope(f"not a single JSON object: {error.msg} at {error.pos}") from error
    except RecursionError:  # found by fuzzing: `[[[[...` thousands deep overflows the decoder's stack
        raise MalformedEnvelope("not a single JSON object: nested too deeply") from None
    except ValueError as error:  # a duplicate key, or an integer past Python's 4300-digit conversion limit
        raise MalformedEnvelope(f"not a single JSON object: {error}") from None
    if _has_lone_surrogate(data):
        raise MalformedEnvelope("a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), not text")
    if not isinstance(data, dict):
        raise MalformedEnvelope(f"expected an object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as error:
        fields = sorted({".".join(str(p) for p in e["loc"]) or "<root>" for e in error.errors()})
        raise MalformedEnvelope(f"schema violation in {', '.join(fields)}") from error


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose key repeats is ambiguous (parsers disagree on which value wins): not one envelope."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ValueError(f"key {key[:40]!r} appears twice")
        data[key] = value
    return data


def _has_lone_surrogate(data: object) -> bool:
    """JSON may escape half a UTF-16 pair (`"\\ud800"`): such a string cannot be stored, hashed or sent as
    UTF-8. Walked with a stack, not recursion: the decoder already allowed the nesting to be deep."""
    pending = [data]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return True
    return False


def envelope_json_schema() -> dict[str, object]:
    """The JSON schema of the envelope, for models that support structured output."""
    return Envelope.model_json_schema()


def verdict_json_schema() -> dict[str, object]:
    return Verdict.model_json_schema()
