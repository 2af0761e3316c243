"""The extractive answerer and the claim check with an embedder (a scripted fake: no model, no I/O)."""

import json
from collections.abc import Sequence

from core.application.checks import Supported, Unsupported, claim_support
from core.application.envelope import EnvelopeClaim
from core.application.orchestrator import Orchestrator, Question
from core.application.ports import GenerationRequest
from core.application.risk import KeywordRiskClassifier
from core.application.routing import OwnerRouter
from core.domain import Audience, Passage, Principal, Refused, RetrievedChunk, RiskAssessment
from core.llm.extractive import ExtractiveModel, conflicting_modifier
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


def ask(model: ExtractiveModel, question: str, chunks: Sequence[RetrievedChunk]) -> dict[str, object]:
    request = GenerationRequest(question=question, chunks=chunks, risk=RiskAssessment(level="low"))
    result: dict[str, object] = json.loads(model.generate(request))
    return result


POLICY = chunk("Returns are accepted within 30 days of delivery. Shipping labels are printed at the desk.")


def test_a_paraphrase_is_answered_with_an_embedder_and_refused_without() -> None:
    question = "how long do I have to send stuff back?"
    embedder = ScriptedEmbedder({"send stuff back": 0, "returns are accepted": 0})
    assert ask(ExtractiveModel(), question, [POLICY])["found"] is False
    answered = ask(ExtractiveModel(embedder=embedder), question, [POLICY])
    assert answered["found"] is True
    assert "30 days" in str(answered["answer"])


def test_a_question_sharing_the_words_but_not_the_meaning_is_refused() -> None:
    fees = chunk("Late fees apply to invoices paid after the due date.", heading="Billing > Late fees")
    embedder = ScriptedEmbedder({"percentage": 1, "late fees apply": 2})
    assert ask(ExtractiveModel(embedder=embedder), "what is the late-fee percentage?", [fees])["found"] is False


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


def test_a_statement_that_swaps_the_subject_for_another_is_told_apart() -> None:
    stated = "Fully remote employees can expense a coworking membership of up to $250 per month."
    assert conflicting_modifier("Can I expense a gym membership?", stated) == "gym"
    assert conflicting_modifier("Can I expense a coworking membership?", stated) is None
    assert conflicting_modifier("Is a membership something I can expense?", stated) is None


def test_words_on_either_side_of_punctuation_are_not_a_modifier_and_its_head() -> None:
    stated = "The annual raise limit is 10 percent of base salary."
    assert conflicting_modifier("what's the limit (Salary Bands, Raise limit)?", stated) is None
    assert conflicting_modifier("what's the salary bands raise limit?", stated) == "bands"


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


def test_a_further_statement_about_another_subject_is_not_added_to_the_answer() -> None:
    bands = chunk("| Title | Base salary range |\n|---|---|\n"
                  "| Senior Software Engineer | $145,000 to $180,000 |\n"
                  "| Staff Software Engineer | $185,000 to $225,000 |\n", heading="Salary Bands > Engineering")

    answered = ask(ExtractiveModel(), "What is the base salary range for a senior software engineer?", [bands])

    assert answered["found"] is True
    assert "$145,000" in str(answered["answer"]) and "Staff" not in str(answered["answer"])


def test_a_quoted_claim_is_supported_without_embedding_anything() -> None:
    embedder = ScriptedEmbedder({})
    claim = EnvelopeClaim(text="Returns are accepted within 30 days of delivery.", chunk_ids=["returns#1"])

    assert unsupported_reason(claim, [POLICY], embedder) is None
    assert tier(claim.text, POLICY, embedder) == "direct"
    assert embedder.calls == 0


def test_an_age_question_is_answered_by_the_number_that_states_the_age() -> None:
    proxy = chunk("Parents have proxy access to a child's account until the child turns 12.",
                  heading="Portal > Proxy access")

    answered = ask(ExtractiveModel(), "Until what age do parents have proxy access?", [proxy])

    assert answered["found"] is True
    assert "12" in str(answered["answer"])


def test_how_much_notice_asks_for_a_time_not_an_amount() -> None:
    swaps = chunk("A shift swap posted with less notice than the rota allows costs $20. "
                  "Post the swap at least 48 hours before the shift.", heading="Rota > Shift swaps")

    answered = ask(ExtractiveModel(), "How much notice do I give for a shift swap?", [swaps])

    assert answered["found"] is True
    assert "48 hours" in str(answered["answer"]) and "$20" not in str(answered["answer"])


def test_a_typed_question_about_another_kind_of_the_thing_is_refused() -> None:
    stated = chunk("The northern flow keeps the name IJssel for 40 km until it flows into the lake.",
                   heading="Delta > Distributaries")

    assert ask(ExtractiveModel(), "For how many km does the southern flow keep its name?", [stated])["found"] is False
    assert ask(ExtractiveModel(), "For how many km does the northern flow keep its name?", [stated])["found"] is True


def test_a_where_question_is_answered_by_the_statement_that_names_a_place() -> None:
    laptops = chunk("Returned laptops are wiped within 2 days of return. Drop them off at the IT desk on floor 3.",
                    heading="Equipment > Returning a laptop")

    answered = ask(ExtractiveModel(), "Where do I drop off returned laptops?", [laptops])

    assert answered["found"] is True
    assert "IT desk" in str(answered["answer"]) and "wiped" not in str(answered["answer"])


def test_the_extractive_model_quotes_the_chunk_verbatim_markup_and_table_rows_included() -> None:
    rates = chunk("Mileage is paid at **$0.70** per mile.\n\n| Vehicle | Rate per mile |\n|---|---|\n"
                  "| Van | $0.90 |\n| Bicycle | $0.25 |", heading="Travel > Mileage")
    asked = [ask(ExtractiveModel(), question, [rates]) for question in
             ("What is the mileage rate per mile?", "What is the rate per mile for a bicycle?")]
    claims = [claim for answer in asked for claim in answer["claims"]]  # type: ignore[attr-defined]
    quotes = {claim["text"]: claim["quote"] for claim in claims}

    assert quotes["Mileage is paid at $0.70 per mile."] == "Mileage is paid at **$0.70** per mile."
    assert quotes["Vehicle: Bicycle; Rate per mile: $0.25"] == "| Bicycle | $0.25 |"
    for claim in claims:
        assert claim["quote"] in rates.text
        assert isinstance(claim_support(EnvelopeClaim.model_validate(claim), [rates]), Supported)
