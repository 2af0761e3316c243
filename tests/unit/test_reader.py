"""The reader port in the pipeline: what it reads, how its scores decide, and what happens when it fails."""

import json

import pytest

from core.application.answerability.model import READ_STATEMENTS, assess, shipped_model
from core.application.orchestrator import Orchestrator, Question
from core.application.ports import AnswerModel, Reader, ReadPassage
from core.application.risk import KeywordRiskClassifier
from core.application.routing import OwnerRouter
from core.domain import Answered, Audience, Principal, Refused
from core.llm.reader import pair_text
from tests.fake_embedders import BagOfWords
from tests.unit import fakes

STAFF = Principal(user_id="U1", roles=frozenset({"everyone"}))
QUESTION = "How many days do customers have to return items?"
REFUNDS = fakes.chunk("CHK-001", "Customers may return items within 30 days of delivery. Gift cards are sent by "
                      "email within 2 hours of purchase.", doc_id="refunds", title="Refund Policy",
                      heading="Refund Policy > Returns", owner="#support-ops")


def claiming(sentence: str) -> str:
    return json.dumps({"found": True, "answer": sentence, "confidence": "high", "refusal_reason": None,
                       "claims": [{"text": sentence, "chunk_ids": ["CHK-001"], "quote": sentence}]})


def pipeline(model: AnswerModel, reader: Reader, audit: fakes.MemoryAudit | None = None) -> Orchestrator:
    return Orchestrator(index=fakes.FakeIndex([REFUNDS]), model=model, audit=audit or fakes.MemoryAudit(),
                        risk=KeywordRiskClassifier(), clock=fakes.FixedClock(), metrics=fakes.RecordingMetrics(),
                        router=OwnerRouter(known_gaps=()), embedder=BagOfWords(), reader=reader,
                        answerability=fakes.answerability(answers=True))


def test_a_true_quote_that_answers_another_question_is_refused() -> None:
    model = fakes.ScriptedModel(claiming("Gift cards are sent by email within 2 hours of purchase."))

    outcome, evidence = pipeline(model, fakes.KeywordReader("return")).ask_with_evidence(
        Question(text=QUESTION, principal=STAFF, audience=Audience.only(STAFF)))

    assert isinstance(outcome, Refused) and outcome.kind == "unsupported_claim"
    assert evidence.detail is not None and "does not answer the question" in evidence.detail
    assert evidence.claim_readings == (0.01,)


def test_a_quote_the_reader_takes_as_the_answer_is_kept() -> None:
    reader = fakes.KeywordReader("return")
    model = fakes.ScriptedModel(claiming("Customers may return items within 30 days of delivery."))

    outcome, evidence = pipeline(model, reader).ask_with_evidence(
        Question(text=QUESTION, principal=STAFF, audience=Audience.only(STAFF)))

    assert isinstance(outcome, Answered)
    assert evidence.claim_readings == (0.95,)
    assert reader.batches[-1] == [ReadPassage(text="Customers may return items within 30 days of delivery.",
                                              heading="Refund Policy > Returns")]


def test_the_audit_carries_the_readers_score_of_the_best_statement() -> None:
    audit = fakes.MemoryAudit()
    model = fakes.ScriptedModel(claiming("Customers may return items within 30 days of delivery."))

    pipeline(model, fakes.KeywordReader("return"), audit).ask(
        Question(text=QUESTION, principal=STAFF, audience=Audience.only(STAFF)))

    note = audit.records[0].answerability
    assert note is not None and note.reader == 0.95


def test_a_failing_reader_leaves_the_decision_to_the_fit_without_it(caplog: pytest.LogCaptureFixture) -> None:
    orchestrator = Orchestrator(index=fakes.FakeIndex([REFUNDS]), model=fakes.ScriptedModel(""),
                                audit=fakes.MemoryAudit(), risk=KeywordRiskClassifier(), clock=fakes.FixedClock(),
                                metrics=fakes.RecordingMetrics(), router=OwnerRouter(known_gaps=()),
                                embedder=BagOfWords(), reader=fakes.FailingReader())

    _, evidence = orchestrator.ask_with_evidence(Question(text=QUESTION, principal=STAFF,
                                                          audience=Audience.only(STAFF)))

    assert evidence.assessment is not None
    assert evidence.assessment.model_version == shipped_model(semantic=True).version
    assert "deciding answerability without the reader" in caplog.text


def test_the_reader_reads_a_bounded_batch_each_statement_with_its_heading_and_the_one_before() -> None:
    sentences = [f"Rule {n} covers returns of item group {n}." for n in range(40)]
    long_chunk = fakes.chunk("CHK-002", " ".join(sentences), heading="Returns > Rules")
    reader = fakes.KeywordReader("return")

    assessment = assess("Which rule covers returns of item group 7?", [long_chunk.chunk], embedder=BagOfWords(),
                        reader=reader, model=fakes.answerability(answers=True))

    assert len(reader.batches) == 1 and len(reader.batches[0]) == READ_STATEMENTS
    by_text = {passage.text: passage for passage in reader.batches[0]}
    seventh = by_text["Rule 7 covers returns of item group 7."]
    assert (seventh.heading, seventh.before) == ("Returns > Rules", "Rule 6 covers returns of item group 6.")
    assert all("reader" in candidate.features for candidate in assessment.candidates)


def test_without_an_embedder_the_reader_still_reads_and_its_lexical_fit_decides() -> None:
    reader = fakes.KeywordReader("return")

    assessment = assess(QUESTION, [REFUNDS.chunk], reader=reader)

    assert len(reader.batches) == 1
    assert assessment.model_version == shipped_model(semantic=False, reading=True).version
    best = assessment.candidates[0]
    assert best.statement.text.startswith("Customers may return") and best.features["reader"] == 0.95


def test_the_statement_comes_first_so_truncation_cuts_its_context() -> None:
    passage = ReadPassage(text="Refunds take 5 days.", heading="Refunds > Timing", before="Refunds go to the card.")

    assert pair_text(passage) == "Refunds take 5 days. [SEP] Refunds > Timing Refunds go to the card."
    assert pair_text(ReadPassage(text="Refunds take 5 days.")) == "Refunds take 5 days."
