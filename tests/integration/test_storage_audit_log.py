"""The SQL audit log stores a decision record whole, reads it back equal, and forgets it on schedule."""

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import IntegrityError, StatementError

from core.application.audit import AuditRecord, CitedId, QuoteAnchor, ScoredId, question_preview, question_sha256
from core.storage import SqlAuditLog

NOON = datetime(2026, 3, 14, 12, 0, tzinfo=UTC)


def record(correlation_id: str, *, at: datetime = NOON, **changes: object) -> AuditRecord:
    question = "My card 4111 1111 1111 1111 was charged twice, what is the meal allowance?"
    base = AuditRecord(
        correlation_id=correlation_id,
        at=at,
        workspace_id="T1",
        channel_id="C1",
        user_ref="U1",
        question_sha256=question_sha256(question),
        question_preview=question_preview(question),
        risk="low",
        kind="answered",
        retrieved=(ScoredId(chunk_id="expenses#meals", score=0.61), ScoredId(chunk_id="expenses#hotels",
                                                                             score=0.2)),
        cited=(CitedId(chunk_id="expenses#meals", content_hash="ab" * 32),),
        claim_map=((1, ("expenses#meals",)), (2, ("expenses#meals", "expenses#hotels"))),
        model="extractive-1",
        prompt_version="p-3",
        latency_ms=12.5,
        detail=None,
        quotes=(QuoteAnchor(claim=1, chunk_id="expenses#meals", start=0, end=42, sha256="cd" * 32, given=True),
                QuoteAnchor(claim=2, chunk_id="expenses#hotels", start=7, end=60, sha256="ef" * 32, given=False)),
    )
    return replace(base, **changes)  # type: ignore[arg-type]  # test helper: changes are record fields


def test_a_written_record_reads_back_equal(engine: Engine) -> None:
    log = SqlAuditLog(engine)
    written = record("c-1")
    log.write(written)
    assert log.get("c-1") == written


def test_each_claims_quote_anchor_is_kept_in_its_claim_map_entry(engine: Engine) -> None:
    SqlAuditLog(engine).write(record("c-q"))
    with engine.connect() as connection:
        stored = connection.execute(text("SELECT claim_map FROM audit_events WHERE correlation_id = 'c-q'")).scalar()
    entries = stored if isinstance(stored, list) else json.loads(stored)
    assert entries[1] == {"claim": 2, "chunk_ids": ["expenses#meals", "expenses#hotels"],
                          "quote": {"chunk_id": "expenses#hotels", "start": 7, "end": 60, "sha256": "ef" * 32,
                                    "given": False}}


def test_a_refusal_without_model_or_citations_round_trips(engine: Engine) -> None:
    log = SqlAuditLog(engine)
    refusal = record("c-2", kind="not_permitted", risk=None, cited=(), claim_map=(), quotes=(), model=None,
                     prompt_version=None, workspace_id=None, channel_id=None, detail="no usable chunk")
    log.write(refusal)
    assert log.get("c-2") == refusal


def test_the_stored_time_is_the_same_instant_in_utc(engine: Engine) -> None:
    log = SqlAuditLog(engine)
    paris = datetime(2026, 3, 14, 13, 0, tzinfo=timezone(timedelta(hours=1)))
    log.write(record("c-3", at=paris))
    stored = log.get("c-3")
    assert stored is not None
    assert stored.at == paris
    assert stored.at.tzinfo is UTC


def test_the_question_itself_is_never_stored(engine: Engine) -> None:
    log = SqlAuditLog(engine)
    log.write(record("c-4"))
    stored = log.get("c-4")
    assert stored is not None
    assert "4111" not in stored.question_preview
    assert "[card]" in stored.question_preview


def test_a_second_record_with_the_same_correlation_id_is_refused(engine: Engine) -> None:
    log = SqlAuditLog(engine)
    log.write(record("c-5"))
    with pytest.raises(IntegrityError):
        log.write(record("c-5"))


def test_an_unknown_correlation_id_reads_as_none(engine: Engine) -> None:
    assert SqlAuditLog(engine).get("missing") is None


def test_list_returns_the_newest_records_first_up_to_the_limit(engine: Engine) -> None:
    log = SqlAuditLog(engine)
    for minutes in range(5):
        log.write(record(f"c-{minutes}", at=NOON + timedelta(minutes=minutes)))
    assert [r.correlation_id for r in log.list(limit=3)] == ["c-4", "c-3", "c-2"]
    assert len(log.list()) == 5


def test_purge_deletes_only_records_older_than_the_cutoff(engine: Engine) -> None:
    log = SqlAuditLog(engine)
    for days in range(4):
        log.write(record(f"c-{days}", at=NOON - timedelta(days=days)))
    removed = log.purge_older_than(NOON - timedelta(days=1, hours=12))
    assert removed == 2
    assert sorted(r.correlation_id for r in log.list()) == ["c-0", "c-1"]


def test_a_naive_time_is_refused_rather_than_guessed(engine: Engine) -> None:
    with pytest.raises(StatementError, match="naive datetime") as raised:
        SqlAuditLog(engine).write(record("c-6", at=datetime(2026, 3, 14, 12, 0)))
    assert isinstance(raised.value.orig, ValueError)
