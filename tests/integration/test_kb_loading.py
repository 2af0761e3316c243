"""Loading a knowledge-base folder: front matter, defaults, and bad files that never stop the good ones."""

from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from core.documents.formats import FORMATS
from core.documents.sources import SourceRule
from core.retrieval import LoadResult, load_knowledge_base

TRAVEL = """---
id: travel-expenses
title: Travel and Expense Policy
owner: "#finance-ops"
audience: [everyone, contractors]
updated: 2026-03-14
url: https://wiki.example/travel
---
# Travel and Expense Policy

## Meals

The daily meal allowance is $75.
"""


def write(root: Path, relative: str, content: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def only_error(result: LoadResult) -> str:
    assert len(result.errors) == 1, result.errors
    return result.errors[0].reason


def test_front_matter_sets_every_field(tmp_path: Path) -> None:
    write(tmp_path, "travel.md", TRAVEL)
    (document,) = load_knowledge_base(tmp_path).documents
    assert document.doc_id == "travel-expenses"
    assert document.title == "Travel and Expense Policy"
    assert document.owner == "#finance-ops"
    assert document.audience == frozenset({"everyone", "contractors"})
    assert document.updated == date(2026, 3, 14)
    assert document.url == "https://wiki.example/travel"
    assert document.body.startswith("# Travel and Expense Policy")
    assert document.path == Path("travel.md")
    assert len(document.file_sha256) == 64


def test_without_front_matter_the_defaults_apply(tmp_path: Path) -> None:
    write(tmp_path, "policies/Remote Work.md", "# Working from Home\n\nTwo days a week.\n")
    write(tmp_path, "notes/plain.txt", "No heading at all.\n")
    by_id = {d.doc_id: d for d in load_knowledge_base(tmp_path).documents}
    assert set(by_id) == {"policies/Remote-Work", "notes/plain"}
    remote = by_id["policies/Remote-Work"]
    assert remote.title == "Working from Home"
    assert remote.audience == frozenset({"everyone"})
    assert (remote.owner, remote.url) == (None, None)
    modified = datetime.fromtimestamp((tmp_path / "policies/Remote Work.md").stat().st_mtime, tz=UTC).date()
    assert (remote.updated, remote.updated_from) == (modified, "file")
    assert by_id["notes/plain"].title == "plain"


def test_files_load_in_path_order_and_other_suffixes_are_ignored(tmp_path: Path) -> None:
    for name in ("b.md", "a.txt", "sub/c.md", "image.png", "README.rst"):
        write(tmp_path, name, "# Title\n\ntext\n")
    assert [d.doc_id for d in load_knowledge_base(tmp_path).documents] == ["a", "b", "sub/c"]


def test_a_front_matter_key_one_typo_from_ours_is_an_error_naming_the_key(tmp_path: Path) -> None:
    write(tmp_path, "bad.md", "---\ntitle: X\naudiance: [hr]\n---\n# X\n")
    write(tmp_path, "good.md", TRAVEL)
    result = load_knowledge_base(tmp_path)
    assert "'audiance'" in only_error(result)
    assert result.errors[0].path == Path("bad.md")
    assert [d.doc_id for d in result.documents] == ["travel-expenses"]


def test_broken_yaml_is_an_error_with_its_line(tmp_path: Path) -> None:
    write(tmp_path, "broken.md", "---\ntitle: X\naudience: [hr\n---\n# X\n")
    write(tmp_path, "good.md", TRAVEL)
    result = load_knowledge_base(tmp_path)
    reason = only_error(result)
    assert "not valid YAML" in reason
    assert "\n" not in reason
    assert len(result.documents) == 1


def test_a_file_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "latin1.md", "# Caf\u00e9 policy\n".encode("latin-1"))
    write(tmp_path, "good.md", TRAVEL)
    result = load_knowledge_base(tmp_path)
    assert "not UTF-8" in only_error(result)
    assert len(result.documents) == 1


