"""Who owns a question Sourced cannot answer: a known gap, else the nearest permitted document's owner."""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.domain import RetrievedChunk
from core.text import stems


@dataclass(frozen=True, kw_only=True)
class KnownGap:
    """A topic the knowledge base deliberately lacks, and the channel that answers it."""

    topic: str
    keywords: tuple[str, ...]
    owner: str
    note: str | None = None

    def matched_keyword(self, question: str) -> str | None:
        """The first keyword whose stems appear, in order, in the question."""
        question_stems = " ".join(stems(question))
        for keyword in self.keywords:
            phrase = " ".join(stems(keyword))
            if phrase and re.search(rf"(?:^| ){re.escape(phrase)}(?: |$)", question_stems):
                return keyword
        return None


@dataclass(frozen=True, kw_only=True)
class OwnerRouter:
    known_gaps: tuple[KnownGap, ...] = ()
    default_owner: str | None = None

    def gap_for(self, question: str, evidence: Sequence[RetrievedChunk]) -> KnownGap | None:
        """A known gap the question is about, unless the permitted evidence itself covers its keyword."""
        evidence_stems = " " + " ".join(stems(" ".join(c.text for c in evidence))) + " "
        for gap in self.known_gaps:
            keyword = gap.matched_keyword(question)
            if keyword and f" {' '.join(stems(keyword))} " not in evidence_stems:
                return gap
        return None

    def owner_for(self, question: str, permitted: Sequence[RetrievedChunk]) -> str | None:
        """Routing uses only what the audience may see, so a refusal never hints at a hidden document."""
        gap = self.gap_for(question, ())
        if gap is not None:
            return gap.owner
        for chunk in permitted:
            if chunk.passage.owner:
                return chunk.passage.owner
        return self.default_owner
