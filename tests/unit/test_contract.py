"""The domain's values and the application's pure checks, one behaviour per test."""

import json
import time

import pytest

from core.application.audit import question_preview
from core.application.guard.checks import Supported, Unsupported, claim_support, content_overlap
from core.application.guard.envelope import EnvelopeClaim, MalformedEnvelope, parse_envelope, parse_verdict
from core.application.language.shape import invalid_reason, visible_text
from core.domain import (
    Answered,
    Audience,
    Citation,
    CitationInvariantError,
    Claim,
    Party,
    Principal,
    RiskAssessment,
    ensure_citation_invariant,
    is_visible,
)
from tests.unit.fakes import chunk

LOW = RiskAssessment(level="low")


def test_an_answer_without_citations_cannot_be_constructed() -> None:
    with pytest.raises(CitationInvariantError):
        Answered(text="30 days", claims=(Claim(text="30 days", citations=(1,)),), citations=(), risk=LOW,
                 correlation_id="c1")


def test_a_claim_pointing_at_an_unknown_marker_breaks_the_invariant() -> None:
    passage = chunk("A", "Returns within 30 days.").chunk.passage
    citation = Citation(n=1, passage=passage, content_hash="h", tier="direct")
    with pytest.raises(CitationInvariantError):
        Answered(text="x", claims=(Claim(text="x", citations=(2,)),), citations=(citation,), risk=LOW,
                 correlation_id="c1")
    good = Answered(text="x", claims=(Claim(text="x", citations=(1,)),), citations=(citation,), risk=LOW,
                    correlation_id="c1")
    assert ensure_citation_invariant(good) is good


def test_a_document_is_visible_only_when_it_allows_every_party() -> None:
    staff = Party(roles=frozenset({"everyone"}))
    hr = Party(roles=frozenset({"everyone", "hr"}))
    assert is_visible(frozenset({"hr"}), Audience(parties=(hr,)))
    assert not is_visible(frozenset({"hr"}), Audience(parties=(hr, staff)))
    assert is_visible(frozenset({"everyone"}), Audience(parties=(hr, staff)))


def test_guests_are_not_everyone() -> None:
    guest = Principal(user_id="G1", roles=frozenset({"everyone"}), is_guest=True)
    assert not is_visible(frozenset({"everyone"}), Audience.only(guest))
    assert is_visible(frozenset({"guests"}), Audience.only(guest))


@pytest.mark.parametrize("raw", ['{"found": true}', "[]", '{"a": 1} {"b": 2}', "```json\n{}\n```", ""])
def test_anything_but_exactly_one_envelope_object_is_malformed(raw: str) -> None:
    with pytest.raises(MalformedEnvelope):
        parse_envelope(raw)


def test_a_string_where_a_boolean_belongs_is_malformed_under_strict_parsing() -> None:
    with pytest.raises(MalformedEnvelope):
        parse_envelope('{"found": "true", "answer": "", "claims": [], "confidence": "low", '
                       '"refusal_reason": null}')


def test_a_claim_is_supported_only_when_its_numbers_and_names_stand_in_its_sentence() -> None:
    cited = [chunk("A", "Trips between two Orbit clinics are paid at $0.70 per mile.", heading="Driving").chunk]

    def reason(text: str) -> str:
        support = claim_support(EnvelopeClaim(text=text, chunk_ids=["A"]), cited)
        return support.reason if isinstance(support, Unsupported) else ""

    assert isinstance(claim_support(EnvelopeClaim(text="Trips between clinics are paid at $0.70 per mile.",
                                                  chunk_ids=["A"]), cited), Supported)
    assert "numbers" in reason("Trips between clinics are paid at $0.58 per mile.")
    assert "names" in reason("Trips between clinics are paid by Acme at $0.70 per mile.")
    assert "overlap" in reason("Parking is validated at the garage desk.")


def test_content_overlap_counts_the_claims_words_found_in_the_evidence() -> None:
    assert content_overlap("refund window thirty days", "The refund window is thirty days.") == 1.0
    assert content_overlap("refund window", "Parking garage") == 0.0


