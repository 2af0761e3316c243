"""How one outcome is scored against its case: a pure function of the case, the outcome, what the pipeline
retrieved, and what the asker may see. No database, no model: unit tests build every input by hand.

Answer cases end in exactly one verdict:
  correct_answer    answered, cites at least one `support` section, every `must_include` item in the text
  wrong_answer      answered otherwise
  false_abstention  refused or clarified although a chunk of a `support` section was retrieved: given to
                    the model, or dropped before it (the floor, a clarification); `support_given` tells which
  missed            refused or clarified, and no chunk of a `support` section was retrieved
Refusal cases (`not_in_corpus`, `not_retrieved`, `not_permitted`, `not_answerable`, `ambiguous`) end in
`correct_abstention` (refused or clarified) or `false_answer` (answered); the kind is scored apart (`kind_correct`).
Any case can leak: its reply cites, quotes or names a document the asker may not see.
A refusal's closest passages are scored too: `closest_supported` when one lies in a `support` section (the
refusal is then no dead end).
A turn of a conversation is scored the same way; its result also says which turn it was, whether the case
calls it a question of its own (`standalone`), and whether the pipeline read it as a follow-up. The reading a
reply shows counts as shown text for the leak check.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from core.application.orchestrator import Evidence
from core.domain import Answered, Audience, Outcome, OutcomeKind, Passage, Refused, is_visible
from core.eval.cases import Alternatives, Case, Expectation, Section

Verdict = Literal["correct_answer", "wrong_answer", "false_abstention", "missed", "correct_abstention",
                  "false_answer"]


@dataclass(frozen=True, kw_only=True)
class ChunkRef:
    """Where a chunk comes from: enough to tell whether it lies in a supporting section."""

    doc_id: str
    heading: str
    score: float | None = None

    @classmethod
    def of(cls, passage: Passage, score: float | None = None) -> "ChunkRef":
        return cls(doc_id=passage.doc_id, heading=passage.heading, score=score)

    def within(self, sections: Sequence[Section]) -> bool:
        return any(section.matches(self.doc_id, self.heading) for section in sections)

    def __str__(self) -> str:
        return f"{self.doc_id}#{self.heading.split(' > ')[-1]}"


@dataclass(frozen=True, kw_only=True)
class EvidenceSummary:
    """What scoring reads of the pipeline's evidence: the candidates, and what the model was given."""

    retrieved: tuple[ChunkRef, ...] = ()
    given_to_model: tuple[ChunkRef, ...] = ()
    model_found: bool | None = None
    """The model's own `found`, when it answered with an envelope."""
    detail: str | None = None
    """The pipeline's own reason for its outcome (the audit's `detail`)."""

    @classmethod
    def of(cls, evidence: Evidence) -> "EvidenceSummary":
        return cls(retrieved=tuple(ChunkRef.of(c.passage, c.score) for c in evidence.retrieved),
                   given_to_model=tuple(ChunkRef.of(c.passage, c.score) for c in evidence.given_to_model),
                   model_found=evidence.model_found, detail=evidence.detail)


@dataclass(frozen=True, kw_only=True)
class DocumentInfo:
    """A knowledge-base document as the leak check needs it."""

    doc_id: str
    title: str
    audience: frozenset[str]
    owner: str | None = None


@dataclass(frozen=True, kw_only=True)
class AskerView:
    """What must never reach this asker: hidden documents, their titles, and owners only they carry."""

    hidden_docs: frozenset[str] = frozenset()
    hidden_titles: tuple[str, ...] = ()
    hidden_owners: frozenset[str] = frozenset()


def asker_view(documents: Iterable[DocumentInfo], audience: Audience, public_owners: Iterable[str]
               ) -> AskerView:
    """The view of one audience. An owner is hidden when only hidden documents name it and it is not one of
    the owners any reply may name (known gaps, the default owner)."""
    hidden: list[DocumentInfo] = []
    shown: list[DocumentInfo] = []
    for doc in documents:
        (shown if is_visible(doc.audience, audience) else hidden).append(doc)
    shown_titles = {doc.title.casefold() for doc in shown}
    shown_owners = {doc.owner for doc in shown} | set(public_owners)
    return AskerView(hidden_docs=frozenset(doc.doc_id for doc in hidden),
                     hidden_titles=tuple(d.title for d in hidden if d.title.casefold() not in shown_titles),
                     hidden_owners=frozenset(doc.owner for doc in hidden if doc.owner) - shown_owners)


@dataclass(frozen=True, kw_only=True)
class CaseResult:
    case_id: str
    expected: Expectation
    got: OutcomeKind
    verdict: Verdict
    kind_correct: bool | None
    owner_correct: bool | None
    leak: str | None
    support_given: bool
    closest_shown: bool
    """A refusal showed closest passages."""
    closest_supported: bool
    """One of them lies in a `support` section."""
    citations: int
    supported_citations: int
    latency_ms: float
    tags: tuple[str, ...]
    reason: str | None
    turn: int = 1
    """Which turn of its conversation (1 for a single case)."""
    standalone: bool = False
    """A later turn the case calls a question of its own."""
    read_as_followup: bool = False
    """The pipeline read it as a follow-up of the turns before it."""
    model_found: bool | None = None
    """The model's own `found` (None when no model envelope was read): with `got`, whether the guard overruled it."""
    detail: str | None = None
    """The pipeline's own reason for its outcome, e.g. which check refused a claim."""

    @property
    def followup(self) -> bool:
        """A turn after the first of a conversation."""
        return self.turn > 1

    @property
    def answered(self) -> bool:
        return self.got == "answered"

    @property
    def clarified(self) -> bool:
        return self.got == "ambiguous"

    @property
    def refused(self) -> bool:
        return not self.answered and not self.clarified


