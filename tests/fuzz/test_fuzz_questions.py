"""Questions under search, through the real core (`bootstrap`: SQLite index, extractive model, the audit log):
any text, every Unicode category, zero-width and bidirectional marks, up to 100 KB, gets one defined, audited
outcome: an answer, a refusal, a clarification, or a clear message saying what was wrong with the text."""

import os
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.application import refusals
from core.application.language.shape import MAX_QUESTION_LENGTH
from core.application.orchestrator import Question
from core.bootstrap import Sourced, bootstrap
from core.config import Settings
from core.domain import Answered, Audience, Clarify, Principal, Refused
from tests.e2e.conftest import CONFIG, write_kb

EMBEDDER = os.environ.get("SOURCED_FUZZ_EMBEDDER", "auto")
"""The shipped default (the offline MiniLM when installed); `none` searches plain BM25 faster."""
STAFF = Principal(user_id="U1", roles=frozenset({"everyone"}))
MARKS = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Zero-width characters, the soft hyphen, the byte-order mark and every bidirectional mark and override."""
WORDS = ["refund", "return", "days", "salary", "band", "meal", "limit", "Wi-Fi", "visitor", "hold", "how", "what",
         "many", "is", "the", "?", "30", "50", "Senior Engineer", "payslip", "litigation", "travel"]

ANY_CHAR = st.characters(codec=None, exclude_categories=())
"""Every category, surrogates, private use and unassigned code points included."""
QUESTIONS = st.one_of(
    st.text(ANY_CHAR, max_size=300),
    st.lists(st.sampled_from(WORDS) | st.sampled_from(MARKS) | ANY_CHAR, max_size=40).map(" ".join),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join).flatmap(
        lambda text: st.integers(0, len(text)).flatmap(
            lambda at: st.text(st.sampled_from(MARKS), min_size=1, max_size=3).map(
                lambda marks: text[:at] + marks + text[at:]))),
    st.tuples(st.text(ANY_CHAR, min_size=1, max_size=8), st.integers(MAX_QUESTION_LENGTH - 5, 100_000)).map(
        lambda unit: (unit[0] * (unit[1] // len(unit[0]) + 1))[: unit[1]]),
)


@pytest.fixture(scope="module")
def sourced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sourced]:
    root = tmp_path_factory.mktemp("questions")
    settings = Settings(database_url=f"sqlite:///{root / 'q.db'}", embedder=EMBEDDER)  # type: ignore[arg-type]
    built = bootstrap(settings, config=CONFIG, progress=False)
    assert not built.ingestor.ingest(write_kb(root / "kb")).errors
    yield built
    built.engine.dispose()


@given(QUESTIONS)
def test_any_question_gets_one_defined_audited_outcome(sourced: Sourced, text: str) -> None:
    outcome = sourced.orchestrator.ask(Question(text=text, principal=STAFF, audience=Audience.only(STAFF)))
    assert isinstance(outcome, Answered | Refused | Clarify) and outcome.text
    record = sourced.audit_log.get(outcome.correlation_id)
    assert record is not None and record.kind == outcome.kind  # audited: the write did not fail
    assert text not in record.question_preview or not text.strip()
    if len(text) > MAX_QUESTION_LENGTH and text.strip():  # blank text is "empty" however long
        assert outcome.kind == "invalid_query"
        assert outcome.text == refusals.INVALID_QUERY_TOO_LONG.format(limit=MAX_QUESTION_LENGTH)

