"""Citation-looking markers leave claim text before the answer is built: its markers are numbered by code."""

import json

import pytest

from core.application.guard.envelope import MalformedEnvelope, parse_envelope
from core.application.language.markers import without_markers


@pytest.mark.parametrize(("written", "kept"), [
    ("Refunds take 14 days [2] [3].", "Refunds take 14 days."),
    ("Refunds take 14 days [2, 3] or [4-6] or [7 and 8].", "Refunds take 14 days or or."),
    ("Refunds take 14 days[^1] and[^source].", "Refunds take 14 days and."),
    ("Refunds take 14 days [12](#refs).", "Refunds take 14 days."),
    ("Refunds take 14 days\u30102\u3011.", "Refunds take 14 days."),
])
def test_markers_of_any_common_shape_are_taken_out(written: str, kept: str) -> None:
    assert without_markers(written) == kept


@pytest.mark.parametrize(("written", "kept"), [
    ("Parking is free on Sundays [\u200b4].", "Parking is free on Sundays."),
    ("Parking is free on Sundays [4\u2060].", "Parking is free on Sundays."),
    ("Parking is free on Sundays\u200b [\ufeff1\u200c1, 5].", "Parking is free on Sundays."),
    ("Parking is free on Sundays [\u200b^note]\u3010\u00ad3\u3011.", "Parking is free on Sundays."),
])
def test_a_zero_width_character_keeps_no_marker_from_being_one(written: str, kept: str) -> None:
    assert without_markers(written) == kept


def test_a_long_run_of_blanks_is_read_through_once() -> None:
    """A model's output of 100,000 blanks, with and without markers and brackets in it: each was a pass per blank
    before (minutes; benchmarks/markers.py measures it), and the text still comes back as written."""
    blanks = " " * 100_000
    assert without_markers(f"Badges{blanks}expire.") == f"Badges{blanks}expire."
    assert without_markers(f"Badges expire{blanks}[3].") == "Badges expire."
    assert without_markers(f"Badges [{blanks}x [1{blanks}") == f"Badges [{blanks}x [1"
    assert without_markers(f"Badges\t{blanks}\u200b{blanks}[2, {blanks}3] expire.") == "Badges expire."


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
