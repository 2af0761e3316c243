"""BM25 as SQLite FTS5 computes it: the one full-text score of both databases.

A chunk's terms are the Snowball stems of its heading path and its text, stopwords included
(`core.text.index_tokens`); a question's are the stems of its content words, each once (`query_terms`). Its
score is FTS5's BM25 with the statistics of the rows the audience may see (their count, their token total, how
many of them hold each term), divided by the best score the same question could reach there (`ceiling`), so it
lies in 0..1 and a floor means the same for every question. SQLite computes it in NumPy over its FTS5 index
(`core.retrieval.index`), PostgreSQL in SQL over `chunk_terms` (`core.retrieval.postgres_index`); both with
`term_weight`'s operations in its order and the terms summed in the same order, so that on the same documents
the two give the same doubles, and equal scores are equal on both (then ordered by chunk id).

Which rows are ranked is bounded the same way on both (`split_by_postings`): under a budget of postings, every
row holding a term of the question; over it, the rows of the rarest terms that fit, re-scored over the whole
question.
"""

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, overload

import numpy as np
import numpy.typing as npt

from core import text as analysis

K1: Final = 1.2
B: Final = 0.75
"""FTS5's BM25 constants: term-frequency saturation and length normalisation."""
IDF_FLOOR: Final = 1e-6
"""FTS5 replaces a non-positive idf (a term in more than half the rows) by this."""
POSTING_BUDGET: Final = 1000
"""Matching rows ranked per question before candidates are selected by the rarest terms only."""
CANDIDATES_PER_RESULT: Final = 3
MIN_CANDIDATES: Final = 24


def query_terms(query: str) -> tuple[str, ...]:
    """The distinct index terms of a question's content words, in order of appearance."""
    return tuple(dict.fromkeys(analysis.index_tokens(analysis.content_stems(query))))


def idf(rows: int, rows_with_term: int) -> float:
    """FTS5's idf, floor included, so the ceiling matches what `bm25()` can actually return."""
    value = math.log((rows - rows_with_term + 0.5) / (rows_with_term + 0.5))
    return value if value > 0.0 else IDF_FLOOR


@overload
def term_weight(idf: float, frequency: int, length: int, average: float) -> float: ...
@overload
def term_weight(idf: float, frequency: npt.NDArray[Any], length: npt.NDArray[np.float64],
                average: float) -> npt.NDArray[np.float64]: ...
def term_weight(idf: float, frequency: Any, length: Any, average: float) -> Any:
    """What one term adds to a row's BM25 (FTS5: idf * ((freq * (k1 + 1)) / (freq + k1 * (1 - b + b * D / avgdl)))),
    for one row or, on arrays, for many. PostgreSQL's SQL (`postgres_index.term_weight_sql`) is this expression
    written out: a change here is a change there."""
    return idf * ((frequency * (K1 + 1.0)) / (frequency + K1 * ((1.0 - B) + B * length / average)))


@dataclass(frozen=True, kw_only=True)
class CorpusStats:
    """What BM25 needs to know about the rows an audience may see, for one query, as FTS5 itself counts it."""

    rows: int
    tokens: int
    document_frequency: Mapping[str, int]

    @property
    def average_length(self) -> float:
        return self.tokens / self.rows if self.rows and self.tokens else 1.0

    def idf(self, term: str) -> float:
        return idf(self.rows, self.document_frequency.get(term, 0))

    def ceiling(self, terms: Sequence[str]) -> float:
        """The largest BM25 the query could score here: a term absent from the corpus still counts, so a
        question whose key words the knowledge base lacks scores low."""
        return sum(self.idf(term) * (K1 + 1.0) for term in terms)

    def bm25(self, tokens: Sequence[str], terms: Sequence[str]) -> float:
        """The BM25 of one row (its index terms) for the query terms, summed in their order."""
        counts = Counter(tokens)
        score = 0.0
        for term in terms:
            if counts[term]:
                score += term_weight(self.idf(term), counts[term], len(tokens), self.average_length)
        return score


def normalised(raw: float, ceiling: float) -> float:
    """A BM25 as the retrieval score: over the query's ceiling, in 0..1."""
    return min(1.0, max(0.0, raw / ceiling))


def split_by_postings(terms: Sequence[str], stats: CorpusStats,
                      budget: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The rarest terms whose postings fit the budget (at least one), and the other terms that occur.

    Terms in no row are left out of both: they match nothing, though they still lower the score.
    """
    present = sorted((t for t in terms if stats.document_frequency.get(t, 0) > 0),
                     key=lambda t: (stats.document_frequency[t], t))
    selective: list[str] = []
    postings = 0
    for term in present:
        postings += stats.document_frequency[term]
        if selective and postings > budget:
            break
        selective.append(term)
    return tuple(selective), tuple(present[len(selective):])
