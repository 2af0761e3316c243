"""Vector search over the rows an audience may see: exact, and through the inverted file beyond the limit."""

import numpy as np
import pytest

from core.retrieval.embeddings import normalise
from core.retrieval.vector_search import ExactSearch, InvertedFileSearch, Matrix

ROWS, DIM, TOPICS = 4000, 32, 40


@pytest.fixture(scope="module")
def vectors() -> Matrix:
    """Rows clustered around topics, as chunk vectors are."""
    rng = np.random.default_rng(3)
    topics = rng.standard_normal((TOPICS, DIM), dtype=np.float32)
    return normalise(topics[rng.integers(0, TOPICS, ROWS)] + 0.3 * rng.standard_normal((ROWS, DIM), dtype=np.float32))


@pytest.fixture(scope="module")
def inverted_file(vectors: Matrix) -> InvertedFileSearch:
    return InvertedFileSearch.of(vectors, nprobe=8)


def test_the_inverted_file_finds_what_exact_search_finds(vectors: Matrix, inverted_file: InvertedFileSearch) -> None:
    exact = ExactSearch(vectors)
    queries = vectors[::200]
    found = [set(inverted_file.search(q, visible=None, limit=10)[0]) & set(exact.search(q, visible=None, limit=10)[0])
             for q in queries]
    assert np.mean([len(common) / 10 for common in found]) >= 0.9


def test_only_visible_rows_are_returned_and_as_many_as_asked(vectors: Matrix,
                                                              inverted_file: InvertedFileSearch) -> None:
    query = vectors[0]
    nearest, _ = ExactSearch(vectors).search(query, visible=None, limit=200)
    visible = np.ones(ROWS, dtype=np.bool_)
    visible[nearest] = False  # the query's whole neighbourhood is hidden

    for search in (ExactSearch(vectors), inverted_file):
        rows, scores = search.search(query, visible=visible, limit=20)
        assert len(rows) == 20
        assert visible[rows].all()
        assert list(scores) == sorted(scores, reverse=True)


def test_a_narrow_audience_gets_its_few_rows_from_the_inverted_file(vectors: Matrix,
                                                                     inverted_file: InvertedFileSearch) -> None:
    visible = np.zeros(ROWS, dtype=np.bool_)
    visible[[5, 1500, 3999]] = True

    rows, _ = inverted_file.search(vectors[0], visible=visible, limit=30)

    assert sorted(rows) == [5, 1500, 3999]


def test_equal_vectors_get_the_same_cosine_wherever_they_are_and_come_in_row_order(vectors: Matrix) -> None:
    """BLAS rounds a row's product differently with the rows beside it; the reported cosine is the row's own."""
    rows = [7, 1001, 2502, 3999]
    copied = vectors.copy()
    copied[rows] = normalise(np.random.default_rng(5).standard_normal((1, DIM), dtype=np.float32))
    query = normalise(copied[7:8] + 0.2 * vectors[2:3])[0]

    for limit in (len(rows), 2):  # the cut falls among the equal rows: the first ones by row are kept
        found, scores = ExactSearch(copied).search(query, visible=None, limit=limit)
        assert list(found) == rows[:limit]
        assert len(set(scores.tolist())) == 1
    assert ExactSearch(copied[[3999, 2502]]).search(query, visible=None, limit=1)[1][0] == scores[0]
