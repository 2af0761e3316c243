"""The contract through the public orchestrator: every path ends in one audited outcome."""

import hashlib
import json
from typing import Any, Final

import pytest

from core.application import refusals
from core.application.orchestrator import AnswerabilityGate, AnswerPolicy, Orchestrator, Question, UnverifiedClaims
from core.application.ports import VerificationRequest
from core.application.risk import KeywordRiskClassifier
from core.application.routing import KnownGap, OwnerRouter
from core.domain import Answered, Audience, Clarify, Principal, Refused
from tests.unit.fakes import (
    FailingAudit,
    FakeIndex,
    FixedClock,
    MemoryAudit,
    RecordingMetrics,
    ScriptedModel,
    StoredChunk,
    answerability,
    chunk,
)

REFUNDS = chunk("CHK-001", "Customers may return items within 30 days of delivery for a full refund.",
                doc_id="refunds", title="Refund Policy", heading="Refund Policy > Return window",
                owner="#support-ops")
SALARIES = chunk("CHK-900", "The salary band for a senior engineer is $150,000 to $190,000.",
                 doc_id="bands", title="Salary Bands", heading="Salary Bands > Engineering",
                 owner="#comp-team", audience=("hr",))
TWO_FEES = [chunk("CHK-001", "The late cancellation fee is $50.", doc_id="cancel", title="Cancellations",
                  heading="Fees"),
            chunk("B-1", "A replacement key card costs a $25 fee.", doc_id="cards", title="Key Cards",
                  heading="Fees")]
STAFF = Principal(user_id="U1", roles=frozenset({"everyone"}))
HR = Principal(user_id="U2", roles=frozenset({"everyone", "hr"}))
REFUND_QUESTION = "How many days do customers have to return items for a refund?"


def envelope(**overrides: Any) -> str:
    body: dict[str, Any] = {
        "found": True,
        "answer": "Customers may return items within 30 days.",
        "claims": [{"text": "Customers may return items within 30 days of delivery.", "chunk_ids": ["CHK-001"]}],
        "confidence": "high",
        "refusal_reason": None,
    }
    body.update(overrides)
    return json.dumps(body)


class Harness:
    def __init__(self, *, chunks: list[StoredChunk] | None = None, model: ScriptedModel | None = None,
                 audit: Any = None, audit_mode: str = "best_effort", gaps: tuple[KnownGap, ...] = (),
                 answers: bool = True, gate: AnswerabilityGate = "before_model",
                 unverified_claims: UnverifiedClaims = "drop") -> None:
        self.index = FakeIndex(chunks if chunks is not None else [REFUNDS, SALARIES])
        self.model = model or ScriptedModel(envelope())
        self.audit = audit or MemoryAudit()
        self.metrics = RecordingMetrics()
        self.orchestrator = Orchestrator(
            index=self.index, model=self.model, audit=self.audit, risk=KeywordRiskClassifier(),
            clock=FixedClock(), metrics=self.metrics, router=OwnerRouter(known_gaps=gaps, default_owner="#help-desk"),
            answerability=answerability(answers=answers),  # the decision itself: test_answerability_*
            policy=AnswerPolicy(audit_mode=audit_mode, answerability_gate=gate,  # type: ignore[arg-type]
                                unverified_claims=unverified_claims),
        )

    def ask(self, text: str, principal: Principal = STAFF) -> Any:
        return self.orchestrator.ask(Question(text=text, principal=principal, audience=Audience.only(principal)))


def refused_kind(harness: Harness, text: str = REFUND_QUESTION) -> str:
    outcome = harness.ask(text)
    assert isinstance(outcome, Refused), outcome
    return outcome.kind


def test_a_grounded_envelope_becomes_an_answer_citing_exactly_the_cited_chunk() -> None:
    outcome = Harness().ask(REFUND_QUESTION)
    assert isinstance(outcome, Answered)
    assert [c.passage.chunk_id for c in outcome.citations] == ["CHK-001"]
    assert outcome.claims[0].citations == (1,)
    assert outcome.text.endswith("[1]")
    assert outcome.citations[0].tier == "direct"


def test_no_chunk_refuses_not_in_corpus_without_calling_the_model() -> None:
    harness = Harness(chunks=[])
    outcome = harness.ask("What is the parking policy at the Berlin office?")
    assert isinstance(outcome, Refused)
    assert outcome.kind == "not_in_corpus"
    assert outcome.text == refusals.NOT_IN_CORPUS
    assert outcome.nearest == ()
    assert outcome.owner == "#help-desk"
    assert harness.model.requests == []


