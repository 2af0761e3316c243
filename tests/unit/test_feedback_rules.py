"""When a click counts as feedback (`core.application.feedback`): from a reader of the reply, about a chunk it
showed. The decision's audit record is the witness; the button's value is only a claim."""

from datetime import UTC, datetime

from core.application.audit import AuditRecord
from core.application.feedback import Click, why_not_counted
from core.domain import Audience, Party

STAFF = Party(roles=frozenset({"everyone"}))


def decision(*, posted_in: str | None, audience: bool = True) -> AuditRecord:
    return AuditRecord(
        correlation_id="d1", at=datetime(2026, 3, 1, tzinfo=UTC), workspace_id="T1", channel_id="CPUBLIC",
        user_ref="UASKER", question_sha256="0" * 64, question_preview="q…", risk="low", kind="not_in_corpus",
        retrieved=(), cited=(), claim_map=(), model=None, prompt_version=None, latency_ms=1.0,
        audience=Audience(parties=(STAFF,), posted_in=posted_in) if audience else None, shown=("doc#shown",))


class Decisions:
    def __init__(self, record: AuditRecord) -> None:
        self._record = record

    def get(self, correlation_id: str) -> AuditRecord | None:
        return self._record if correlation_id == self._record.correlation_id else None


def counted(record: AuditRecord, click: Click, chunk_id: str | None = None, correlation_id: str = "d1") -> bool:
    return why_not_counted(correlation_id, click, decisions=Decisions(record), chunk_id=chunk_id) is None


def test_the_asker_counts_wherever_the_reply_went() -> None:
    for posted_in in (None, "CPUBLIC"):
        assert counted(decision(posted_in=posted_in), Click(reader="UASKER", channel_id="CPUBLIC", ephemeral=True))


def test_another_reader_counts_only_on_the_shared_message_of_the_channel_it_was_posted_in() -> None:
    channel_reply = decision(posted_in="CPUBLIC")
    assert counted(channel_reply, Click(reader="UOTHER", channel_id="CPUBLIC", ephemeral=False))
    assert not counted(channel_reply, Click(reader="UOTHER", channel_id="CHR", ephemeral=False))
    assert not counted(channel_reply, Click(reader="UOTHER", channel_id="CPUBLIC", ephemeral=True))


def test_a_private_reply_asked_from_a_channel_counts_its_asker_alone() -> None:
    private = decision(posted_in=None)
    assert not counted(private, Click(reader="UOTHER", channel_id="CPUBLIC", ephemeral=False))


def test_a_decision_recorded_without_its_audience_counts_its_asker_alone() -> None:
    older = decision(posted_in=None, audience=False)
    assert not counted(older, Click(reader="UOTHER", channel_id="CPUBLIC", ephemeral=False))
    assert counted(older, Click(reader="UASKER", channel_id="CPUBLIC", ephemeral=False))


def test_a_chunk_counts_only_if_the_reply_showed_it_and_a_decision_only_if_it_exists() -> None:
    asker = Click(reader="UASKER", channel_id=None, ephemeral=True)
    record = decision(posted_in=None)
    assert counted(record, asker, chunk_id="doc#shown")
    assert not counted(record, asker, chunk_id="doc#retrieved-not-shown")
    assert not counted(record, asker, correlation_id="d2")
    assert not counted(record, asker, correlation_id="\ud800")
