"""Chunking follows the author's headings, keeps the heading path, and gives ids that survive re-ingestion."""

import gc
import hashlib
import itertools
import re
import time
from dataclasses import replace
from pathlib import Path

from core.retrieval import SourceDocument, chunk_document

BODY = """# Leave Policy

How paid time away from work is handled.

## Annual leave

Full-time employees receive 25 days of paid annual leave.

## Parental leave

### Birth parents

A birth parent receives 20 weeks of fully paid leave.

### Non-birth parents

A non-birth parent receives 12 weeks of fully paid leave.

## Empty section

## Sick leave

Ten days of paid sick leave per calendar year.

```
# not a heading inside a code fence
```
"""


def document(body: str = BODY, *, doc_id: str = "leave-policy", title: str = "Leave Policy") -> SourceDocument:
    return SourceDocument(doc_id=doc_id, path=Path(f"{doc_id}.md"), title=title, owner="#people-ops",
                          audience=frozenset({"everyone"}), updated=None, url=None, body=body,
                          file_sha256="0" * 64)


def test_chunks_follow_headings_and_keep_the_heading_path() -> None:
    chunks = chunk_document(document())
    assert [c.heading for c in chunks] == [
        "Leave Policy",
        "Leave Policy > Annual leave",
        "Leave Policy > Parental leave > Birth parents",
        "Leave Policy > Parental leave > Non-birth parents",
        "Leave Policy > Sick leave",
    ]
    assert chunks[0].text == "How paid time away from work is handled."
    assert "# not a heading inside a code fence" in chunks[-1].text
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_a_first_heading_other_than_the_title_is_part_of_the_path() -> None:
    (chunk,) = chunk_document(document("# Overview\n\nSome text.\n", title="Leave Policy"))
    assert chunk.heading == "Leave Policy > Overview"


def test_chunk_ids_are_short_slack_safe_and_derived_from_the_heading_path() -> None:
    ids = [c.chunk_id for c in chunk_document(document())]
    assert ids == [
        "leave-policy#leave-policy",
        "leave-policy#annual-leave",
        "leave-policy#parental-leave/birth-parents",
        "leave-policy#parental-leave/non-birth-parents",
        "leave-policy#sick-leave",
    ]
    assert all(re.fullmatch(r"[a-z0-9#/.-]+", chunk_id) for chunk_id in ids)


def test_the_same_document_gives_the_same_chunks_every_time() -> None:
    assert chunk_document(document()) == chunk_document(document())


def test_editing_one_section_keeps_the_other_sections_ids_and_hashes() -> None:
    before = {c.chunk_id: c.content_hash for c in chunk_document(document())}
    edited = BODY.replace("25 days", "27 days") + "\n## Bereavement leave\n\nFive days.\n"
    after = {c.chunk_id: c.content_hash for c in chunk_document(document(edited))}
    changed = {chunk_id for chunk_id in before if before[chunk_id] != after.get(chunk_id)}
    assert changed == {"leave-policy#annual-leave"}
    assert set(after) - set(before) == {"leave-policy#bereavement-leave"}


def test_duplicate_headings_get_numbered_ids() -> None:
    body = "# T\n\n## FAQ\n\nOne.\n\n## Other\n\nTwo.\n\n## FAQ\n\nThree.\n"
    assert [c.chunk_id for c in chunk_document(document(body, doc_id="d", title="T"))] == [
        "d#faq", "d#other", "d#faq-2"]


def test_the_content_hash_is_the_sha256_of_the_text() -> None:
    for chunk in chunk_document(document()):
        assert chunk.content_hash == hashlib.sha256(chunk.text.encode("utf-8")).hexdigest()


def long_section(sentences: int) -> str:
    return " ".join(f"Rule {n} says that claims of type {n} are paid within {n} days." for n in range(sentences))


def test_a_long_section_becomes_overlapping_windows_with_the_same_heading() -> None:
    body = f"# T\n\n## Rules\n\n{long_section(60)}\n"
    chunks = chunk_document(document(body, doc_id="d", title="T"))
    assert len(chunks) > 2
    assert {c.heading for c in chunks} == {"T > Rules"}
    assert [c.chunk_id for c in chunks][:3] == ["d#rules", "d#rules.2", "d#rules.3"]
    assert all(len(c.text) <= 1200 for c in chunks)
    for first, second in itertools.pairwise(chunks):
        assert second.text.split(". ")[0] in first.text  # each window opens with the end of the last
        assert first.text.endswith(".")  # and no window ends mid-sentence


def test_a_window_growing_in_one_section_does_not_rename_a_later_duplicate() -> None:
    short = "# T\n\n## FAQ\n\nOne.\n\n## FAQ\n\nTwo.\n"
    grown = f"# T\n\n## FAQ\n\n{long_section(60)}\n\n## FAQ\n\nTwo.\n"
    last = [chunk_document(document(body, doc_id="d", title="T"))[-1].chunk_id for body in (short, grown)]
    assert last == ["d#faq-2", "d#faq-2"]


def test_a_table_is_never_split_inside_a_row_and_repeats_its_header() -> None:
    rows = "\n".join(f"| City number {n} with a long name | ${n * 10} per night |" for n in range(60))
    table = f"| City | Limit per night |\n|---|---|\n{rows}"
    chunks = chunk_document(document(f"# T\n\n## Hotels\n\n{table}\n", doc_id="d", title="T"), max_chars=600,
                            overlap=150)
    windows = [chunk.text for chunk in chunks]
    assert len(windows) > 2
    for window in windows:
        lines = window.split("\n")
        assert lines[:2] == ["| City | Limit per night |", "| --- | --- |"]
        assert all(line.startswith("| ") and line.endswith(" |") for line in lines[2:])
    all_rows = {line for window in windows for line in window.split("\n")[2:]}
    assert all_rows == set(rows.split("\n"))


def test_an_empty_document_has_no_chunks() -> None:
    assert chunk_document(replace(document(), body="# Leave Policy\n\n## Nothing here\n")) == []


def test_thousands_of_sections_with_one_heading_get_distinct_ids_in_linear_time() -> None:
    def chunked(sections: int) -> tuple[list[str], float]:  # found by fuzzing: the id search was quadratic
        body = "".join(f"## Same\nline {i}.\n" for i in range(sections))
        document = SourceDocument(doc_id="d", path=Path("d.md"), title="D", owner=None, audience=frozenset(),
                                  updated=None, url=None, body=body, file_sha256="x")
        # CPU time, with the collector paused: neither other work on the machine nor the garbage the rest of the
        # suite left in this process (a full collection walks all of it) should count as this code's work
        gc.collect()
        gc.disable()
        try:
            started = time.process_time()
            ids = [draft.chunk_id for draft in chunk_document(document)]
            return ids, time.process_time() - started
        finally:
            gc.enable()

    _, small = chunked(2000)
    ids, large = chunked(8000)
    assert len(set(ids)) == 8000 and ids[:3] == ["d#same", "d#same-2", "d#same-3"]
    assert large < 8 * small + 1.0  # four times the sections; quadratic work would take sixteen times as long