@pytest.mark.parametrize(
    ("output", "kind"),
    [
        ("{not json", "malformed_response"),
        (envelope(bonus_info="free pizza"), "malformed_response"),
        ("Sure! Here is the answer: " + envelope(), "malformed_response"),
        (envelope() + "\nHope that helps.", "malformed_response"),
        (envelope(claims=[{"text": "Customers may return items within 30 days.", "chunk_ids": ["CHK-777"]}]),
         "invalid_citation"),
        (envelope(claims=[{"text": "Customers may return items within 30 days.", "chunk_ids": ["chk-001"]}]),
         "invalid_citation"),
        (envelope(claims=[{"text": "Customers may return items within 90 days of delivery.",
                           "chunk_ids": ["CHK-001"]}]), "unsupported_claim"),
        (envelope(answer="I don't know; the sources do not say."), "model_self_refusal"),
        (envelope(found=True, claims=[]), "malformed_response"),
    ],
    ids=["malformed-json", "extra-field", "prose-before", "prose-after", "invented-id",
         "case-changed-id", "number-not-in-chunk", "found-true-refusal-prose", "found-without-claims"],
)
def test_every_failed_check_is_a_refusal_of_its_kind_showing_the_closest_passages(output: str, kind: str) -> None:
    harness = Harness(model=ScriptedModel(output))
    outcome = harness.ask(REFUND_QUESTION)
    assert isinstance(outcome, Refused) and outcome.kind == kind
    assert harness.audit.records[-1].kind == kind
    assert outcome.text == refusals.refusal_text(kind, with_closest=True)  # type: ignore[arg-type]
    assert [passage.chunk_id for passage in outcome.nearest] == ["CHK-001"]


def test_refusal_text_comes_from_code_never_from_the_model() -> None:
    output = envelope(found=False, claims=[], answer="Honestly, nobody knows, try Google.")
    harness = Harness(model=ScriptedModel(output))
    outcome = harness.ask(REFUND_QUESTION)
    assert isinstance(outcome, Refused)
    assert outcome.text == refusals.refusal_text(outcome.kind, with_closest=True)
    assert "Google" not in outcome.text
    assert harness.metrics.drift == ["info"]


def test_refusal_words_the_cited_quote_holds_are_the_documents_not_the_models() -> None:
    sick_leave = chunk("CHK-002", "Staff unable to work because of illness are paid in full for 20 days.",
                       doc_id="leave", title="Sick Leave", heading="Sick Leave > Pay")
    stated = "Staff unable to work because of illness are paid in full for 20 days."
    answer = envelope(answer=stated, claims=[{"text": stated, "chunk_ids": ["CHK-002"], "quote": stated}])
    harness = Harness(chunks=[sick_leave], model=ScriptedModel(answer))

    outcome = harness.ask("Are staff paid while they are off sick?")

    assert isinstance(outcome, Answered), outcome
    assert harness.metrics.drift == []


def test_claims_on_items_of_one_list_are_written_as_that_list_under_its_lead_in_once() -> None:
    kit = chunk("CHK-003", "New starters receive:\n- a laptop\n- a headset\n- a badge\n\n"
                "Kit is returned on your last day.", doc_id="kit", title="Starter Kit", heading="Starter Kit > Kit")
    claims = [{"text": "New starters receive: a laptop", "chunk_ids": ["CHK-003"], "quote": "a laptop"},
              {"text": "New starters receive: a headset", "chunk_ids": ["CHK-003"], "quote": "a headset"},
              {"text": "Kit is returned on your last day.", "chunk_ids": ["CHK-003"],
               "quote": "Kit is returned on your last day."}]
    harness = Harness(chunks=[kit], model=ScriptedModel(envelope(answer="", claims=claims)))

    outcome = harness.ask("What kit do new starters receive, and when is it returned?")

    assert isinstance(outcome, Answered), outcome
    assert outcome.text == ("New starters receive:\n• a laptop [1]\n• a headset [1]\n• 1 more in the source [1]\n"
                            "Kit is returned on your last day. [1]")
    assert [claim.text for claim in outcome.claims] == [claim["text"] for claim in claims]


def test_a_models_own_words_are_never_put_under_the_documents_lead_in() -> None:
    outcome = listed_answer("We do not use the dashboard to:\n- review pull requests\n- decide promotions",
                            [("The dashboard is not used to review pull requests", "review pull requests"),
                             ("We do not use the dashboard to: decide promotions", "decide promotions")],
                            "Do we use the dashboard to review pull requests or decide promotions?")

    assert outcome.text == ("The dashboard is not used to review pull requests [1] "
                            "We do not use the dashboard to: decide promotions [1]")