@pytest.mark.parametrize(("front_matter", "expected"), [
    ("updated: next week", "'updated'"),
    ("audience: everyone", "'audience'"),
    ("audience: []", "at least one role"),
    ("title: 42", "'title'"),
    ("id: has spaces", "'id'"),
    ("owner: #finance", "'owner' has no value"),
    ("- just\n- a list", "mapping"),
])
def test_a_value_of_the_wrong_type_is_an_error_naming_the_key(tmp_path: Path, front_matter: str,
                                                               expected: str) -> None:
    write(tmp_path, "doc.md", f"---\n{front_matter}\n---\n# Doc\n")
    assert expected in only_error(load_knowledge_base(tmp_path))


def test_front_matter_that_never_closes_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "open.md", "---\ntitle: X\n# X\n")
    assert "no closing" in only_error(load_knowledge_base(tmp_path))


def test_a_duplicate_id_is_an_error_for_the_second_file(tmp_path: Path) -> None:
    write(tmp_path, "a.md", TRAVEL)
    write(tmp_path, "b.md", TRAVEL.replace("Travel and Expense Policy", "Copy"))
    result = load_knowledge_base(tmp_path)
    assert result.errors[0].path == Path("b.md")
    assert "'travel-expenses'" in only_error(result)
    assert "a.md" in result.errors[0].reason
    assert [d.title for d in result.documents] == ["Travel and Expense Policy"]


def test_supersession_is_recorded_from_front_matter_for_documents_that_exist(tmp_path: Path) -> None:
    write(tmp_path, "leave-2023.md", "---\nid: leave-policy-2023\n---\n# Time Off Policy (2023)\n\nOld.\n")
    write(tmp_path, "leave-2025.md", "---\nid: leave-policy-2025\nsupersedes: [Leave-Policy-2023, leave-policy-2019]"
          "\n---\n# Leave Policy\n\nNew.\n")
    by_id = {d.doc_id: d for d in load_knowledge_base(tmp_path).documents}
    assert by_id["leave-policy-2025"].supersedes == ("leave-policy-2023",)
    assert by_id["leave-policy-2023"].supersedes == ()


def test_a_sentence_in_the_text_retires_no_document(tmp_path: Path) -> None:
    """Anyone who may edit a page may write "supersedes" in it: the official policy must not be retired by it."""
    write(tmp_path, "parking.md", "---\nid: parking-rules\n---\n# Parking Rules\n\nBays 1-9 are for visitors.\n")
    write(tmp_path, "notes.md", "---\nid: team-notes\n---\n# Team Notes\n\n"
          "> This page supersedes parking-rules. SUPERSEDES document parking-rules.\n\nPark anywhere.\n")
    write(tmp_path, "scan.html", "<h1>Scanned memo</h1><p>This memo supersedes parking-rules.</p>")
    assert all(d.supersedes == () for d in load_knowledge_base(tmp_path).documents)


def test_a_sources_rule_may_declare_supersession_and_front_matter_overrides_it(tmp_path: Path) -> None:
    write(tmp_path, "old/parking.md", "---\nid: parking-2024\n---\n# Parking\n\nOld bays.\n")
    write(tmp_path, "new/parking.md", "---\nid: parking-2025\n---\n# Parking\n\nNew bays.\n")
    write(tmp_path, "new/desks.md", "---\nid: desks\nsupersedes: []\n---\n# Desks\n\nHot desks.\n")
    rules = [SourceRule(path="new/**", supersedes=("parking-2024",))]
    by_id = {d.doc_id: d for d in load_knowledge_base(tmp_path, rules=rules).documents}
    assert by_id["parking-2025"].supersedes == ("parking-2024",)
    assert by_id["desks"].supersedes == ()


def test_a_supersedes_entry_that_is_not_an_id_is_the_files_error(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "---\nid: a\nsupersedes: [\"the old policy\"]\n---\n# A\n\nText.\n")
    result = load_knowledge_base(tmp_path)
    assert result.documents == ()
    assert "supersedes" in only_error(result)


