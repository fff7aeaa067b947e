"""Deterministic stand-ins for the embedding model, shared by the tests: nothing is loaded, so
store and graph tests run in milliseconds and their similarities can be reasoned about by hand.

`HashEmbedder`: hashed bag of tokens (texts sharing tokens are close, identical texts equal).
`KeywordEmbedder`: one dimension per vocabulary word (cosine = |A∩B| / sqrt(|A|·|B|)).
`ConstantEmbedder`: one vector for every text (similarity carries no signal).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from memory.embeddings import HashingEmbedder
from memory.text import tokenize

MODEL_TEXTS = [
    "David was limping after his run",
    "The kitchen camera saw Mia pour cereal at 07:42 while the kettle boiled",
    "Smart speaker: 'remind me to call grandma after dinner'",
    "Front door lock engaged; hallway motion sensor idle for 40 minutes",
    "Watch: heart rate 128 bpm during a 5.2 km jog along the canal",
    "x",
]
"""Texts of many lengths (one a single letter) the real model's arithmetic is compared on."""


class HashEmbedder(HashingEmbedder):
    """`memory.embeddings.HashingEmbedder` that counts its calls and texts, so tests can
    assert what was (not) embedded. `signed` spreads tokens over ±1 (fewer accidental
    overlaps)."""

    def __init__(self, dim: int = 256, model_id: str = "test:hash-256", signed: bool = True):
        super().__init__(dim, signed)
        self._model_id = model_id
        self.calls = 0
        self.texts: list[str] = []

    @property
    def model_id(self) -> str:
        return self._model_id

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts.extend(texts)
        return super().embed(texts)


def tiny_embedder() -> HashEmbedder:
    """The 64-dimension unsigned variant the graph tests use."""
    return HashEmbedder(dim=64, model_id="test:tiny-hash-64", signed=False)


class KeywordEmbedder:
    """One dimension per vocabulary word (matched on `tokenize` stems); a last dimension for
    texts with none of them, so that every vector is unit length."""

    def __init__(self, vocabulary: Sequence[str]):
        self.words = [tokenize(w)[0] for w in vocabulary]
        self.index = {w: i for i, w in enumerate(self.words)}

    @property
    def model_id(self) -> str:
        return "test:keywords:" + hashlib.sha1(" ".join(self.words).encode()).hexdigest()[:12]

    @property
    def dim(self) -> int:
        return len(self.words) + 1

    def vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        for token in set(tokenize(text)):
            if token in self.index:
                vec[self.index[token]] = 1.0
        if not vec.any():
            vec[-1] = 1.0
        return vec / np.linalg.norm(vec)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.vector(t) for t in texts])


class ConstantEmbedder:
    """Every text gets the same vector: similarity carries no signal at all."""

    model_id = "test:constant"
    dim = 4

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.zeros((len(texts), 4), dtype=np.float32)
        rows[:, 0] = 1.0
        return rows
