"""The fusion candidates' dense searches cost the same however long the memory grows: they
look at the span of the last `recent_events` events (and the packs reaching into it), and a
memory smaller than that is searched whole, exactly as before it had a window.

Real stores (MemoryStore over embedded Chroma, a tiny hashed embedder); the work is counted
as the vector table counts it (`rows_scored`, `ann_queries`), as the lexical index's test
counts postings."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.fusion.candidates import (
    CandidateConfig,
    prime_candidate_searches,
    recent_span,
    retrieve_candidates,
)
from memory.models import Event, FusedNode
from memory.store import MemoryStore
from memory.temporal_index import TemporalIndex
from memory.vector_table import ZONE
from tests.support.embedders import tiny_embedder

START = datetime(2026, 5, 11)
TOPICS = ["milk fridge kitchen", "dog walk park", "fever thermometer", "parcel doorbell"]


def stream(n: int) -> list[Event]:
    """n events, one every 7 minutes, four devices, a few topics."""
    return [
        Event(
            event_id=f"e{i:05d}",
            timestamp=START + timedelta(minutes=7 * i),
            device=f"device_{i % 4}",
            modality="vision",
            location="home",
            description=f"{TOPICS[i % len(TOPICS)]} note {i % 13}",
            characters=("Anna",) if i % 3 == 0 else (),
        )
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, MemoryStore]]:
    opened: dict[int, MemoryStore] = {}
    for size in (600, 1200, 4800):
        store = MemoryStore.open(tmp_path_factory.mktemp(f"s{size}"), embedder=tiny_embedder())
        events = stream(size)
        store.add_events(events)
        for k in range(0, size - 10, 40):  # packs all along the stream
            store.put_fused(
                FusedNode.from_members(f"fused_{k:05d}", TOPICS[k % 4], events[k : k + 3])
            )
        store.flush()
        opened[size] = store
    yield opened
    for store in opened.values():
        store.close()


def work(store: MemoryStore, event: Event, config: CandidateConfig) -> tuple[int, int, int]:
    """Rows scored, ANN queries and rows filtered (kind and time read) for one event."""
    table = store._vectors
    rows, ann, masked = table.rows_scored, table.ann_queries, table.rows_masked
    retrieve_candidates(store, event, config)
    return table.rows_scored - rows, table.ann_queries - ann, table.rows_masked - masked


def test_the_dense_work_per_event_does_not_grow_with_the_memory(
    stores: dict[int, MemoryStore],
) -> None:
    config = CandidateConfig(recent_events=100)
    small, large = (
        work(s, s.get_event(f"e{len(s._events) - 1:05d}"), config)
        for s in (stores[1200], stores[4800])
    )
    assert small[1] == large[1] == 0  # exact scans only, never Chroma's index
    assert large[0] == small[0]  # the same rows at 4,800 events as at 1,200
    assert large[0] <= 2 * (100 + 100 // 40 + 8)  # the window's events and packs, twice
    # the filters read the zones the window meets (memory.vector_table.ZONE rows each), not
    # every row: two searches, each reading at most the last two zones
    assert large[2] <= 2 * 2 * ZONE < 2 * len(stores[4800]._vectors)


def test_a_memory_smaller_than_the_window_is_searched_whole(
    stores: dict[int, MemoryStore],
) -> None:
    store = stores[600]
    last = store.get_event("e00599")
    assert recent_span(store, last.timestamp, 600) is None
    whole = retrieve_candidates(store, last, CandidateConfig(recent_events=600))
    unbounded = retrieve_candidates(store, last, CandidateConfig(recent_events=10**9))
    assert whole == unbounded


def test_the_span_is_the_shortest_holding_the_recent_events(
    stores: dict[int, MemoryStore],
) -> None:
    store = stores[4800]
    end = store.get_event("e04799").timestamp
    span = recent_span(store, end, 100)
    assert span is not None and span[1] == end
    held = store.count_events_between(*span)
    assert held >= 100
    assert store.count_events_between(span[0] + timedelta(minutes=7), end) < 100


class _TimeIndexOnly:
    """What `recent_span` reads of a store, over a real time index."""

    def __init__(self, events: list[Event]) -> None:
        self.index = TemporalIndex()
        for event in events:
            self.index.add(event)

    def count_events_between(self, start: datetime, end: datetime) -> int:
        return self.index.count_between(start, end)

    def nth_latest_time(self, end: datetime, n: int) -> datetime | None:
        return self.index.nth_latest(end, n)


def _span_by_counting(
    store: _TimeIndexOnly, end: datetime, recent: int
) -> tuple[datetime, datetime] | None:
    """The span as it was found before the time lookup: a count of the span per probe."""
    if store.count_events_between(datetime.min, end) <= recent:
        return None
    reach = timedelta(minutes=1)
    while store.count_events_between(end - reach, end) < recent:
        if end - datetime.min <= reach * 2:
            return None
        reach *= 2
    short, long = reach / 2, reach
    while long - short > timedelta(minutes=1):
        middle = short + (long - short) / 2
        if store.count_events_between(end - middle, end) >= recent:
            long = middle
        else:
            short = middle
    return (end - long, end)


@settings(max_examples=200, deadline=None)
@given(
    offsets=st.lists(st.integers(min_value=0, max_value=60 * 24 * 40), min_size=1, max_size=80),
    end_at=st.integers(min_value=-60, max_value=60 * 24 * 41),
    recent=st.integers(min_value=1, max_value=40),
)
def test_the_span_is_the_one_counting_finds(offsets: list[int], end_at: int, recent: int) -> None:
    """Whatever the times (repeats, gaps of weeks, an end before, inside or after them), the
    one-lookup span is the span counting the events of every probe found."""
    events = [
        Event(
            event_id=f"e{i:03d}",
            timestamp=START + timedelta(minutes=m, seconds=7 * (i % 3)),
            device="d",
            modality="vision",
            description="x",
        )
        for i, m in enumerate(offsets)
    ]
    store = _TimeIndexOnly(events)
    end = START + timedelta(minutes=end_at)
    assert recent_span(store, end, recent) == _span_by_counting(store, end, recent)  # type: ignore[arg-type]


def test_the_nth_latest_time_counts_back_from_the_end() -> None:
    index = TemporalIndex()
    for event in stream(10):  # one every 7 minutes
        index.add(event)
    last = START + timedelta(minutes=63)
    assert index.nth_latest(last, 1) == last
    assert index.nth_latest(last, 10) == START
    assert index.nth_latest(last, 11) is None
    assert index.nth_latest(last - timedelta(minutes=1), 1) == last - timedelta(minutes=7)
    with pytest.raises(ValueError):
        index.nth_latest(last, 0)


def test_a_group_is_announced_only_when_every_event_has_a_vector(
    stores: dict[int, MemoryStore],
) -> None:
    """Announcing is an optimisation: an event the store lacks holds nothing back and raises
    nothing (its own fusion reports it), and a stored group is scored ahead."""
    store, events = stores[600], stream(601)
    assert prime_candidate_searches(store, events[-4:-1]) > 0
    assert prime_candidate_searches(store, events[-2:]) == 0  # e00600 was never stored
    assert store.prime_dense_search(np.zeros((0, 8), np.float32), []) == 0  # let go
    assert store._vectors._held is None
