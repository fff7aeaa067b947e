"""A plain household stream for tests that need many ordinary events and no story: 120 events,
37 minutes apart, over four devices and three rooms, ten words recombined (so every word
matches a tenth of the stream and no query matches all of it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

from memory.models import Event
from memory.store import MemoryStore
from tests.support.embedders import tiny_embedder

START = datetime(2026, 5, 11, 6, 0)
WORDS = ["kettle", "door", "alarm", "walk", "milk", "oven", "piano", "sleep", "rain", "bike"]
QUERIES = ["kettle", "why did the door alarm go off", "milk oven", "Ana walk"]


def plain_events(n: int = 120) -> list[Event]:
    return [
        Event(
            event_id=f"e{i:03d}",
            timestamp=START + timedelta(minutes=37 * i),
            device=["kitchen_plug", "hall_door", "phone_ana", "watch_ben"][i % 4],
            modality="app_usage",
            location=["kitchen", "hallway", "garden"][i % 3],
            description=f"{WORDS[i % len(WORDS)]} and {WORDS[(i * 7) % len(WORDS)]} noted at {i}",
            characters=("Ana",) if i % 4 == 2 else (),
        )
        for i in range(n)
    ]


@contextmanager
def plain_store(path: Path, events: list[Event]) -> Iterator[MemoryStore]:
    """A real store at `path` (embedded Chroma, the tiny test embedder) holding `events`."""
    store = MemoryStore.open(path, embedder=tiny_embedder())
    try:
        store.add_events(events)
        yield store
    finally:
        store.close()
