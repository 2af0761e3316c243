"""A restricted document changes nothing others see (issues 13 and 31): a reply, and everything read after it, is
a function of what its audience may see.

On generated knowledge bases with restricted documents (sharing words, titles and dates with the permitted ones),
random questions (words of restricted and of permitted documents, made-up names, question words) asked by random
audiences get the same reply, Slack blocks and `ask --json` view (without the correlation id and the true kind,
which only the audit may tell apart), as on a copy of the knowledge base without the documents the audience may
not see; and an operator with the asker's roles reads the same Home tab, a scrape the same moved metrics, the
feedback export the same pairs after the readers' clicks, the log the same lines at INFO
(`benchmarks.restricted_absence.everything_read`). The model is drawn too: the default extractive one, or a
generative model of ours (the answerability gate then stands after it) that abstains, cites an id nobody
retrieved, or writes no JSON, so every refusal kind's closest passages are compared.

Speed: the knowledge bases are generated once per module, and each distinct set of visible documents is ingested
once (a handful per knowledge base), by one embedder that embeds each text once; hypothesis then varies the
question, the audience and the knowledge base. SQLite runs 500 examples. PostgreSQL runs 120 (about 30 s more):
each visible set there is a database of its own on the suite's server (copied from the migrated template, then
ingested with pgvector), and each question takes several round trips, so 500 would add minutes to the suite; its
BM25 statistics are sums over the classes the audience may see, each class's kept apart, and 120 examples reach
every audience class of the generated knowledge bases. Its HNSW graphs are approximate, but these partitions hold
fewer rows than `hnsw.ef_search`, so the walk is exhaustive and the comparison exact.
"""

import itertools
import json
import random
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.restricted_absence import CORRELATION_ID, Observed, everything_read, first_difference, observed
from core.application.orchestrator import Question
from core.application.ports import AnswerModel, GenerationRequest
from core.application.routing import KnownGap
from core.bootstrap import bootstrap
from core.config import Settings, SourcedConfig
from core.domain import Audience, Party, Principal
from core.retrieval.embeddings import EmbedderUnavailable, MiniLmEmbedder, as_matrix
from core.retrieval.knowledge_base import load_knowledge_base
from core.storage import make_engine, migrate
from tests.conftest import new_database
from tests.kb_views import visible_copy

ROLES = ("hr", "legal", "finance")
TOPICS = {
    "travel": ["meal", "allowance", "hotel", "mileage", "receipt", "per", "diem", "flight", "taxi", "conference"],
    "leave": ["annual", "leave", "sick", "parental", "carry-over", "holiday", "notice", "manager", "days"],
    "pay": ["salary", "band", "bonus", "merit", "increase", "promotion", "equity", "committee", "review"],
    "security": ["password", "laptop", "vpn", "access", "phishing", "device", "badge", "login", "reset"],
    "contracts": ["termination", "liability", "cap", "renewal", "indemnity", "credit", "clause", "notice"],
}
NAMES = ["Orbis", "Kelvin Hall", "Tarn", "Marlow", "Pinecrest", "Zephyr Desk", "Halden", "Vesta"]
MADE_UP = ["zorblax", "Quenford", "flimmet", "Grastle", "vintorp", "Ulmsby"]
STARTERS = ["how many", "what is the", "who approves", "when does", "how do I", "can I", "is there a", "which"]
GAP = KnownGap(topic="payroll disputes", keywords=("payroll", "payslip"), owner="#payroll-help")
DEFAULT_OWNER = "#help-desk"
SEEDS = (3, 11, 29)
ASKED = itertools.count()
ABSTAINS = json.dumps({"found": False, "answer": "", "claims": [], "confidence": "low", "refusal_reason": "no"})
INVENTS = json.dumps({"found": True, "answer": "It is 12 days.", "confidence": "high", "refusal_reason": None,
                      "claims": [{"text": "It is 12 days.", "chunk_ids": ["no-such-chunk"], "quote": "12 days"}]})


class FixedReply:
    """A generative model that always writes the same reply."""

    def __init__(self, reply: str) -> None:
        self._reply = reply

    @property
    def name(self) -> str:
        return f"fixed:{self._reply[:20]}"

    @property
    def prompt_version(self) -> str:
        return "test-v0"

    @property
    def quotes_the_ranking(self) -> bool:
        return False

    @property
    def streams_answers(self) -> bool:
        return True

    def generate(self, request: GenerationRequest) -> str:
        return self._reply


MODELS: tuple[AnswerModel | None, ...] = (None, FixedReply(ABSTAINS), FixedReply(INVENTS), FixedReply("no JSON"))
"""None: the default extractive model; then model_self_refusal, invalid_citation and malformed_response."""


@dataclass(frozen=True, kw_only=True)
class GeneratedKb:
    root: Path
    restricted_words: tuple[str, ...] = field(repr=False)
    permitted_words: tuple[str, ...] = field(repr=False)


