"""Re-wrapping a document changes nothing Sourced reads: the same statements and the same answers (issue 28).

Real Markdown is wrapped at whatever width its author's editor uses; a reader of the rendered page sees the same
sentences whatever it was. A handbook of our own (paragraphs, a rule and its exception, nested list items that
wrap, a table with links) is written out at a width hypothesis picks between 10 and 200 columns, lines broken
between words as editors do, list continuations indented under their item. Its statements must be those of the
unwrapped text, and a few questions asked of both, on the shipped defaults (SQLite, the extractive model, the
bundled embedder), must get the same replies.
"""

import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.application.language.statements import split_statements
from core.application.orchestrator import Question
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig
from core.domain import Answered, Audience, Passage, Principal, Refused, RetrievedChunk
from core.retrieval import chunk_document, load_knowledge_base

HEADER = """---
id: workplace
title: Workplace Handbook
owner: "#workplace"
updated: 2026-05-02
---
# Workplace Handbook
"""
SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Devices", (
        ("p", "Only approved phones and tablets issued by the service desk can be connected to the office "
              "network. Personal laptops must use the guest network, which is reset every Monday morning."),
        ("p", "Lost devices must be reported within 24 hours, unless the device was already wiped remotely by "
              "the security team, in which case a note in the asset register is enough."),
    )),
    ("Travel approval", (
        ("p", "Request approval from your director three to five weeks in advance for:"),
        ("0", "Conferences costing more than $2,500 including flights, hotels and the registration fee"),
        ("1", "Trips to a customer site that last longer than four working days, weekends excluded"),
        ("0", "Team offsites with more than twelve people travelling from different offices"),
        ("p", "Trips that are not on this list need no approval beyond the usual expense rules."),
    )),
    ("Hotels", (
        ("t", "| City | Nightly cap | Booking |\n|---|---|---|\n"
              "| [Dublin](https://wiki.example.com/cities/dublin) | EUR 210 | through the travel portal |\n"
              "| Lisbon | EUR 150 | any site with free cancellation |"),
    )),
)
QUESTIONS = (
    "how far ahead do I need approval for a conference that costs $3,000?",
    "what is the nightly hotel cap in Lisbon?",
    "how quickly do I have to report a lost phone?",
    "can my personal laptop go on the office network?",
)
STAFF = Principal(user_id="U-STAFF", roles=frozenset({"everyone"}))


def markdown(width: int) -> str:
    """The handbook with its paragraphs and list items wrapped at `width` columns."""
    parts = [HEADER]
    for heading, blocks in SECTIONS:
        parts.append(f"\n## {heading}\n")
        previous = ""
        for kind, text in blocks:
            if kind == "t":
                parts.append("\n" + text + "\n")
            elif kind == "p":
                parts.append("\n" + _wrap(text, width, "", "") + "\n")
            else:
                indent = "  " * int(kind)
                gap = "" if previous in ("0", "1") else "\n"
                parts.append(gap + _wrap(text, width, indent + "- ", indent + "  ") + "\n")
            previous = kind
    return "".join(parts)


def _wrap(text: str, width: int, first: str, rest: str) -> str:
    return "\n".join(textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=rest,
                                   break_long_words=False, break_on_hyphens=False))


def statements_at(root: Path) -> list[tuple[str, str, str]]:
    (document,) = load_knowledge_base(root).documents
    found = []
    for draft in chunk_document(document):
        passage = Passage(chunk_id=draft.chunk_id, doc_id=document.doc_id, title=document.title,
                          heading=draft.heading, text=draft.text, links=draft.links)
        chunk = RetrievedChunk(passage=passage, score=1.0, content_hash=draft.content_hash)
        found += [(draft.chunk_id, s.text, s.quote) for s in split_statements(chunk)]
    return found


def write(root: Path, width: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "workplace.md").write_text(markdown(width), encoding="utf-8")
    return root


def replies(app: Sourced) -> list[tuple[str, str, tuple[str, ...]]]:
    found = []
    for text in QUESTIONS:
        outcome = app.orchestrator.ask(Question(text=text, principal=STAFF, audience=Audience.only(STAFF)))
        assert isinstance(outcome, Answered | Refused)
        cited = tuple(c.passage.chunk_id for c in outcome.citations) if isinstance(outcome, Answered) else ()
        found.append((outcome.kind, outcome.text, cited))
    return found


@pytest.fixture(scope="module")
def unwrapped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str, str, tuple[str, ...]]]]:
    root = write(tmp_path_factory.mktemp("unwrapped") / "kb", 100_000)
    app = bootstrap(Settings(database_url=f"sqlite:///{root.parent / 'sourced.db'}"),
                    config=SourcedConfig(default_owner="#help-desk"), progress=False)
    assert not app.ingestor.ingest(root).errors
    answers = replies(app)
    assert [kind for kind, _, _ in answers] == ["answered"] * len(QUESTIONS)  # the questions do reach the text
    return root, answers


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(width=st.integers(min_value=10, max_value=200))
@example(width=10)
@example(width=200)
def test_any_wrapping_width_gives_the_same_statements(
        width: int, unwrapped: tuple[Path, list[tuple[str, str, tuple[str, ...]]]],
        tmp_path_factory: pytest.TempPathFactory) -> None:
    root = write(tmp_path_factory.mktemp(f"w{width}") / "kb", width)
    assert statements_at(root) == statements_at(unwrapped[0])


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(width=st.integers(min_value=10, max_value=200))
@example(width=10)
def test_any_wrapping_width_gives_the_same_answers(
        width: int, unwrapped: tuple[Path, list[tuple[str, str, tuple[str, ...]]]],
        tmp_path_factory: pytest.TempPathFactory) -> None:
    root = write(tmp_path_factory.mktemp(f"a{width}") / "kb", width)
    app = bootstrap(Settings(database_url=f"sqlite:///{root.parent / 'sourced.db'}"),
                    config=SourcedConfig(default_owner="#help-desk"), progress=False)
    assert not app.ingestor.ingest(root).errors
    assert replies(app) == unwrapped[1]
