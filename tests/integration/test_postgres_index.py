"""The PostgreSQL index on a real pgvector (the suite's own server): the audience filter runs before the top-k,
on full text and vectors alike; scores mean what they mean on SQLite; and what an audience gets never depends
on a document it may not see."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from core.domain import Audience, Party
from core.retrieval.embeddings import EmbeddingIngestor
from core.retrieval.ingest import Ingestor
from core.retrieval.postgres_index import PostgresIndex
from core.storage import make_engine
from tests.fake_embedders import BagOfWords

STAFF = Audience(parties=(Party(),))
HR = Audience(parties=(Party(roles=frozenset({"hr"})),))
GUEST = Audience(parties=(Party(is_guest=True),))
STAFF_AND_GUEST = Audience(parties=(Party(), Party(is_guest=True)))
QUESTIONS = ("salary band for a senior engineer", "what is the daily meal allowance for travel?",
             "guest wifi password", "when is the salary review?", "who decides a promotion?",
             "parking rules for visitors", "committee review of bands")


def doc(doc_id: str, sections: dict[str, str], *, audience: str = "everyone", extra: str = "") -> str:
    body = "".join(f"\n## {heading}\n\n{text}\n" for heading, text in sections.items())
    return (f"---\nid: {doc_id}\ntitle: {doc_id.title()}\nowner: \"#{doc_id}-owners\"\naudience: [{audience}]\n"
            f"{extra}---\n# {doc_id.title()}\n{body}")


RESTRICTED = {
    "bands.md": doc("bands", {f"Band {n}": "The salary band for a senior engineer is set by the salary committee. "
                              f"Committee review of band {n} happens every year." for n in range(5)}, audience="hr"),
    "payroll.md": doc("payroll", {"Dates": "Salary is paid on the last day; the review of pay is in April."},
                      audience="hr, finance"),
}
PUBLIC = {
    "handbook.md": doc("handbook", {
        "Reviews": "Every engineer gets a salary review in April.",
        "Promotions": "A senior engineer is promoted after a committee review.",
        "Meals": "The daily meal allowance for travel is $75.",
        "Parking": "Visitors park in the north lot; staff use permits.",
    }, extra="updated: 2026-01-10\nurl: https://wiki.example/handbook\n"),
    "visitors.md": doc("visitors", {"Wi-Fi": "Visitors use the guest Wi-Fi network, password on the desk."},
                       audience="everyone, guests"),
    "old-meals.md": doc("old-meals", {"Meals": "The daily meal allowance for travel was $60."}),
    "new-meals.md": doc("new-meals", {"Meals": "The meal allowance for travel is $75 a day."},
                        extra="supersedes: [old-meals]\n"),
}


def write_kb(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for stale in root.glob("*.md"):
        stale.unlink()
    for name, content in files.items():
        (root / name).write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def engine(pgvector_url: str) -> Iterator[Engine]:
    engine = make_engine(pgvector_url)
    yield engine
    engine.dispose()


@pytest.fixture
def embedder() -> BagOfWords:
    return BagOfWords()


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return write_kb(tmp_path / "kb", RESTRICTED | PUBLIC)


@pytest.fixture
def index(engine: Engine, embedder: BagOfWords, kb: Path) -> PostgresIndex:
    report = EmbeddingIngestor(engine, embedder, progress=False).ingest(kb)
    assert not report.errors
    return PostgresIndex(engine, embedder)


def ids(chunks: object) -> list[str]:
    return [chunk.chunk_id for chunk in chunks]  # type: ignore[attr-defined]


def test_a_restricted_document_that_matches_better_does_not_push_permitted_chunks_out(index: PostgresIndex) -> None:
    staff = index.search("salary band senior engineer committee review", audience=STAFF, limit=2)
    assert len(staff) == 2
    assert {chunk.doc_id for chunk in staff} == {"handbook"}
    assert {chunk.doc_id for chunk in index.search("salary band committee", audience=HR, limit=2)} == {"bands"}


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_restricted_document_never_reaches_an_audience_without_its_role(index: PostgresIndex,
                                                                          question: str) -> None:
    for audience in (STAFF, GUEST, STAFF_AND_GUEST):
        assert not {"bands", "payroll"} & {chunk.doc_id for chunk in index.search(question, audience=audience,
                                                                                   limit=10)}


def test_guests_see_only_documents_whose_audience_includes_guests(index: PostgresIndex) -> None:
    found = index.search("visitors guest wifi password meal allowance", audience=GUEST, limit=10)
    assert {chunk.doc_id for chunk in found} == {"visitors"}


def test_every_party_of_the_audience_must_be_allowed(index: PostgresIndex) -> None:
    hr_and_staff = Audience(parties=(Party(roles=frozenset({"hr"})), Party()))
    found = index.search("salary band senior engineer", audience=hr_and_staff, limit=10)
    assert found and "bands" not in {chunk.doc_id for chunk in found}


def test_scores_lie_between_zero_and_one_and_full_text_ranks_best_first(engine: Engine,
                                                                        index: PostgresIndex) -> None:
    """Fused lists are ordered by the sum of both scores and carry the larger, as on SQLite."""
    for question in QUESTIONS:
        fused = [chunk.score for chunk in index.search(question, audience=HR, limit=10)]
        full_text = [chunk.score for chunk in PostgresIndex(engine).search(question, audience=HR, limit=10)]
        assert all(0.0 <= score <= 1.0 for score in fused + full_text)
        assert full_text == sorted(full_text, reverse=True)


def test_words_the_knowledge_base_lacks_lower_the_full_text_score(engine: Engine, index: PostgresIndex) -> None:
    full_text = PostgresIndex(engine)
    [plain] = full_text.search("daily meal allowance", audience=STAFF, limit=1)
    [diluted] = full_text.search("daily meal allowance zeppelin hovercraft", audience=STAFF, limit=1)
    assert diluted.chunk_id == plain.chunk_id and diluted.score < plain.score


def test_the_unscoped_probe_finds_what_no_party_may_see(index: PostgresIndex) -> None:
    question = "committee review of band 3"
    assert index.best_unscoped_score(question) > max(chunk.score for chunk in
                                                     index.search(question, audience=STAFF, limit=5))


def test_a_passage_is_shown_only_to_an_audience_that_may_see_its_document(index: PostgresIndex) -> None:
    passage = index.passage("handbook#meals", audience=STAFF)
    assert passage is not None and passage.text == "The daily meal allowance for travel is $75."
    assert passage.url == "https://wiki.example/handbook" and str(passage.updated) == "2026-01-10"
    assert index.passage("bands#band-1", audience=STAFF) is None
    assert index.passage("bands#band-1", audience=HR) is not None
    assert index.passage("no-such#chunk", audience=HR) is None


def test_a_retrieved_chunk_carries_its_hash_and_what_its_document_supersedes(index: PostgresIndex) -> None:
    found = {chunk.doc_id: chunk for chunk in index.search("meal allowance for travel", audience=STAFF, limit=10)}
    assert found["new-meals"].supersedes == ("old-meals",)
    assert "old-meals" in found and len(found["new-meals"].content_hash) == 64


@pytest.mark.parametrize("budget", [1000, 1], ids=["every-candidate", "smallest-budget"])
@pytest.mark.parametrize("with_vectors", [True, False], ids=["hybrid", "full-text"])
def test_what_an_audience_gets_is_the_same_whether_hidden_documents_exist_or_not(
        engine: Engine, embedder: BagOfWords, kb: Path, budget: int, with_vectors: bool) -> None:
    ingestor = EmbeddingIngestor(engine, embedder, progress=False)
    index = PostgresIndex(engine, embedder if with_vectors else None, budget=budget)
    ingestor.ingest(kb)
    with_hidden = {question: index.search(question, audience=STAFF, limit=5) for question in QUESTIONS}
    ingestor.ingest(write_kb(kb, PUBLIC))
    without_hidden = {question: index.search(question, audience=STAFF, limit=5) for question in QUESTIONS}
    assert with_hidden == without_hidden


def test_each_audience_class_has_its_own_partition_of_vectors(engine: Engine, index: PostgresIndex) -> None:
    with engine.connect() as connection:
        rows = connection.execute(text(
            "SELECT a.roles, count(*) FROM chunk_vectors AS v "
            "JOIN audience_classes AS a ON a.audience_key = v.audience_key GROUP BY a.roles")).all()
        partitions = connection.execute(text(
            "SELECT count(*) FROM pg_inherits WHERE inhparent = 'chunk_vectors'::regclass")).scalar()
    assert {tuple(sorted(roles)): count for roles, count in rows} == {
        ("hr",): 5, ("finance", "hr"): 1, ("everyone",): 6, ("everyone", "guests"): 1}
    assert partitions == 4


def test_a_document_whose_audience_changes_moves_to_the_new_class(engine: Engine, embedder: BagOfWords,
                                                                  index: PostgresIndex, kb: Path) -> None:
    assert index.search("guest wifi password", audience=GUEST, limit=5)
    (kb / "visitors.md").write_text(PUBLIC["visitors.md"].replace("everyone, guests", "everyone"))
    EmbeddingIngestor(engine, embedder, progress=False).ingest(kb)
    assert index.search("guest wifi password", audience=GUEST, limit=5) == []
    with engine.connect() as connection:
        roles = connection.execute(text(
            "SELECT a.roles FROM chunk_vectors AS v JOIN audience_classes AS a ON a.audience_key = v.audience_key "
            "WHERE v.chunk_id = 'visitors#wi-fi'")).scalar()
    assert roles == ["everyone"]


def test_vectors_of_another_model_are_not_compared_with_the_question(engine: Engine, index: PostgresIndex) -> None:
    other = PostgresIndex(engine, BagOfWords("another-model@2"))
    found = other.search("guest wifi password", audience=STAFF, limit=10)
    full_text = PostgresIndex(engine).search("guest wifi password", audience=STAFF, limit=10)
    assert ids(found) == ids(full_text)


def test_a_chunk_only_the_vectors_find_is_returned_with_its_passage(engine: Engine, index: PostgresIndex) -> None:
    """'lot' and 'permits' are not in the question; the shared words 'north' and 'park' bring it through the
    vectors (the bag of words does not stem) while full text finds it too only through 'park'."""
    found = index.search("where do visitors park their cars", audience=STAFF, limit=3)
    assert "handbook#parking" in ids(found)
    assert next(chunk for chunk in found if chunk.chunk_id == "handbook#parking").text.startswith("Visitors park")


def test_a_new_ingestion_is_seen_by_an_index_already_in_use(engine: Engine, embedder: BagOfWords,
                                                           index: PostgresIndex, kb: Path) -> None:
    assert "bikes#storage" not in ids(index.search("bicycle storage", audience=STAFF, limit=5))
    (kb / "bikes.md").write_text(doc("bikes", {"Storage": "Bicycle storage is in the basement."}))
    EmbeddingIngestor(engine, embedder, progress=False).ingest(kb)
    assert ids(index.search("bicycle storage", audience=STAFF, limit=1)) == ["bikes#storage"]


def test_full_text_alone_needs_no_vectors(engine: Engine, kb: Path) -> None:
    Ingestor(engine, progress=False).ingest(kb)
    index = PostgresIndex(engine)
    [best] = index.search("daily meal allowance", audience=STAFF, limit=1)
    assert "daily meal allowance" in best.text
    assert index.search("the and of", audience=STAFF, limit=5) == []