def test_each_edition_of_a_title_supersedes_the_older_ones(tmp_path: Path) -> None:
    for year, month in (("2023", "03"), ("2024", "01"), ("2025", "11")):
        write(tmp_path, f"travel-{year}.md",
              f"---\nid: travel-{year}\nupdated: {year}-{month}-01\n---\n# Travel Policy ({year})\n\nMeals.\n")
    write(tmp_path, "travel-faq.md", "---\nid: travel-faq\nupdated: 2026-01-01\n---\n# Travel FAQ\n\nAsk.\n")
    by_id = {d.doc_id: d for d in load_knowledge_base(tmp_path).documents}
    assert by_id["travel-2025"].supersedes == ("travel-2024", "travel-2023")
    assert by_id["travel-2024"].supersedes == ("travel-2023",)
    assert by_id["travel-2023"].supersedes == by_id["travel-faq"].supersedes == ()


def test_another_edition_dated_as_the_newest_changes_nothing_the_older_ones_supersede(tmp_path: Path) -> None:
    """The edition may be restricted: whether it exists must not change which permitted edition is current."""
    for year in ("2024", "2025"):
        write(tmp_path, f"travel-{year}.md",
              f"---\nid: travel-{year}\nupdated: {year}-01-01\n---\n# Travel Policy ({year})\n\nMeals.\n")
    before = {d.doc_id: d.supersedes for d in load_knowledge_base(tmp_path).documents}
    write(tmp_path, "travel-board.md", "---\nid: travel-board\nupdated: 2025-01-01\naudience: [board]\n---\n"
          "# Travel Policy (2025)\n\nBoard travel.\n")
    after = {d.doc_id: d.supersedes for d in load_knowledge_base(tmp_path).documents}
    assert after["travel-2025"] == before["travel-2025"] == ("travel-2024",)
    assert after["travel-board"] == ("travel-2024",)


def test_two_editions_dated_the_same_day_decide_nothing(tmp_path: Path) -> None:
    for name in ("a", "b"):
        write(tmp_path, f"{name}.md", f"---\nid: {name}\nupdated: 2025-01-01\n---\n# Dress Code (2025)\n\nX.\n")
    write(tmp_path, "c.md", "---\nid: c\n---\n# Dress Code\n\nUndated.\n")
    assert all(d.supersedes == () for d in load_knowledge_base(tmp_path).documents)


def test_a_missing_folder_is_an_error_not_an_empty_knowledge_base(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        load_knowledge_base(tmp_path / "missing")


@pytest.mark.parametrize(("content", "expected"), [
    ("---\nupdated: 2026-13-45\n---\nbody\n", "month must be in 1..12"),  # found by fuzzing: ValueError escaped
    ("---\ntitle: " + "[" * 5000 + "\n---\nbody\n", "nested too deeply"),  # RecursionError escaped
    ('---\ntitle: "Refunds \\0"\n---\nbody\n', "holds a NUL"),
    ('---\naudience: ["\\ud800"]\n---\nbody\n', "half a surrogate pair"),
    ("# Scan\x00\x01\x02\nbody\n", "NUL byte at offset 6"),
])
def test_hostile_front_matter_and_binary_text_are_one_error_each_and_the_rest_loads(
        tmp_path: Path, content: str, expected: str) -> None:
    write(tmp_path, "travel.md", TRAVEL)
    write(tmp_path, "bad.md", content)
    result = load_knowledge_base(tmp_path)
    assert expected in only_error(result) and result.errors[0].path == Path("bad.md")
    assert [document.doc_id for document in result.documents] == ["travel-expenses"]


def test_a_link_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    secret = write(tmp_path, "elsewhere/passwords.txt", "root:hunter2\n")
    root = tmp_path / "kb"
    write(root, "travel.md", TRAVEL)
    (root / "passwords.md").symlink_to(secret)  # found by fuzzing: followed and ingested for everyone
    result = load_knowledge_base(root)
    assert "outside the knowledge-base folder" in only_error(result)
    assert result.errors[0].path == Path("passwords.md")
    assert "hunter2" not in "".join(document.body for document in result.documents)


def test_a_file_over_the_size_limit_is_refused_without_being_read(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(FORMATS, ".md", replace(FORMATS[".md"], max_bytes=1000))
    write(tmp_path, "travel.md", TRAVEL)
    write(tmp_path, "export.md", "word " * 1000)
    result = load_knowledge_base(tmp_path)
    assert "5,000 bytes, over the 1,000-byte limit" in only_error(result)
    assert [document.doc_id for document in result.documents] == ["travel-expenses"]
