"""The guard: checks a parsed envelope against what retrieval actually returned.

Citation ids are compared ordinally (`CHK-1` is not `chk-1`). A claim is supported when every number and
capitalised name it states appears in its cited chunks, and enough of its content words do (version one).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from core.application.envelope import Envelope, EnvelopeClaim
from core.domain import CitationTier, RetrievedChunk
from core.text import capitalised_names, content_stems, numbers, words

MIN_CONTENT_OVERLAP: Final = 0.6
DIRECT_OVERLAP: Final = 0.9


@dataclass(frozen=True, kw_only=True)
class CheckFailure:
    reason: str


def unknown_chunk_ids(envelope: Envelope, retrieved_ids: Sequence[str]) -> list[str]:
    """Cited ids that are not, character for character, among the retrieved ids."""
    known = set(retrieved_ids)
    return [cid for claim in envelope.claims for cid in claim.chunk_ids if cid not in known]


def unsupported_reason(claim: EnvelopeClaim, cited: Sequence[RetrievedChunk]) -> str | None:
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
    return None


def content_overlap(claim_text: str, evidence: str) -> float:
    """Share of the claim's content words that the evidence contains."""
    claim = content_stems(claim_text)
    if not claim:
        return 0.0
    present = set(content_stems(evidence))
    return sum(1 for s in claim if s in present) / len(claim)


def citation_tier(claim_text: str, chunk: RetrievedChunk) -> CitationTier:
    """`direct` when the claim is near-verbatim in the chunk, `synthesis` when it paraphrases its facts."""
    normalised_claim = " ".join(words(claim_text))
    if normalised_claim and normalised_claim in " ".join(words(chunk.text)):
        return "direct"
    return "direct" if content_overlap(claim_text, chunk.text) >= DIRECT_OVERLAP else "synthesis"


def cited_chunks(claim: EnvelopeClaim, by_id: Mapping[str, RetrievedChunk]) -> list[RetrievedChunk]:
    return [by_id[cid] for cid in dict.fromkeys(claim.chunk_ids)]