def score_case(case: Case, outcome: Outcome, evidence: EvidenceSummary, view: AskerView, *,
               latency_ms: float, asked_before: Sequence[str] = ()) -> CaseResult:
    """`asked_before`: the questions of the earlier turns of its conversation, which the asker typed."""
    cited = [ChunkRef.of(citation.passage) for citation in outcome.citations] \
        if isinstance(outcome, Answered) else []
    if case.expect == "answer":
        verdict, problems = _answer_verdict(case, outcome, cited, evidence)
        kind_correct = owner_correct = None
    else:
        kind_correct, owner_correct = outcome.kind == case.expect, _owner_correct(case, outcome)
        verdict, problems = _refusal_verdict(case, outcome, cited, owner_correct=owner_correct)
    closest = outcome.nearest if isinstance(outcome, Refused) else ()
    leak = leak_reason(" ".join([*asked_before, case.question]), outcome, view)
    if leak:
        problems.append(f"leak: {leak}")
    return CaseResult(
        case_id=case.id, expected=case.expect, got=outcome.kind, verdict=verdict, kind_correct=kind_correct,
        owner_correct=owner_correct, leak=leak, citations=len(cited),
        support_given=any(ref.within(case.support) for ref in evidence.given_to_model),
        closest_shown=bool(closest),
        closest_supported=any(ChunkRef.of(passage).within(case.support) for passage in closest),
        supported_citations=sum(ref.within(case.support) for ref in cited), latency_ms=latency_ms,
        tags=tuple(case.tags), reason="; ".join(problems) or None, model_found=evidence.model_found,
        detail=evidence.detail,
    )


def _answer_verdict(case: Case, outcome: Outcome, cited: Sequence[ChunkRef], evidence: EvidenceSummary
                    ) -> tuple[Verdict, list[str]]:
    if isinstance(outcome, Answered):
        problems = []
        if not any(ref.within(case.support) for ref in cited):
            problems.append(f"cites {', '.join(map(str, cited))}, not a support section")
        missing = [item for item in case.must_include if not includes(outcome.text, item)]
        if missing:
            problems.append(f"missing {', '.join(map(_describe_item, missing))} in {outcome.text[:160]!r}")
        return ("wrong_answer", problems) if problems else ("correct_answer", [])
    given = [ref for ref in evidence.given_to_model if ref.within(case.support)]
    if given:
        return "false_abstention", [f"{outcome.kind} although {given[0]} was passed on to answer"]
    found = [(rank, ref) for rank, ref in enumerate(evidence.retrieved, start=1) if ref.within(case.support)]
    if found:
        rank, ref = found[0]
        score = "" if ref.score is None else f" (score {ref.score:.2f})"
        return "false_abstention", [f"{outcome.kind}; support retrieved at rank {rank}{score}, "
                                    "not passed on to answer"]
    return "missed", [f"{outcome.kind}; no support section retrieved"]


def _refusal_verdict(case: Case, outcome: Outcome, cited: Sequence[ChunkRef], *, owner_correct: bool | None
                     ) -> tuple[Verdict, list[str]]:
    if isinstance(outcome, Answered):
        return "false_answer", [f"answered, citing {', '.join(map(str, cited))}"]
    problems = [] if outcome.kind == case.expect else [f"kind {outcome.kind}, expected {case.expect}"]
    if owner_correct is False:
        got = outcome.owner if isinstance(outcome, Refused) else None
        problems.append(f"owner {got!r}, expected {case.owner!r}")
    return "correct_abstention", problems


def _owner_correct(case: Case, outcome: Outcome) -> bool | None:
    if case.owner is None:
        return None
    return isinstance(outcome, Refused) and outcome.owner == case.owner


def includes(text: str, item: Alternatives) -> bool:
    """A `must_include` item is in the text: the string, or any one of a list of alternatives (any case)."""
    alternatives = [item] if isinstance(item, str) else item
    folded = text.casefold()
    return any(alternative.casefold() in folded for alternative in alternatives)


def _describe_item(item: Alternatives) -> str:
    return repr(item) if isinstance(item, str) else " or ".join(map(repr, item))


def leak_reason(question: str, outcome: Outcome, view: AskerView) -> str | None:
    """How the reply exposes a document the asker may not see, or None. Repeating a title the asker typed,
    or one a passage the asker may see already mentions, exposes nothing."""
    shown = [outcome.text, *([outcome.reading] if outcome.reading else [])]
    if isinstance(outcome, Answered):
        passages: Sequence[Passage] = [citation.passage for citation in outcome.citations]
        named = shown
    elif isinstance(outcome, Refused):
        passages = outcome.nearest
        named = shown
        if outcome.owner in view.hidden_owners:
            return f"routes to {outcome.owner!r}, the owner of a hidden document"
    else:
        passages = ()
        named = [*shown, *(f"{option.label} {option.refine}" for option in outcome.options)]
    exposed = sorted({passage.doc_id for passage in passages} & view.hidden_docs)
    if exposed:
        verb = "cites" if isinstance(outcome, Answered) else "quotes"
        return f"{verb} hidden document {exposed[0]!r}"
    known = " ".join([question, *(passage.text for passage in passages)])
    title = _named_title(named, view.hidden_titles, known)
    return f"names hidden document {title!r}" if title else None


def _named_title(texts: Sequence[str], titles: Sequence[str], known: str) -> str | None:
    known = known.casefold()
    for title in titles:
        folded = title.casefold()
        if folded not in known and any(folded in text.casefold() for text in texts):
            return title
    return None

