"""The bot's small state: each Slack event once, feedback, and clarifications that expire."""

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from threading import Barrier

from sqlalchemy import Engine

from core.application.audit import AuditRecord, CitedId, ScoredId, question_preview, question_sha256, user_reference
from core.application.feedback import LabelledPair
from core.domain import ClarifyOption
from core.storage import (
    FeedbackLog,
    PendingClarifications,
    ProcessedEvents,
    SqlAuditLog,
    make_engine,
    migrate,
)

ROOT = Path(__file__).resolve().parents[2]

NOON = datetime(2026, 3, 14, 12, 0, tzinfo=UTC)
OPTIONS = (ClarifyOption(label="Corporate cards", refine="card limit (Corporate cards)?"),
           ClarifyOption(label="Tracking API", refine="card limit (Tracking API)?"))


def test_an_event_id_is_new_the_first_time_only(engine: Engine) -> None:
    events = ProcessedEvents(engine)
    assert events.first_time("Ev1") is True
    assert events.first_time("Ev1") is False
    assert events.first_time("Ev2") is True


def test_concurrent_deliveries_of_one_event_pass_exactly_once(engine: Engine) -> None:
    events = ProcessedEvents(engine)
    workers = 6
    start = Barrier(workers)

    def deliver(_: int) -> bool:
        start.wait()
        return events.first_time("EvRace")

    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(deliver, range(workers)))
    assert results.count(True) == 1


def test_old_event_ids_are_purged_and_recent_ones_kept(engine: Engine) -> None:
    events = ProcessedEvents(engine)
    events.first_time("old", at=NOON - timedelta(hours=3))
    events.first_time("recent", at=NOON)
    assert events.purge_older_than(NOON - timedelta(hours=1)) == 1
    assert events.first_time("old") is True
    assert events.first_time("recent") is False


def test_feedback_is_kept_per_reply_in_order(engine: Engine) -> None:
    feedback = FeedbackLog(engine)
    feedback.record("c-1", "U1", "helpful", at=NOON)
    feedback.record("c-2", "U1", "not_helpful", at=NOON)
    feedback.record("c-1", "U2", "not_helpful", at=NOON + timedelta(minutes=1))
    entries = feedback.for_correlation("c-1")
    assert [(e.user_ref, e.verdict) for e in entries] == [("U1", "helpful"), ("U2", "not_helpful")]
    assert entries[0].at == NOON


def test_a_reader_rates_a_reply_once_and_a_second_verdict_is_not_stored(engine: Engine) -> None:
    feedback = FeedbackLog(engine)
    assert feedback.record("c-1", "U1", "answered_it", chunk_id="leave#carry-over", at=NOON) is not None
    assert feedback.record("c-1", "U1", "not_helpful", at=NOON + timedelta(minutes=1)) is None
    [entry] = feedback.for_correlation("c-1")
    assert (entry.verdict, entry.chunk_id) == ("answered_it", "leave#carry-over")


QUESTION = "How many leave days carry over, my mail is a.b@example.com?"


def decision(correlation_id: str, *, cited: tuple[str, ...] = ()) -> AuditRecord:
    return AuditRecord(
        correlation_id=correlation_id, at=NOON, workspace_id="T1", channel_id="C1", user_ref="U1",
        question_sha256=question_sha256(QUESTION), question_preview=question_preview(QUESTION), risk="low",
        kind="answered" if cited else "not_in_corpus",
        retrieved=(ScoredId(chunk_id="leave#carry-over", score=0.4), ScoredId(chunk_id="leave#sick", score=0.2)),
        cited=tuple(CitedId(chunk_id=chunk_id, content_hash="ab" * 32) for chunk_id in cited),
        claim_map=(), model=None, prompt_version=None, latency_ms=3.0, detail=None)


def rated(engine: Engine) -> FeedbackLog:
    """A refusal whose closest passage answered, and an answer rated helpful."""
    SqlAuditLog(engine).write(decision("refused-1"))
    SqlAuditLog(engine).write(decision("answered-1", cited=("leave#sick",)))
    feedback = FeedbackLog(engine)
    feedback.record("refused-1", "U1", "answered_it", chunk_id="leave#carry-over", at=NOON)
    feedback.record("answered-1", "U2", "helpful", at=NOON + timedelta(minutes=1))
    return feedback


KEY = b"export-key"