def test_the_preview_redacts_personal_data_and_stops_at_80_characters() -> None:
    preview = question_preview("card 4111-1111-1111-1111, iban DE89 3704 0044 0532 0130 00, mail jo@corp.example, "
                               "phone +1 (415) 555-0132, ssn 123-45-6789: refund?")
    for secret in ("4111", "DE89", "jo@corp", "555-0132", "123-45-6789"):
        assert secret not in preview
    assert len(question_preview("why " * 50)) <= 80
    assert question_preview("what is the refund window?") == "what is the…"


def test_a_question_is_invalid_when_empty_too_long_or_full_of_control_characters() -> None:
    assert invalid_reason("  ") == "empty"
    assert invalid_reason("a" * 1001) == "too_long"
    assert invalid_reason("refund\x07?") == "control_characters"
    assert invalid_reason("What is the refund window?\n") is None


def test_invisible_formatting_marks_are_dropped_not_refused() -> None:
    # a right-to-left mark from a Hebrew keyboard, a zero-width joiner inside an emoji, a soft hyphen from a PDF
    assert visible_text("\u200fמה מדיניות ההחזרים?") == "מה מדיניות ההחזרים?"
    assert visible_text("re\u00adfund window \U0001f469\u200d\U0001f4bb?") == "refund window \U0001f469\U0001f4bb?"
    assert invalid_reason(visible_text("\u202erefund\u202c window?")) is None


def test_a_claims_quote_is_optional_so_older_prompts_still_parse() -> None:
    body = {"found": True, "answer": "30 days", "confidence": "high", "refusal_reason": None}
    without = parse_envelope(json.dumps({**body, "claims": [{"text": "30 days", "chunk_ids": ["a"]}]}))
    empty = parse_envelope(json.dumps({**body, "claims": [{"text": "30 days", "chunk_ids": ["a"], "quote": None}]}))
    quoted = parse_envelope(json.dumps({**body, "claims": [{"text": "30 days", "chunk_ids": ["a"],
                                                             "quote": "within 30 days"}]}))
    assert without.claims[0].quote is None and empty.claims[0].quote is None
    assert quoted.claims[0].quote == "within 30 days"
    with pytest.raises(MalformedEnvelope):
        parse_envelope(json.dumps({**body, "claims": [{"text": "30 days", "chunk_ids": ["a"], "quote": 30}]}))


def test_a_verdict_is_two_yes_or_no_answers_and_nothing_else() -> None:
    assert parse_verdict('{"quotes_state_claims": "yes", "answers_question": "no"}').answers_question == "no"
    for raw in ('{"quotes_state_claims": "yes", "answers_question": "maybe"}',
                '{"quotes_state_claims": "yes", "answers_question": "yes", "why": "x"}', "yes"):
        with pytest.raises(MalformedEnvelope):
            parse_verdict(raw)


@pytest.mark.parametrize("raw", [
    '{"answer": ' + "[" * 20_000,  # found by fuzzing: RecursionError out of the JSON decoder
    '{"found": ' + "7" * 5000 + "}",  # ValueError: past the 4300-digit integer conversion limit
    '{"found": false, "answer": "", "claims": [], "confidence": "low", "refusal_reason": null, "found": true}',
    '{"found": false, "answer": "\\ud83d", "claims": [], "confidence": "low", "refusal_reason": null}',
])
def test_deep_nesting_huge_numbers_repeated_keys_and_half_surrogates_are_malformed(raw: str) -> None:
    with pytest.raises(MalformedEnvelope):
        parse_envelope(raw)


def test_the_preview_of_a_100_kb_question_takes_linear_time() -> None:
    started = time.perf_counter()
    for hostile in ("x" * 100_000, "a." * 50_000, "1 " * 50_000):  # found by fuzzing: 77 s in the e-mail pattern
        assert len(question_preview(hostile)) <= 80
    assert time.perf_counter() - started < 2.0
    assert question_preview("write to jo.smith+hr@corp.example today please") == "write to [email]…"
