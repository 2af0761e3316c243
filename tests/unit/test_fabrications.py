"""The fabrication generator: from a case and the sources in a prompt, the answers a model would give, faithful
or subtly wrong, each built by code from the supporting section."""

import pytest

from core.eval.cases import Case
from core.eval.fabrications import VARIANTS, Source, answer_sentences, fabricate, negate, parse_sources
from core.llm.prompts import load_prompt
from tests.unit.fakes import chunk

LOCKERS = chunk("gym#lockers", "Lockers are cleared every Friday at 18:00. Members may rent a locker for $12 per "
                "month from Coral Fitness. Towels are not provided.", doc_id="gym", title="Gym Guide",
                heading="Gym Guide > Lockers").chunk
CLASSES = chunk("gym#classes", "| Class | Places | Booking opens |\n|---|---|---|\n| Spin | 20 | 48 hours before |\n"
                "| Yoga | 15 | 72 hours before |", doc_id="gym", title="Gym Guide",
                heading="Gym Guide > Classes").chunk
PARKING = chunk("site#parking", "Visitors park on level 2 of the north garage for up to 3 hours.",
                doc_id="site", title="Site Guide", heading="Site Guide > Parking").chunk
CASE = Case.model_validate({"id": "g-1", "question": "How much does a locker cost each month?",
                            "asker": {"roles": ["everyone"]}, "expect": "answer",
                            "support": ["gym#Lockers"], "must_include": ["$12"]})
TABLE_CASE = Case.model_validate({"id": "g-2", "question": "How many places are there in a yoga class?",
                                  "asker": {"roles": ["everyone"]}, "expect": "answer",
                                  "support": ["gym#Classes"], "must_include": ["15"]})


def sources(*chunks: object) -> list[Source]:
    return parse_sources(load_prompt().render("q", chunks).user)  # type: ignore[arg-type]


SOURCES = sources(LOCKERS, PARKING, CLASSES)


def claim(variant: str, case: Case = CASE) -> dict[str, object]:
    made = fabricate(variant, case, SOURCES)  # type: ignore[arg-type]
    assert made is not None, variant
    [only] = made.claims
    return only


def test_the_sources_are_read_back_from_the_rendered_prompt_as_a_model_reads_them() -> None:
    assert [(s.chunk_id, s.heading, s.text) for s in SOURCES] == [
        (c.chunk_id, c.passage.heading, c.text) for c in (LOCKERS, PARKING, CLASSES)]


def test_the_answer_is_the_statement_of_the_supporting_section_that_holds_the_must_include_items() -> None:
    [sentence] = answer_sentences(CASE, SOURCES)
    assert sentence.raw == "Members may rent a locker for $12 per month from Coral Fitness."
    assert [s.text for s in answer_sentences(TABLE_CASE, SOURCES)] == [
        "Class: Yoga; Places: 15; Booking opens: 72 hours before"]


def test_faithful_variants_quote_the_answer_verbatim() -> None:
    assert claim("faithful_quote") == {"text": "Members may rent a locker for $12 per month from Coral Fitness.",
                                       "chunk_ids": ["gym#lockers"],
                                       "quote": "Members may rent a locker for $12 per month from Coral Fitness."}
    paraphrased = claim("faithful_paraphrase")
    assert paraphrased["text"] == "Members may rent a locker for $12 a month from Coral Fitness."
    assert paraphrased["quote"] in LOCKERS.text
    assert claim("faithful_paraphrase", TABLE_CASE)["text"] == \
        "For Yoga, the places is 15 and the booking opens is 72 hours before."


def test_a_number_is_swapped_for_another_of_the_same_chunk() -> None:
    swapped = claim("number_swap")
    assert swapped["text"] == "Members may rent a locker for $18 per month from Coral Fitness."
    assert swapped["quote"] == "Members may rent a locker for $12 per month from Coral Fitness."


def test_an_entity_is_swapped_and_a_table_rows_key_for_another_rows() -> None:
    assert "Coral Fitness" not in str(claim("entity_swap")["text"])
    assert claim("entity_swap", TABLE_CASE)["text"] == "Class: Spin; Places: 15; Booking opens: 72 hours before"


def test_negation_is_added_or_removed() -> None:
    assert claim("negation")["text"] == "Members may not rent a locker for $12 per month from Coral Fitness."
    assert negate("Towels are not provided.") == "Towels are provided."


def test_an_added_clause_comes_from_another_source() -> None:
    assert claim("added_clause")["text"] == ("Members may rent a locker for $12 per month from Coral Fitness, "
                                            "and visitors park on level 2 of the north garage for up to 3 hours.")


def test_the_right_claim_cites_another_retrieved_chunk() -> None:
    cited = claim("other_chunk")
    assert cited["chunk_ids"] == ["site#parking"] and cited["quote"] == claim("faithful_quote")["quote"]


def test_a_blend_takes_the_subject_of_the_answer_and_the_value_of_an_adjacent_sentence() -> None:
    blended = claim("blend")
    assert blended["text"] == "Members may rent a locker for 18:00."
    assert blended["quote"] == ("Lockers are cleared every Friday at 18:00. "
                                "Members may rent a locker for $12 per month from Coral Fitness.")


def test_another_question_is_answered_from_the_same_chunk() -> None:
    other = claim("other_question")
    assert other["text"] in {"Lockers are cleared every Friday at 18:00.", "Towels are not provided."}
    assert other["quote"] == other["text"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_nothing_is_made_when_the_supporting_section_was_not_retrieved(variant: str) -> None:
    assert fabricate(variant, CASE, sources(PARKING)) is None  # type: ignore[arg-type]
