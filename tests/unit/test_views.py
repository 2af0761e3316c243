"""The assistant's greeting, title and prompts, and the Home tab, rendered through slack_sdk's models."""

from datetime import UTC, date, datetime

from bot import views
from core.application.catalog import Activity, DocumentSummary

INGESTED = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


def document(title: str, *, owner: str | None = "#ops", updated: date | None = None) -> DocumentSummary:
    return DocumentSummary(doc_id=title.lower(), title=title, owner=owner, updated=updated, ingested_at=INGESTED)


def test_prompts_name_the_newest_documents_first_and_undated_ones_last() -> None:
    documents = [document("Undated"), document("Old", updated=date(2024, 1, 1)),
                 document("New", updated=date(2026, 1, 1)), document("Mid", updated=date(2025, 1, 1))]
    assert [prompt["title"] for prompt in views.suggested_prompts(documents)] == ["New", "Mid", "Old"]
    assert views.suggested_prompts([]) == []


def test_a_thread_title_is_the_questions_first_words() -> None:
    assert views.thread_title("What is the meal limit?") == "What is the meal limit?"
    long_question = "one two three four five six seven eight nine"
    assert views.thread_title(long_question) == "one two three four five six seven eight…"
    assert len(views.thread_title("x" * 500)) == views.TITLE_CHARS


def test_the_greeting_counts_only_the_documents_given() -> None:
    assert "2 company documents" in views.greeting([document("A"), document("B", owner="C0OPS12345")])
    assert "<#C0OPS12345>" in views.greeting([document("B", owner="C0OPS12345")])
    assert "none are available" in views.greeting([])


def test_a_home_tab_with_hundreds_of_owners_stays_within_slacks_limits() -> None:
    documents = [document(f"Doc {i}", owner=f"#team-{i}") for i in range(300)]
    view = views.home_view(documents, Activity(answered=3, refused={"not_in_corpus": 2})).to_dict()
    assert len(view["blocks"]) <= 100
    assert all(len(block.get("text", {}).get("text", "")) <= 3000 for block in view["blocks"])
    assert "280 more owners" in view["blocks"][1]["text"]["text"]


def test_the_operator_section_appears_only_with_activity() -> None:
    assert "operators" not in str(views.home_view([document("A")], None).to_dict())
    shown = views.home_view([document("A")], Activity(answered=1, dead_ends=2, p95_latency_ms=812.0)).to_dict()
    operators = next(block for block in shown["blocks"] if block.get("block_id") == "operators")
    assert "Dead ends (refused with no passage to offer): 2" in operators["text"]["text"]
    assert "p95 latency: 812 ms" in operators["text"]["text"]