def sentence(rng: random.Random, words: Sequence[str]) -> str:
    picked = rng.sample(list(words), 3)
    templates = [
        "The {0} {1} is {n} days for staff in {name}.",
        "{Name} approves every {0} above ${amount} before the {1} {2} is paid.",
        "A {0} request needs {n} approvals and a {1} note from the {2} team.",
        "Staff in {name} may not claim the {0} {1} after {n} weeks.",
        "The {0} limit is ${amount} per {1}, reviewed by the {2} committee.",
    ]
    name = rng.choice(NAMES)
    return rng.choice(templates).format(*picked, n=rng.randint(2, 90), amount=rng.randint(20, 5000), name=name,
                                        Name=name)


def write_kb(root: Path, seed: int) -> GeneratedKb:
    """About twenty documents, a third restricted (to a role, two roles, or guests), several on the same topics
    and titles as permitted ones, some dated editions of one title (one restricted edition dated as the newest
    permitted one), one stating that it supersedes another."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    restricted: set[str] = set()
    permitted: set[str] = set()
    audiences: list[list[str]] = [["everyone"]] * 9 + [["everyone", "guests"]] * 2 + [
        [role] for role in ROLES] + [["hr", "legal"], ["guests"], ["finance"], ["legal"]]
    for number, audience in enumerate(audiences):
        topic = rng.choice(sorted(TOPICS))
        words = TOPICS[topic]
        title = f"{topic.title()} Policy" if number % 4 else f"{topic.title()} Policy ({2023 + number % 3})"
        owner = f"#{topic}-{'team' if 'everyone' in audience else 'private'}"
        updated = f"202{4 + number % 2}-0{1 + number % 3}-15"
        sections = []
        for heading in rng.sample(["Limits", "Approvals", "Exceptions", "Deadlines", "Eligibility", "Records"],
                                  rng.randint(2, 4)):
            body = " ".join(sentence(rng, words) for _ in range(rng.randint(1, 3)))
            sections.append(f"## {heading}\n\n{body}\n")
        supersedes = "supersedes: [doc-0]\n" if number == 5 else ""
        text = (f"---\nid: doc-{number}\ntitle: {title}\nowner: \"{owner}\"\naudience: [{', '.join(audience)}]\n"
                f"updated: {updated}\n{supersedes}---\n# {title}\n\n" + "\n".join(sections))
        (root / f"doc-{number:02d}.md").write_text(text, encoding="utf-8")
        vocabulary = {word.strip(".,$?") for word in text.split("---")[-1].split() if word.strip(".,$?#")}
        (permitted if "everyone" in audience else restricted).update(vocabulary)
    # A restricted edition of a permitted title, dated as its newest permitted edition.
    (root / "doc-99.md").write_text(
        "---\nid: doc-99\ntitle: Travel Policy (2025)\nowner: \"#travel-private\"\naudience: [finance]\n"
        "updated: 2025-03-15\n---\n# Travel Policy (2025)\n\n## Limits\n\n"
        "The meal allowance for directors is $240 per day in Orbis.\n", encoding="utf-8")
    restricted.update({"directors", "240", "meal", "allowance", "Orbis"})
    return GeneratedKb(root=root, restricted_words=tuple(sorted(restricted - permitted) + sorted(restricted)),
                       permitted_words=tuple(sorted(permitted)))


class EmbedOnce:
    """The shipped default embedder, each text embedded once for every database of the module: ingesting the
    same documents a dozen times would otherwise take most of the run."""

    def __init__(self, inner: MiniLmEmbedder) -> None:
        self._inner = inner
        self._known: dict[str, list[float]] = {}

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(text for text in texts if text not in self._known))
        if missing:
            self._known.update(zip(missing, as_matrix(self._inner, missing).astype(np.float64).tolist(), strict=True))
        return [self._known[text] for text in texts]


class Deployments:
    """One application per (knowledge base, set of documents it holds), built on first use."""

    def __init__(self, folder: Path, database: Any, embedder: EmbedOnce) -> None:
        self._folder = folder
        self._database = database
        self._embedder = embedder
        self._built: dict[tuple[int, frozenset[str]], Observed] = {}
        self._with_model: dict[tuple[int, frozenset[str], str], Observed] = {}

    def for_documents(self, kb: int, root: Path, role_sets: Sequence[frozenset[str]] | None,
                      model: AnswerModel | None = None) -> Observed:
        documents = frozenset(d.doc_id for d in load_knowledge_base(root).documents
                              if role_sets is None or all(d.audience & roles for roles in role_sets))
        key = (kb, documents)
        if key not in self._built:
            name = f"kb{kb}-{len(self._built)}"
            folder = self._folder / name
            source = root if role_sets is None else visible_copy(root, folder / "kb", role_sets)
            deployment = self._application(self._database(folder))
            assert not deployment.sourced.ingestor.ingest(source).errors
            self._built[key] = deployment
        if model is None:
            return self._built[key]
        variant = (*key, model.name)
        if variant not in self._with_model:  # the same database, already ingested
            url = self._built[key].sourced.engine.url.render_as_string(hide_password=False)
            self._with_model[variant] = self._application(url, model)
        return self._with_model[variant]

    def _application(self, database_url: str, model: AnswerModel | None = None) -> Observed:
        return observed(lambda metrics: bootstrap(
            Settings(database_url=database_url), config=SourcedConfig(default_owner=DEFAULT_OWNER),
            known_gaps=(GAP,), progress=False, embedder=self._embedder, model=model, metrics=metrics))

    def release_connections(self) -> None:
        """Close every pooled connection: with a deployment per visible set and model, idle pools would
        otherwise exceed PostgreSQL's connection limit. Each reconnects at its next question."""
        for deployment in [*self._built.values(), *self._with_model.values()]:
            deployment.sourced.engine.dispose()

    def close(self) -> None:
        self.release_connections()


