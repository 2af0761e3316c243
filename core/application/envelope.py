"""The model's answer envelope: exactly one strict JSON object, nothing around it, no extra field."""

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class EnvelopeClaim(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    text: str = Field(min_length=1)
    chunk_ids: list[str] = Field(min_length=1)
    quote: str | None = None
    """The verbatim span of a cited chunk that states the claim. Optional so that a model answering under an
    older prompt still parses; such a claim is checked against its best-aligned sentence instead."""


class Envelope(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    found: bool
    answer: str
    claims: list[EnvelopeClaim]
    confidence: Literal["high", "medium", "low"]
    refusal_reason: str | None


class MalformedEnvelope(ValueError):
    """The model's output is not exactly one envelope object."""


def parse_envelope(raw: str) -> Envelope:
    """Parse the whole output as one JSON object; prose before or after it is a failure, not noise to skip."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise MalformedEnvelope(f"not a single JSON object: {error.msg} at {error.pos}") from error
    if not isinstance(data, dict):
        raise MalformedEnvelope(f"expected an object, got {type(data).__name__}")
    try:
        return Envelope.model_validate(data)
    except ValidationError as error:
        fields = sorted({".".join(str(p) for p in e["loc"]) or "<root>" for e in error.errors()})
        raise MalformedEnvelope(f"schema violation in {', '.join(fields)}") from error


def envelope_json_schema() -> dict[str, object]:
    """The JSON schema of the envelope, for models that support structured output."""
    return Envelope.model_json_schema()
