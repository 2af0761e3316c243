"""The annotated-question loader (training/reader/annotated.py) on a tiny handbook of its own: it re-finds a
question's statements by their text, then by the answer span when the reading form has changed, and orders
negatives section first, then page."""

import json
from pathlib import Path

import pytest

from training.reader.annotated import (
    AnnotationError,
    load_questions,
    page_document,
    page_statements,
    pairs,
    refind_report,
    resolve,
    spans_alone,
)

PAGE = "acme/handbook/travel.mdx"
TEXT = """---
title: Travel at Acme
sidebar: Handbook
---
import { Callout } from 'components'

## Booking

Book flights through Navan at least two weeks ahead. Economy is the default on every flight.

Before you book, check:
- the visa rules of the country you visit
- that your passport is valid for six months

## Hotels

Hotels are booked by the office team. Send them your dates in #travel-desk.
"""


def write_page(root: Path) -> Path:
    page = root / PAGE
    page.parent.mkdir(parents=True)
    page.write_text(TEXT, encoding="utf-8")
    return root


def answer(heading: str, statement: str, span: str) -> dict[str, str]:
    return {"heading": heading, "statement": statement, "answer_span": span}


def write_lines(folder: Path, *records: dict[str, object]) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "travel.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return folder


def record(question_id: str, question: str, **fields: object) -> dict[str, object]:
    return {"id": question_id, "page": PAGE, "question": question, **fields}


def test_the_page_is_read_with_its_own_front_matter_and_mdx_lines_left_out(tmp_path: Path) -> None:
    document = page_document(PAGE, handbooks=write_page(tmp_path))

    assert document.title == "Travel at Acme"
    assert "import" not in document.body and "sidebar" not in document.body
    texts = [s.text for s in page_statements(PAGE, handbooks=tmp_path)]
    assert "Economy is the default on every flight." in texts
    assert "Before you book, check: that your passport is valid for six months" in texts


def test_a_question_is_refound_by_its_statement_text_and_its_negatives_are_its_section_first(tmp_path: Path
                                                                                           ) -> None:
    handbooks = write_page(tmp_path / "pages")
    data = write_lines(tmp_path / "data", record(
        "t-1", "can i fly business?", answerable=True,
        answers=[answer("Travel at Acme > Booking", "Economy is the default on every flight.",
                        "Economy is the default")]))
    question = load_questions(data)[0]
    statements = page_statements(PAGE, handbooks=handbooks)

    resolved = resolve(question, statements)
    built = list(pairs([question], handbooks=handbooks))

    assert resolved.by == "text"
    assert (built[0].text, built[0].label) == ("Economy is the default on every flight.", 1)
    negatives = [p for p in built if p.label == 0]
    assert [p.heading for p in negatives] == ["Travel at Acme > Booking"] * 4 + ["Travel at Acme > Hotels"] * 2
    assert "Economy is the default on every flight." not in [p.text for p in negatives]
    assert built[0].before == "Book flights through Navan at least two weeks ahead."
    assert {p.group for p in built} == {"annotated:t-1"}


def test_a_statement_whose_reading_changed_is_refound_by_its_span_in_its_own_words(tmp_path: Path) -> None:
    handbooks = write_page(tmp_path / "pages")
    older_reading = "Check before booking: passport valid for six months"
    data = write_lines(tmp_path / "data", record(
        "t-2", "how long does my passport need to be valid?", answerable=True,
        answers=[answer("Travel at Acme > Booking", older_reading, "valid for six months")]))

    resolved = resolve(load_questions(data)[0], page_statements(PAGE, handbooks=handbooks))

    assert resolved.by == "span"
    assert [s.text for s in resolved.found] == ["Before you book, check: that your passport is valid for six months"]


def test_a_near_miss_has_no_positive_and_reads_its_decoy_first(tmp_path: Path) -> None:
    handbooks = write_page(tmp_path / "pages")
    data = write_lines(tmp_path / "data", record(
        "t-3", "what's the hotel budget per night?", answerable=False,
        decoys=[{"heading": "Travel at Acme > Hotels", "statement": "Hotels are booked by the office team.",
                 "span": "booked by the office team"}]))

    built = list(pairs(load_questions(data), handbooks=handbooks, negatives_per_question=2))

    assert [(p.text, p.label) for p in built] == [("Hotels are booked by the office team.", 0),
                                                  ("Send them your dates in #travel-desk.", 0)]


def test_a_question_whose_span_is_gone_is_reported_and_gives_no_pairs(tmp_path: Path) -> None:
    handbooks = write_page(tmp_path / "pages")
    data = write_lines(tmp_path / "data", record(
        "t-4", "who books trains?", answerable=True,
        answers=[answer("Travel at Acme > Trains", "Trains are booked by you.", "Trains are booked")]))
    questions = load_questions(data)

    report = refind_report(questions, handbooks=handbooks)

    assert report.missing == ("t-4",)
    assert report.total["answerable"] == 1
    assert list(pairs(questions, handbooks=handbooks)) == []


@pytest.mark.parametrize(("line", "message"), [
    (record("t-5", "q?", answerable=True, answers=[], colour="red"), "unknown key 'colour'"),
    (record("t-5", "q?", answerable=True, answers=[]), "needs 'answers'"),
    (record("t-5", "q?", answerable="yes"), "'answerable' must be true or false"),
    (record("t-5", "q?", answerable=True, answers=[{"heading": "h", "statement": "s"}]), "exactly"),
])
def test_a_line_off_the_schema_is_an_error_naming_file_and_line(tmp_path: Path, line: dict[str, object],
                                                               message: str) -> None:
    data = write_lines(tmp_path / "data", line)

    with pytest.raises(AnnotationError, match=message) as raised:
        load_questions(data)
    assert "travel.jsonl:1" in str(raised.value)


def test_ids_are_unique_across_files(tmp_path: Path) -> None:
    line = record("t-6", "q?", answerable=True, answers=[answer("h", "s", "s")])
    data = write_lines(tmp_path / "data", line)
    (data / "other.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")

    with pytest.raises(AnnotationError, match="duplicate id 't-6'"):
        load_questions(data)


def test_a_question_on_a_page_kept_for_evaluation_is_refused(tmp_path: Path) -> None:
    split = tmp_path / "page_split.txt"
    split.write_text(f"# the split\ntrain: acme/handbook/other.md\ndev3: {PAGE}\n", encoding="utf-8")
    data = write_lines(tmp_path / "data", record("t-7", "q?", answerable=True, answers=[answer("h", "s", "s")]))

    with pytest.raises(AnnotationError, match="dev3 page"):
        load_questions(data, split=split)
    assert load_questions(data, split=tmp_path / "absent.txt")[0].id == "t-7"


def test_the_spans_alone_find_the_statements_the_texts_find(tmp_path: Path) -> None:
    handbooks = write_page(tmp_path / "pages")
    data = write_lines(tmp_path / "data", record(
        "t-8", "do hotels get booked for me?", answerable=True,
        answers=[answer("Travel at Acme > Hotels", "Hotels are booked by the office team.", "by the office team")]),
        record("t-9", "is business class ok on long flights?", answerable=True,
               answers=[answer("Travel at Acme > Booking", "Economy is the default on every flight.", "Economy")]))

    assert spans_alone(load_questions(data), handbooks=handbooks) == (2, 2)


def test_a_page_that_is_not_staged_is_an_error_naming_where_the_pages_belong(tmp_path: Path) -> None:
    with pytest.raises(AnnotationError, match=r"reader-data/handbooks"):
        page_statements(PAGE, handbooks=tmp_path / "nowhere")
