"""Shared fixtures of the memory-store tests: a fast deterministic embedder and a store factory.

`chroma_endpoint` says where a store's vectors live: None (embedded Chroma) here;
test_chroma_server.py overrides it with a real `chroma run` server and re-collects the
store tests, so the same test functions run against both backends.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory.models import Event
from memory.store import MemoryStore
from memory.text import tokenize


class HashEmbedder:
    """Hashed bag-of-words vectors: texts sharing tokens are close, identical texts equal.

    Counts its calls and texts so tests can assert what was (not) embedded.
    """

    def __init__(self, dim: int = 256, model_id: str = "test:hash-256"):
        self._dim = dim
        self._model_id = model_id
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
                out[row, bucket] += 1.0 if digest[4] % 2 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


T0 = datetime(2024, 3, 1, 8, 0, 0)


def _make_event(event_id: str, minutes: float, description: str, device: str = "watch_david",
                characters: tuple[str, ...] = ("David",), location: str = "living room",
                modality: str = "health", **extra: Any) -> Event:
    return Event(event_id=event_id, timestamp=T0 + timedelta(minutes=minutes), device=device,
                 modality=modality, location=location, description=description,
                 characters=characters, **extra)


@pytest.fixture
def make_event() -> Callable[..., Event]:
    """make_event(id, minutes, description, device=..., characters=..., ...): an Event
    `minutes` after 2024-03-01 08:00 (fixtures, not imports: conftest is not a module to
    import from)."""
    return _make_event


@pytest.fixture
def t0() -> datetime:
    return T0


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def chroma_endpoint() -> tuple[str, int] | None:
    """None: embedded Chroma under the data dir. Overridden by test_chroma_server.py."""
    return None


OpenStore = Callable[..., MemoryStore]


@pytest.fixture
def open_store(tmp_path: Path, chroma_endpoint: tuple[str, int] | None,
               hash_embedder: HashEmbedder) -> Iterator[OpenStore]:
    """open_store(data_dir=None, **kwargs): a MemoryStore on the test's backend.

    Defaults: <tmp>/store, the hash embedder, and on a Chroma server a namespace unique to
    the test (the server is shared by the whole session), reused by every reopen.
    """
    opened: list[MemoryStore] = []
    namespace = f"t{uuid.uuid4().hex[:12]}" if chroma_endpoint else "default"

    def _open(data_dir: Path | None = None, **kwargs: Any) -> MemoryStore:
        kwargs.setdefault("namespace", namespace)
        if "embedding" not in kwargs:
            kwargs.setdefault("embedder", hash_embedder)
        if chroma_endpoint is not None:
            kwargs.setdefault("chroma_host", chroma_endpoint[0])
            kwargs.setdefault("chroma_port", chroma_endpoint[1])
        store = MemoryStore.open(data_dir or tmp_path / "store", **kwargs)
        opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()
