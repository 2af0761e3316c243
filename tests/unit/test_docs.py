"""The README and docs/ document what the code accepts, no more and no less, and stay inside the clone.

Every environment variable the settings read and every key of `sourced.yml`, of a document's front matter and
of an evaluation case must be in a table of the README or docs/, and every name such a table lists must be one
the code knows. The commands marked runnable are run by tests/integration/test_docs_examples.py.
"""

import argparse
import ast
import re
import types
import typing
from pathlib import Path
from typing import Final, get_args

from pydantic import AliasChoices, BaseModel
from pydantic_settings import BaseSettings

from bot.cli import COMMANDS, parser
from bot.commands.ingest import ALLOW_REMOVAL
from bot.settings import SlackSettings
from core.config import DEMO_DATABASE, Settings, SourcedConfig
from core.domain.outcomes import OutcomeKind
from core.eval.cases import Case, Section
from core.retrieval.ingest import RemovalHeld
from core.retrieval.knowledge_base import FrontMatter, skipped_line
from tests.markdown_docs import (
    ROOT,
    anchors,
    code_texts,
    doc_files,
    documented,
    links,
    prose,
    runnable_blocks,
    slug,
    tables,
)

SETTINGS_CLASSES: Final[tuple[type[BaseSettings], ...]] = (Settings, SlackSettings)
"""Every settings class of the product; `test_every_settings_class_is_checked` finds a new one."""

READ_OUTSIDE_THE_SETTINGS: Final = {
    "PROMETHEUS_MULTIPROC_DIR": "bot/http.py",  # prometheus-client's own variable, read by it and by bot/http.py
    # the connectors' credentials, in the variables sourced.yml names (these are the defaults)
    "SOURCED_CONFLUENCE_TOKEN": "core/config.py",
    "SOURCED_NOTION_TOKEN": "core/config.py",
    "GOOGLE_APPLICATION_CREDENTIALS": "core/config.py",
}
"""Variables the product reads without a settings class, and the file that reads each."""

WRITTEN_AS_ONE_VALUE: Final[frozenset[type[BaseModel]]] = frozenset({Section})
"""Models a YAML file writes as a string (`doc-id#Heading`), not as keys of their own."""

ENVIRONMENT_NAME: Final = re.compile(r"\b(?:SOURCED|SLACK)_[A-Z0-9_]*[A-Z0-9]\b")
COMMAND_LINE: Final = re.compile(r"\bsourced\s+(?:-v\s+)?([a-z]+)\b([^|;&>#`]*)")
"""`sourced COMMAND ...` up to where the shell or the prose takes over."""
FLAG: Final = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
OUTSIDE_THE_CLONE: Final = re.compile(r"\.\./shared|\bshared/(?:DESIGN|eval|slack|reader-data)")


def environment_variables(settings: type[BaseSettings]) -> set[str]:
    """The variable each field is read from: its alias choices, else the class's prefix and the field name."""
    prefix = str(settings.model_config.get("env_prefix", ""))
    names: set[str] = set()
    for field_name, field in settings.model_fields.items():
        alias = field.validation_alias
        if isinstance(alias, AliasChoices):
            names.update(str(choice) for choice in alias.choices)
        elif isinstance(alias, str):
            names.add(alias)
        else:
            names.add(f"{prefix}{field_name}".upper())
    return names


def _models_in(annotation: object) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if typing.get_origin(annotation) is typing.Annotated:  # a discriminated union (`connectors`)
        return _models_in(get_args(annotation)[0])
    if typing.get_origin(annotation) in (list, tuple, typing.Union, types.UnionType):
        return [model for argument in get_args(annotation) for model in _models_in(argument)]
    return []


def keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    """Every key a YAML file may write for `model`, nested ones dotted (`known_gaps.owner`); a mapping's own
    keys (role names, channel ids) are the file's data, not keys."""
    found: set[str] = set()
    for name, field in model.model_fields.items():
        found.add(prefix + name)
        for nested in _models_in(field.annotation):
            if nested not in WRITTEN_AS_ONE_VALUE:
                found |= keys(nested, f"{prefix}{name}.")
    return found


def undocumented_variables(settings: tuple[type[BaseSettings], ...], listed: set[str]) -> set[str]:
    return {name for cls in settings for name in environment_variables(cls)} - listed


def known_variables() -> set[str]:
    return ({name for cls in SETTINGS_CLASSES for name in environment_variables(cls)}
            | set(READ_OUTSIDE_THE_SETTINGS) | variables_the_tests_read())


def variables_the_tests_read() -> set[str]:
    pattern = re.compile(r"""environ(?:\.get\(|\[)\s*["'](SOURCED_[A-Z0-9_]+)["']""")
    return {name for path in (ROOT / "tests").rglob("*.py")
            for name in pattern.findall(path.read_text(encoding="utf-8"))}


def test_the_readme_is_a_landing_page_of_at_most_220_lines() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 220


def test_each_doc_starts_by_saying_who_it_is_for() -> None:
    for path in doc_files()[1:]:
        paragraphs = path.read_text(encoding="utf-8").split("\n\n")
        assert paragraphs[0].startswith("# "), f"{path.name}: starts with its title"
        assert paragraphs[1].startswith("For "), f"{path.name}: the paragraph after the title says who it is for"


def test_no_doc_sends_a_reader_outside_the_clone() -> None:
    for path in doc_files():
        found = OUTSIDE_THE_CLONE.findall(path.read_text(encoding="utf-8"))
        assert found == [], f"{path.name} points outside the repository: {found}"


def test_every_settings_class_is_checked() -> None:
    defined = set()
    for package in ("core", "bot"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef) and any(
                        isinstance(base, ast.Name) and base.id == "BaseSettings" for base in node.bases):
                    defined.add(node.name)
    assert defined == {cls.__name__ for cls in SETTINGS_CLASSES}