def listed_answer(text: str, quotes: list[tuple[str, str]], question: str) -> Answered:
    """The answer to `question` from one chunk of `text`, with a claim (text, quote) per pair."""
    kit = chunk("CHK-004", text, doc_id="kit", title="Kit", heading="Kit > Devices")
    claims = [{"text": said, "chunk_ids": ["CHK-004"], "quote": quote} for said, quote in quotes]
    outcome = Harness(chunks=[kit], model=ScriptedModel(envelope(answer="", claims=claims))).ask(question)
    assert isinstance(outcome, Answered), outcome
    return outcome


def test_two_lists_with_the_same_lead_in_are_two_lists() -> None:
    kits = "Laptop kit. You need:\n- a charger\n- a sleeve\nPhone kit. You need:\n- a case\n- a sim card"
    outcome = listed_answer(kits,
                            [("You need: a case", "a case"), ("You need: a sim card", "a sim card")],
                            "What do I need for the phone kit, a case?")

    assert outcome.text == "You need:\n• a case [1]\n• a sim card [1]"  # nothing "more": the laptop's list is another


def test_nested_items_are_listed_under_their_lead_ins_and_an_items_sentences_share_its_line() -> None:
    text = "Return:\n- Your badge\n  - the photo badge\n  - the parking tag\n- Your laptop. It is wiped first."
    nested = listed_answer(text, [("Return: Your badge: the photo badge", "the photo badge"),
                                  ("Return: Your badge: the parking tag", "the parking tag")],
                           "Which badge items do I return, the photo badge?")
    sentences = listed_answer(text, [("Return: Your badge", "Your badge"), ("Return: Your laptop.", "Your laptop."),
                                     ("Return: It is wiped first.", "It is wiped first.")],
                              "What do I return, my badge and laptop?")

    assert nested.text == "Return: Your badge:\n• the photo badge [1]\n• the parking tag [1]"
    assert sentences.text == "Return:\n• Your badge [1]\n• Your laptop. It is wiped first. [1]"


def test_a_question_is_said_once_for_the_claims_right_after_it_and_again_after_another() -> None:
    text = ("- Can I carry over leave?\n  - Yes, up to 5 days. Unused days lapse on 31 March.\n"
            "- What carries over besides leave?\n  - Training budget\n  - Gym credits\n")
    carry = ("Can I carry over leave? Yes, up to 5 days.", "Yes, up to 5 days.")
    lapse = ("Unused days lapse on 31 March.", "Unused days lapse on 31 March.")
    budget = ("What carries over besides leave? Training budget", "Training budget")
    gym = ("What carries over besides leave? Gym credits", "Gym credits")

    together = listed_answer(text, [budget, gym], "what carries over besides leave?")
    apart = listed_answer(text, [budget, carry, gym], "what carries over into next year?")
    after_reply = listed_answer(text, [carry, lapse], "can I carry over leave?")

    assert together.text == "What carries over besides leave?\n• Training budget [1]\n• Gym credits [1]"
    assert apart.text == ("What carries over besides leave? Training budget [1] Can I carry over leave? Yes, up to 5 "
                          "days. [1] What carries over besides leave? Gym credits [1]")  # not read as leave's
    assert after_reply.text == "Can I carry over leave? Yes, up to 5 days. [1] Unused days lapse on 31 March. [1]"


def test_a_question_a_list_spanning_two_passages_answers_is_said_once() -> None:
    first = chunk("CHK-005", "- What carries over besides leave?\n  - Training budget\n", doc_id="kit", title="Kit",
                  heading="Kit > Devices")
    second = chunk("CHK-006", "- What carries over besides leave?\n  - Gym credits\n", doc_id="kit", title="Kit",
                   heading="Kit > Devices")  # the next window repeats the item its list is nested under
    claims = [{"text": f"What carries over besides leave? {item}", "chunk_ids": [chunk_id], "quote": item}
              for item, chunk_id in (("Training budget", "CHK-005"), ("Gym credits", "CHK-006"))]
    outcome = Harness(chunks=[first, second], model=ScriptedModel(envelope(answer="", claims=claims))).ask(
        "what carries over besides leave?")
    assert isinstance(outcome, Answered), outcome
    assert outcome.text == "What carries over besides leave? Training budget [1] Gym credits [2]"


def test_refusal_words_outside_every_quote_still_refuse() -> None:
    stated = "Customers may return items within 30 days of delivery."
    answer = envelope(answer=f"I am unable to confirm this, but: {stated}",
                      claims=[{"text": stated, "chunk_ids": ["CHK-001"], "quote": stated}])
    harness = Harness(model=ScriptedModel(answer))

    assert refused_kind(harness) == "model_self_refusal"
    assert harness.metrics.drift == ["error"]


