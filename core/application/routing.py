"""Who owns a question Sourced cannot answer: a known gap, else the owner of the nearest permitted document that
matches the question clearly (at or above the retrieval floor), else the default owner."""

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
        """A known gap the question is about, unless the permitted evidence itself covers its keyword: a
        retrieved chunk says it, or its document's title does (a document titled "Salary Bands" is about salary
        bands, for the roles that may read it). A section heading alone does not: it may mention a topic in
        passing ("Attending product team offsites"), which is why a gap was declared for it."""
        evidence_stems = " " + " ".join(stems(" ".join(f"{c.passage.title} {c.text}" for c in evidence))) + " "
        for gap in self.known_gaps:
            keyword = gap.matched_keyword(question)
            if keyword and f" {' '.join(stems(keyword))} " not in evidence_stems:
                return gap
        return None

    def owner_for(self, question: str, permitted: Sequence[RetrievedChunk], *, floor: float) -> str | None:
        """Routing uses only what the audience may see, so a refusal never hints at a hidden document.

        A document below `floor` (the retrieval policy's, the one below which a refusal is `not_retrieved`) is
        only a loose match: it shares a word or two with the question, not its topic, and its owner would send
        a bonus question to IT. Such matches route to `default_owner`, as no match at all does."""
        gap = self.gap_for(question, ())
        if gap is not None:
            return gap.owner
        for chunk in permitted:
            if chunk.score >= floor and chunk.passage.owner:
                return chunk.passage.owner
        return self.default_owner
