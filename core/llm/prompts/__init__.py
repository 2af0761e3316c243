"""Versioned prompt templates for the LLM adapters, shipped as package data (`<version>.txt`).

A template's version is the model's `prompt_version`, so the audit record names the exact wording a decision
was made under. Change a wording by adding a new file, never by editing a released one.

A file holds the system message, a line `=== user ===`, then the user message with `$sources` and `$question`.
Sources are presented as `<source id="...">` elements, so a model copies ids by name and has no list position
it could cite instead.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from importlib.resources import files
from string import Template
from typing import Final

from core.domain import RetrievedChunk

DEFAULT_VERSION: Final = "answer-v1"
USER_SEPARATOR: Final = "=== user ==="
_SOURCE_TAG: Final = re.compile(r"<(/?source\b)", re.IGNORECASE)


class PromptError(ValueError):
    """A template file is missing or does not have the expected shape."""


@dataclass(frozen=True, kw_only=True)
class Prompt:
    system: str
    user: str


@dataclass(frozen=True, kw_only=True)
class PromptTemplate:
    version: str
    system: str
    user: Template

    def render(self, question: str, chunks: Sequence[RetrievedChunk]) -> Prompt:
        sources = "\n".join(render_source(chunk) for chunk in chunks)
        return Prompt(system=self.system, user=self.user.substitute(sources=sources, question=question))


def render_source(chunk: RetrievedChunk) -> str:
    """One source element. The id is shown verbatim because the model must copy it exactly; the text cannot
    close or open a source element, so a document cannot pose as another source."""
    section = escape(chunk.passage.heading, quote=True)
    text = _SOURCE_TAG.sub(r"&lt;\1", chunk.text.strip())
    return f'<source id="{chunk.chunk_id}" section="{section}">\n{text}\n</source>'


def load_prompt(version: str = DEFAULT_VERSION) -> PromptTemplate:
    resource = files(__name__).joinpath(f"{version}.txt")
    if not resource.is_file():
        raise PromptError(f"no prompt template {version!r}")
    system, separator, user = resource.read_text(encoding="utf-8").partition(f"\n{USER_SEPARATOR}\n")
    if not separator or "$sources" not in user or "$question" not in user:
        raise PromptError(f"prompt template {version!r} needs {USER_SEPARATOR!r}, $sources and $question")
    return PromptTemplate(version=version, system=system.strip(), user=Template(user.strip()))