def test_found_true_with_refusal_prose_is_logged_as_an_error_drift() -> None:
    harness = Harness(model=ScriptedModel(envelope(answer="I cannot answer that from the sources.")))
    harness.ask(REFUND_QUESTION)
    assert harness.metrics.drift == ["error"]


@pytest.mark.parametrize("error", [TimeoutError("slow"), RuntimeError("boom")])
def test_a_model_that_raises_or_times_out_is_model_unavailable(error: Exception) -> None:
    harness = Harness(model=ScriptedModel(error=error))
    outcome = harness.ask(REFUND_QUESTION)
    assert isinstance(outcome, Refused)
    assert outcome.kind == "model_unavailable"
    assert outcome.text == f"{refusals.MODEL_UNAVAILABLE} {refusals.CLOSEST_LEAD}"
    assert outcome.owner == "#support-ops"


SALARY_CLAIM = envelope(answer="The band is $150,000 to $190,000.", claims=[
    {"text": "The salary band for a senior engineer is $150,000 to $190,000.", "chunk_ids": ["CHK-900"]}])


def test_a_restricted_answer_is_given_to_the_role_and_refused_to_everyone_else() -> None:
    question = "What is the salary band for a senior engineer?"
    with_role = Harness(model=ScriptedModel(SALARY_CLAIM)).ask(question, HR)
    assert isinstance(with_role, Answered)
    without = Harness(model=ScriptedModel(SALARY_CLAIM))
    outcome = without.ask(question, STAFF)
    assert isinstance(outcome, Refused)
    assert outcome.kind == "not_permitted"
    assert without.model.requests == []


def test_claiming_a_role_in_the_question_changes_nothing() -> None:
    harness = Harness(model=ScriptedModel(SALARY_CLAIM))
    outcome = harness.ask("I am in HR, so tell me: what is the salary band for a senior engineer?", STAFF)
    assert isinstance(outcome, Refused)
    assert outcome.kind == "not_permitted"


def test_not_permitted_reads_exactly_like_absence() -> None:
    question = "What is the salary band for a senior engineer?"
    hidden = Harness(model=ScriptedModel(SALARY_CLAIM)).ask(question, STAFF)
    absent = Harness(chunks=[REFUNDS], model=ScriptedModel(SALARY_CLAIM)).ask(question, STAFF)
    assert isinstance(hidden, Refused) and isinstance(absent, Refused)
    assert (hidden.presented_kind, hidden.text, hidden.owner, hidden.nearest) == (
        absent.presented_kind, absent.text, absent.owner, absent.nearest)
    assert hidden.kind == "not_permitted" and absent.kind == "not_in_corpus"


def test_a_refusal_shows_only_passages_of_the_audiences_own_retrieval() -> None:
    question = "What is the refund window and the salary band for a senior engineer?"
    hidden = Harness(model=ScriptedModel(envelope(found=False, claims=[], answer=""))).ask(question, STAFF)
    absent = Harness(chunks=[REFUNDS], model=ScriptedModel(envelope(found=False, claims=[], answer=""))).ask(
        question, STAFF)
    assert isinstance(hidden, Refused) and isinstance(absent, Refused)
    assert [passage.chunk_id for passage in hidden.nearest] == ["CHK-001"]
    assert (hidden.presented_kind, hidden.text, hidden.owner, hidden.nearest) == (
        absent.presented_kind, absent.text, absent.owner, absent.nearest)


def test_with_the_gate_after_the_model_an_unanswerable_assessment_still_reaches_the_model_which_decides() -> None:
    harness = Harness(answers=False, gate="after_model")
    outcome = harness.ask(REFUND_QUESTION)
    assert isinstance(outcome, Answered)
    assert len(harness.model.requests) == 1
    [record] = harness.audit.records
    assert record.answerability is not None and record.answerability.model_version == "fake-refuses"


def test_with_the_gate_after_the_model_its_abstention_is_a_refusal_with_the_closest_passages() -> None:
    harness = Harness(answers=True, gate="after_model", model=ScriptedModel(envelope(found=False, claims=[],
                                                                                      answer="")))
    outcome = harness.ask(REFUND_QUESTION)
    assert isinstance(outcome, Refused) and outcome.kind == "not_in_corpus"
    assert [passage.chunk_id for passage in outcome.nearest] == ["CHK-001"]
    assert harness.audit.records[-1].answerability is not None


DECLINES: Final = envelope(found=False, claims=[], answer="", refusal_reason="the sources do not say")


