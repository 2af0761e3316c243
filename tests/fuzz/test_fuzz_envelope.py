"""The model's answer envelope under search: any output is an envelope or `MalformedEnvelope`, never another
exception; and whatever an envelope claims, the orchestrator ends in one defined, audited outcome."""

import contextlib
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from core.application.guard.envelope import Envelope, MalformedEnvelope, parse_envelope, parse_verdict
from core.application.language.markers import without_markers
from core.application.orchestrator import Orchestrator, Question
from core.application.risk import KeywordRiskClassifier
from core.application.routing import OwnerRouter
from core.domain import Answered, Audience, Principal, Refused
from tests.unit.fakes import FakeIndex, FixedClock, MemoryAudit, RecordingMetrics, ScriptedModel, answerability, chunk

ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=200)
"""Every Unicode category, surrogates and unassigned code points included."""

JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | ANY_TEXT
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(ANY_TEXT, inner, max_size=4), max_leaves=12)

CHUNKS = [
    chunk("CHK-1", "Customers may return items within 30 days of delivery for a full refund.",
          doc_id="returns", title="Returns", heading="Returns > Window"),
    chunk("CHK-2", "Refunds above 500 dollars need approval from the support lead.",
          doc_id="returns", title="Returns", heading="Returns > Approval"),
]
IDS = [stored.chunk.chunk_id for stored in CHUNKS]
STAFF = Principal(user_id="U1", roles=frozenset({"everyone"}))
QUESTION = "How many days do customers have to return items for a refund?"


def _spans(text: str) -> st.SearchStrategy[str]:
    return st.tuples(st.integers(0, len(text)), st.integers(0, len(text))).map(
        lambda ends: text[min(ends):max(ends)])


QUOTE = st.one_of(st.none(), ANY_TEXT, *(_spans(stored.chunk.text) for stored in CHUNKS))
CLAIM_TEXT = st.one_of(ANY_TEXT.filter(str.strip), *(_spans(stored.chunk.text).filter(str.strip)
                                                    for stored in CHUNKS))
CHUNK_ID = st.one_of(st.sampled_from(IDS), st.sampled_from(IDS).map(str.lower), ANY_TEXT)
CLAIM = st.fixed_dictionaries({"text": CLAIM_TEXT, "chunk_ids": st.lists(CHUNK_ID, min_size=1, max_size=3)},
                              optional={"quote": QUOTE})
ENVELOPE = st.fixed_dictionaries({
    "found": st.booleans(),
    "answer": ANY_TEXT,
    "claims": st.lists(CLAIM, max_size=4),
    "confidence": st.sampled_from(["high", "medium", "low"]),
    "refusal_reason": st.none() | ANY_TEXT,
})


def _parsed_or_malformed(raw: str) -> Envelope | None:
    try:
        return parse_envelope(raw)
    except MalformedEnvelope:
        return None


@given(ANY_TEXT)
def test_any_text_is_an_envelope_or_malformed_and_nothing_else(raw: str) -> None:
    _parsed_or_malformed(raw)


@given(JSON_VALUES)
def test_any_json_value_is_an_envelope_or_malformed_and_nothing_else(value: Any) -> None:
    _parsed_or_malformed(json.dumps(value))
    with contextlib.suppress(MalformedEnvelope):
        parse_verdict(json.dumps(value))


@given(st.integers(1, 50_000), st.sampled_from("[{"), st.sampled_from(["", '"found": ', "1" * 5000]))
def test_hostile_nesting_and_huge_numbers_are_malformed(depth: int, opener: str, tail: str) -> None:
    raw = '{"answer": ' + (opener if opener == "[" else '{"a": ') * depth + tail
    assert _parsed_or_malformed(raw) is None


def _schema_valid(body: dict[str, Any]) -> bool:
    def text_ok(value: object) -> bool:
        return not isinstance(value, str) or not any("\ud800" <= ch <= "\udfff" for ch in value)

    strings = [body["answer"], body["refusal_reason"]]
    for claim in body["claims"]:
        strings += [claim["text"], claim.get("quote"), *claim["chunk_ids"]]
    return all(text_ok(value) for value in strings) and all(without_markers(c["text"]) for c in body["claims"])


@given(ENVELOPE)
def test_a_well_formed_envelope_parses_back_to_what_was_sent(body: dict[str, Any]) -> None:
    parsed = _parsed_or_malformed(json.dumps(body))
    if not _schema_valid(body):
        assert parsed is None
        return
    assert parsed is not None
    sent = {**body, "claims": [{**claim, "text": without_markers(claim["text"])} for claim in body["claims"]]}
    assert parsed.model_dump(exclude_unset=True) == sent  # claim text without citation markers (issue 31)


@given(ENVELOPE, st.data())
def test_one_key_too_many_too_few_or_repeated_is_malformed(body: dict[str, Any], data: st.DataObject) -> None:
    change = data.draw(st.sampled_from(["drop", "add", "repeat", "retype"]))
    key = data.draw(st.sampled_from(sorted(body)))
    if change == "drop":
        raw = json.dumps({k: v for k, v in body.items() if k != key})
    elif change == "add":
        raw = json.dumps({**body, data.draw(ANY_TEXT.filter(lambda k: k not in body)): 1})
    elif change == "repeat":
        raw = json.dumps(body)[:-1] + f", {json.dumps(key)}: {json.dumps(body[key])}}}"
    else:
        raw = json.dumps({**body, key: [body[key]]})
    assert _parsed_or_malformed(raw) is None


@given(ENVELOPE)
def test_whatever_an_envelope_claims_the_orchestrator_ends_in_one_audited_outcome(body: dict[str, Any]) -> None:
    audit = MemoryAudit()
    orchestrator = Orchestrator(
        index=FakeIndex(CHUNKS), model=ScriptedModel(json.dumps(body)), audit=audit,
        risk=KeywordRiskClassifier(), clock=FixedClock(), metrics=RecordingMetrics(),
        router=OwnerRouter(known_gaps=(), default_owner="#help-desk"), answerability=answerability(answers=True))
    outcome = orchestrator.ask(Question(text=QUESTION, principal=STAFF, audience=Audience.only(STAFF)))
    assert len(audit.records) == 1 and audit.records[0].kind == outcome.kind
    if isinstance(outcome, Answered):
        retrieved = set(IDS)
        assert body["found"] and outcome.citations
        assert {citation.passage.chunk_id for citation in outcome.citations} <= retrieved
        for claim in body["claims"]:  # every claim was checked and cites an id as retrieved, byte for byte
            assert set(claim["chunk_ids"]) & retrieved
    else:
        assert isinstance(outcome, Refused) and outcome.text
