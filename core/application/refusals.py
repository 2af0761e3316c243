"""Every sentence Sourced says when it does not answer. The code decides what is said, never the model.

Each wording carries its reason. Change one only together with the reason beside it.
"""

from collections.abc import Sequence
from typing import Final

from core.domain import RefusalKind

NOT_IN_CORPUS: Final = "I couldn't find this in the documents available to you."
# Why "in the documents available to you": this sentence is also the reply when the answer exists in a
# document the audience may not see (not_permitted). Saying "the knowledge base has nothing on this" would be
# false in that case, and saying "you may not see it" would confirm the document exists. Existence is often the
# sensitive fact (a customer's name, a reorganisation), so both kinds share this one, true, sentence.

NOT_RETRIEVED: Final = (
    "I found only loose matches in the documents available to you, not a passage that answers this. "
    "Try naming the document or a term it uses."
)
# Why: the person can act on it. The nearest passages follow as starting points, explicitly not as an answer.

NOT_ANSWERABLE: Final = (
    "I search documents; I can't count, total or compare records across them, so I can't answer this reliably."
)
# Why: a number made up from a handful of passages would look authoritative and be wrong. Name the limit.

AMBIGUOUS: Final = "That could mean a few things. Which did you mean?"
# Why: a guess between readings is a coin flip presented as an answer; one click resolves it.

MODEL_SELF_REFUSAL: Final = "The documents I found don't state the answer to this."
# Why: emitted from code whatever prose the model wrote, so the wording never drifts with the model.

UNVERIFIED: Final = "I found related passages but couldn't verify an answer against them, so I won't guess."
# Why: one calm sentence for every failed check (malformed output, unknown citation, unsupported claim). The
# person can do nothing different per failure; the audit log records which check failed.

MODEL_UNAVAILABLE: Final = "I can't answer right now."
# Why: an outage is not a statement about the documents; the owner is named so the person is not stuck.

AUDIT_UNAVAILABLE: Final = "I can't answer right now: the assistant is unavailable."
# Why: in `required` audit mode no decision may go out unrecorded; the person learns only that we are down.

INVALID_QUERY_EMPTY: Final = (
    "Ask me a question about your company's documents, for example: /ask how do I file expenses?"
)
INVALID_QUERY_TOO_LONG: Final = "That question is too long for me; please ask it in under {limit} characters."
INVALID_QUERY_CONTROL: Final = "That question contains characters I can't read; please retype it as plain text."

OWNER_SUFFIX: Final = "{owner} can help with this."

NOT_CONFIRMED: Final = "I couldn't confirm an answer in the documents you can see."
# Why: said instead of NOT_IN_CORPUS when passages matched but none was confirmed to state the answer: "I
# couldn't find this" would deny what is on screen one line below. "The documents you can see" stays true when a
# hidden document holds the answer (not_permitted), so both kinds still share one sentence.

CLOSEST_LEAD: Final = "These passages came closest:"
# Why: the passages follow as where to look, never as an answer; the person reads them and judges.

BY_KIND: Final[dict[RefusalKind, str]] = {
    "not_in_corpus": NOT_IN_CORPUS,
    "not_permitted": NOT_IN_CORPUS,
    "not_retrieved": NOT_RETRIEVED,
    "not_answerable": NOT_ANSWERABLE,
    "model_self_refusal": MODEL_SELF_REFUSAL,
    "malformed_response": UNVERIFIED,
    "invalid_citation": UNVERIFIED,
    "unsupported_claim": UNVERIFIED,
    "model_unavailable": MODEL_UNAVAILABLE,
    "audit_unavailable": AUDIT_UNAVAILABLE,
    "invalid_query": INVALID_QUERY_EMPTY,
}

WITH_CLOSEST: Final[dict[RefusalKind, str]] = {
    **BY_KIND, "not_in_corpus": NOT_CONFIRMED, "not_permitted": NOT_CONFIRMED}
"""The sentence of each kind when the closest passages follow it."""


def refusal_text(kind: RefusalKind, *, with_closest: bool) -> str:
    """The one sentence of a presented kind, leading into the closest passages when there are some."""
    if not with_closest:
        return BY_KIND[kind]
    return f"{WITH_CLOSEST[kind]} {CLOSEST_LEAD}"


REFUSAL_PHRASES: Final = (
    "i don't know",
    "i do not know",
    "i cannot answer",
    "i can't answer",
    "i'm not able",
    "i am not able",
    "not able to find",
    "couldn't find",
    "could not find",
    "no information",
    "not mentioned",
    "does not say",
    "doesn't say",
    "not specified",
    "don't have enough",
    "insufficient",
    "not provided",
    "unable to",
)


def reads_like_refusal(prose: str, *, quotes: Sequence[str] = ()) -> bool:
    """True when a model's prose says it does not know, whatever its `found` flag says. A phrase that a cited
    quote holds is the document's own words ("only if unable to take it due to illness"), not the model's."""
    lowered = _lowered(prose)
    quoted = [_lowered(quote) for quote in quotes]
    return any(phrase in lowered and not any(phrase in quote for quote in quoted) for phrase in REFUSAL_PHRASES)


def _lowered(text: str) -> str:
    return text.lower().replace("\u2019", "'")
