"""PostgreSQL and SQLite give the same full-text retrieval for the same question over the same documents (issue 56:
one question, two answers): the same terms, FTS5's BM25 over the statistics of what the audience may see, the
same doubles, the same candidates over the posting budget, and equal scores in chunk-id order whatever the order
the chunks were ingested in and whatever the database's collation."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from core.domain import Audience, Party
from core.eval.bench_corpus import write_corpus
from core.retrieval.bm25 import POSTING_BUDGET
from core.retrieval.embeddings import EmbeddingIngestor
from core.retrieval.hybrid import HybridIndex
from core.retrieval.index import SqliteIndex
from core.retrieval.ingest import Ingestor
from core.retrieval.postgres_index import PostgresIndex
from core.storage import make_engine
from tests.fake_embedders import BagOfWords

STAFF = Audience(parties=(Party(),))
HR = Audience(parties=(Party(roles=frozenset({"hr"})),))
GUEST = Audience(parties=(Party(is_guest=True),))
AUDIENCES = (STAFF, HR, GUEST, Audience(parties=(Party(), Party(is_guest=True))),
             Audience(parties=(Party(roles=frozenset({"legal"})), Party(roles=frozenset({"hr"})))))
SECTION = "Lockers on the second floor are emptied every Friday evening."
# File names sort opposite to the ids, so ingestion order is not id order; "a-c" sorts before "ab" by code point
# and after it under a language collation such as en_US, which ignores the hyphen at first.
FILES = {"1.md": "zz-lockers", "2.md": "ab", "3.md": "a-c", "4.md": "Lockers", "5.md": "a_b"}
# Stems FTS5's tokenizer splits further (hyphens, apostrophes), numbers, accented letters, and words repeated.
WORDS = """---
id: words
title: Follow-up rules
---
# Follow-up rules

## O'Brien's e-mail

A follow-up e-mail to O'Brien goes out within 2 days; the café's Wi-Fi is not for follow-ups. Follow up, follow
up, follow up: 3 follow-ups at most, and never after 18:00.
"""
QUESTIONS = ("when are lockers emptied?", "lockers", "follow-up e-mail to O'Brien", "cafe wi-fi", "how many follow ups",
             "is there anything at 18:00?", "what is the zorblax policy?", "the and of")


@pytest.fixture
def postgres(pgvector_url: str) -> Iterator[Engine]:
    engine = make_engine(pgvector_url)
    yield engine
    engine.dispose()


def write_kb(root: Path) -> Path:
    root.mkdir()
    for name, doc_id in FILES.items():
        (root / name).write_text(f"---\nid: {doc_id}\ntitle: Lockers\n---\n# Lockers\n\n## Rule\n{SECTION}\n",
                                 encoding="utf-8")
    (root / "words.md").write_text(WORDS, encoding="utf-8")
    return root


def ingested(kb: Path, *engines: Engine) -> None:
    for engine in engines:
        assert not Ingestor(engine, progress=False).ingest(kb).errors


def test_equal_scores_come_in_chunk_id_order_on_both_databases(sqlite_engine: Engine, postgres: Engine,
                                                               tmp_path: Path) -> None:
    ingested(write_kb(tmp_path / "kb"), sqlite_engine, postgres)
    indexes = {"sqlite": SqliteIndex(sqlite_engine), "postgres": PostgresIndex(postgres)}

    for limit in (5, 3, 1):  # the top-k cut falls among the tied chunks: the same ones are kept
        found = {name: index.search("when are lockers emptied?", audience=STAFF, limit=limit)
                 for name, index in indexes.items()}
        for chunks in found.values():
            assert len({chunk.score for chunk in chunks}) == 1  # all tied
        chunk_ids = {name: [chunk.chunk_id for chunk in chunks] for name, chunks in found.items()}
        every = sorted(chunk.chunk_id for chunk in indexes["sqlite"].search("lockers", audience=STAFF, limit=10))
        assert chunk_ids["sqlite"] == chunk_ids["postgres"] == every[:limit]


def test_both_databases_index_the_same_terms_and_score_them_the_same(sqlite_engine: Engine, postgres: Engine,
                                                                      tmp_path: Path) -> None:
    ingested(write_kb(tmp_path / "kb"), sqlite_engine, postgres)
    sqlite, pg = SqliteIndex(sqlite_engine), PostgresIndex(postgres)
    for question in QUESTIONS:
        expected = [(chunk.chunk_id, chunk.score) for chunk in sqlite.search(question, audience=STAFF, limit=10)]
        assert [(chunk.chunk_id, chunk.score) for chunk in pg.search(question, audience=STAFF, limit=10)] == expected
    assert [chunk.doc_id for chunk in pg.search("follow-up e-mail to O'Brien", audience=STAFF, limit=1)] == ["words"]


def test_fused_retrieval_ranks_and_scores_alike_on_both_databases(sqlite_engine: Engine, postgres: Engine,
                                                                  tmp_path: Path) -> None:
    """Each nearest chunk's cosine is computed from its vector the same way on both (the lockers' equal vectors
    tie, and come in chunk-id order), so the fused lists are the same, scores included."""
    kb, embedder = write_kb(tmp_path / "kb"), BagOfWords()
    for engine in (sqlite_engine, postgres):
        assert not EmbeddingIngestor(engine, embedder, progress=False).ingest(kb).errors
    sqlite, pg = HybridIndex(sqlite_engine, embedder), PostgresIndex(postgres, embedder)
    for question in (*QUESTIONS, "emptied on friday", "when"):
        for limit in (1, 3, 10):
            expected = [(c.chunk_id, c.score) for c in sqlite.search(question, audience=STAFF, limit=limit)]
            assert [(c.chunk_id, c.score) for c in pg.search(question, audience=STAFF, limit=limit)] == expected
        assert pg.best_unscoped_score(question) == sqlite.best_unscoped_score(question)


@pytest.mark.slow  # every budget, audience and depth, on a generated knowledge base of mixed audiences
def test_full_text_ranks_and_scores_alike_on_both_databases_for_every_audience_budget_and_depth(
        sqlite_engine: Engine, postgres: Engine, tmp_path: Path) -> None:
    """The same doubles, not nearly the same: equal scores must stay equal for their chunk-id order to apply."""
    corpus = write_corpus(tmp_path / "kb", chunks=400, seed=11)
    ingested(corpus.root, sqlite_engine, postgres)
    questions = [*corpus.queries[:25], "records", "annual leave limits", "zorblax policy", "policy"]
    compared = 0
    for budget in (POSTING_BUDGET, 40, 1):  # every match; the rarest terms re-scored; the fallback to every match
        sqlite, pg = SqliteIndex(sqlite_engine, posting_budget=budget), PostgresIndex(postgres, budget=budget)
        for question in questions:
            for audience in AUDIENCES:
                for limit in (1, 8):
                    expected = [(c.chunk_id, c.score) for c in sqlite.search(question, audience=audience, limit=limit)]
                    assert [(c.chunk_id, c.score) for c in pg.search(question, audience=audience, limit=limit)] \
                        == expected, (question, budget)
                    compared += bool(expected)
            assert pg.best_unscoped_score(question) == sqlite.best_unscoped_score(question)
    assert compared > 400
