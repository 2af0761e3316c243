"""The pipeline of DESIGN section 2, one named step at a time. Every path ends in an audited outcome."""

import copy
import logging
import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final, Literal

from core.application import refusals
from core.application.answerability.clarify import clarification_options
from core.application.answerability.followups import OfflineFollowUps, new_words_first, speaking_of
from core.application.answerability.model import (
    AnswerabilityModel,
    EmbedderFailed,
    ReaderFailed,
    assess,
    shipped_model,
)
from core.application.audit import (
    AnswerabilityNote,
    AuditMode,
    AuditRecord,
    CitedId,
    QuoteAnchor,
    ReadingNote,
    ScoredId,
    question_preview,
    question_sha256,
    user_reference,
)
from core.application.guard.answer_text import answer_text
from core.application.guard.asked_value import NO_ASKED_VALUE, unstated_asked_value
from core.application.guard.checks import (
    Anchor,
    ClaimSupport,
    Unsupported,
    cited_chunks,
    claim_support,
    unknown_chunk_ids,
)
from core.application.guard.claim_ranking import RANKED_FAR_BELOW, claim_rank_gaps, rests_on_an_answer
from core.application.guard.claim_reading import CLAIM_READING_FLOOR, claim_readings
from core.application.guard.envelope import Envelope, MalformedEnvelope, parse_envelope, parse_verdict
from core.application.language.quote_context import Asking
from core.application.language.shape import (
    MAX_QUESTION_LENGTH,
    InvalidReason,
    classify_shape,
    invalid_reason,
    visible_text,
)
from core.application.ports import (
    AnswerModel,
    Assessment,
    AuditSink,
    Clock,
    Corpus,
    Embedder,
    FollowUps,
    GenerationRequest,
    Index,
    Metrics,
    QuotedClaim,
    Reader,
    RiskClassifier,
    VerificationRequest,
    Verifier,
)
from core.application.routing import KnownGap, OwnerRouter
from core.domain import (
    Answered,
    Audience,
    Citation,
    CitationInvariantError,
    CitationTier,
    Claim,
    Clarify,
    Outcome,
    Passage,
    Principal,
    Reading,
    RefusalKind,
    Refused,
    RetrievedChunk,
    RiskAssessment,
    Turn,
    ensure_citation_invariant,
    presented_kind,
)

log = logging.getLogger(__name__)

AnswerabilityGate = Literal["before_model", "after_model", "off"]
"""Where the answerability assessment stands. `before_model`: a question it finds unanswered is refused before
the model is asked (the extractive model's own decision). `after_model`: the model decides (`found`), and the
assessment is computed and audited beside its decision. `off`: not computed."""

UnverifiedClaims = Literal["drop", "refuse"]
"""What a claim the guard cannot verify does to its answer: refused whole, or (`drop`) the claim dropped and the
answer kept with the claims left. The first claim is the model's answer to the question: unverified, it refuses
the answer either way."""

STALE_AFTER_DAYS: Final = 365
"""The default of sourced.yml's `stale_after_days`: a source older than this is said to be so."""
CONTEXT_TURNS: Final = 3
"""Earlier turns of a thread a message is read against, the latest last."""

INVALID_QUERY_TEXT: Final = {
    "empty": refusals.INVALID_QUERY_EMPTY,
    "too_long": refusals.INVALID_QUERY_TOO_LONG,
    "control_characters": refusals.INVALID_QUERY_CONTROL,
}


@dataclass(frozen=True, kw_only=True)
class Question:
    """One question, with the identity and audience the trusted caller resolved (never the text)."""

    text: str
    principal: Principal
    audience: Audience
    workspace_id: str | None = None
    channel_id: str | None = None
    correlation_id: str | None = None
    context: tuple[Turn, ...] = ()
    """The earlier turns of the thread, oldest first: a follow-up is read against them. Their citations are
    checked again against this audience before anything of them is used."""


