"""Shared fixtures of the memory-store tests: a fast deterministic embedder and a store factory.

`chroma_endpoint` says where a store's vectors live: None (embedded Chroma) here;
test_chroma_server.py overrides it with a real `chroma run` server and re-collects the
store tests, so the same test functions run against both backends.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory.models import Event
from memory.store import MemoryStore
from tests.embedders import HashEmbedder

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
