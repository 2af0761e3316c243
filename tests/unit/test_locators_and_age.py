"""Where a citation's words are (page, slide, a link to the place) and how old its source is, as said."""

from datetime import date

import pytest

from core.application.presenting import age_phrase, citation_age
from core.domain import Citation, Passage

PASSAGE = Passage(chunk_id="r.pdf#caps", doc_id="r.pdf", title="R", heading="R > Caps", text="t",
                  url="https://files.example.com/r.pdf", page=4, format="pdf")


def test_a_pdf_passage_says_its_page_and_links_to_it() -> None:
    assert (PASSAGE.place, PASSAGE.link) == ("page 4", "https://files.example.com/r.pdf#page=4")


def test_a_deck_passage_says_its_slide_and_links_to_the_deck() -> None:
    deck = Passage(chunk_id="d", doc_id="d", title="D", heading="D", text="t", url="https://x/d.pptx", page=2,
                   format="pptx")
    assert (deck.place, deck.link) == ("slide 2", "https://x/d.pptx")


def test_an_html_passage_links_to_its_heading_anchor_replacing_any_in_the_url() -> None:
    page = Passage(chunk_id="p", doc_id="p", title="P", heading="P > Meals", text="t",
                   url="https://wiki/p#top", anchor="meals", format="html")
    assert (page.place, page.link) == (None, "https://wiki/p#meals")


def test_without_a_url_there_is_no_link_but_the_page_is_still_said() -> None:
    local = Passage(chunk_id="r", doc_id="r", title="R", heading="R", text="t", page=3, format="pdf")
    assert (local.place, local.link) == ("page 3", None)


@pytest.mark.parametrize(("days", "said"), [(0, "updated today"), (1, "updated yesterday"),
                                            (9, "updated 9 days ago"), (20, "updated 2 weeks ago"),
                                            (426, "updated 14 months ago"), (800, "updated 2 years ago")])
def test_ages_read_as_a_person_says_them(days: int, said: str) -> None:
    assert age_phrase(days) == said


def test_a_stale_citation_says_so_beside_its_age_and_an_undated_one_says_nothing() -> None:
    dated = Passage(chunk_id="a", doc_id="a", title="A", heading="A", text="t", updated=date(2025, 1, 1))
    assert citation_age(Citation(n=1, passage=dated, content_hash="h", tier="direct", age_days=500, stale=True)
                        ) == "updated 16 months ago, may be out of date"
    assert citation_age(Citation(n=1, passage=dated, content_hash="h", tier="direct", age_days=30)) == \
        "updated 4 weeks ago"
    assert citation_age(Citation(n=1, passage=PASSAGE, content_hash="h", tier="direct")) is None