@dataclass(frozen=True, kw_only=True)
class RetrievalPolicy:
    """Depth and floors per risk: high risk retrieves deeper and demands stronger matches."""

    depth: int = 8
    high_risk_depth: int = 12
    floor: float = 0.15
    """Below this best score, matches are loose: a refusal offers the nearest passages (`not_retrieved`)."""
    weak_floor: float = 0.06
    """Below this a chunk does not match at all."""
    nearest: int = 3
    """Closest passages a refusal shows, the best of the audience's own retrieval."""
    hidden_margin: float = 0.05
    """How much better than every permitted chunk a hidden document must match a question no permitted
    statement answers, for the audit to record `not_permitted` (the reply is the same either way)."""


@dataclass(frozen=True, kw_only=True)
class AnswerPolicy:
    """What the operator decides about answering, in one value: retrieval's depth and floors, where the
    answerability assessment stands, what an unverified claim does, how the audit is kept."""

    retrieval: RetrievalPolicy = field(default_factory=RetrievalPolicy)
    answerability_gate: AnswerabilityGate = "before_model"
    unverified_claims: UnverifiedClaims = "drop"
    organisation: tuple[str, ...] = ()
    """Who the documents' "we" is (sourced.yml's `organisation`): a claim may name it in its place."""
    stale_after_days: int = STALE_AFTER_DAYS
    audit_mode: AuditMode = "best_effort"
    user_hash_key: bytes | None = field(default=None, repr=False)
    """The key user ids are hashed with in the audit record (`SOURCED_USER_HASH_KEY`); None: not hashed."""


@dataclass(kw_only=True)
class Evidence:
    """What the pipeline saw on the way to its outcome: the audit record and the evaluation read it."""

    correlation_id: str
    risk: RiskAssessment | None = None
    retrieved: Sequence[RetrievedChunk] = ()
    given_to_model: Sequence[RetrievedChunk] = ()
    model_called: bool = False
    model_found: bool | None = None
    """What the model's envelope said of `found` (None when no envelope was read)."""
    claim_map: tuple[tuple[int, tuple[str, ...]], ...] = ()
    quotes: tuple[QuoteAnchor, ...] = ()
    verified: bool = False
    """The model verifier was asked (`SOURCED_VERIFIER=model`)."""
    detail: str | None = None
    assessment: Assessment | None = None
    claim_readings: tuple[float, ...] = ()
    """Per claim, the reader's probability that its quote answers the question (when a reader read them)."""
    claim_rank_gaps: tuple[float | None, ...] = ()
    """Per claim, how far below the best candidate the ranker puts its quote (when a model chose its quotes)."""
    reading: Reading | None = None
    """How the message was read against its thread, when it had earlier turns."""


