"""PDF, Word, PowerPoint, HTML and wiki exports read into the document model, on files written by other tools
(pandoc, LibreOffice, Pillow, and by hand as Google Docs, Confluence and Notion lay them out:
tests/fixtures/formats/make_fixtures.py). Each fixture's heading paths, pages and row and item statements are
checked by name here, and the whole converted structure against its golden file (tests/formats_golden.py)."""

import shutil
from pathlib import Path

import pytest

from core.documents.model import Block, ListBlock, Paragraph, Quote, Table, Text
from core.retrieval.knowledge_base import load_knowledge_base
from tests.formats_golden import FIXTURES, READ, golden, structure

pytest.importorskip("pdfplumber", reason="the formats extra is not installed")


def model_targets(root: Path, path: str) -> list[str]:
    """Where the links of one document point, as the loader left them in its document model."""
    (document,) = [d for d in load_knowledge_base(root).documents if d.path.as_posix() == path]
    return [link.target for section in document.content.sections for block in section.blocks
            for text in _texts(block) for link in text.links]


def _texts(block: Block) -> list[Text]:
    match block:
        case Paragraph():
            return [block.text]
        case ListBlock():
            return [t for item in block.items for t in [item.text, *(t for c in item.children for t in _texts(c))]]
        case Table():
            return [*block.header, *(cell for row in block.rows for cell in row)]
        case Quote():
            return [t for inner in block.blocks for t in _texts(inner)]
    return []


def chunks(found: dict, path: str) -> dict[str, dict]:
    return {chunk["heading"]: chunk for chunk in found[path]["chunks"]}


@pytest.fixture(scope="module")
def files() -> dict:
    return structure(FIXTURES / "files")


@pytest.mark.parametrize("name", READ)
def test_each_fixture_folder_converts_to_its_golden_structure(name: str) -> None:
    assert structure(FIXTURES / name) == golden(name)


def test_a_pdf_written_by_libreoffice_keeps_its_headings_table_rows_list_items_and_page(files: dict) -> None:
    pdf = chunks(files, "travel-policy.pdf")
    assert files["travel-policy.pdf"]["title"] == "Travel Policy"
    assert list(pdf) == ["Travel Policy > Booking", "Travel Policy > Hotel caps",
                         "Travel Policy > Meals > Daily allowance", "Travel Policy > Meals > Client dinners"]
    caps = pdf["Travel Policy > Hotel caps"]
    assert caps["page"] == 1 and caps["id"] == "travel-policy.pdf#hotel-caps"
    assert "City: Oslo; Nightly cap: 210 EUR; Notes: Includes parking" in caps["statements"]
    assert "City: Lisbon; Nightly cap: 140 EUR; Notes: Old town hotels only" in caps["statements"]  # a wrapped cell
    booking = pdf["Travel Policy > Booking"]["statements"]
    assert "Before you book: Check the approved hotels list: Hotels outside the list need a quote from the " \
           "travel desk" in booking
    dinners = pdf["Travel Policy > Meals > Client dinners"]
    assert dinners["links"] and dinners["links"][0][2] == "https://expenses.example.com/claims"


def test_the_word_file_it_was_made_from_reads_the_same(files: dict) -> None:
    pdf, docx = chunks(files, "travel-policy.pdf"), chunks(files, "travel-policy.docx")
    assert list(pdf) == list(docx)
    assert [c["statements"] for c in pdf.values()] == [c["statements"] for c in docx.values()]
    assert all(chunk["page"] is None for chunk in docx.values())  # Word has no pages until it lays one out


def test_a_two_column_pdf_is_read_column_by_column_not_as_a_table(files: dict) -> None:
    pdf = chunks(files, "security-bulletin.pdf")  # LibreOffice, a section in two columns on the same baselines
    assert list(pdf) == ["Security Bulletin", "Security Bulletin > Lost or stolen devices",
                         "Security Bulletin > Phishing", "Security Bulletin > Passwords",
                         "Security Bulletin > Travelling abroad"]  # the left column top to bottom, then the right
    assert pdf["Security Bulletin > Lost or stolen devices"]["statements"] == [
        "Report a lost or stolen laptop to the service desk within one hour, on extension 4400 or at "
        "security@example.com.", "The desk locks the device remotely and wipes it after 24 hours unless it is found."]
    assert pdf["Security Bulletin > Passwords"]["statements"][0] == (
        "Passwords must be at least 14 characters long and are changed only when a breach is suspected.")


def test_a_borderless_table_ends_at_the_next_heading_and_joins_its_wrapped_header_cell(files: dict) -> None:
    pdf = chunks(files, "leave-policy.pdf")  # pandoc's Word file printed by LibreOffice: header cells at the bottom
    assert list(pdf) == ["Leave Policy > Leave entitlements", "Leave Policy > Leave entitlements > Carry-over",
                         "Leave Policy > Leave entitlements > Parental leave"]
    assert pdf["Leave Policy > Leave entitlements"]["statements"] == [
        "Every employee accrues leave from the first day of employment.",
        "Leave type: Annual leave; Paid days per year: 25 days; Notice needed: Two weeks for more than three days",
        "Leave type: Sick leave; Paid days per year: 10 days; Notice needed: None; tell your manager by nine on the "
        "first day",
        "Leave type: Volunteering leave; Paid days per year: 2 days; Notice needed: One week"]
    assert pdf["Leave Policy > Leave entitlements > Parental leave"]["statements"] == [
        "Parents take up to 16 weeks of paid leave within a year of the birth or adoption."]
    docx = chunks(files, "leave-policy.docx")
    assert [c["statements"] for c in pdf.values()] == [c["statements"] for c in docx.values()]


