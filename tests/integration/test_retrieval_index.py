"""The SQLite index: the audience filter runs before the top-k, scores are comparable across questions, and every
statistic behind a score is counted over what the audience may see."""

import math
from collections.abc import Sequence
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from core.domain import Audience, Party
from core.eval.bench_corpus import write_corpus
from core.retrieval import IndexUnavailable, Ingestor, SqliteIndex, bm25
from core.retrieval import index as index_module
from core.storage import make_engine, migrate
from tests.kb_views import visible_copy

STAFF = Audience(parties=(Party(),))
HR = Audience(parties=(Party(roles=frozenset({"hr"})),))
GUEST = Audience(parties=(Party(is_guest=True),))


def write_kb(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).write_text(content, encoding="utf-8")
    return root


def doc(doc_id: str, sections: dict[str, str], *, audience: str = "everyone", extra: str = "") -> str:
    body = "".join(f"\n## {heading}\n\n{text}\n" for heading, text in sections.items())
    return (f"---\nid: {doc_id}\ntitle: {doc_id.title()}\nowner: \"#{doc_id}-owners\"\naudience: [{audience}]\n"
            f"{extra}---\n# {doc_id.title()}\n{body}")


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    salary = "The salary band for a senior engineer is set by the salary committee. " * 3
    return write_kb(tmp_path, {
        "bands.md": doc("bands", {f"Band {n}": f"{salary} Band {n}." for n in range(5)}, audience="hr"),
        "handbook.md": doc("handbook", {
            "Reviews": "Every engineer gets a salary review in April.",
            "Promotions": "A senior engineer is promoted after a committee review.",
            "Meals": "The daily meal allowance for travel is $75.",
            "Other": "Nothing about pay here, only parking.",
        }, extra="updated: 2026-01-10\nurl: https://wiki.example/handbook\n"),
        "visitors.md": doc("visitors", {"Wi-Fi": "Visitors use the guest Wi-Fi network, password on the desk."},
                           audience="everyone, guests"),
        "old-meals.md": doc("old-meals", {"Meals": "The daily meal allowance for travel was $60."}),
        "new-meals.md": doc("new-meals", {"Meals": "The meal allowance for travel is $75 a day."},
                            extra="supersedes: [old-meals]\n"),
    })


@pytest.fixture
def index(sqlite_engine: Engine, kb: Path) -> SqliteIndex:
    report = Ingestor(sqlite_engine, progress=False).ingest(kb)
    assert not report.errors
    return SqliteIndex(sqlite_engine)


def test_a_restricted_document_that_matches_better_does_not_push_permitted_chunks_out(index: SqliteIndex) -> None:
    staff = index.search("salary band senior engineer committee", audience=STAFF, limit=2)
    assert [c.doc_id for c in staff] == ["handbook", "handbook"]
    assert {c.passage.heading for c in staff} == {"Handbook > Reviews", "Handbook > Promotions"}
    hr = index.search("salary band senior engineer committee", audience=HR, limit=2)
    assert [c.doc_id for c in hr] == ["bands", "bands"]


def test_a_restricted_document_never_appears_for_an_audience_without_its_role(index: SqliteIndex) -> None:
    found = index.search("salary band", audience=STAFF, limit=50)
    assert found
    assert all(c.doc_id != "bands" for c in found)


def test_guests_see_only_documents_whose_audience_includes_guests(index: SqliteIndex) -> None:
    assert {c.doc_id for c in index.search("guest wifi meal allowance salary", audience=GUEST, limit=20)} == {
        "visitors"}
    assert index.search("meal allowance", audience=GUEST, limit=5) == []


def test_every_party_of_the_audience_must_be_allowed(index: SqliteIndex) -> None:
    mixed = Audience(parties=(Party(roles=frozenset({"hr"})), Party()))
    assert all(c.doc_id != "bands" for c in index.search("salary band", audience=mixed, limit=20))
    with_guest = Audience(parties=(Party(), Party(is_guest=True)))
    found = index.search("guest wi-fi meal salary", audience=with_guest, limit=20)
    assert {c.doc_id for c in found} == {"visitors"}