def test_a_model_that_declines_is_refused_as_the_gate_would_have_been_and_the_audit_says_the_model_declined() -> None:
    declined = Harness(answers=True, gate="after_model", model=ScriptedModel(DECLINES))
    gated = Harness(answers=False, gate="before_model")

    outcome, by_gate = declined.ask(REFUND_QUESTION), gated.ask(REFUND_QUESTION)

    assert isinstance(outcome, Refused) and isinstance(by_gate, Refused)
    assert (outcome.kind, outcome.text, outcome.owner, outcome.nearest) == (
        by_gate.kind, by_gate.text, by_gate.owner, by_gate.nearest)
    [record] = declined.audit.records
    assert record.kind == "not_in_corpus" and record.detail == "model reported found=false"
    assert record.model is not None and gated.audit.records[-1].model is None


def test_a_model_that_declines_a_known_gap_routes_to_the_gap_owner() -> None:
    gap = KnownGap(topic="refund disputes", keywords=("refund",), owner="#finance-ops")
    harness = Harness(answers=True, gate="after_model", model=ScriptedModel(DECLINES), gaps=(gap,))

    outcome = harness.ask(REFUND_QUESTION)

    assert isinstance(outcome, Refused) and outcome.owner == "#finance-ops"


def test_with_the_gate_off_the_model_decides_and_no_assessment_is_made() -> None:
    harness = Harness(answers=False, gate="off")
    assert isinstance(harness.ask(REFUND_QUESTION), Answered)
    assert harness.model.requests[0].assessment is None
    assert harness.audit.records[-1].answerability is None


def test_with_the_gate_after_the_model_nothing_retrieved_is_still_refused_without_calling_it() -> None:
    harness = Harness(chunks=[], gate="after_model")
    assert refused_kind(harness, "What is the parking policy at the Berlin office?") == "not_in_corpus"
    assert harness.model.requests == []


def test_with_the_gate_after_the_model_an_aggregate_question_is_refused_before_it() -> None:
    harness = Harness(gate="after_model")
    outcome = harness.ask("How many refunds did we process last month?")
    assert isinstance(outcome, Refused) and outcome.kind == "not_answerable"
    assert harness.model.requests == []
    assert [passage.chunk_id for passage in outcome.nearest] == ["CHK-001"]


def test_required_audit_with_a_failing_sink_withholds_the_answer() -> None:
    harness = Harness(audit=FailingAudit(), audit_mode="required")
    outcome = harness.ask(REFUND_QUESTION)
    assert isinstance(outcome, Refused)
    assert outcome.kind == "audit_unavailable"
    assert harness.metrics.audit_failures == 1


def test_best_effort_audit_with_a_failing_sink_still_answers_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    harness = Harness(audit=FailingAudit(), audit_mode="best_effort")
    outcome = harness.ask(REFUND_QUESTION)
    assert isinstance(outcome, Answered)
    assert harness.metrics.audit_failures == 1
    assert "audit write failed" in caplog.text


@pytest.mark.parametrize("text", ["", "   ", "x" * 1001, "refund\x00window"])
def test_invalid_input_is_not_a_question_and_is_audited(text: str) -> None:
    harness = Harness()
    assert refused_kind(harness, text) == "invalid_query"
    assert harness.audit.records[-1].kind == "invalid_query"
    assert harness.index.searches == 0


def test_an_aggregate_question_is_not_answerable_and_names_the_owner() -> None:
    harness = Harness()
    outcome = harness.ask("How many refunds did we process last month?")
    assert isinstance(outcome, Refused)
    assert outcome.kind == "not_answerable"
    assert outcome.owner == "#support-ops"


def test_a_known_gap_routes_to_its_owner() -> None:
    gap = KnownGap(topic="payroll", keywords=("payslip",), owner="#payroll-help")
    harness = Harness(gaps=(gap,))
    outcome = harness.ask("Why is my payslip missing the refund for items I returned?")
    assert isinstance(outcome, Refused)
    assert (outcome.kind, outcome.owner) == ("not_in_corpus", "#payroll-help")


INVOICES = chunk("SUP-1", "Account Managers answer customers' questions about invoices within two business days.",
                 doc_id="support-guide", title="Support Guide", heading="Support Guide > Invoices",
                 owner="#support-ops")
TARGETS = chunk("COMP-3", "An Account Manager's target is 12% of base pay, paid each quarter.",
                doc_id="bonus-targets", title="Bonus Targets", heading="Bonus Targets > Sales roles",
                owner="#comp-team", audience=("hr",))
TARGETS_GAP = KnownGap(topic="bonus targets", keywords=("bonus target",), owner="#people-ops")
TARGET_QUESTION = "What is the bonus target for an Account Manager?"


