"""Citation-looking markers leave claim text before the answer is built: its markers are numbered by code."""

import json

import pytest

from core.application.envelope import MalformedEnvelope, parse_envelope
from core.application.markers import without_markers


@pytest.mark.parametrize(("written", "kept"), [
    ("Refunds take 14 days [2] [3].", "Refunds take 14 days."),
    ("Refunds take 14 days [2, 3] or [4-6] or [7 and 8].", "Refunds take 14 days or or."),
    ("Refunds take 14 days[^1] and[^source].", "Refunds take 14 days and."),
    ("Refunds take 14 days [12](#refs).", "Refunds take 14 days."),
    ("Refunds take 14 days\u30102\u3011.", "Refunds take 14 days."),
])
def test_markers_of_any_common_shape_are_taken_out(written: str, kept: str) -> None:
    assert without_markers(written) == kept


@pytest.mark.parametrize("text", ["Form [A] applies.", "The 2024 edition [2024] applies.", "Use [x]."])
def test_brackets_that_are_no_citation_marker_stay(text: str) -> None:
    assert without_markers(text) == text


def envelope(claim: str) -> str:
    return json.dumps({"found": True, "answer": claim, "confidence": "high", "refusal_reason": None,
                       "claims": [{"text": claim, "chunk_ids": ["c-1"], "quote": "Refunds take 14 days [2] [3]."}]})


def test_an_envelope_claim_reads_without_its_markers_and_its_quote_stays_verbatim() -> None:
    [claim] = parse_envelope(envelope("Refunds take 14 days [2] [3].")).claims
    assert claim.text == "Refunds take 14 days."
    assert claim.quote == "Refunds take 14 days [2] [3]."


def test_a_claim_of_markers_alone_is_a_malformed_envelope() -> None:
    with pytest.raises(MalformedEnvelope, match=r"claims\.0\.text"):
        parse_envelope(envelope(" [1] [2] "))
