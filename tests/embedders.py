"""A deterministic stand-in for the embedding model, shared by the tests.

Hashed bag of tokens (the lexical index's tokenizer): texts sharing tokens are close,
identical texts are equal, and nothing is loaded — so store and graph tests run in
milliseconds and their similarities can be reasoned about by hand.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from memory.text import tokenize


class HashEmbedder:
    """Hashed bag-of-words vectors; counts its calls and texts so tests can assert what was
    (not) embedded. `signed` spreads tokens over ±1 (fewer accidental overlaps)."""

    def __init__(self, dim: int = 256, model_id: str = "test:hash-256", signed: bool = True):
        self._dim = dim
        self._model_id = model_id
        self.signed = signed
        self.calls = 0
        self.texts: list[str] = []

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts.extend(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokenize(text) or [text]:
                digest = hashlib.sha256(token.encode()).digest()
                bucket = int.from_bytes(digest[:4], "little") % self._dim
                out[row, bucket] += 1.0 if (digest[4] % 2 or not self.signed) else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


def tiny_embedder() -> HashEmbedder:
    """The 64-dimension unsigned variant the graph tests use."""
    return HashEmbedder(dim=64, model_id="test:tiny-hash-64", signed=False)