def test_an_odt_printed_to_pdf_keeps_its_numbered_list_and_ruled_table(files: dict) -> None:
    pdf = chunks(files, "onboarding.pdf")
    assert "Set up single sign-on with the IT desk" in pdf["Engineering Onboarding > First week"]["statements"]
    access = pdf["Engineering Onboarding > Access"]["statements"]
    assert access == ["System: Production database; Who grants it: Platform team; Wait: 5 working days",
                      "System: Build servers; Who grants it: Your team lead; Wait: 1 working day"]


def test_a_google_docs_export_has_title_headings_nested_list_and_table(files: dict) -> None:
    doc = files["google-docs-handbook.docx"]
    assert doc["title"] == "Remote Work Handbook" and doc["updated"] == "2025-11-03"
    sections = chunks(files, "google-docs-handbook.docx")
    setup = sections["Remote Work Handbook > Working from home > Home office setup"]["statements"]
    assert "The company pays for: A second monitor: Only models from the hardware catalogue" in setup
    abroad = sections["Remote Work Handbook > Working abroad"]["statements"]
    assert "Country group: Rest of world; Days a year: 10; Approval: People team" in abroad


def test_a_deck_has_a_section_per_slide_with_its_slide_number(files: dict) -> None:
    deck = chunks(files, "quarterly-review.pptx")
    assert files["quarterly-review.pptx"]["title"] == "Support Quarterly Review"
    assert {heading: chunk["page"] for heading, chunk in deck.items()} == {
        "Support Quarterly Review > Highlights": 2, "Support Quarterly Review > Staffing": 3,
        "Support Quarterly Review > Next quarter": 4}
    assert "Region: EMEA; Agents: 6; Hours: 08:00-18:00 CET" in deck["Support Quarterly Review > Staffing"][
        "statements"]
    printed = chunks(files, "quarterly-review.pdf")
    assert [chunk["page"] for chunk in printed.values()] == [2, 3, 4]  # LibreOffice's PDF of it: pages = slides


def test_a_web_page_loses_its_navigation_and_footer_and_keeps_heading_anchors(files: dict) -> None:
    page = files["benefits.html"]
    assert page["title"] == "Employee Benefits" and page["updated"] == "2026-02-10"  # not "- Example Intranet"
    text = " ".join(statement for chunk in page["chunks"] for statement in chunk["statements"])
    assert "Intranet home" not in text and "Copyright" not in text and "Finance" not in text
    learning = chunks(files, "benefits.html")["Employee Benefits > Learning budget"]
    assert learning["anchor"] == "learning-budget"
    assert "Item: Conference ticket; Limit: 600 EUR; Approval: Manager" in learning["statements"]


def test_a_confluence_export_reads_pages_attachments_dates_and_links_between_pages() -> None:
    found = structure(FIXTURES / "confluence")
    leave = found["PEOPLE/Parental-leave_98306.html"]
    assert leave["title"] == "Parental leave" and leave["updated"] == "2026-02-20"  # "last modified ... on"
    sections = chunks(found, "PEOPLE/Parental-leave_98306.html")
    how_much = sections["Parental leave > How much leave"]
    assert how_much["anchor"] == "Parentalleave-Howmuchleave"
    assert "Length of service: One year or more; Paid weeks for other parents: 12 weeks" in how_much["statements"]
    text = " ".join(s for chunk in leave["chunks"] for s in chunk["statements"])
    assert "Dana Okafor" not in text and "Attachments" not in text and "Document generated" not in text
    assert "PEOPLE/New-starters_98307.html#Newstarters-Yourfirstday" in model_targets(
        FIXTURES / "confluence", "PEOPLE/Parental-leave_98306.html")  # the page it names, found in the export
    assert sections["Parental leave > Asking for leave"]["links"] == []  # no address to open: left as words
    attachment = found["PEOPLE/attachments/98307/98310.pdf"]
    assert attachment["format"] == "pdf" and attachment["title"] == "Engineering Onboarding"


def test_a_notion_export_has_titles_without_ids_one_table_per_database_and_resolved_links() -> None:
    found = structure(FIXTURES / "notion")
    root = "IT Help 3f9c2a6e1b7d4c8e9a0b1c2d3e4f5a6b"
    page = found[f"{root}.md"]
    assert page["title"] == "IT Help" and page["updated"] == "2026-01-28" and page["format"] == "notion"
    child = f"{root}/Laptop refresh 8d1e4b2c6a9f4e3d8c7b6a5f4e3d2c1b.md"
    assert found[child]["title"] == "Laptop refresh"
    assert model_targets(FIXTURES / "notion", f"{root}.md") == [child]
    assert [link for chunk in page["chunks"] for link in chunk["links"]] == []  # no address to open
    database = [path for path in found if path.endswith(".csv")]
    assert database == [f"{root}/Software catalogue c4b3a2918f7e4d6c5b4a39281f0e9d8c.csv"]  # not its _all.csv
    assert found[database[0]]["title"] == "Software catalogue"
    rows = found[database[0]]["chunks"][0]["statements"]
    assert rows[1].startswith("Name: Password manager; Vendor: Keyvault; Licence owner: IT Desk")


def test_the_same_name_in_two_formats_is_two_documents(tmp_path: Path) -> None:
    for name in ("travel-policy.pdf", "travel-policy.docx"):
        shutil.copy(FIXTURES / "files" / name, tmp_path / name)
    found = structure(tmp_path)
    assert sorted(found) == ["travel-policy.docx", "travel-policy.pdf"]
    assert all("refused" not in entry for entry in found.values())
