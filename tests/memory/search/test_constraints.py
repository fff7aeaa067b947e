"""Temporal neighbours, coverage diversification and timeline mode."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.models import Event
from memory.retrieval import MEMFUSE_DEFAULT, RoundPlan, search
from memory.search.cache import StoreCache
from memory.search.config import GuardConfig
from memory.search.constraints import NOBODY, diversify, temporal_neighbors, timeline_slots
from memory.search.plan import (
    CoverageDiversification,
    SeedQuotas,
    TemporalNeighbors,
    TimelineMode,
)
from memory.search.seeds import temporal_list

from .fakes import FakeStore, make_event, unit

# Constraint mechanics in isolation: the guard, which tops a result up with the plain
# question's hybrid hits, is tested in test_guard.py.
PLAIN = MEMFUSE_DEFAULT.with_(use_bm25=False, use_graph=False, guard=GuardConfig(enabled=False))


def cos_vector(cosine: float) -> object:
    """A unit vector whose cosine to the query (1,0,0,0) is `cosine`."""
    return unit(cosine, (1 - cosine**2) ** 0.5, 0, 0)


# --- coverage diversification ---------------------------------------------------------


@pytest.fixture()
def devices() -> FakeStore:
    store = FakeStore()
    store.set_query("q", unit(1, 0, 0, 0))
    for i, cosine in enumerate([0.99, 0.98, 0.97, 0.96, 0.95, 0.94]):
        store.put_event(
            make_event(f"w{i + 1}", f"2025-01-01T0{i}:00", device="watch"), cos_vector(cosine)
        )
    store.put_event(make_event("c1", "2025-01-01T07:00", device="cam"), cos_vector(0.5))
    store.put_event(make_event("c2", "2025-01-01T08:00", device="cam"), cos_vector(0.4))
    store.put_event(make_event("s1", "2025-01-01T09:00", device="speaker"), cos_vector(0.3))
    return store


def coverage(confidence: float, *dims: str) -> RoundPlan:
    return RoundPlan(
        focus="q",
        coverage_diversification=CoverageDiversification(
            enabled=True, dimensions=list(dims), confidence=confidence
        ),
    )


def test_without_coverage_one_device_takes_every_slot(devices: FakeStore) -> None:
    assert search(devices, "q", PLAIN.with_(top_k=4)).event_ids() == ["w1", "w2", "w3", "w4"]


def test_coverage_spreads_the_slots_over_devices(devices: FakeStore) -> None:
    result = search(devices, coverage(0.8, "device"), PLAIN.with_(top_k=4))
    assert result.event_ids() == ["w1", "c1", "s1", "w2"]


def test_coverage_is_ignored_below_confidence_or_with_constraints_off(devices: FakeStore) -> None:
    config = PLAIN.with_(top_k=4)
    assert search(devices, coverage(0.5, "device"), config).event_ids() == ["w1", "w2", "w3", "w4"]
    off = config.with_(use_constraints=False)
    assert search(devices, coverage(0.9, "device"), off).event_ids() == ["w1", "w2", "w3", "w4"]


def test_coverage_only_looks_as_deep_as_configured(devices: FakeStore) -> None:
    shallow = PLAIN.with_(top_k=4, coverage_depth=1)  # the best 4 are all watch events
    assert search(devices, coverage(0.8, "device"), shallow).event_ids() == ["w1", "w2", "w3", "w4"]


def test_user_coverage_counts_the_least_covered_person_and_requester_goes_first() -> None:
    t = datetime(2025, 1, 1)
    events = {
        "a1": make_event("a1", t, characters=["ann"]),
        "a2": make_event("a2", t, characters=["ann"]),
        "ab": make_event("ab", t, characters=["ann", "bob"]),
        "b1": make_event("b1", t, characters=["bob"]),
        "n1": make_event("n1", t),
    }
    ranked = ["a1", "a2", "ab", "b1", "n1"]
    # a1 covers ann; ab covers bob (his count is 0); n1 covers "nobody"; then b1, because
    # bob (1) is less covered than ann (2) although a2 ranks higher
    assert diversify(ranked, events, ["user"], 4) == ["a1", "ab", "n1", "b1"]
    assert diversify(ranked, events, ["user"], 2, requester="bob") == ["ab", "n1"]


# --- timeline mode --------------------------------------------------------------------


def test_timeline_slots_take_the_best_event_per_bucket() -> None:
    stamps = {"a": "08:00", "b": "08:10", "c": "08:20", "d": "12:00", "e": "16:00"}
    events = {k: make_event(k, f"2025-01-01T{v}") for k, v in stamps.items()}
    ranked = ["a", "b", "c", "d", "e"]
    # span 08:00-16:00 in two 4-hour buckets: d (12:00) opens the second one
    assert timeline_slots(ranked, events, 2) == ["a", "d"]
    window = (datetime(2025, 1, 1, 8), datetime(2025, 1, 1, 10))
    assert timeline_slots(ranked, events, 2, span=window) == ["a"]
    assert timeline_slots(["b", "a"], events, 1) == ["b"]


def test_timeline_mode_reserves_slots_across_the_span() -> None:
    store = FakeStore()
    store.set_query("q", unit(1, 0, 0, 0))
    for name, when, cosine in [
        ("a", "08:00", 0.99),
        ("b", "08:05", 0.98),
        ("c", "08:10", 0.97),
        ("d", "12:00", 0.5),
        ("e", "16:00", 0.4),
    ]:
        store.put_event(make_event(name, f"2025-01-01T{when}"), cos_vector(cosine))
    config = PLAIN.with_(top_k=3, timeline_buckets=3)
    assert search(store, "q", config).event_ids() == ["a", "b", "c"]
    plan = RoundPlan(focus="q", timeline_mode=TimelineMode(enabled=True, confidence=0.7))
    # 08:00-16:00 in three buckets of 2h40: a | d | e
    assert search(store, plan, config).event_ids() == ["a", "d", "e"]


# --- temporal neighbours -------------------------------------------------------------


@pytest.fixture()
def line() -> FakeStore:
    """Five watch events an hour apart; only the middle one matches the query."""
    store = FakeStore()
    store.set_query("q", unit(1, 0, 0, 0))
    for hour, name in enumerate(["n1", "n2", "anchor", "n4", "n5"], start=1):
        vector = unit(1, 0, 0, 0) if name == "anchor" else unit(0, 0, 1, 0)
        store.put_event(make_event(name, f"2025-01-01T0{hour}:00", device="watch"), vector)
    store.put_event(make_event("other", "2025-01-01T03:30", device="cam"), unit(0, 0, 1, 0))
    return store


def neighbors_plan(radius: int, confidence: float = 0.8, keep: int | None = None) -> RoundPlan:
    return RoundPlan(
        focus="q",
        temporal_neighbors=TemporalNeighbors(enabled=True, radius=radius, confidence=confidence),
        seed=SeedQuotas(temporal_neighbor_keep=keep),
    )


def test_neighbours_of_the_top_hit_on_the_same_device(line: FakeStore) -> None:
    config = PLAIN.with_(dense_per_query=1)
    assert search(line, "q", config).event_ids() == ["anchor"]
    result = search(line, neighbors_plan(radius=1), config)
    assert result.event_ids() == ["anchor", "n2", "n4"]
    n2 = result.candidates[1]
    assert n2.trace.neighbor_of == "anchor" and n2.trace.distance == 1
    assert n2.trace.label() == "temporal neighbour of anchor"
    assert n2.score == pytest.approx(0.0 * 0.7 + 0.04)


def test_neighbour_keep_and_radius_come_from_the_plan(line: FakeStore) -> None:
    config = PLAIN.with_(dense_per_query=1)
    result = search(line, neighbors_plan(radius=2, keep=3), config)
    # closest first (n2, n4 at one hour), then the tie at two hours broken by id: n5 stays out;
    # the three neighbours score alike (0.04) and rank by id
    assert result.event_ids() == ["anchor", "n1", "n2", "n4"]
    assert search(line, neighbors_plan(radius=2, confidence=0.4), config).event_ids() == ["anchor"]


def test_neighbours_round_robin_over_anchors_and_skip_known_events() -> None:
    store = FakeStore()
    for name, when, device in [
        ("x1", "01:00", "a"),
        ("A", "02:00", "a"),
        ("x3", "03:00", "a"),
        ("y1", "01:00", "b"),
        ("B", "02:00", "b"),
        ("y3", "03:00", "b"),
    ]:
        store.put_event(make_event(name, f"2025-01-01T{when}", device=device), unit(1, 0, 0, 0))
    cache = StoreCache(store)
    pulled = temporal_neighbors(cache, ["A", "B"], radius=1, keep=3, known={"A", "B", "x1"})
    assert pulled == [("x3", "A"), ("y1", "B"), ("y3", "B")]


def test_neighbours_by_person_cross_devices() -> None:
    store = FakeStore()
    store.put_event(
        make_event("hit", "2025-01-01T10:00", device="watch", characters=["ann"]), unit(1, 0, 0, 0)
    )
    store.put_event(
        make_event("phone", "2025-01-01T10:05", device="phone", characters=["ann"]),
        unit(1, 0, 0, 0),
    )
    store.put_event(
        make_event("bob", "2025-01-01T10:01", device="tv", characters=["bob"]), unit(1, 0, 0, 0)
    )
    pulled = temporal_neighbors(StoreCache(store), ["hit"], radius=1, keep=5, known={"hit"})
    assert pulled == [("phone", "hit")]


def _diversify_by_rescanning(
    ranked: list[str], events: dict[str, Event], dimensions: list[str], k: int
) -> list[str]:
    """The selection as first written: every pick rescans every remaining event's cost."""
    counts: dict[str, Counter[str]] = {d: Counter() for d in dimensions}

    def values(event: Event, dimension: str) -> list[str]:
        return [event.device] if dimension == "device" else list(event.characters) or [NOBODY]

    def cost(event_id: str) -> int:
        event = events[event_id]
        return sum(min(counts[d][v] for v in values(event, d)) for d in dimensions)

    remaining = list(dict.fromkeys(ranked))
    chosen: list[str] = []
    while remaining and len(chosen) < k:
        best = min(range(len(remaining)), key=lambda i: (cost(remaining[i]), i))
        event_id = remaining.pop(best)
        chosen.append(event_id)
        for d in dimensions:
            counts[d].update(values(events[event_id], d))
    return chosen


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["w", "p", "s"]), st.sets(st.sampled_from(["ann", "bob", "cy"]))),
        min_size=0,
        max_size=40,
    ),
    st.sampled_from([["device"], ["user"], ["device", "user"]]),
    st.integers(min_value=0, max_value=45),
)
def test_diversify_picks_what_a_full_rescan_picks(
    rows: list[tuple[str, set[str]]], dimensions: list[str], k: int
) -> None:
    """The heap with costs refreshed when popped makes the picks, in the order, that
    rescanning every remaining event for each pick made (costs only ever rise)."""
    t = datetime(2025, 1, 1)
    events = {
        f"e{i}": make_event(f"e{i}", t, device=device, characters=sorted(people))
        for i, (device, people) in enumerate(rows)
    }
    ranked = list(events)
    assert diversify(ranked, events, dimensions, k) == _diversify_by_rescanning(
        ranked, events, dimensions, k
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(min_value=-3, max_value=3), min_size=1, max_size=30),
    st.integers(min_value=-2, max_value=35),
)
def test_the_window_list_ranks_as_sorting_every_event_would(levels: list[int], quota: int) -> None:
    """Only the events at or above the quota-th best cosine are sorted; the list is the one
    a sort of every event in the window gives, ties (many, here) broken by id."""
    store = FakeStore(dim=2)
    t = datetime(2025, 1, 1)
    ids = []
    for i, level in enumerate(levels):
        event = make_event(f"e{i:02d}", t + timedelta(minutes=i))
        store.put_event(event, unit(1.0, level / 3.0))
        ids.append(event.event_id)
    focus = unit(1.0, 0.5)
    cosines = {i: float(store.vector(i) @ focus) for i in ids}
    expected = sorted(ids, key=lambda i: (-cosines[i], i))[:quota]
    window = (t, t + timedelta(minutes=len(levels)))
    assert temporal_list(StoreCache(store), focus, quota, window) == expected