def test_scores_lie_between_zero_and_one_best_first(index: SqliteIndex) -> None:
    found = index.search("daily meal allowance travel", audience=STAFF, limit=10)
    scores = [c.score for c in found]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)


def test_a_question_sharing_all_key_words_scores_higher_than_one_sharing_few(index: SqliteIndex) -> None:
    (full,) = index.search("daily meal allowance travel", audience=STAFF, limit=1)
    (partial,) = index.search("meal reimbursement rules abroad conference hotel", audience=STAFF, limit=1)
    assert full.score > partial.score
    assert full.score > 0.3


def test_words_the_knowledge_base_lacks_lower_the_score(index: SqliteIndex) -> None:
    (plain,) = index.search("meal allowance", audience=STAFF, limit=1)
    (padded,) = index.search("meal allowance zorblax quuxification", audience=STAFF, limit=1)
    assert plain.chunk_id == padded.chunk_id
    assert padded.score < plain.score


def test_best_unscoped_score_finds_restricted_content(index: SqliteIndex) -> None:
    assert index.search("committee band", audience=GUEST, limit=5) == []
    assert index.best_unscoped_score("salary band committee") > 0.3
    assert index.best_unscoped_score("salary band committee") == pytest.approx(
        index.search("salary band committee", audience=HR, limit=1)[0].score)


def test_a_question_of_only_stopwords_or_unknown_words_finds_nothing(index: SqliteIndex) -> None:
    assert index.search("what is it that you do?", audience=STAFF, limit=5) == []
    assert index.search("zorblax", audience=STAFF, limit=5) == []
    assert index.best_unscoped_score("zorblax") == 0.0


def test_a_retrieved_chunk_carries_its_passage_hash_and_supersession(index: SqliteIndex) -> None:
    (meals,) = [c for c in index.search("meal allowance", audience=STAFF, limit=5) if c.doc_id == "new-meals"]
    assert meals.supersedes == ("old-meals",)
    (handbook,) = [c for c in index.search("meal allowance", audience=STAFF, limit=5) if c.doc_id == "handbook"]
    passage = handbook.passage
    assert (passage.chunk_id, passage.title, passage.heading) == ("handbook#meals", "Handbook", "Handbook > Meals")
    assert passage.text == "The daily meal allowance for travel is $75."
    assert (passage.owner, str(passage.updated), passage.url) == ("#handbook-owners", "2026-01-10",
                                                                  "https://wiki.example/handbook")
    assert len(handbook.content_hash) == 64


def test_counts_report_what_was_ingested(index: SqliteIndex) -> None:
    assert index.document_count() == 5
    assert index.chunk_count() == 5 + 4 + 1 + 1 + 1


def test_candidates_from_the_rarest_terms_score_exactly_as_fts5_would(
        sqlite_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"d{n}.md": doc(f"d{n}", {
        "Rules": f"The zephyr {'storage ' * (n % 4)}policy applies to claims of {n} days for the team.",
        "More": "Team claims policy notes." + (" zephyr" if n % 3 == 0 else ""),
    }) for n in range(40)}
    Ingestor(sqlite_engine, progress=False).ingest(write_kb(tmp_path, files))
    question = "zephyr storage policy claims team"
    exact = SqliteIndex(sqlite_engine, posting_budget=10**9).search(question, audience=STAFF, limit=5)
    rescored: list[int] = []
    original = index_module._rescored
    monkeypatch.setattr(index_module, "_rescored",
                        lambda c, ranked, *a: rescored.append(len(ranked)) or original(c, ranked, *a))
    budgeted = SqliteIndex(sqlite_engine, posting_budget=1).search(question, audience=STAFF, limit=5)
    assert rescored, "the budget should have sent this query through candidate re-scoring"
    assert [c.chunk_id for c in budgeted] == [c.chunk_id for c in exact]
    assert [c.score for c in budgeted] == pytest.approx([c.score for c in exact], rel=1e-9)


