"""Real Markdown/MDX of a Gatsby site (PostHog's handbook, MIT; tests/fixtures/posthog): site front matter, an
MDX import, components and HTML tables ingest without errors, with headings and tables kept."""

from pathlib import Path

from core.application.language.statements import split_statements
from core.documents.model import Table
from core.domain import Passage, RetrievedChunk
from core.retrieval import load_knowledge_base
from core.retrieval.chunking import chunk_document

PAGES = Path(__file__).parents[1] / "fixtures" / "posthog" / "pages"


def test_the_handbook_pages_load_without_errors_and_list_the_site_keys_once() -> None:
    result = load_knowledge_base(PAGES)
    assert not result.errors
    assert sorted(d.doc_id for d in result.documents) == ["bug-prioritization", "clubs", "laptop-provisioning",
                                                         "team-changes"]
    assert result.notes() == ("front-matter keys that are not Sourced's were ignored: hideAnchor (1 file), "
                              "showTitle (3 files), sidebar (3 files)",)


def test_headings_and_tables_are_kept() -> None:
    by_id = {d.doc_id: d for d in load_knowledge_base(PAGES).documents}
    bugs = by_id["bug-prioritization"]
    headings = [chunk.heading for chunk in chunk_document(bugs)]
    assert "Bug prioritization > User experience degradation" in headings
    tables = [block for section in bugs.content.sections for block in section.blocks if isinstance(block, Table)]
    assert [cell.text for cell in tables[0].header] == ["GitHub Label", "Description"]  # an HTML table
    statements = [s.text for chunk in chunk_document(bugs) for s in split_statements(RetrievedChunk(
        passage=Passage(chunk_id=chunk.chunk_id, doc_id="b", title="B", heading=chunk.heading, text=chunk.text),
        score=1.0, content_hash=""))]
    assert "GitHub Label: P0; Description: Critical, breaking issue (page crash, missing functionality)" in statements
    team = by_id["team-changes"]
    assert team.title == "Team changes"
    assert not any("CalloutBox" in chunk.text and "import" in chunk.text for chunk in chunk_document(team))
    laptops = by_id["laptop-provisioning"]  # no front matter at all
    assert any(isinstance(block, Table) for section in laptops.content.sections for block in section.blocks)
