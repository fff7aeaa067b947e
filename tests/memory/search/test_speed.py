"""A full MemFuse search over a 1,300-event store with every constraint on returns a full,
duplicate-free top-k. Its speed is measured by `memfuse bench-perf`, not asserted here."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta

import numpy as np
import pytest

from memory.models import Edge, EdgeType, FusedNode
from memory.retrieval import MEMFUSE_DEFAULT, RoundPlan, search
from memory.search.plan import CoverageDiversification, TemporalNeighbors, TimeWindow

from .fakes import FakeStore, make_event, unit

WORDS = ["dog", "walk", "park", "coffee", "kitchen", "sleep", "run", "rain", "phone", "call"]


def household(n_events: int = 1300, dim: int = 384, seed: int = 5) -> FakeStore:
    rng = random.Random(seed)
    vectors = np.random.default_rng(seed).normal(size=(n_events + 120, dim))
    store = FakeStore(dim=dim)
    start = datetime(2025, 1, 1)
    events = []
    for i in range(n_events):
        event = make_event(
            f"e{i:04d}",
            start + timedelta(minutes=33 * i),
            " ".join(rng.sample(WORDS, 5)),
            device=rng.choice(["watch", "phone", "cam", "speaker", "tv", "door"]),
            characters=rng.sample(["ann", "bob", "cy"], rng.randint(0, 2)),
        )
        events.append(store.put_event(event, unit(*vectors[i])))
    for i in range(0, n_events - 10, 3):
        store.add_edge(
            Edge(src=events[i].event_id, dst=events[i + 1].event_id, type=EdgeType.CAUSAL)
        )
    for i in range(0, n_events - 20, 11):
        store.add_edge(
            Edge(
                src=events[i].event_id,
                dst=events[i + 7].event_id,
                type=EdgeType.SEMANTIC,
                weight=0.85,
            )
        )
    for j in range(120):
        members = sorted(rng.sample(range(n_events), 6))
        node = FusedNode.from_members(
            f"fused_{j:03d}", " ".join(rng.sample(WORDS, 6)), [events[m] for m in members]
        )
        store.put_fused_with_vector(
            node.node_id, node.summary, node.members, unit(*vectors[n_events + j])
        )
    for k, text in enumerate(
        ["dog walk in the park", "walking the dog", "park visit", "ann outside"]
    ):
        store.set_query(text, unit(*vectors[k * 97]))
    return store


@pytest.fixture(scope="module")
def big() -> FakeStore:
    return household()


PLAN = RoundPlan(
    focus="dog walk in the park",
    semantic_queries=["walking the dog", "park visit", "ann outside"],
    bm25_query="dog walk park",
    time_window=TimeWindow(enabled=True, date=date(2025, 1, 4), confidence=0.8),
    temporal_neighbors=TemporalNeighbors(enabled=True, radius=2, confidence=0.8),
    coverage_diversification=CoverageDiversification(
        enabled=True, dimensions=["device", "user"], confidence=0.9
    ),
)


@pytest.mark.parametrize(
    "plan", [PLAN, RoundPlan.from_query("dog walk in the park")], ids=["full", "plain"]
)
def test_search_on_1300_events_fills_top_k(big: FakeStore, plan: RoundPlan) -> None:
    result = search(big, plan, MEMFUSE_DEFAULT)
    ids = result.event_ids()
    assert len(ids) == 20 and len(set(ids)) == 20
    assert result.elapsed_ms > 0
