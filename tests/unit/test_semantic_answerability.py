"""The claim check with an embedder (a scripted fake: no model, no I/O)."""

import json
from collections.abc import Sequence

import pytest

from core.application.answerability.model import shipped_model
from core.application.guard.checks import Supported, Unsupported, claim_support
from core.application.guard.envelope import EnvelopeClaim
from core.application.language.statements import split_statements
from core.application.orchestrator import Orchestrator, Question
from core.application.risk import KeywordRiskClassifier
from core.application.routing import OwnerRouter
from core.domain import Audience, Passage, Principal, Refused, RetrievedChunk
from tests.unit import fakes


class ScriptedEmbedder:
    """Texts containing the same 'topic' word get the same unit vector; anything else is orthogonal."""

    def __init__(self, topics: dict[str, int]) -> None:
        self._topics = topics
        self.calls = 0

    @property
    def model_id(self) -> str:
        return "scripted@1"

    @property
    def dim(self) -> int:
        return 8

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        out = []
        for text in texts:
            vector = [0.0] * 8
            axis = next((n for word, n in self._topics.items() if word in text.lower()), 7)
            vector[axis] = 1.0
            out.append(vector)
        return out


class AtCosine(ScriptedEmbedder):
    """Every text after the first lies at the given cosine from the first."""

    def __init__(self, cosine: float) -> None:
        super().__init__({})
        self._cosine = cosine

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        other = [self._cosine, (1 - self._cosine**2) ** 0.5] + [0.0] * 6
        return [[1.0] + [0.0] * 7] + [other for _ in texts[1:]]


def unsupported_reason(claim: EnvelopeClaim, cited: Sequence[RetrievedChunk],
                       embedder: ScriptedEmbedder | None = None) -> str | None:
    support = claim_support(claim, cited, embedder=embedder)
    return support.reason if isinstance(support, Unsupported) else None


def tier(claim_text: str, cited: RetrievedChunk, embedder: ScriptedEmbedder) -> str:
    support = claim_support(EnvelopeClaim(text=claim_text, chunk_ids=[cited.chunk_id]), [cited], embedder=embedder)
    assert isinstance(support, Supported), support
    return support.tier


def chunk(text: str, heading: str = "Returns Policy > Return window", score: float = 0.5) -> RetrievedChunk:
    passage = Passage(chunk_id="returns#1", doc_id="returns", title="Returns Policy", heading=heading, text=text)
    return RetrievedChunk(passage=passage, score=score, content_hash="h")


POLICY = chunk("Returns are accepted within 30 days of delivery. Shipping labels are printed at the desk.")


def test_a_claim_with_the_right_number_about_another_subject_is_unsupported() -> None:
    cited = [chunk("The security deposit is 5% of the rent.", heading="Leases > Deposit")]
    claim = EnvelopeClaim(text="The late fee is 5% of the rent.", chunk_ids=["returns#1"])
    assert unsupported_reason(claim, cited, ScriptedEmbedder({"late fee": 1, "security deposit": 2})) is not None


def test_a_claim_below_the_semantic_floor_is_unsupported_even_when_the_words_match() -> None:
    cited = [chunk("Returns are accepted within 30 days of delivery.")]
    claim = EnvelopeClaim(text="Returns accepted within 30 days of delivery", chunk_ids=["returns#1"])
    assert unsupported_reason(claim, cited) is None
    contrary = ScriptedEmbedder({"returns accepted within": 3, "returns are accepted": 4})
    reason = unsupported_reason(claim, cited, contrary)
    assert reason is not None and "semantic support" in reason


def test_citation_tiers_direct_and_synthesis() -> None:
    cited = chunk("Returns are accepted within 30 days of delivery.")
    same = ScriptedEmbedder({"30 days": 0})
    assert tier("Returns are accepted within 30 days of delivery.", cited, same) == "direct"
    assert tier("Returns are taken back within 30 days of their delivery.", cited, AtCosine(0.8)) == "synthesis"


def test_an_embedder_failing_during_the_claim_check_is_a_refusal_not_a_traceback() -> None:
    refunds = fakes.chunk("CHK-001", "Customers may return items within 30 days of delivery for a full refund.",
                          doc_id="refunds", title="Refund Policy", owner="#support-ops")
    grounded = json.dumps({"found": True, "answer": "Within 30 days.", "confidence": "high", "refusal_reason": None,
                           "claims": [{"text": "Items can be returned within 30 days of delivery for a refund.",
                                       "chunk_ids": ["CHK-001"]}]})  # a paraphrase: only a quote skips the check
    audit = fakes.MemoryAudit()
    orchestrator = Orchestrator(index=fakes.FakeIndex([refunds]), model=fakes.ScriptedModel(grounded),
                                audit=audit, risk=KeywordRiskClassifier(), clock=fakes.FixedClock(),
                                metrics=fakes.RecordingMetrics(), router=OwnerRouter(known_gaps=()),
                                embedder=fakes.FailingEmbedder())
    staff = Principal(user_id="U1", roles=frozenset({"everyone"}))

    outcome = orchestrator.ask(Question(text="How many days do customers have to return items?",
                                        principal=staff, audience=Audience.only(staff)))

    assert isinstance(outcome, Refused) and outcome.kind == "model_unavailable"
    assert [record.kind for record in audit.records] == ["model_unavailable"]


def test_a_quoted_claim_is_supported_without_embedding_anything() -> None:
    embedder = ScriptedEmbedder({})
    claim = EnvelopeClaim(text="Returns are accepted within 30 days of delivery.", chunk_ids=["returns#1"])

    assert unsupported_reason(claim, [POLICY], embedder) is None
    assert tier(claim.text, POLICY, embedder) == "direct"
    assert embedder.calls == 0


