"""Hybrid retrieval and stored embeddings on a small knowledge base of the tests' own (SQLite)."""

from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from core.domain import Audience, Party
from core.eval.bench_corpus import write_corpus
from core.retrieval.embeddings import EmbeddingIngestor, VectorStore, as_matrix, embed_pending
from core.retrieval.hybrid import HybridIndex
from core.retrieval.index import SqliteIndex
from core.storage import make_engine, migrate
from core.storage.tables import ChunkEmbeddingRow
from tests.fake_embedders import BagOfWords
from tests.kb_views import visible_copy
from tests.unit.fakes import FailingEmbedder

RETURNS = """---
id: returns-policy
title: Returns Policy
owner: "#support"
---
# Returns Policy

## Return window

Returns are accepted within 30 days of delivery when the item is unused.

## Refund method

Refunds go back to the original card within 5 business days.
"""

SALARIES = """---
id: salary-bands
title: Salary Bands
owner: "#people"
audience: [hr]
---
# Salary Bands

## Return window bands

Returns window salary band: engineers earn from 60000 to 90000.
"""


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "returns.md").write_text(RETURNS)
    (root / "salaries.md").write_text(SALARIES)
    return root


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = make_engine(f"sqlite:///{tmp_path / 'sourced.db'}")
    migrate(engine)
    return engine


def vectors(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(ChunkEmbeddingRow)).scalar_one())


def test_reingesting_unchanged_files_computes_no_embedding(engine: Engine, kb: Path) -> None:
    embedder = BagOfWords("fake-bow@1")
    ingestor = EmbeddingIngestor(engine, embedder, progress=False)
    ingestor.ingest(kb)
    first = embedder.texts
    assert first > 0 and vectors(engine) == first
    ingestor.ingest(kb)
    assert embedder.texts == first
    assert ingestor.last_embedded == 0


def test_a_changed_file_alone_is_embedded_again(engine: Engine, kb: Path) -> None:
    embedder = BagOfWords("fake-bow@1")
    ingestor = EmbeddingIngestor(engine, embedder, progress=False)
    report = ingestor.ingest(kb)
    before = embedder.texts
    (kb / "returns.md").write_text(RETURNS.replace("5 business days", "7 business days"))
    ingestor.ingest(kb)
    assert 0 < embedder.texts - before < report.chunks


def test_a_changed_model_re_embeds_instead_of_mixing(engine: Engine, kb: Path) -> None:
    EmbeddingIngestor(engine, BagOfWords("fake-bow@1"), progress=False).ingest(kb)
    stored = vectors(engine)
    newer = BagOfWords("fake-bow@2")
    assert embed_pending(engine, newer) == stored
    with engine.connect() as connection:
        models = set(connection.execute(select(ChunkEmbeddingRow.model)).scalars())
    assert models == {"fake-bow@2"} and vectors(engine) == stored
    assert embed_pending(engine, newer) == 0


def test_the_audience_filter_applies_before_the_top_k(engine: Engine, kb: Path) -> None:
    embedder = BagOfWords("fake-bow@1")
    EmbeddingIngestor(engine, embedder, progress=False).ingest(kb)
    index = HybridIndex(engine, embedder)
    staff = Audience(parties=(Party(roles=frozenset({"everyone"})),))
    hr = Audience(parties=(Party(roles=frozenset({"everyone", "hr"})),))
    question = "returns window salary band"
    assert any(chunk.doc_id == "salary-bands" for chunk in index.search(question, audience=hr, limit=1))
    hits = index.search(question, audience=staff, limit=1)
    assert len(hits) == 1 and hits[0].doc_id == "returns-policy"
    assert all(chunk.doc_id != "salary-bands" for chunk in index.search(question, audience=staff, limit=10))
    assert index.best_unscoped_score(question) > 0


