"""Metadata without front matter: `sources:` rules in sourced.yml (first match wins, front matter overrides),
titles and dates from the documents, other tools' front matter read past, typos of ours refused."""

from pathlib import Path

import pytest

from core.config import ConfigError, load_config
from core.documents.sources import SourceRule, glob_pattern
from core.retrieval import load_knowledge_base

RULES = (
    SourceRule(path="hr/compensation/**", owner="#people-ops", audience=("hr",),
               url="https://wiki.example.com/hr/{stem}"),
    SourceRule(path="**/*.md", owner="#docs"),
    SourceRule(path="**", owner="#help-desk"),
)


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_the_first_matching_rule_gives_owner_audience_and_link(tmp_path: Path) -> None:
    write(tmp_path, "hr/compensation/bands 2026.md", "# Salary bands\n\nBand 3 starts at 60k.\n")
    write(tmp_path, "guides/vpn.md", "# VPN\n\nUse the client.\n")
    write(tmp_path, "notes.txt", "A note.\n")
    by_id = {d.doc_id: d for d in load_knowledge_base(tmp_path, rules=RULES).documents}
    bands = by_id["hr/compensation/bands-2026"]
    assert (bands.owner, bands.audience, bands.url) == ("#people-ops", frozenset({"hr"}),
                                                        "https://wiki.example.com/hr/bands 2026")
    assert (by_id["guides/vpn"].owner, by_id["guides/vpn"].audience) == ("#docs", frozenset({"everyone"}))
    assert by_id["notes"].owner == "#help-desk"


def test_front_matter_overrides_the_rule_key_by_key(tmp_path: Path) -> None:
    write(tmp_path, "hr/compensation/open.md", "---\naudience: [everyone]\n---\n# Pay dates\n\nThe 25th.\n")
    write(tmp_path, "hr/compensation/owned.md", "---\nowner: \"#payroll\"\n---\n# Payslips\n\nMonthly.\n")
    by_id = {d.doc_id: d for d in load_knowledge_base(tmp_path, rules=RULES).documents}
    assert (by_id["hr/compensation/open"].audience, by_id["hr/compensation/open"].owner) == (
        frozenset({"everyone"}), "#people-ops")
    assert (by_id["hr/compensation/owned"].audience, by_id["hr/compensation/owned"].owner) == (
        frozenset({"hr"}), "#payroll")


def test_globs_match_whole_relative_paths() -> None:
    assert glob_pattern("*.pdf").fullmatch("a.pdf") and not glob_pattern("*.pdf").fullmatch("x/a.pdf")
    assert glob_pattern("**/*.pdf").fullmatch("a.pdf") and glob_pattern("**/*.pdf").fullmatch("x/y/a.pdf")
    assert glob_pattern("hr/**").fullmatch("hr/a/b.md") and not glob_pattern("hr/**").fullmatch("hrx/a.md")
    assert glob_pattern("a?c.md").fullmatch("abc.md") and not glob_pattern("a?c.md").fullmatch("a/c.md")


def test_sourced_yml_rules_are_validated(tmp_path: Path) -> None:
    good = tmp_path / "good.yml"
    good.write_text('sources:\n  - {path: "hr/**", owner: "#people-ops", audience: [hr], url: "https://w/{path}"}\n'
                    "stale_after_days: 180\n", encoding="utf-8")
    config = load_config(good)
    assert config.source_rules() == (SourceRule(path="hr/**", owner="#people-ops", audience=("hr",),
                                                url="https://w/{path}"),)
    assert config.stale_after_days == 180
    for bad, says in (('sources: [{path: "hr/**", url: "https://w/{slug}"}]', "may name"),
                      ('sources: [{path: "/etc/**"}]', "relative"),
                      ('sources: [{path: "hr/**", audiance: [hr]}]', "audiance"),
                      ("sources: [{path: hr, audience: []}]", "audience")):
        path = tmp_path / "bad.yml"
        path.write_text(bad + "\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=says):
            load_config(path)


def test_other_tools_front_matter_is_read_past_and_listed_once(tmp_path: Path) -> None:
    for name in ("a", "b"):
        write(tmp_path, f"{name}.md",
              "---\ntitle: Page\nsidebar: Handbook\nshowTitle: true\nslug: /x\n---\n# P\n\nT.\n")
    result = load_knowledge_base(tmp_path)
    assert not result.errors and len(result.documents) == 2
    assert result.notes() == ("front-matter keys that are not Sourced's were ignored: showTitle (2 files), "
                              "sidebar (2 files), slug (2 files)",)


@pytest.mark.parametrize("key", ["audiance", "Audience", "audence", "uadience", "ownr", "updatd", "Title"])
def test_a_key_one_typo_or_a_case_from_ours_is_an_error(tmp_path: Path, key: str) -> None:
    write(tmp_path, "x.md", f"---\n{key}: [hr]\n---\n# X\n\nT.\n")
    result = load_knowledge_base(tmp_path)
    assert not result.documents
    assert f"{key!r} looks like a typo of" in result.errors[0].reason


def test_mdx_import_and_export_lines_are_not_words(tmp_path: Path) -> None:
    write(tmp_path, "page.mdx", "---\ntitle: Page\n---\nimport { Box } from 'components/Box'\n"
                                "export const meta = {}\n\n# Page\n\n```js\nimport x from 'y'\n```\n\nText.\n")
    document = load_knowledge_base(tmp_path).documents[0]
    words = document.content.sections
    rendered = [block for section in words for block in section.blocks]
    assert "components/Box" not in repr(rendered) and "export const" not in repr(rendered)
    assert "import x from 'y'" in repr(rendered)  # code keeps its lines
