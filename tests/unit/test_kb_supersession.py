"""Supersession is read from the text: "supersedes" followed closely by another document's id."""

from pathlib import Path

from core.retrieval.knowledge_base import default_doc_id, superseded_ids

KNOWN = {"leave-policy-2023": "leave-policy-2023", "leave-policy-2025": "leave-policy-2025",
         "expenses-2024": "expenses-2024", "expenses": "expenses"}


def test_an_id_soon_after_supersedes_is_superseded() -> None:
    body = "> This policy supersedes the Time Off Policy (2023), document leave-policy-2023. It applies from May."
    assert superseded_ids(body, KNOWN, own_id="leave-policy-2025") == ("leave-policy-2023",)


def test_the_word_is_matched_in_any_case_and_ids_at_a_sentence_end() -> None:
    assert superseded_ids("SUPERSEDES expenses-2024.", KNOWN, own_id="x") == ("expenses-2024",)


def test_an_id_is_not_matched_inside_a_longer_id() -> None:
    assert superseded_ids("supersedes expenses-2024", KNOWN, own_id="x") == ("expenses-2024",)


def test_an_id_far_after_the_word_or_in_the_next_paragraph_is_not_superseded() -> None:
    far = "This supersedes the old rules. " + "Filler words. " * 12 + "See expenses-2024."
    assert superseded_ids(far, KNOWN, own_id="x") == ()
    assert superseded_ids("This supersedes the old rules.\n\nSee expenses-2024.", KNOWN, own_id="x") == ()


def test_superseded_by_is_the_opposite_relation_and_a_document_never_supersedes_itself() -> None:
    assert superseded_ids("This policy is superseded by leave-policy-2025.", KNOWN, own_id="x") == ()
    assert superseded_ids("supersedes leave-policy-2025", KNOWN, own_id="leave-policy-2025") == ()


def test_unknown_ids_are_ignored() -> None:
    assert superseded_ids("supersedes leave-policy-2019", KNOWN, own_id="x") == ()


def test_default_ids_keep_folders_and_lose_spaces_and_accents() -> None:
    assert default_doc_id(Path("People/Congés payés.md")) == "People/Conges-payes"