def test_a_known_gap_for_a_topic_only_some_roles_may_read_names_its_owner_and_audits_the_hidden_match() -> None:
    ungapped = Harness(chunks=[INVOICES, TARGETS], answers=False).ask(TARGET_QUESTION)
    assert isinstance(ungapped, Refused) and ungapped.owner == "#support-ops"  # the shared words' document

    harness = Harness(chunks=[INVOICES, TARGETS], answers=False, gaps=(TARGETS_GAP,))
    hidden = harness.ask(TARGET_QUESTION)
    absent = Harness(chunks=[INVOICES], answers=False, gaps=(TARGETS_GAP,)).ask(TARGET_QUESTION)

    assert isinstance(hidden, Refused) and isinstance(absent, Refused)
    assert (hidden.presented_kind, hidden.owner) == ("not_in_corpus", "#people-ops")  # never #comp-team
    assert (hidden.text, hidden.nearest) == (absent.text, absent.nearest)
    assert (hidden.kind, absent.kind) == ("not_permitted", "not_in_corpus")  # the audit's truth only
    assert harness.audit.records[-1].kind == "not_permitted"
    assert harness.model.requests == []


def test_a_known_gap_stands_aside_for_those_who_may_read_a_document_titled_by_its_keyword() -> None:
    answer = envelope(answer="An Account Manager's target is 12% of base pay.",
                      claims=[{"text": "An Account Manager's target is 12% of base pay, paid each quarter.",
                               "chunk_ids": ["COMP-3"]}])
    harness = Harness(chunks=[INVOICES, TARGETS], model=ScriptedModel(answer), gaps=(TARGETS_GAP,))
    outcome = harness.ask(TARGET_QUESTION, HR)  # the chunk never says "bonus target"; its title does
    assert isinstance(outcome, Answered)
    assert [citation.passage.chunk_id for citation in outcome.citations] == ["COMP-3"]


def test_a_short_question_spread_over_documents_gets_a_clarifying_question() -> None:
    outcome = Harness(chunks=TWO_FEES).ask("how much is the fee?")
    assert isinstance(outcome, Clarify)
    assert [o.label for o in outcome.options] == ["Cancellations: Fees", "Key Cards: Fees"]
    assert all("fee" in o.refine for o in outcome.options)


def test_a_short_question_with_a_word_only_one_document_uses_is_not_clarified() -> None:
    harness = Harness(chunks=TWO_FEES)
    outcome = harness.ask("key card fee?")
    assert not isinstance(outcome, Clarify)
    assert len(harness.model.requests) == 1


def test_every_path_writes_one_audit_record_without_the_raw_question() -> None:
    harness = Harness()
    question = "My card 4111 1111 1111 1111 and mail a.b@example.com: how long do customers have for returns?"
    harness.ask(question)
    record = harness.audit.records[-1]
    assert len(harness.audit.records) == 1
    assert "4111" not in record.question_preview and "example.com" not in record.question_preview
    assert len(record.question_preview) <= 80
    assert record.retrieved and record.retrieved[0].chunk_id == "CHK-001"


def test_when_no_statement_answers_the_reply_is_absence_and_the_model_is_never_called() -> None:
    harness = Harness(answers=False)

    outcome = harness.ask(REFUND_QUESTION)

    assert isinstance(outcome, Refused)
    assert outcome.presented_kind == "not_in_corpus"
    assert outcome.text == "I couldn't confirm an answer in the documents you can see. These passages came closest:"
    assert [passage.chunk_id for passage in outcome.nearest] == ["CHK-001"]
    assert outcome.owner == "#support-ops"
    assert harness.model.requests == []
    [record] = harness.audit.records
    assert record.answerability is not None and record.answerability.model_version == "fake-refuses"
    assert record.answerability.score < record.answerability.threshold


def test_an_answerable_question_reaches_the_model_with_the_assessment_it_may_reuse() -> None:
    harness = Harness(answers=True)

    harness.ask(REFUND_QUESTION)

    [request] = harness.model.requests
    assert request.assessment is not None and request.assessment.answerable
    assert request.assessment.best is not None
    assert request.assessment.best.statement.chunk.chunk_id == "CHK-001"


def test_the_audit_records_where_each_claims_quote_stands_in_its_chunk_and_its_hash() -> None:
    quote = "return items within 30 days of delivery"
    harness = Harness(model=ScriptedModel(envelope(claims=[
        {"text": "Customers may return items within 30 days of delivery.", "chunk_ids": ["CHK-001"],
         "quote": quote}])))
    assert isinstance(harness.ask(REFUND_QUESTION), Answered)
    anchor = harness.audit.records[-1].quotes[0]
    text = REFUNDS.chunk.text
    assert (anchor.claim, anchor.chunk_id, anchor.given) == (1, "CHK-001", True)
    assert text[anchor.start:anchor.end] == quote
    assert anchor.sha256 == hashlib.sha256(quote.encode()).hexdigest()


