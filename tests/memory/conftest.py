"""Shared fixtures of the memory-store tests: a fast deterministic embedder and a store factory.

`chroma_endpoint` says where a store's vectors live: None (embedded Chroma) here; test_store.py
parametrizes it over embedded Chroma and a real `chroma run` server (`chroma_server`, started
once per session), so the same test functions run against both backends. `database_url` says
where the rest lives: None (the SQLite file) here; test_store_postgres.py re-runs them on a
real PostgreSQL server (`postgres_server`).
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
from tests.support.chroma_server import chroma_server  # noqa: F401 — a session fixture
from tests.support.embedders import HashEmbedder
from tests.support.postgres_server import (  # noqa: F401 — session fixtures
    postgres_server,
    postgres_url,
)

T0 = datetime(2024, 3, 1, 8, 0, 0)


def _make_event(
    event_id: str,
    minutes: float,
    description: str,
    device: str = "watch_david",
    characters: tuple[str, ...] = ("David",),
    location: str = "living room",
    modality: str = "health",
    **extra: Any,
) -> Event:
    return Event(
        event_id=event_id,
        timestamp=T0 + timedelta(minutes=minutes),
        device=device,
        modality=modality,
        location=location,
        description=description,
        characters=characters,
        **extra,
    )


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


@pytest.fixture
def database_url() -> str | None:
    """None: the SQLite file in the data dir. Overridden by test_store_postgres.py."""
    return None


OpenStore = Callable[..., MemoryStore]


@pytest.fixture
def open_store(
    tmp_path: Path,
    chroma_endpoint: tuple[str, int] | None,
    database_url: str | None,
    hash_embedder: HashEmbedder,
) -> Iterator[OpenStore]:
    """open_store(data_dir=None, **kwargs): a MemoryStore on the test's backend.

    Defaults: <tmp>/store, the hash embedder, and on a Chroma or PostgreSQL server a namespace
    unique to the test (the server is shared by the whole session), reused by every reopen.
    """
    opened: list[MemoryStore] = []
    shared = chroma_endpoint or database_url
    namespace = f"t{uuid.uuid4().hex[:12]}" if shared else "default"

    def _open(data_dir: Path | None = None, **kwargs: Any) -> MemoryStore:
        kwargs.setdefault("namespace", namespace)
        if "embedding" not in kwargs:
            kwargs.setdefault("embedder", hash_embedder)
        if chroma_endpoint is not None:
            kwargs.setdefault("chroma_host", chroma_endpoint[0])
            kwargs.setdefault("chroma_port", chroma_endpoint[1])
        if database_url is not None:
            kwargs.setdefault("database_url", database_url)
        store = MemoryStore.open(data_dir or tmp_path / "store", **kwargs)
        opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()


@pytest.fixture
def household(make_event: Any) -> list[Event]:
    """One morning of a two-person household (minutes after 08:00 in the second field)."""
    return [
        make_event("e01", 0, "David's heart rate rose to 128 bpm during a jog", location="park"),
        make_event(
            "e02",
            20,
            "David was limping after the run",
            device="cam_hall",
            modality="vision",
            location="hallway",
        ),
        make_event(
            "e03",
            25,
            "Kitchen fridge door left open for 5 minutes",
            device="fridge_sensor",
            modality="environment",
            location="kitchen",
            characters=(),
        ),
        make_event("e09", 30, "David's step count reached 4200"),
        make_event(
            "e04",
            40,
            "Emma asked the speaker to play jazz",
            device="speaker_kitchen",
            modality="audio",
            location="kitchen",
            characters=("Emma",),
        ),
        make_event(
            "e05",
            60,
            "David applied an ice pack to his left knee",
            device="cam_living",
            modality="vision",
        ),
        make_event(
            "e06",
            90,
            "Emma's phone logged 6.1 km of cycling",
            device="phone_emma",
            modality="motion",
            location="outdoors",
            characters=("Emma",),
        ),
        make_event("e10", 100, "David's heart rate resting at 64 bpm"),
        make_event(
            "e07",
            120,
            "Thermostat set to 21.5 degrees",
            device="thermostat",
            modality="environment",
            characters=(),
        ),
        make_event(
            "e08",
            150,
            "David and Emma talked about the knee injury",
            device="speaker_living",
            modality="dialogue",
            characters=("David", "Emma"),
        ),
    ]
