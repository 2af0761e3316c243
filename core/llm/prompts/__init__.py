"""Versioned prompt templates for the LLM adapters, shipped as package data (`<version>.txt`).

A template's version is the model's `prompt_version`, so the audit record names the exact wording a decision
was made under. Change a wording by adding a new file, never by editing a released one.

A file holds the system message, a line `=== user ===`, then the user message. An answer template has
`$sources` and `$question`; a verification template (`verify-*`) has `$claims` and `$question`; a follow-up
template (`followup-*`) has `$turns` and `$message`. Retrieved text
is untrusted: it is fenced inside `<documents>` (or `<claims>`) with a statement that instructions inside are
content, and it cannot close or open an element of its own (`<source`, `<question`, ... are escaped), so a
document can neither pose as another source nor step outside the fence. Sources are presented as
`<source id="...">` elements, so a model copies ids by name and has no list position it could cite instead.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from importlib.resources import files
from string import Template
from typing import Final

from core.application.ports import QuotedClaim
from core.domain import RetrievedChunk, Turn
from core.domain.errors import OperatorError

DEFAULT_VERSION: Final = "answer-v3"
VERIFY_VERSION: Final = "verify-v1"
FOLLOWUP_VERSION: Final = "followup-v1"
USER_SEPARATOR: Final = "=== user ==="
_OWN_TAGS: Final = re.compile(r"<(/?(?:source|documents|question|claims?|text|quote|turns?|message|sections)\b)",
                              re.IGNORECASE)
_HANDLED: Final = {"answered": "answered from the documents", "ambiguous": "asked which of several readings was meant"}


class PromptError(OperatorError, ValueError):
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
        return Prompt(system=self.system, user=self.user.substitute(sources=sources, question=fenced(question)))

    def render_claims(self, question: str, claims: Sequence[QuotedClaim]) -> Prompt:
        rendered = "\n".join(f'<claim n="{n}">\n<text>{fenced(claim.text)}</text>\n<quote>{fenced(claim.quote)}'
                             f"</quote>\n</claim>" for n, claim in enumerate(claims, start=1))
        return Prompt(system=self.system, user=self.user.substitute(claims=rendered, question=fenced(question)))

    def render_turns(self, message: str, turns: Sequence[Turn]) -> Prompt:
        rendered = "\n".join(render_turn(n, turn) for n, turn in enumerate(turns, start=1))
        return Prompt(system=self.system, user=self.user.substitute(turns=rendered, message=fenced(message)))


def render_turn(n: int, turn: Turn) -> str:
    """One earlier turn: how it was handled (a message of the thread, answered, refused) and its sections."""
    if turn.kind is None:
        handled = "a message of the thread, not addressed to the assistant"
    else:
        handled = _HANDLED.get(turn.kind, "not answered from the documents")
    sections = "".join(f"\n<sections>{fenced(path)}</sections>" for path in turn.headings)
    return f'<turn n="{n}" handled="{handled}">\n<question>{fenced(turn.question)}</question>{sections}\n</turn>'


def fenced(text: str) -> str:
    """Untrusted text that cannot open or close one of the prompt's own elements."""
    return _OWN_TAGS.sub(r"&lt;\1", text)


def render_source(chunk: RetrievedChunk) -> str:
    """One source element. The id is shown verbatim because the model must copy it exactly; the text cannot
    close or open a source element, so a document cannot pose as another source."""
    section = escape(chunk.passage.heading, quote=True)
    return f'<source id="{chunk.chunk_id}" section="{section}">\n{fenced(chunk.text.strip())}\n</source>'


def load_prompt(version: str = DEFAULT_VERSION) -> PromptTemplate:
    """An answer template (`$sources`, `$question`), with a `verify-` version a verification template
    (`$claims`, `$question`), with a `followup-` version a rewrite template (`$turns`, `$message`)."""
    resource = files(__name__).joinpath(f"{version}.txt")
    if not resource.is_file():
        raise PromptError(f"no prompt template {version!r}")
    system, separator, user = resource.read_text(encoding="utf-8").partition(f"\n{USER_SEPARATOR}\n")
    needed = (("$claims", "$question") if version.startswith("verify-") else
              ("$turns", "$message") if version.startswith("followup-") else ("$sources", "$question"))
    if not separator or not all(placeholder in user for placeholder in needed):
        raise PromptError(f"prompt template {version!r} needs {USER_SEPARATOR!r}, {' and '.join(needed)}")
    return PromptTemplate(version=version, system=system.strip(), user=Template(user.strip()))