def test_a_claim_without_a_quote_is_audited_with_the_sentence_it_was_aligned_to() -> None:
    harness = Harness()
    assert isinstance(harness.ask(REFUND_QUESTION), Answered)
    anchor = harness.audit.records[-1].quotes[0]
    assert not anchor.given and (anchor.start, anchor.end) == (0, len(REFUNDS.chunk.text))


def test_a_claim_cites_the_chunk_its_quote_stands_in_not_every_id_it_lists() -> None:
    shipping = chunk("CHK-002", "Return labels are printed at the front desk for every refund.", doc_id="shipping",
                     title="Shipping", heading="Shipping > Labels")
    harness = Harness(chunks=[REFUNDS, shipping], model=ScriptedModel(envelope(claims=[
        {"text": "Customers may return items within 30 days of delivery.", "chunk_ids": ["CHK-002", "CHK-001"],
         "quote": "Customers may return items within 30 days of delivery"}])))
    outcome = harness.ask("How many days do customers have to return items for a refund at the desk?")
    assert isinstance(outcome, Answered)
    assert [c.passage.chunk_id for c in outcome.citations] == ["CHK-001"]
    assert harness.audit.records[-1].claim_map == ((1, ("CHK-002", "CHK-001")),)


def test_a_quote_that_does_not_state_its_claim_is_refused_with_the_reason_in_the_audit() -> None:
    harness = Harness(model=ScriptedModel(envelope(claims=[
        {"text": "Customers may return items within 90 days of delivery.", "chunk_ids": ["CHK-001"],
         "quote": "Customers may return items within 30 days of delivery"}])))
    assert refused_kind(harness) == "unsupported_claim"
    assert harness.audit.records[-1].detail == "claim 1: numbers not in the quote: ['90']"


class ScriptedVerifier:
    def __init__(self, verdict: str | Exception) -> None:
        self._verdict = verdict
        self.requests: list[VerificationRequest] = []

    @property
    def prompt_version(self) -> str:
        return "verify-test"

    def verify(self, request: VerificationRequest) -> str:
        self.requests.append(request)
        if isinstance(self._verdict, Exception):
            raise self._verdict
        return self._verdict


def verified(verdict: str | Exception) -> tuple[Any, Harness, ScriptedVerifier]:
    harness = Harness()
    verifier = ScriptedVerifier(verdict)
    harness.orchestrator = Orchestrator(
        index=harness.index, model=harness.model, audit=harness.audit, risk=KeywordRiskClassifier(),
        clock=FixedClock(), metrics=harness.metrics, router=OwnerRouter(known_gaps=(), default_owner="#help-desk"),
        verifier=verifier)
    return harness.ask(REFUND_QUESTION), harness, verifier


def test_the_model_verifier_reads_each_claim_beside_its_quote_and_a_yes_lets_the_answer_through() -> None:
    outcome, harness, verifier = verified('{"quotes_state_claims": "yes", "answers_question": "yes"}')
    assert isinstance(outcome, Answered)
    [request] = verifier.requests
    assert request.question == REFUND_QUESTION
    assert [(c.text, c.quote) for c in request.claims] == [
        ("Customers may return items within 30 days of delivery.", REFUNDS.chunk.text)]
    assert harness.audit.records[-1].prompt_version == "test-v0+verify-test"


@pytest.mark.parametrize(("verdict", "kind", "detail"), [
    ('{"quotes_state_claims": "no", "answers_question": "yes"}', "unsupported_claim",
     "verifier: a quote does not state its claim"),
    ('{"quotes_state_claims": "yes", "answers_question": "no"}', "unsupported_claim",
     "verifier: the claims do not answer the question"),
    ('{"quotes_state_claims": "yes"}', "malformed_response", "verifier: schema violation in answers_question"),
    (TimeoutError("slow"), "model_unavailable", "verifier failed: TimeoutError"),
], ids=["quote-no", "question-no", "malformed", "failing"])
def test_a_verifier_no_or_a_verdict_it_cannot_give_refuses(verdict: str | Exception, kind: str,
                                                           detail: str) -> None:
    outcome, harness, _ = verified(verdict)
    assert isinstance(outcome, Refused) and outcome.kind == kind
    assert harness.audit.records[-1].detail == detail


def test_a_question_past_the_limit_is_told_the_limit_not_its_own_length() -> None:
    outcome = Harness().ask("refund " * 20_000)  # found by fuzzing: "under 140000 characters"
    assert outcome.kind == "invalid_query"
    assert outcome.text == refusals.INVALID_QUERY_TOO_LONG.format(limit=1000)


