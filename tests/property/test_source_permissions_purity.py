"""Source permissions keep the audience rule (issue 30): a reply to an audience never depends on a document some
member of it cannot read in the source.

Random sources (pages on shared topics, each shared with anyone, the company's domain, some people, some groups,
or a mix), synced through the `Connector` port; random audiences of people (one: a DM; several: a channel they
are all in), each person holding what the source grants their e-mail; random questions and models. The reply,
its blocks and `ask --json` view must be those of a deployment synced with only the pages every member may read
by the source's own rule (`MemorySource.may_read`, written apart from Sourced's principals), so neither a
restricted page nor its words' frequencies reach anyone who may not read it.
"""

import itertools
import random
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.restricted_absence import CORRELATION_ID, first_difference, what_the_audience_gets
from core.application.orchestrator import Question
from core.application.ports import AnswerModel
from core.bootstrap import Sourced, bootstrap
from core.config import Settings, SourcedConfig
from core.connectors.port import Access
from core.domain import EVERYONE, Audience, Principal
from core.storage import make_engine, migrate
from tests.connectors.memory_source import MemoryPage, MemorySource
from tests.property.test_audience_purity import MADE_UP, MODELS, NAMES, STARTERS, TOPICS, EmbedOnce, embedder, sentence

PEOPLE = ("alice@example.com", "bob@example.com", "carol@partner.example", "dave@example.com")
GROUPS = {"eng": {"alice@example.com", "dave@example.com"}, "people": {"bob@example.com"}}
SEEDS = (5, 17)
ASKED = itertools.count()
__all__ = ["embedder"]  # the module fixture, shared with the roles' property test


def write_source(seed: int) -> MemorySource:
    """Sixteen pages on five topics, shared in every way a source shares, several restricted pages on the same
    topics and titles as open ones."""
    rng = random.Random(seed)
    source = MemorySource(name="wiki", groups={name: set(members) for name, members in GROUPS.items()})
    sharings = [Access(anyone=True)] * 4 + [Access(domains=frozenset({"example.com"}))] * 3 + [
        Access(users=frozenset({"alice@example.com"})),
        Access(users=frozenset({"bob@example.com", "carol@partner.example"})),
        Access(groups=frozenset({"eng"})), Access(groups=frozenset({"people"})),
        Access(groups=frozenset({"eng"}), users=frozenset({"bob@example.com"})),
        Access(users=frozenset({"carol@partner.example"})), Access(groups=frozenset({"people", "eng"})),
        Access(domains=frozenset({"partner.example"})), Access()]
    for number, access in enumerate(sharings):
        topic = rng.choice(sorted(TOPICS))
        title = f"{topic.title()} Policy"
        sections = "\n".join(f"## {heading}\n\n" + " ".join(sentence(rng, TOPICS[topic]) for _ in range(2)) + "\n"
                             for heading in rng.sample(["Limits", "Approvals", "Exceptions", "Deadlines"], 2))
        source.pages[f"p{number:02d}"] = MemoryPage(title=title, text=f"# {title}\n\n{sections}", access=access)
    return source


def visible(source: MemorySource, people: Sequence[str]) -> frozenset[str]:
    return frozenset(item for item, page in source.pages.items()
                     if all(source.may_read(person, page.access) for person in people))


class Deployments:
    def __init__(self, folder: Path, embedder: EmbedOnce) -> None:
        self._folder = folder
        self._embedder = embedder
        template = folder / "template.db"
        engine = make_engine(f"sqlite:///{template}")
        migrate(engine)
        engine.dispose()
        self._template = template
        self._built: dict[tuple[int, frozenset[str], str], Sourced] = {}

    def of(self, number: int, source: MemorySource, pages: frozenset[str], model: AnswerModel | None) -> Sourced:
        key = (number, pages, model.name if model else "extractive")
        if key not in self._built:
            place = self._folder / f"d{len(self._built)}"
            place.mkdir()
            shutil.copyfile(self._template, place / "sourced.db")
            sourced = bootstrap(Settings(database_url=f"sqlite:///{place / 'sourced.db'}"),
                                config=SourcedConfig(default_owner="#help-desk"), progress=False,
                                embedder=self._embedder, model=model)
            kept = MemorySource(name=source.name, groups=source.groups,
                                pages={item: page for item, page in source.pages.items() if item in pages})
            assert sourced.syncer.sync(kept).ok
            self._built[key] = sourced
        return self._built[key]

    def close(self) -> None:
        for sourced in self._built.values():
            sourced.engine.dispose()


@pytest.fixture(scope="module")
def sources() -> tuple[MemorySource, ...]:
    return tuple(write_source(seed) for seed in SEEDS)


@pytest.fixture(scope="module")
def deployments(tmp_path_factory: pytest.TempPathFactory, embedder: EmbedOnce) -> Iterator[Deployments]:
    built = Deployments(tmp_path_factory.mktemp("sources"), embedder)
    yield built
    built.close()


@st.composite
def questions(draw: st.DrawFn, source: MemorySource) -> str:
    words = sorted({word.strip(".,$") for page in source.pages.values() for word in page.text.split()
                    if word.strip(".,$#")})
    word = st.one_of(st.sampled_from(words), st.sampled_from(MADE_UP + NAMES))
    return " ".join([draw(st.sampled_from(["", *STARTERS])), *draw(st.lists(word, min_size=1, max_size=6))]).strip()


def reply(sourced: Sourced, text: str, people: Sequence[str], correlation: str) -> dict[str, Any]:
    principals = [Principal(user_id=f"U{n}", roles=frozenset({EVERYONE}) | sourced.source_principals.principals(p))
                  for n, p in enumerate(people)]
    audience = Audience.of(principal.party for principal in principals)
    outcome, evidence = sourced.orchestrator.ask_with_evidence(
        Question(text=text, principal=principals[0], audience=audience, correlation_id=correlation))
    return what_the_audience_gets(outcome, evidence, text)


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_reply_never_depends_on_a_page_some_member_cannot_read_in_the_source(
        deployments: Deployments, sources: tuple[MemorySource, ...], data: st.DataObject) -> None:
    number = data.draw(st.integers(0, len(sources) - 1), label="source")
    source = sources[number]
    people = data.draw(st.lists(st.sampled_from(PEOPLE), min_size=1, max_size=3, unique=True), label="audience")
    text = data.draw(questions(source), label="question")
    model = data.draw(st.sampled_from(MODELS), label="model")
    correlation = f"{CORRELATION_ID}-sources-{next(ASKED)}"
    whole = reply(deployments.of(number, source, frozenset(source.pages), model), text, people, correlation)
    alone = reply(deployments.of(number, source, visible(source, people), model), text, people, correlation)
    assert whole == alone, first_difference(whole, alone)
