"""Supersession is declared by metadata only: the ids it names, resolved against the documents that exist."""

from pathlib import Path

from core.retrieval.knowledge_base import declared_ids, default_doc_id

KNOWN = {"leave-policy-2023": "leave-policy-2023", "leave-policy-2025": "leave-policy-2025",
         "expenses-2024": "expenses-2024", "expenses": "expenses"}


def test_a_declared_id_is_matched_whatever_its_case() -> None:
    assert declared_ids(["Expenses-2024"], KNOWN, own_id="x") == ("expenses-2024",)


def test_unknown_ids_and_the_document_itself_are_left_out() -> None:
    assert declared_ids(["leave-policy-2019", "leave-policy-2025"], KNOWN, own_id="leave-policy-2025") == ()


def test_each_id_once_in_the_order_declared() -> None:
    assert declared_ids(["expenses", "leave-policy-2023", "EXPENSES"], KNOWN, own_id="x") == (
        "expenses", "leave-policy-2023")


def test_default_ids_keep_folders_and_lose_spaces_and_accents() -> None:
    assert default_doc_id(Path("People/Congés payés.md")) == "People/Conges-payes"