def visible_index(kb: Path, folder: Path, role_sets: Sequence[frozenset[str]] | None) -> Engine:
    """A database holding only the documents of `kb` the audience may see, ingested in the same order."""
    folder.mkdir(parents=True, exist_ok=True)
    engine = make_engine(f"sqlite:///{folder / 'visible.db'}")
    migrate(engine)
    assert not Ingestor(engine, progress=False).ingest(visible_copy(kb, folder / "kb", role_sets)).errors
    return engine


def test_the_score_is_fts5_bm25_over_its_ceiling_on_what_the_audience_may_see(
        index: SqliteIndex, kb: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    (best,) = index.search("parking", audience=STAFF, limit=1)
    visible = visible_index(kb, tmp_path_factory.mktemp("staff"), STAFF.role_sets())
    with visible.connect() as connection:
        bm25 = connection.execute(text(
            "SELECT -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH '\"park\"'")).scalar_one()
        rows = connection.execute(text("SELECT count(*) FROM chunks")).scalar_one()
    ceiling = math.log((rows - 1 + 0.5) / (1 + 0.5)) * 2.2
    assert best.score == pytest.approx(bm25 / ceiling, rel=1e-12)
    visible.dispose()


def test_a_document_the_audience_may_not_see_changes_no_score_it_gets(
        index: SqliteIndex, kb: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The HR-only bands document shares "salary", "senior", "engineer" and "committee" with the handbook: its
    words must not change their idf, the average length or the ceiling for staff."""
    question = "salary band senior engineer committee review"
    visible = SqliteIndex(visible_index(kb, tmp_path_factory.mktemp("staff"), STAFF.role_sets()))
    for limit in (1, 3, 8):
        assert ([(c.chunk_id, c.score) for c in index.search(question, audience=STAFF, limit=limit)]
                == [(c.chunk_id, c.score) for c in visible.search(question, audience=STAFF, limit=limit)])


def test_a_new_ingest_is_visible_to_an_existing_index(index: SqliteIndex, sqlite_engine: Engine,
                                                      kb: Path) -> None:
    assert index.search("zeppelin hangar", audience=STAFF, limit=5) == []
    write_kb(kb, {"zeppelin.md": doc("zeppelin", {"Hangar": "The zeppelin hangar opens at nine."})})
    Ingestor(sqlite_engine, progress=False).ingest(kb)
    assert [c.doc_id for c in index.search("zeppelin hangar", audience=STAFF, limit=5)] == ["zeppelin"]


def test_the_index_refuses_a_database_without_fts5() -> None:
    engine = make_engine("postgresql+psycopg://nobody@127.0.0.1:1/none")  # never connects
    with pytest.raises(IndexUnavailable, match="needs SQLite FTS5"):
        SqliteIndex(engine)


def reference_search(engine: Engine, question: str, *, limit: int, budget: int) -> list[tuple[str, float]]:
    """The ranking rule computed by FTS5 itself in SQL on a database holding only what the audience may see:
    `bm25()`, candidates from the rarest terms over the budget, re-scored by `bm25()` over the whole query; equal
    scores in chunk-id order (as on PostgreSQL)."""
    terms = bm25.query_terms(question)
    with engine.connect() as connection:
        rows = connection.execute(text("SELECT count(*) FROM chunks_fts")).scalar_one()
        vocab = dict(connection.execute(text("SELECT term, doc FROM chunks_fts_vocab")).all())
        stats = bm25.CorpusStats(rows=rows, tokens=0, document_frequency={t: vocab.get(t, 0) for t in terms})

        def ranked(match: Sequence[str], top: int) -> list[tuple[int, float]]:
            found = connection.execute(text(
                "SELECT f.rowid, -bm25(chunks_fts) FROM chunks_fts AS f JOIN chunks AS c ON c.fts_rowid = f.rowid "
                "WHERE chunks_fts MATCH :match ORDER BY bm25(chunks_fts), c.chunk_id LIMIT :top"),
                {"match": index_module.match_expression(match), "top": top}).all()
            return [(int(rowid), float(score)) for rowid, score in found]

        selective, rest = bm25.split_by_postings(terms, stats, budget)
        best: list[tuple[int, float]] = []
        wanted = max(limit * bm25.CANDIDATES_PER_RESULT, bm25.MIN_CANDIDATES)
        candidates = ranked(selective, wanted) if rest else []
        if rest and len(candidates) >= wanted:
            rowids = ", ".join(str(rowid) for rowid, _ in candidates)
            rescored = connection.execute(text(
                "SELECT rowid, -bm25(chunks_fts) FROM chunks_fts "
                f"WHERE chunks_fts MATCH :match AND rowid IN ({rowids})"),
                {"match": index_module.match_expression(terms)}).all()
            order = dict(connection.execute(text("SELECT fts_rowid, chunk_id FROM chunks")).all())
            best = sorted(((int(rowid), float(score)) for rowid, score in rescored),
                          key=lambda item: (-item[1], order[item[0]]))[:limit]
        elif selective:
            best = ranked(selective + rest, limit)
        chunk_ids = dict(connection.execute(text("SELECT fts_rowid, chunk_id FROM chunks")).all())
        best = sorted(best, key=lambda item: (-item[1], chunk_ids[item[0]]))
    ceiling = stats.ceiling(terms)
    return [(chunk_ids[rowid], min(1.0, score / ceiling)) for rowid, score in best]


@pytest.mark.slow  # every budget and depth against FTS5
def test_the_in_memory_ranking_is_fts5s_own_on_what_each_audience_may_see_for_every_budget_and_depth(
        sqlite_engine: Engine, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "kb", chunks=600, seed=11)  # a tenth of it for HR only, a tenth for legal
    assert not Ingestor(sqlite_engine, progress=False).ingest(corpus.root).errors
    audiences: list[tuple[frozenset[str], ...] | None] = [
        STAFF.role_sets(), HR.role_sets(), GUEST.role_sets(), (frozenset({"legal"}), frozenset({"everyone"})),
        (frozenset({"hr", "everyone"}), frozenset({"legal", "everyone"})), None]
    visible = {role_sets: visible_index(corpus.root, tmp_path / f"audience-{n}", role_sets)
               for n, role_sets in enumerate(audiences)}
    questions = [*corpus.queries[:30], "records", "annual leave limits", "zorblax policy"]
    compared = 0
    for budget in (bm25.POSTING_BUDGET, 40, 1):
        index = SqliteIndex(sqlite_engine, posting_budget=budget)
        for question in questions:
            for role_sets in audiences:
                for limit in (1, 8):
                    found = [(c.chunk_id, c.score) for c in index._search(question, role_sets=role_sets, limit=limit)]
                    expected = reference_search(visible[role_sets], question, limit=limit, budget=budget)
                    assert [chunk_id for chunk_id, _ in found] == [chunk_id for chunk_id, _ in expected], question
                    assert [score for _, score in found] == pytest.approx([s for _, s in expected], rel=1e-9, abs=1e-12)
                    compared += bool(found)
    assert compared > 500
    for engine in visible.values():
        engine.dispose()


def test_a_document_restricted_behind_the_index_s_back_is_still_never_returned(index: SqliteIndex,
                                                                               sqlite_engine: Engine) -> None:
    assert {c.doc_id for c in index.search("guest wifi network", audience=GUEST, limit=5)} == {"visitors"}
    with sqlite_engine.begin() as connection:  # roles changed without an ingest: the index generation stays
        connection.execute(text("DELETE FROM document_roles WHERE doc_id = 'visitors' AND role = 'guests'"))
    assert index.search("guest wifi network", audience=GUEST, limit=5) == []
