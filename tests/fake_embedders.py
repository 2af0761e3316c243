"""A deterministic embedder of the tests' own: hashed bag of words, unit length. Two texts sharing words are near
each other, which is all the vector tests need; `model_id` tells vectors of two "models" apart."""

import hashlib
import math
import re
from collections.abc import Sequence


class BagOfWords:
    def __init__(self, model_id: str = "bag-of-words@1", dim: int = 64) -> None:
        self._model_id = model_id
        self._dim = dim
        self.texts = 0

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += len(texts)
        vectors = []
        for text in texts:
            vector = [0.0] * self._dim
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % self._dim] += 1.0
            norm = math.sqrt(sum(v * v for v in vector)) or 1.0
            vectors.append([v / norm for v in vector])
        return vectors
