"""`moment_read`: the dense ranking in which a dialogue turn with a moment scores by it and
every other event by its own cosine — checked against scoring every event by hand, on a real
store holding a conversation among a household's sensor readings."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.access import VisibleStore
from memory.models import Event, NodeKind
from memory.search.seeds import moment_read, unconstrained_lists
from memory.store import MemoryStore
from tests.support.embedders import HashEmbedder

T0 = datetime(2026, 5, 10, 18, 0)
WORDS = ["kettle", "door", "dune", "flight", "lisbon", "novel", "rain", "milk", "oven"]


def household() -> list[Event]:
    events = []
    for i in range(40):
        talk = i % 3 != 0  # two turns of three are dialogue, one a sensor reading
        words = f"{WORDS[i % 9]} {WORDS[(i * 4) % 9]} {WORDS[(i * 7) % 9]}"
        events.append(
            Event(
                event_id=f"e{i:02d}",
                timestamp=T0 + timedelta(minutes=2 * i),
                device="speaker" if talk else "kitchen_plug",
                modality="dialogue" if talk else "environment",
                location="kitchen",
                description=f"{'Ana said' if talk else 'reading'}: {words}",
            )
        )
    return events


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    opened = MemoryStore.open(
        Path(tmp_path_factory.mktemp("moment_read")), embedder=HashEmbedder(dim=128)
    )
    opened.add_events(household())
    yield opened
    opened.close()


def by_hand(view: VisibleStore, vector: np.ndarray, depth: int) -> list[str]:
    ids = [e.event_id for e in view.store.all_events() if view.may_see(e.event_id)]
    own = dict(zip(ids, (float(c) for c in view.vectors(ids) @ vector)))
    scores = {**own, **view.moment_cosines(vector, ids)}
    return sorted(scores, key=lambda i: (-scores[i], i))[:depth]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    depth=st.integers(1, 30),
    asked_minutes=st.integers(0, 100),
)
def test_moment_read_is_every_event_scored_by_hand(
    store: MemoryStore, words: list[str], depth: int, asked_minutes: int
) -> None:
    """Property: at any depth and question time, the `depth` best of every event the view may
    read, a turn with a moment by its moment score and anything else by its cosine (ties by
    id) — also when the household's sensor readings outnumber the turns among the hits."""
    view = VisibleStore(store, None, as_of=T0 + timedelta(minutes=asked_minutes))
    vector = store.embed_query(" ".join(words))
    read = moment_read(view, vector, depth)
    assert read is not None  # the memory holds moments (the reader may see none yet)
    assert read == by_hand(view, vector, depth)


def test_without_moments_the_guard_keeps_the_hybrid_lists(tmp_path: Path) -> None:
    """A memory with no dialogue has no moments: the guard's lists stay the hybrid baseline's
    two; with a conversation it reads one more, the moment-read dense list."""
    readings = [e for e in household() if e.modality != "dialogue"]
    with MemoryStore.open(tmp_path / "sensors", embedder=HashEmbedder(dim=128)) as sensors:
        sensors.add_events(readings)
        vector = sensors.embed_query("kettle")
        assert moment_read(sensors, vector, 5) is None
        assert set(unconstrained_lists(sensors, "kettle", 5, moments=True)) == {"dense:0", "bm25"}
    with MemoryStore.open(tmp_path / "talk", embedder=HashEmbedder(dim=128)) as talk:
        talk.add_events(household())
        lists = unconstrained_lists(talk, "kettle", 5, moments=True)
        assert set(lists) == {"dense:0", "dense:moments", "bm25"}
        plain = [i for i, _ in talk.dense_search(talk.embed_query("kettle"), 5, NodeKind.EVENT)]
        assert lists["dense:0"] == plain
        assert set(unconstrained_lists(talk, "kettle", 5)) == {"dense:0", "bm25"}
