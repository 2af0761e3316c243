"""The guard: checks a parsed envelope against what retrieval actually returned.

Citation ids are compared ordinally (`CHK-1` is not `chk-1`). A claim is supported when every number and
capitalised name it states appears in its cited chunks, and enough of its content words do (version one); with
an embedder, its semantic support (best cosine to a cited sentence) must also reach `SUPPORT_FLOOR` (version two).
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from core.application.envelope import Envelope, EnvelopeClaim
from core.application.ports import Embedder
from core.domain import CitationTier, RetrievedChunk
from core.text import capitalised_names, content_stems, numbers, words

MIN_CONTENT_OVERLAP: Final = 0.6
DIRECT_OVERLAP: Final = 0.9
SUPPORT_FLOOR: Final = 0.5
"""With an embedder: the claim's best cosine to a sentence of its cited chunks must reach this (version two)."""
DIRECT_SIMILARITY: Final = 0.95
"""A cosine at which a claim is near-verbatim: a `direct` citation."""
_SENTENCES: Final = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True, kw_only=True)
class CheckFailure:
    reason: str


def unknown_chunk_ids(envelope: Envelope, retrieved_ids: Sequence[str]) -> list[str]:
    """Cited ids that are not, character for character, among the retrieved ids."""
    known = set(retrieved_ids)
    return [cid for claim in envelope.claims for cid in claim.chunk_ids if cid not in known]


def unsupported_reason(claim: EnvelopeClaim, cited: Sequence[RetrievedChunk], *,
                       embedder: Embedder | None = None) -> str | None:
    """Why the cited chunks do not support the claim, or None when they do."""
    evidence = "\n".join(chunk.passage.heading + "\n" + chunk.text for chunk in cited)
    missing_numbers = numbers(claim.text) - numbers(evidence)
    if missing_numbers:
        return f"numbers not in the cited chunks: {sorted(missing_numbers)}"
    evidence_words = set(words(evidence))
    missing_names = {name for name in capitalised_names(claim.text) if name not in evidence_words}
    if missing_names:
        return f"names not in the cited chunks: {sorted(missing_names)}"
    overlap = content_overlap(claim.text, evidence)
    if overlap < MIN_CONTENT_OVERLAP:
        return f"content overlap {overlap:.2f} below {MIN_CONTENT_OVERLAP}"
    if embedder is not None and not any(quotes(claim.text, chunk) for chunk in cited):
        similarity = max((semantic_support(claim.text, chunk, embedder) for chunk in cited), default=0.0)
        if similarity < SUPPORT_FLOOR:
            return f"semantic support {similarity:.2f} below {SUPPORT_FLOOR}"
    return None


def semantic_support(claim_text: str, chunk: RetrievedChunk, embedder: Embedder) -> float:
    """The claim's best cosine to the chunk's sentences or the whole chunk (vectors are unit length)."""
    sentences = [part.strip() for part in _SENTENCES.split(chunk.text) if len(part.strip()) > 3]
    vectors = embedder.embed([claim_text, chunk.text, *sentences])
    return max(sum(a * b for a, b in zip(vectors[0], vector, strict=True)) for vector in vectors[1:])


def content_overlap(claim_text: str, evidence: str) -> float:
    """Share of the claim's content words that the evidence contains."""
    claim = content_stems(claim_text)
    if not claim:
        return 0.0
    present = set(content_stems(evidence))
    return sum(1 for s in claim if s in present) / len(claim)


def quotes(claim_text: str, chunk: RetrievedChunk) -> bool:
    """Is the claim the chunk's own words, in order (case, punctuation and markup aside)? A quotation needs no
    semantic check: it says exactly what its chunk says."""
    normalised_claim = " ".join(words(claim_text))
    return bool(normalised_claim) and normalised_claim in " ".join(words(chunk.text))


def citation_tier(claim_text: str, chunk: RetrievedChunk, *, embedder: Embedder | None = None) -> CitationTier:
    """`direct` when the claim is near-verbatim in the chunk, `synthesis` when it paraphrases its facts."""
    if quotes(claim_text, chunk):
        return "direct"
    if embedder is not None and semantic_support(claim_text, chunk, embedder) >= DIRECT_SIMILARITY:
        return "direct"
    return "direct" if content_overlap(claim_text, chunk.text) >= DIRECT_OVERLAP else "synthesis"


def cited_chunks(claim: EnvelopeClaim, by_id: Mapping[str, RetrievedChunk]) -> list[RetrievedChunk]:
    return [by_id[cid] for cid in dict.fromkeys(claim.chunk_ids)]