def test_an_embedder_that_fails_at_question_time_leaves_bm25_answering(engine: Engine, kb: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    EmbeddingIngestor(engine, BagOfWords("endpoint@1"), progress=False).ingest(kb)
    index = HybridIndex(engine, FailingEmbedder("endpoint@1"))
    staff = Audience(parties=(Party(roles=frozenset({"everyone"})),))
    question = "how many business days until the refund reaches my card?"

    hits = index.search(question, audience=staff, limit=3)

    plain = SqliteIndex(engine)
    assert [c.chunk_id for c in hits] == [c.chunk_id for c in plain.search(question, audience=staff, limit=3)]
    assert hits and hits[0].passage.heading.endswith("Refund method")
    assert index.best_unscoped_score(question) == plain.best_unscoped_score(question)
    assert "embedder failed" in caplog.text and question not in caplog.text


def test_a_paraphrased_question_finds_its_section_with_the_real_model(engine: Engine, kb: Path) -> None:
    embeddings = pytest.importorskip("core.retrieval.embeddings")
    try:
        embedder = embeddings.MiniLmEmbedder()
    except embeddings.EmbedderUnavailable as error:
        pytest.skip(str(error))
    EmbeddingIngestor(engine, embedder, progress=False).ingest(kb)
    staff = Audience(parties=(Party(roles=frozenset({"everyone"})),))
    hits = HybridIndex(engine, embedder).search("how long do I have to send stuff back?", audience=staff, limit=1)
    assert [chunk.passage.heading.split(" > ")[-1] for chunk in hits] == ["Return window"]


def test_the_inverted_file_past_the_exact_limit_finds_what_exact_search_finds(engine: Engine, kb: Path) -> None:
    embedder = BagOfWords("fake-bow@1")
    EmbeddingIngestor(engine, embedder, progress=False).ingest(kb)
    exact, indexed = VectorStore(engine, embedder.model_id), VectorStore(engine, embedder.model_id, exact_limit=0)
    staff = Audience(parties=(Party(roles=frozenset({"everyone"})),))
    query = as_matrix(embedder, ["refunds back to the original card"])[0]

    expected = exact.search(query, audience=staff, limit=5)
    found = indexed.search(query, audience=staff, limit=5)

    assert [chunk_id for chunk_id, _ in found] == [chunk_id for chunk_id, _ in expected]
    assert [cosine for _, cosine in found] == pytest.approx([cosine for _, cosine in expected], abs=0.02)
    assert {chunk_id for chunk_id, _ in indexed.search(query, audience=None, limit=10)} == {
        chunk_id for chunk_id, _ in exact.search(query, audience=None, limit=10)}


def test_a_store_already_loaded_sees_what_a_later_ingest_adds_and_removes(engine: Engine, kb: Path) -> None:
    embedder = BagOfWords("fake-bow@1")
    ingestor = EmbeddingIngestor(engine, embedder, progress=False)
    ingestor.ingest(kb)
    store = VectorStore(engine, embedder.model_id)
    query = as_matrix(embedder, ["parking permits for the garage"])[0]

    def found() -> set[str]:
        return {chunk_id.split("#")[0] for chunk_id, _ in store.search(query, audience=None, limit=10)}

    assert found() == {"returns-policy", "salary-bands"}

    (kb / "parking.md").write_text("---\nid: parking\ntitle: Parking\n---\n# Parking\n\nPermits for the garage.\n")
    ingestor.ingest(kb)
    assert "parking" in found()

    (kb / "salaries.md").unlink()
    ingestor.ingest(kb)
    assert found() == {"returns-policy", "parking"}


@pytest.mark.slow  # thousands of generated chunks through both searches
@pytest.mark.parametrize("exact_limit", [20_000, 40], ids=["exact", "inverted-file"])
def test_a_store_finds_for_an_audience_what_a_store_of_only_what_it_may_see_finds(
        tmp_path: Path, exact_limit: int) -> None:
    """Issue 13: hidden vectors neither train nor fill what an audience searches, so its nearest chunks and their
    cosines are those of a knowledge base holding only what it may see."""
    corpus = write_corpus(tmp_path / "kb", chunks=400, seed=5)  # for everyone, hr or legal, by document
    embedder = BagOfWords("fake-bow@1")
    audiences = {"staff": Audience(parties=(Party(),)), "hr": Audience(parties=(Party(roles=frozenset({"hr"})),)),
                 "hr and staff": Audience(parties=(Party(roles=frozenset({"hr"})), Party()))}
    whole = make_engine(f"sqlite:///{tmp_path / 'whole.db'}")
    migrate(whole)
    EmbeddingIngestor(whole, embedder, progress=False).ingest(corpus.root)
    store = VectorStore(whole, embedder.model_id, exact_limit=exact_limit)
    queries = as_matrix(embedder, corpus.queries[:40])
    for name, audience in audiences.items():
        visible = make_engine(f"sqlite:///{tmp_path / f'{name}.db'}")
        migrate(visible)
        EmbeddingIngestor(visible, embedder, progress=False).ingest(
            visible_copy(corpus.root, tmp_path / f"kb-{name}", audience.role_sets()))
        alone = VectorStore(visible, embedder.model_id, exact_limit=exact_limit)
        for query in queries:
            assert store.search(query, audience=audience, limit=30) == alone.search(query, audience=audience, limit=30)
        visible.dispose()
    whole.dispose()