def test_an_embedder_failing_during_the_assessment_decides_on_words_alone(caplog: pytest.LogCaptureFixture) -> None:
    refunds = fakes.chunk("CHK-001", "Customers may return items within 30 days of delivery for a full refund.",
                          doc_id="refunds", title="Refund Policy", owner="#support-ops")
    orchestrator = Orchestrator(index=fakes.FakeIndex([refunds]), model=fakes.ScriptedModel(""),
                                audit=fakes.MemoryAudit(), risk=KeywordRiskClassifier(), clock=fakes.FixedClock(),
                                metrics=fakes.RecordingMetrics(), router=OwnerRouter(known_gaps=()),
                                embedder=fakes.FailingEmbedder())
    staff = Principal(user_id="U1", roles=frozenset({"everyone"}))

    _, evidence = orchestrator.ask_with_evidence(Question(text="How many days do customers have to return items?",
                                                          principal=staff, audience=Audience.only(staff)))

    assert evidence.assessment is not None
    assert evidence.assessment.model_version == shipped_model(semantic=False).version
    assert "deciding answerability on words alone" in caplog.text


def test_the_assessment_reads_the_question_matcher_and_not_the_retrieval_embedder() -> None:
    refunds = fakes.chunk("CHK-001", "Customers may return items within 30 days of delivery for a full refund.",
                          doc_id="refunds", title="Refund Policy", owner="#support-ops")
    retrieval, matcher = ScriptedEmbedder({"return": 0}), ScriptedEmbedder({"return": 0})
    orchestrator = Orchestrator(index=fakes.FakeIndex([refunds]), model=fakes.ScriptedModel(""),
                                audit=fakes.MemoryAudit(), risk=KeywordRiskClassifier(), clock=fakes.FixedClock(),
                                metrics=fakes.RecordingMetrics(), router=OwnerRouter(known_gaps=()),
                                embedder=retrieval, matcher=matcher)
    staff = Principal(user_id="U1", roles=frozenset({"everyone"}))

    _, evidence = orchestrator.ask_with_evidence(Question(text="How many days do customers have to return items?",
                                                          principal=staff, audience=Audience.only(staff)))

    assert evidence.assessment is not None
    assert evidence.assessment.model_version == shipped_model(semantic=True, matching=True).version
    assert (matcher.calls, retrieval.calls) == (1, 0)
    assert evidence.assessment.candidates[0].features["semantic"] == pytest.approx(1.0)


def test_a_matcher_failing_during_the_assessment_decides_with_the_retrieval_embedder_and_its_fit(
        caplog: pytest.LogCaptureFixture) -> None:
    refunds = fakes.chunk("CHK-001", "Customers may return items within 30 days of delivery for a full refund.",
                          doc_id="refunds", title="Refund Policy", owner="#support-ops")
    retrieval = ScriptedEmbedder({"return": 0})
    orchestrator = Orchestrator(index=fakes.FakeIndex([refunds]), model=fakes.ScriptedModel(""),
                                audit=fakes.MemoryAudit(), risk=KeywordRiskClassifier(), clock=fakes.FixedClock(),
                                metrics=fakes.RecordingMetrics(), router=OwnerRouter(known_gaps=()),
                                embedder=retrieval, matcher=fakes.FailingEmbedder())
    staff = Principal(user_id="U1", roles=frozenset({"everyone"}))

    _, evidence = orchestrator.ask_with_evidence(Question(text="How many days do customers have to return items?",
                                                          principal=staff, audience=Audience.only(staff)))

    assert evidence.assessment is not None
    assert evidence.assessment.model_version == shipped_model(semantic=True).version
    assert retrieval.calls == 1
    assert "deciding answerability with the retrieval embedder" in caplog.text


def test_a_statement_quotes_the_chunk_verbatim_markup_and_table_rows_included() -> None:
    rates = chunk("Mileage is paid at **$0.70** per mile.\n\n| Vehicle | Rate per mile |\n|---|---|\n"
                  "| Van | $0.90 |\n| Bicycle | $0.25 |", heading="Travel > Mileage")
    quotes = {statement.text: statement.quote for statement in split_statements(rates)}

    assert quotes["Mileage is paid at $0.70 per mile."] == "Mileage is paid at **$0.70** per mile."
    assert quotes["Vehicle: Bicycle; Rate per mile: $0.25"] == "| Bicycle | $0.25 |"
    for text, quote in quotes.items():
        assert quote in rates.text
        claim = EnvelopeClaim(text=text, chunk_ids=["returns#1"], quote=quote)
        assert isinstance(claim_support(claim, [rates]), Supported)


def test_a_claim_of_two_cells_is_read_against_those_cells_under_their_headers_not_the_whole_row() -> None:
    table = chunk("| Severity | What it means | Acknowledge a page within |\n|---|---|---|\n"
                  "| SEV1 | Payments down for every merchant | 5 minutes |\n"
                  "| SEV2 | A major feature broken for some merchants | 15 minutes |",
                  heading="On-call Runbook > Severity levels")
    claim = EnvelopeClaim(text="A SEV2 page must be acknowledged within 15 minutes.", chunk_ids=["returns#1"],
                          quote="| SEV2 | A major feature broken for some merchants | 15 minutes |")
    # the whole row reads as what a severity means; the two cells the claim states read as the claim does
    embedder = ScriptedEmbedder({"what it means": 2, "broken": 2, "acknowledge": 1})
    assert unsupported_reason(claim, [table], embedder) is None
    moved = EnvelopeClaim(text="A SEV2 page must be acknowledged within 5 minutes.", chunk_ids=["returns#1"],
                          quote=claim.quote)
    assert "numbers" in (unsupported_reason(moved, [table], embedder) or "")