class Orchestrator:
    def __init__(
        self,
        *,
        index: Index,
        model: AnswerModel,
        audit: AuditSink,
        risk: RiskClassifier,
        clock: Clock,
        metrics: Metrics,
        router: OwnerRouter,
        policy: AnswerPolicy | None = None,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
        embedder: Embedder | None = None,
        matcher: Embedder | None = None,
        answerability: AnswerabilityModel | None = None,
        reader: Reader | None = None,
        verifier: Verifier | None = None,
        support: ClaimSupport = claim_support,
        corpus: Corpus | None = None,
        followups: FollowUps | None = None,
    ) -> None:
        self._index = index
        self._model = model
        self._audit = audit
        self._risk = risk
        self._clock = clock
        self._metrics = metrics
        self._router = router
        self._policy = policy or AnswerPolicy()
        self._new_id = new_id
        self._embedder = embedder  # the guard's semantic claim check
        self._matcher = matcher or embedder  # the answerability model's semantic features
        self._answerability = answerability
        self._reader = reader
        self._verifier = verifier
        self._support = support
        self._corpus = corpus
        self._followups = followups or OfflineFollowUps()

    def with_answerability(self, model: AnswerabilityModel) -> "Orchestrator":
        """The same pipeline deciding answerability with another fit (one being measured)."""
        other = copy.copy(self)
        other._answerability = model
        return other

    def ask(self, question: Question) -> Outcome:
        return self.ask_with_evidence(question)[0]

    def ask_with_evidence(self, question: Question) -> tuple[Outcome, Evidence]:
        started = self._clock.monotonic()
        question = replace(question, text=visible_text(question.text))
        evidence = Evidence(correlation_id=question.correlation_id or self._new_id())
        outcome = self._decide(question, evidence)
        return self._finish(question, outcome, evidence, started), evidence

    # -- the pipeline ------------------------------------------------------------------------------------

    def _decide(self, question: Question, evidence: Evidence) -> Outcome:  # noqa: PLR0911  # one exit per pipeline step, in DESIGN order
        invalid = invalid_reason(question.text)  # 2. validate
        if invalid is not None and not (invalid == "empty" and question.context):
            return self._invalid(invalid, evidence)
        question, search = self._read_in_context(question, evidence)  # 2b. a follow-up becomes a question
        invalid = invalid_reason(question.text)
        if invalid is not None:
            return self._invalid(invalid, evidence)

        evidence.risk = self._risk.assess(question.text)  # 3. classify
        shape = classify_shape(question.text)

        candidates = self.retrieve(search, question.audience, evidence.risk)  # 4. retrieve, scoped
        evidence.retrieved = candidates

        if shape.aggregate:
            return self._refuse("not_answerable", evidence, owner=self._owner(question, candidates))
        gap = self._router.gap_for(question.text, candidates)
        if gap is not None:
            return self._known_gap(question, gap, candidates, evidence)
        if not candidates:  # 5. nothing usable: refuse without calling the model
            return self._nothing_found(question, evidence)
        answering = speaking_of(evidence.reading, candidates)  # 5b. a follow-up's new words take precedence
        if not answering:
            return self._not_stated(question, candidates, evidence, why="no passage speaks of the follow-up's words")
        candidates = answering

        options = clarification_options(question.text, shape, candidates)  # 6. topics split
        if options:
            return Clarify(text=refusals.AMBIGUOUS, options=options, risk=evidence.risk,
                           correlation_id=evidence.correlation_id)
        assessment = None if self._policy.answerability_gate == "off" else new_words_first(
            evidence.reading, self._assess(question.text, candidates))
        evidence.assessment = assessment  # audited whoever decides
        if self._policy.answerability_gate == "before_model" and assessment is not None and not assessment.answerable:
            return self._not_stated(question, candidates, evidence)  # the gate decides before the model

        evidence.given_to_model, evidence.model_called = candidates, True  # 7. generate
        try:
            raw = self._model.generate(GenerationRequest(question=question.text, chunks=candidates,
                                                         risk=evidence.risk, assessment=assessment))
        except Exception as error:  # any model failure is a refusal, never a traceback
            evidence.detail = f"model failed: {type(error).__name__}"
            return self._refuse("model_unavailable", evidence, owner=self._owner(question, candidates))

        return self._verify(question, raw, candidates, evidence)  # 8-9. check, then build the answer

    def _invalid(self, reason: InvalidReason, evidence: Evidence) -> Refused:
        text = INVALID_QUERY_TEXT[reason].format(limit=MAX_QUESTION_LENGTH)
        return self._refuse("invalid_query", evidence, text=text, owner=None)

    def _read_in_context(self, question: Question, evidence: Evidence) -> tuple[Question, str]:
        """A message with earlier turns is read against those of them this audience may see; a follow-up is
        answered as the standalone question it was read as. Returns the question and what retrieval reads."""
        if not question.context:
            return question, question.text
        turns = self.turns_in_view(question.context, question.audience)
        evidence.reading = reading = self._followups.read(question.text, turns)
        if not reading.followup:
            return question, question.text
        return replace(question, text=reading.question), reading.search

    def turns_in_view(self, turns: Sequence[Turn], audience: Audience) -> list[Turn]:
        """The latest turns whose every citation this audience may see, with their heading paths as the index
        gives them to this audience. A turn that cited anything else is left out whole, its question too: a
        thread moved into a wider audience carries nothing of what only the narrower one could read."""
        seen: list[Turn] = []
        for turn in turns[-CONTEXT_TURNS:]:
            passages = [self._index.passage(chunk_id, audience=audience) for chunk_id in turn.cited]
            if any(passage is None for passage in passages):
                continue
            headings = tuple(dict.fromkeys(passage.heading for passage in passages if passage is not None))
            seen.append(replace(turn, headings=headings))
        return seen

    def _assess(self, text: str, candidates: Sequence[RetrievedChunk]) -> Assessment:
        """The answerability assessment. The reader, the matcher and the embedder are adapters that may fail:
        without the one that failed, the shipped model fitted for the features left decides."""
        reader, embedder = self._reader, self._matcher
        model = self._answerability or self._shipped_fit(embedder, reader)
        while True:
            try:
                return assess(text, candidates, embedder=embedder, reader=reader, model=model)
            except ReaderFailed as error:
                log.warning("%s; deciding answerability without the reader", error)
                reader, model = None, self._shipped_fit(embedder, None)
            except EmbedderFailed as error:
                if embedder is not self._embedder:
                    log.warning("%s; deciding answerability with the retrieval embedder", error)
                    embedder = self._embedder
                else:
                    log.warning("%s; deciding answerability on words alone", error)
                    embedder, reader = None, None
                model = self._shipped_fit(embedder, reader)

    def _shipped_fit(self, embedder: Embedder | None, reader: Reader | None) -> AnswerabilityModel:
        """The committed fit for these features: the question matcher's own when it is what is read."""
        return shipped_model(semantic=embedder is not None, reading=reader is not None,
                             matching=embedder is not None and embedder is not self._embedder)

    def retrieve(self, text: str, audience: Audience, risk: RiskAssessment | None = None) -> list[RetrievedChunk]:
        """The chunks the audience may see that match at all, best first, superseded documents dropped."""
        retrieval = self._policy.retrieval
        depth = retrieval.high_risk_depth if risk is not None and risk.is_high else retrieval.depth
        found = current_only(self._index.search(text, audience=audience, limit=depth))
        return [chunk for chunk in found if chunk.score >= retrieval.weak_floor]

    def _known_gap(self, question: Question, gap: KnownGap, candidates: Sequence[RetrievedChunk],
                   evidence: Evidence) -> Refused:
        """A topic sourced.yml names as missing from what this audience may see: refused as `not_in_corpus`
        with the gap's owner. The audit records `not_permitted` when a hidden document matches clearly (at the
        floor) and better than everything the audience may see, as the other refusals do: a gap may be declared
        for a topic some roles may read (salary bands for HR), and for the others it is hidden, not absent."""
        retrieval = self._policy.retrieval
        best = max((chunk.score for chunk in candidates), default=0.0)
        hidden = self._index.best_unscoped_score(question.text)
        hidden_match = hidden >= retrieval.floor and hidden > best + retrieval.hidden_margin
        return self._refuse("not_permitted" if hidden_match else "not_in_corpus", evidence,
                            shown_as="not_in_corpus", owner=gap.owner)

    def _nothing_found(self, question: Question, evidence: Evidence) -> Refused:
        """Nothing the audience may see matches; the unscoped probe only names the true kind for the audit."""
        hidden_match = self._index.best_unscoped_score(question.text) >= self._policy.retrieval.floor
        return self._refuse("not_permitted" if hidden_match else "not_in_corpus", evidence,
                            shown_as="not_in_corpus", owner=self._owner(question, ()))

    def _not_stated(self, question: Question, candidates: Sequence[RetrievedChunk], evidence: Evidence, *,
                    why: str = "no statement answers") -> Refused:
        """Passages match, but none states the answer: the closest are shown, weak ones with a hint to name the
        document; the audit records `not_permitted` when a hidden document matches clearly better than them."""
        best = max(chunk.score for chunk in candidates)
        shown: RefusalKind = "not_retrieved" if best < self._policy.retrieval.floor else "not_in_corpus"
        hidden_match = self._index.best_unscoped_score(question.text) > best + self._policy.retrieval.hidden_margin
        evidence.detail = why
        return self._refuse(
            "not_permitted" if hidden_match else shown, evidence, shown_as=shown,
            owner=self._owner(question, candidates),
        )

    def _self_refusal(self, question: Question, usable: Sequence[RetrievedChunk], evidence: Evidence) -> Refused:
        """The model found no answer in what the audience may see: presented as the kind retrieval knows, as
        if the gate had decided (`not_in_corpus` with the owner routing names, `not_retrieved` for loose
        matches, `not_permitted` in the audit alone); the audit's detail keeps that the model declined."""
        return self._not_stated(question, usable, evidence, why=evidence.detail or "model reported found=false")

    def _verify(self, question: Question, raw: str, usable: Sequence[RetrievedChunk],
                evidence: Evidence) -> Outcome:
        owner = self._owner(question, usable)
        try:
            envelope = parse_envelope(raw)
        except MalformedEnvelope as error:
            evidence.detail = str(error)
            return self._refuse("malformed_response", evidence, owner=owner)
        evidence.model_found = envelope.found
        if not envelope.found:
            self._note_refusal_prose(envelope, evidence)
            return self._self_refusal(question, usable, evidence)
        if refusals.reads_like_refusal(envelope.answer, quotes=[c.quote for c in envelope.claims if c.quote]):
            log.error("phrasing drift: found=true with refusal prose (correlation %s)", evidence.correlation_id)
            self._metrics.phrasing_drift(severity="error")
            evidence.detail = "found=true with refusal prose"
            return self._refuse("model_self_refusal", evidence, owner=owner)
        if not envelope.claims:
            evidence.detail = "found=true without claims"
            return self._refuse("malformed_response", evidence, owner=owner)
        unknown = unknown_chunk_ids(envelope, [chunk.chunk_id for chunk in usable])
        if unknown:
            evidence.detail = f"unknown chunk ids: {unknown[:5]!r}"
            return self._refuse("invalid_citation", evidence, owner=owner)
        return self._grounded_answer(question, envelope, usable, evidence, owner)

    def _grounded_answer(self, question: Question, envelope: Envelope, usable: Sequence[RetrievedChunk],
                         evidence: Evidence, owner: str | None) -> Outcome:
        try:
            outcome = self._checked_answer(question.text, envelope, usable, evidence, owner)
        except Exception as error:  # the semantic claim check calls the embedder, an adapter that may fail
            evidence.detail = f"claim check failed: {type(error).__name__}"
            return self._refuse("model_unavailable", evidence, owner=owner)
        if self._verifier is None or not isinstance(outcome, Answered):
            return outcome
        return self._second_opinion(question, outcome, usable, evidence, owner)

    def _second_opinion(self, question: Question, outcome: Answered, usable: Sequence[RetrievedChunk],
                        evidence: Evidence, owner: str | None) -> Outcome:
        """`SOURCED_VERIFIER=model`: the model reads each claim beside its quote, and the question; a "no" to
        either refuses, and so does a verdict it cannot give."""
        assert self._verifier is not None
        texts = {chunk.chunk_id: chunk.text for chunk in usable}
        claims = [QuotedClaim(text=claim.text, quote=texts[anchor.chunk_id][anchor.start:anchor.end])
                  for claim, anchor in zip(outcome.claims, evidence.quotes, strict=True)]
        evidence.verified = True
        try:
            raw = self._verifier.verify(VerificationRequest(question=question.text, claims=claims))
        except Exception as error:  # an adapter failure is a refusal, never a traceback
            evidence.detail = f"verifier failed: {type(error).__name__}"
            return self._refuse("model_unavailable", evidence, owner=owner)
        try:
            verdict = parse_verdict(raw)
        except MalformedEnvelope as error:
            evidence.detail = f"verifier: {error}"
            return self._refuse("malformed_response", evidence, owner=owner)
        if verdict.quotes_state_claims == "no":
            evidence.detail = "verifier: a quote does not state its claim"
            return self._refuse("unsupported_claim", evidence, owner=owner)
        if verdict.answers_question == "no":
            evidence.detail = "verifier: the claims do not answer the question"
            return self._refuse("unsupported_claim", evidence, owner=owner)
        return outcome

    def _citation(self, n: int, chunk: RetrievedChunk, tier: CitationTier) -> Citation:
        """A citation with its document's age on the day of the answer, and whether that is past the
        operator's `stale_after_days`."""
        updated = chunk.passage.updated
        age = None if updated is None else max(0, (self._clock.now().date() - updated).days)
        return Citation(n=n, passage=chunk.passage, content_hash=chunk.content_hash, tier=tier, age_days=age,
                        stale=age is not None and age > self._policy.stale_after_days)

    def _checked_answer(self, question: str, envelope: Envelope, usable: Sequence[RetrievedChunk],
                        evidence: Evidence, owner: str | None) -> Outcome:
        """Each claim must be stated by its quote (sentence-local support), and the quote must answer the
        question (the reader); the claim then cites the chunk its quote stands in, and the audit records where.
        A later claim the guard cannot verify is dropped when the policy says so (the audit's detail names it)."""
        by_id = {chunk.chunk_id: chunk for chunk in usable}
        asking = Asking(question=question, given=usable, organisation=self._organisation_names())
        markers: dict[str, Citation] = {}
        claims: list[Claim] = []
        quotes: list[QuoteAnchor] = []
        anchors: list[Anchor] = []
        dropped: list[str] = []
        for number, claim in enumerate(envelope.claims, start=1):
            support = self._support(claim, cited_chunks(claim, by_id), embedder=self._embedder, asking=asking)
            if isinstance(support, Unsupported):
                if number == 1 or self._policy.unverified_claims == "refuse":
                    evidence.detail = f"claim {number}: {support.reason}"
                    return self._refuse("unsupported_claim", evidence, owner=owner)
                dropped.append(f"dropped claim {number}: {support.reason}")
                continue
            anchor = support.anchor
            anchors.append(anchor)
            if anchor.chunk.chunk_id not in markers:
                markers[anchor.chunk.chunk_id] = self._citation(len(markers) + 1, anchor.chunk, support.tier)
            claims.append(Claim(text=claim.text.strip(), citations=(markers[anchor.chunk.chunk_id].n,)))
            quotes.append(QuoteAnchor(claim=number, chunk_id=anchor.chunk.chunk_id, start=anchor.span.start,
                                      end=anchor.span.end, sha256=anchor.sha256, given=anchor.given))
        evidence.claim_map = tuple((i + 1, tuple(dict.fromkeys(c.chunk_ids))) for i, c in
                                   enumerate(envelope.claims))
        evidence.quotes = tuple(quotes)
        evidence.detail = "; ".join(dropped) or None
        unanswering = self._unanswering_claim(question, anchors, evidence)
        if unanswering is not None:
            evidence.detail = unanswering
            return self._refuse("unsupported_claim", evidence, owner=owner)
        assert evidence.risk is not None
        try:
            return Answered(text=answer_text(claims, anchors), claims=tuple(claims),
                            citations=tuple(markers.values()), risk=evidence.risk,
                            correlation_id=evidence.correlation_id)
        except CitationInvariantError as error:
            evidence.detail = str(error)
            return self._refuse("unsupported_claim", evidence, owner=owner)

    def _unanswering_claim(self, question: str, anchors: Sequence[Anchor], evidence: Evidence) -> str | None:
        """Why the claims' quotes, true as they are, do not answer this question: none states the kind of value
        the question asks for, or the ranker puts every one far below the best answer (unless the model quotes
        the ranker's own choice), or the reader scores one below its floor. None when they answer, as far as the
        checks configured can tell."""
        asked = None if self._model.quotes_the_ranking else unstated_asked_value(question, anchors)
        if asked is not None:
            return f"{NO_ASKED_VALUE} ({asked})"
        assessment = evidence.assessment
        if not self._model.quotes_the_ranking and assessment is not None:
            gaps = evidence.claim_rank_gaps = tuple(claim_rank_gaps(anchors, assessment))
            margin = assessment.claim_rank_margin
            if margin is not None and not rests_on_an_answer(gaps, margin):
                nearest = min(gap for gap in gaps if gap is not None)
                where = "set aside by the follow-up's reading" if math.isinf(nearest) else \
                    f"the nearest ranked {nearest:.1f} below the best"
                return f"{RANKED_FAR_BELOW} ({where})"
        if self._reader is None:
            return None
        evidence.claim_readings = tuple(claim_readings(question, anchors, self._reader))
        for number, probability in enumerate(evidence.claim_readings, start=1):
            if probability < CLAIM_READING_FLOOR:
                return f"claim {number}: its quote does not answer the question (reader {probability:.3f})"
        return None

    # -- helpers -----------------------------------------------------------------------------------------

    def _note_refusal_prose(self, envelope: Envelope, evidence: Evidence) -> None:
        prose = (envelope.answer or envelope.refusal_reason or "").strip()
        if prose and prose not in refusals.BY_KIND.values():
            log.info("phrasing drift: model refusal prose differs from ours (correlation %s)",
                     evidence.correlation_id)
            self._metrics.phrasing_drift(severity="info")
        evidence.detail = "model reported found=false"

    def _prompt_versions(self, evidence: Evidence) -> str | None:
        """The answer prompt's version, and the verifier's when it was asked ("answer-v2+verify-v1")."""
        if not evidence.model_called:
            return None
        if evidence.verified and self._verifier is not None:
            return f"{self._model.prompt_version}+{self._verifier.prompt_version}"
        return self._model.prompt_version

    def _organisation_names(self) -> tuple[str, ...]:
        """Who the documents' "we" is: the configured names, and those the knowledge base itself shows (a storage
        failure leaves the configured ones: the guard is then only stricter)."""
        try:
            found = self._corpus.organisation_names() if self._corpus is not None else frozenset()
        except Exception:  # the corpus is an adapter over the database
            log.warning("the organisation's names could not be read; using the configured ones")
            found = frozenset()
        return (*self._policy.organisation, *sorted(found))

    def _owner(self, question: Question, permitted: Sequence[RetrievedChunk]) -> str | None:
        return self._router.owner_for(question.text, permitted, floor=self._policy.retrieval.floor)

    def _refuse(self, kind: RefusalKind, evidence: Evidence, *, owner: str | None, text: str | None = None,
                shown_as: RefusalKind | None = None) -> Refused:
        """Every refusal shows the closest passages of the audience's own retrieval, when it found any: a
        refusal moves the asker forward. Nothing else is retrieved for it, so `not_permitted` shows what
        absence would."""
        presented = shown_as or kind
        closest = self._closest(evidence)
        return Refused(kind=kind, shown_as=shown_as if shown_as != kind else None,
                       text=text or refusals.refusal_text(presented, with_closest=bool(closest)),
                       risk=evidence.risk, correlation_id=evidence.correlation_id, owner=owner, nearest=closest)

    def _closest(self, evidence: Evidence) -> tuple[Passage, ...]:
        return tuple(chunk.passage for chunk in evidence.retrieved[: self._policy.retrieval.nearest])

    def _finish(self, question: Question, outcome: Outcome, evidence: Evidence, started: float) -> Outcome:
        """10. Re-check the invariant, audit, record metrics. In `required` mode no audit means no reply."""
        if evidence.reading is not None and evidence.reading.followup:
            outcome = replace(outcome, reading=evidence.reading.question)
        ensure_citation_invariant(outcome)
        seconds = self._clock.monotonic() - started
        try:
            self._audit.write(self._audit_record(question, outcome, evidence, seconds))
        except Exception:  # the sink is an adapter; any failure is handled by mode
            self._metrics.audit_write_failed()
            if self._policy.audit_mode == "required":
                log.error("audit write failed in required mode; withholding reply (correlation %s)",
                          evidence.correlation_id)
                outcome = Refused(kind="audit_unavailable", text=refusals.AUDIT_UNAVAILABLE,
                                  risk=evidence.risk, correlation_id=evidence.correlation_id)
            else:
                log.warning("audit write failed; replying anyway (best_effort, correlation %s)",
                            evidence.correlation_id)
        self._metrics.outcome(kind=presented_kind(outcome), risk=evidence.risk.level if evidence.risk else None,
                              retrieved=len(evidence.retrieved), seconds=seconds)
        return outcome

    def _audit_record(self, question: Question, outcome: Outcome, evidence: Evidence,
                      seconds: float) -> AuditRecord:
        cited = outcome.citations if isinstance(outcome, Answered) else ()
        reading = evidence.reading
        return AuditRecord(
            correlation_id=evidence.correlation_id,
            at=self._clock.now(),
            workspace_id=question.workspace_id,
            channel_id=question.channel_id,
            user_ref=user_reference(question.principal.user_id, self._policy.user_hash_key),
            question_sha256=question_sha256(question.text),
            question_preview=question_preview(question.text),
            risk=evidence.risk.level if evidence.risk else None,
            kind=outcome.kind,
            retrieved=tuple(ScoredId(chunk_id=c.chunk_id, score=round(c.score, 4)) for c in evidence.retrieved),
            cited=tuple(CitedId(chunk_id=c.passage.chunk_id, content_hash=c.content_hash, heading=c.passage.heading,
                                page=c.passage.page, link=c.passage.link) for c in cited),
            claim_map=evidence.claim_map,
            quotes=evidence.quotes,
            model=self._model.name if evidence.model_called else None,
            prompt_version=self._prompt_versions(evidence),
            latency_ms=round(seconds * 1000, 2),
            detail="; ".join(part for part in (evidence.detail, reading.detail if reading else None) if part) or None,
            answerability=answerability_note(evidence.assessment),
            reading=None if reading is None else ReadingNote(
                by=reading.by, followup=reading.followup,
                sha256=question_sha256(reading.question) if reading.followup else None,
                preview=question_preview(reading.question) if reading.followup else None),
            shown_as=presented_kind(outcome) if presented_kind(outcome) != outcome.kind else None,
            audience=question.audience,
            shown=shown_chunks(outcome),
        )


def answerability_note(assessment: Assessment | None) -> AnswerabilityNote | None:
    """The decision's explanation as the audit records it."""
    if assessment is None:
        return None
    reader = assessment.best.features.get("reader") if assessment.best else None
    return AnswerabilityNote(score=round(assessment.score, 4), threshold=assessment.threshold,
                             model_version=assessment.model_version, strongest=assessment.explanation,
                             reader=None if reader is None else round(reader, 4))


def shown_chunks(outcome: Outcome) -> tuple[str, ...]:
    """The chunks a reply shows its readers: an answer's citations, a refusal's closest passages."""
    if isinstance(outcome, Answered):
        return tuple(citation.passage.chunk_id for citation in outcome.citations)
    if isinstance(outcome, Refused):
        return tuple(passage.chunk_id for passage in outcome.nearest)
    return ()


def current_only(chunks: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
    """Drop chunks of documents that another retrieved document supersedes: never cite the older as current."""
    superseded = {doc_id for chunk in chunks for doc_id in chunk.supersedes}
    return [chunk for chunk in chunks if chunk.doc_id not in superseded]