def test_feedback_exports_as_question_hash_chunk_label_and_keyed_reader_without_the_question(engine: Engine) -> None:
    pairs = list(rated(engine).labelled_pairs(reader_key=KEY))
    assert pairs == [
        LabelledPair(question_sha256=question_sha256(QUESTION), chunk_id="leave#carry-over", label="answered_it",
                     reader=user_reference("U1", KEY)),
        LabelledPair(question_sha256=question_sha256(QUESTION), chunk_id="leave#sick", label="helpful",
                     reader=user_reference("U2", KEY))]
    assert all(pair.reader.startswith("h:") for pair in pairs)


def test_the_export_carries_the_redacted_preview_only_when_asked(engine: Engine) -> None:
    previews = {pair.question_preview for pair in rated(engine).labelled_pairs(reader_key=KEY,
                                                                                with_previews=True)}
    assert previews == {question_preview(QUESTION)}
    assert all("example.com" not in preview for preview in previews if preview)


def test_sourced_feedback_export_writes_one_json_line_per_pair(tmp_path: Path) -> None:
    database_url = f"sqlite:///{tmp_path / 'sourced.db'}"
    engine = make_engine(database_url)
    migrate(engine)
    rated(engine)
    engine.dispose()
    out = tmp_path / "pairs.jsonl"
    done = subprocess.run([sys.executable, "-m", "bot.cli", "feedback", "export", "--output", str(out)],
                          cwd=ROOT, text=True, capture_output=True, timeout=120, check=False,
                          env={"SOURCED_DATABASE_URL": database_url, "SOURCED_EMBEDDER": "none",
                               "SOURCED_FEEDBACK_EXPORT_KEY": KEY.decode(), "PATH": "/usr/bin:/bin",
                               "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert lines == [{"question_sha256": question_sha256(QUESTION), "chunk_id": "leave#carry-over",
                      "label": "answered_it", "reader": user_reference("U1", KEY)},
                     {"question_sha256": question_sha256(QUESTION), "chunk_id": "leave#sick", "label": "helpful",
                      "reader": user_reference("U2", KEY)}]


def test_without_a_configured_key_each_export_hashes_readers_with_a_key_of_its_own(tmp_path: Path) -> None:
    database_url = f"sqlite:///{tmp_path / 'sourced.db'}"
    engine = make_engine(database_url)
    migrate(engine)
    rated(engine)
    engine.dispose()
    exports = [subprocess.run([sys.executable, "-m", "bot.cli", "feedback", "export"], cwd=ROOT, text=True,
                              capture_output=True, timeout=120, check=True,
                              env={"SOURCED_DATABASE_URL": database_url, "SOURCED_EMBEDDER": "none",
                                   "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}) for _ in range(2)]
    readers = [[json.loads(line)["reader"] for line in done.stdout.splitlines()] for done in exports]
    assert "SOURCED_FEEDBACK_EXPORT_KEY" in exports[0].stderr
    assert len(set(readers[0])) == 2 and not {"U1", "U2"} & set(readers[0])
    assert not set(readers[0]) & set(readers[1])


def test_a_pending_clarification_is_taken_once_before_it_expires(engine: Engine) -> None:
    pending = PendingClarifications(engine)
    saved = pending.save(question="card limit?", user_id="U1", channel_id="C1", options=OPTIONS, now=NOON,
                         ttl=timedelta(minutes=15))
    taken = pending.take(saved.id, NOON + timedelta(minutes=5))
    assert taken == saved
    assert taken.options == OPTIONS
    assert pending.take(saved.id, NOON + timedelta(minutes=6)) is None


def test_an_expired_clarification_cannot_be_taken(engine: Engine) -> None:
    pending = PendingClarifications(engine)
    saved = pending.save(question="card limit?", user_id="U1", channel_id=None, options=OPTIONS, now=NOON,
                         ttl=timedelta(minutes=15))
    assert pending.take(saved.id, NOON + timedelta(minutes=15)) is None
    assert pending.take("unknown", NOON) is None


def test_purging_removes_only_expired_clarifications(engine: Engine) -> None:
    pending = PendingClarifications(engine)
    old = pending.save(question="a?", user_id="U1", channel_id="C1", options=OPTIONS, now=NOON - timedelta(hours=1))
    live = pending.save(question="b?", user_id="U1", channel_id="C1", options=OPTIONS, now=NOON)
    assert pending.purge_expired(NOON + timedelta(minutes=1)) == 1
    assert pending.take(old.id, NOON + timedelta(minutes=1)) is None
    assert pending.take(live.id, NOON + timedelta(minutes=1)) == live