@pytest.fixture(scope="module")
def embedder() -> EmbedOnce:
    try:
        return EmbedOnce(MiniLmEmbedder())
    except EmbedderUnavailable as error:
        pytest.skip(f"the shipped default embedder is not installed: {error}")


@pytest.fixture(scope="module")
def kbs(tmp_path_factory: pytest.TempPathFactory) -> tuple[GeneratedKb, ...]:
    folder = tmp_path_factory.mktemp("kbs")
    return tuple(write_kb(folder / f"kb-{seed}", seed) for seed in SEEDS)


@pytest.fixture(scope="module")
def sqlite_deployments(tmp_path_factory: pytest.TempPathFactory, embedder: EmbedOnce) -> Iterator[Deployments]:
    folder = tmp_path_factory.mktemp("sqlite")
    template = folder / "template.db"
    engine = make_engine(f"sqlite:///{template}")
    migrate(engine)  # once: each database starts as a copy of it
    engine.dispose()

    def database(place: Path) -> str:
        place.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template, place / "sourced.db")
        return f"sqlite:///{place / 'sourced.db'}"

    deployments = Deployments(folder, database, embedder)
    yield deployments
    deployments.close()


@pytest.fixture(scope="module")
def postgres_deployments(tmp_path_factory: pytest.TempPathFactory, embedder: EmbedOnce, pgvector_server: str,
                         pgvector_template: str) -> Iterator[Deployments]:
    deployments = Deployments(tmp_path_factory.mktemp("postgres"),
                              lambda _place: new_database(pgvector_server, template=pgvector_template), embedder)
    yield deployments
    deployments.close()


# -- what hypothesis draws ---------------------------------------------------------------------------------------

parties = st.builds(lambda guest, roles: Party(is_guest=guest, roles=frozenset(roles)),
                    st.sampled_from([False, False, False, True]), st.sets(st.sampled_from(ROLES)))
audiences = st.lists(parties, min_size=1, max_size=2).map(lambda p: Audience(parties=tuple(p)))


@st.composite
def questions(draw: st.DrawFn, kb: GeneratedKb) -> str:
    word = st.one_of(st.sampled_from(kb.restricted_words), st.sampled_from(kb.permitted_words),
                     st.sampled_from(MADE_UP + NAMES), st.sampled_from(["payroll", "payslip", "how many", "total"]))
    starter = draw(st.sampled_from(["", *STARTERS]))
    words = draw(st.lists(word, min_size=1, max_size=7))
    return " ".join([starter, *words]).strip() + draw(st.sampled_from(["", "?"]))


def asked(deployment: Observed, text: str, audience: Audience, correlation_id: str) -> dict[str, Any]:
    principal = Principal(user_id="U-PROPERTY", roles=audience.parties[0].roles, is_guest=audience.parties[0].is_guest)
    return everything_read(deployment, Question(text=text, principal=principal, audience=audience,
                                                correlation_id=correlation_id))


def check_purity(deployments: Deployments, kbs: Sequence[GeneratedKb], data: st.DataObject) -> None:
    number = data.draw(st.integers(0, len(kbs) - 1), label="knowledge base")
    kb = kbs[number]
    audience = data.draw(audiences, label="audience")
    text = data.draw(questions(kb), label="question")
    model = data.draw(st.sampled_from(MODELS), label="model")
    whole = deployments.for_documents(number, kb.root, None, model)
    alone = deployments.for_documents(number, kb.root, audience.role_sets(), model)
    correlation_id = f"{CORRELATION_ID}-{next(ASKED)}"  # the same on both (the answer's buttons carry it)
    try:
        with_hidden = asked(whole, text, audience, correlation_id)
        without = asked(alone, text, audience, correlation_id)
    finally:
        deployments.release_connections()
    assert with_hidden == without, first_difference(with_hidden, without)


@settings(max_examples=500, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_on_sqlite_a_reply_is_the_same_without_the_documents_its_audience_may_not_see(
        sqlite_deployments: Deployments, kbs: tuple[GeneratedKb, ...], data: st.DataObject) -> None:
    check_purity(sqlite_deployments, kbs, data)


@pytest.mark.postgres
@settings(max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_on_postgresql_a_reply_is_the_same_without_the_documents_its_audience_may_not_see(
        postgres_deployments: Deployments, kbs: tuple[GeneratedKb, ...], data: st.DataObject) -> None:
    check_purity(postgres_deployments, kbs, data)
