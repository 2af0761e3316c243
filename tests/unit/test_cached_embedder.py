"""The embedding cache: each text embedded once while remembered, the oldest forgotten first, safe across threads."""

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from core.retrieval.embeddings import CachedEmbedder


class LengthEmbedder:
    """A vector that encodes the text's length; records every text it was asked to embed."""

    def __init__(self) -> None:
        self.embedded: list[str] = []

    @property
    def model_id(self) -> str:
        return "length@1"

    @property
    def dim(self) -> int:
        return 2

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        return [[float(len(text)), 1.0] for text in texts]


def test_a_remembered_text_is_not_embedded_again() -> None:
    inner = LengthEmbedder()
    cached = CachedEmbedder(inner, size=10)

    first = cached.embed_matrix(["a", "bb", "a"])
    again = cached.embed_matrix(["bb", "ccc"])

    assert inner.embedded == ["a", "bb", "ccc"]
    assert np.allclose(first[0], first[2]) and np.allclose(first[1], again[0])


def test_the_least_recently_used_text_is_forgotten_first() -> None:
    inner = LengthEmbedder()
    cached = CachedEmbedder(inner, size=2)

    cached.embed_matrix(["a", "bb"])
    cached.embed_matrix(["a"])  # "bb" is now the oldest
    cached.embed_matrix(["ccc"])
    cached.embed_matrix(["a", "bb"])

    assert inner.embedded == ["a", "bb", "ccc", "bb"]


def test_threads_sharing_a_small_cache_each_get_their_own_texts_vectors() -> None:
    cached = CachedEmbedder(LengthEmbedder(), size=8)
    texts = [[f"{'x' * (n % 50)}-{n}", "shared"] for n in range(2000)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(cached.embed_matrix, texts))

    for asked, vectors in zip(texts, results, strict=True):  # a vector is (length, 1), normalised
        assert [round(float(row[0] / row[1])) for row in vectors] == [len(text) for text in asked]