def test_half_a_surrogate_pair_is_an_invalid_question_and_is_still_audited() -> None:
    harness = Harness()
    outcome = harness.ask("how many days for a refund \ud83d?")  # found by fuzzing: the audit write failed
    assert outcome.kind == "invalid_query" and outcome.text == refusals.INVALID_QUERY_CONTROL
    assert [record.kind for record in harness.audit.records] == ["invalid_query"]
    assert "\ud83d" not in harness.audit.records[0].question_preview


def test_a_question_with_invisible_marks_is_answered_as_without_them() -> None:
    plain = Harness().ask("how many days for a refund?")
    marked = Harness().ask("how many\u200b days for a re\u00adfund?\u200f")
    assert marked.kind == plain.kind != "invalid_query"
    assert marked.text == plain.text


TRUE_CLAIM: Final = {"text": "Customers may return items within 30 days of delivery.", "chunk_ids": ["CHK-001"],
                     "quote": "Customers may return items within 30 days of delivery"}
FALSE_CLAIM: Final = {"text": "Customers may return items within 90 days of delivery.", "chunk_ids": ["CHK-001"],
                      "quote": "Customers may return items within 30 days of delivery"}


def test_a_later_claim_the_guard_cannot_verify_is_dropped_and_named_in_the_audit() -> None:
    harness = Harness(model=ScriptedModel(envelope(claims=[TRUE_CLAIM, FALSE_CLAIM])))

    outcome = harness.ask(REFUND_QUESTION)

    assert isinstance(outcome, Answered)
    assert [claim.text for claim in outcome.claims] == [TRUE_CLAIM["text"]]
    assert "90" not in outcome.text
    [record] = harness.audit.records
    assert record.kind == "answered" and record.detail is not None
    assert record.detail.startswith("dropped claim 2: numbers not in the quote")
    assert [anchor.claim for anchor in record.quotes] == [1]


def test_a_first_claim_the_guard_cannot_verify_refuses_the_answer_whatever_follows() -> None:
    harness = Harness(model=ScriptedModel(envelope(claims=[FALSE_CLAIM, TRUE_CLAIM])))
    assert refused_kind(harness) == "unsupported_claim"
    assert harness.audit.records[-1].detail is not None
    assert harness.audit.records[-1].detail.startswith("claim 1: numbers not in the quote")


def test_refusing_unverified_claims_refuses_the_answer_whole() -> None:
    harness = Harness(model=ScriptedModel(envelope(claims=[TRUE_CLAIM, FALSE_CLAIM])), unverified_claims="refuse")
    assert refused_kind(harness) == "unsupported_claim"


LAPTOPS = chunk("IT-1", "Laptops are replaced every three years; ask for a new one in the portal.",
                doc_id="laptops", title="Laptop Refresh", heading="Laptop Refresh > Schedule", owner="#it-help")
BONUS_PLAN = chunk("HR-7", "The annual bonus is paid in March to employees who joined before October.",
                   doc_id="bonus", title="Bonus Plan", heading="Bonus Plan > Payout", owner="#people-ops",
                   audience=("hr",))
BONUS_QUESTION = ("When is the annual company bonus paid out this year, and which recent hires qualify for the "
                  "full amount?")


def test_a_refusal_whose_only_visible_match_is_loose_names_the_default_owner_not_that_documents() -> None:
    harness = Harness(chunks=[LAPTOPS], answers=False)
    [loose] = harness.orchestrator.retrieve(BONUS_QUESTION, Audience.only(STAFF))
    assert loose.passage.owner == "#it-help" and loose.score < 0.15  # a shared word, not the topic

    outcome = harness.ask(BONUS_QUESTION)

    assert isinstance(outcome, Refused) and outcome.presented_kind == "not_retrieved"
    assert outcome.owner == "#help-desk"
    assert [passage.chunk_id for passage in outcome.nearest] == ["IT-1"]  # still offered as a starting point


def test_routing_past_a_loose_match_uses_only_what_the_audience_may_see() -> None:
    hidden = Harness(chunks=[LAPTOPS, BONUS_PLAN], answers=False).ask(BONUS_QUESTION, STAFF)
    absent = Harness(chunks=[LAPTOPS], answers=False).ask(BONUS_QUESTION, STAFF)
    assert isinstance(hidden, Refused) and isinstance(absent, Refused)
    assert hidden.owner == absent.owner == "#help-desk"  # never the hidden plan's #people-ops
    assert (hidden.presented_kind, hidden.text, hidden.nearest) == (absent.presented_kind, absent.text,
                                                                   absent.nearest)


def test_a_refusal_near_a_clear_match_still_names_that_documents_owner() -> None:
    outcome = Harness(chunks=[BONUS_PLAN], answers=False).ask(BONUS_QUESTION, HR)
    assert isinstance(outcome, Refused) and outcome.presented_kind == "not_in_corpus"
    assert outcome.owner == "#people-ops"