def test_every_environment_variable_the_settings_read_is_documented() -> None:
    assert undocumented_variables(SETTINGS_CLASSES, documented("variable")) == set()


def test_a_setting_added_without_documentation_is_caught() -> None:
    class WithANewSetting(Settings):
        brand_new_timeout_s: float = 1.0

    assert undocumented_variables((WithANewSetting,), documented("variable")) == {"SOURCED_BRAND_NEW_TIMEOUT_S"}


def test_every_variable_the_docs_list_is_read_by_the_product() -> None:
    listed = documented("variable")
    unknown = listed - {name for cls in SETTINGS_CLASSES for name in environment_variables(cls)}
    assert unknown == set(READ_OUTSIDE_THE_SETTINGS)
    for name, reader in READ_OUTSIDE_THE_SETTINGS.items():
        assert name in (ROOT / reader).read_text(encoding="utf-8")


def test_the_variables_of_the_test_suite_are_documented_apart_and_read_by_it() -> None:
    assert documented("test variable") == variables_the_tests_read()


def test_every_variable_named_anywhere_in_the_docs_exists() -> None:
    known = known_variables()
    for path in doc_files():
        named = set(ENVIRONMENT_NAME.findall(path.read_text(encoding="utf-8")))
        assert named - known == set(), f"{path.name} names variables nothing reads"


def test_the_sourced_yml_keys_documented_are_exactly_those_the_config_accepts() -> None:
    assert documented("key") == keys(SourcedConfig)


def test_the_front_matter_keys_documented_are_exactly_those_a_document_may_carry() -> None:
    assert documented("front matter key") == keys(FrontMatter)


def test_the_case_keys_documented_are_exactly_those_a_case_may_carry() -> None:
    assert documented("case key") == keys(Case)


def test_the_contract_lists_every_outcome_kind() -> None:
    contract = [table for table in tables(ROOT / "docs" / "answering.md") if table.header[0] == "kind"]
    assert len(contract) == 1
    assert contract[0].first_column_names() == set(get_args(OutcomeKind))


def test_the_readme_lists_every_command() -> None:
    command_tables = [table for table in tables(ROOT / "README.md") if table.header[0] == "command"]
    listed = {name.split()[1] for table in command_tables for name in table.first_column_names()
              if name.startswith("sourced ")}
    assert listed == {command.__name__.rsplit(".", 1)[-1] for command in COMMANDS}


def options(command: argparse.ArgumentParser) -> set[str]:
    """The options a command line accepts, its sub-commands' included (`sourced audit purge --older-than`)."""
    found = {option for action in command._actions for option in action.option_strings}
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= options(sub)
    return found


def test_every_option_the_docs_give_a_command_is_one_it_accepts() -> None:
    """`sourced ingest --allow-removal`, `sourced ask --demo`: a flag renamed in the code, or made up in the docs,
    is caught wherever the docs write the command (a code span, a fenced block)."""
    root = parser()
    [commands] = [action for action in root._actions if isinstance(action, argparse._SubParsersAction)]
    accepted = {name: options(command) | options(root) for name, command in commands.choices.items()}
    checked = 0
    for path in doc_files():
        for line, text in code_texts(path):
            for match in COMMAND_LINE.finditer(text.replace("\\|", "|")):
                name, rest = match.groups()
                assert name in accepted, f"{path.name}:{line}: no command `sourced {name}`"
                for flag in FLAG.findall(rest):
                    checked += 1
                    assert flag in accepted[name], f"{path.name}:{line}: `sourced {name}` has no {flag}"
    assert checked > 50


def test_what_the_docs_quote_of_a_held_ingest_and_of_skipped_files_is_what_it_prints() -> None:
    """The one line an ingest that would empty the index prints, the skipped-types line, the flag that confirms
    and the demo's database, as the docs quote them."""
    documents, formats, readme = (prose(ROOT / "docs" / "documents.md"), prose(ROOT / "docs" / "formats.md"),
                                  prose(ROOT / "README.md"))
    held = RemovalHeld(would_remove=tuple(f"doc-{n}" for n in range(13)), indexed=13, found=0)
    assert f"`{held}; ...`" in documents.replace("\n  ", " ")
    skipped = skipped_line([(".doc", 2), (".xlsx", 1)])
    assert skipped == "skipped 3 files of types Sourced does not read: .doc (2), .xlsx (1)"
    assert f"`{skipped}`" in documents.replace("\n  ", " ") and f"`{skipped}`" in formats.replace("\n", " ")
    for text in (documents, formats, readme):
        assert f"`{ALLOW_REMOVAL}`" in text
    assert f"`{DEMO_DATABASE}`" in readme and f"`{DEMO_DATABASE}`" in documents
    assert "loads the handbook again" not in readme


def test_every_link_between_the_docs_resolves() -> None:
    for path in doc_files():
        for line, target in links(path):
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.name}:{line}: {target}"
            assert linked.exists(), f"{where}: no such file"
            if anchor and linked.suffix == ".md":
                assert anchor in anchors(linked), f"{where}: no such heading"


def test_the_readme_and_the_docs_have_runnable_examples() -> None:
    places = {Path(block.path).name for block in runnable_blocks()}
    assert {"README.md", "documents.md", "evaluation.md"} <= places


def test_slugs_follow_githubs_rules() -> None:
    assert slug("Answerability: does a retrieved statement state what was asked?") == (
        "answerability-does-a-retrieved-statement-state-what-was-asked")
    assert slug("`sourced.yml`") == "sourcedyml"
    assert slug("Streaming, `found` first") == "streaming-found-first"
