"""The engine against the real MemoryStore (embedded Chroma, SQLite edges, BM25L index),
with a tiny deterministic embedder so that nothing downloads or loads a model."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from pathlib import Path

import numpy as np
import pytest

from memory.models import Edge, EdgeType, Event, FusedNode, Modality
from memory.retrieval import HYBRID_RRF, MEMFUSE_DEFAULT, RoundPlan, assemble_context, search
from memory.search.cache import StoreCache
from memory.search.config import RECIPES, GuardConfig
from memory.search.plan import TimeWindow
from memory.search.seeds import BM25_LIST, lexical_list, unconstrained_lists

store_module = pytest.importorskip("memory.store")


class HashedWords:
    """Bag of hashed words: same words, same direction; instant and offline."""

    model_id = "test:search-bow-32"
    dim = 32

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                rows[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)


def event(event_id: str, when: str, device: str, text: str, *people: str) -> Event:
    return Event(
        event_id=event_id,
        timestamp=when,
        device=device,
        modality=Modality.HEALTH,
        location="home",
        description=text,
        characters=people,
    )


EVENTS = [
    event(
        "e1",
        "2025-05-01 07:00",
        "watch_ann",
        "Ann's heart rate rises on her morning run in the park",
        "Ann",
    ),
    event(
        "e2",
        "2025-05-01 07:40",
        "phone_ann",
        "Ann logs a five kilometre run in the running app",
        "Ann",
    ),
    event(
        "e3", "2025-05-01 08:00", "cam_kitchen", "Ann drinks a glass of water in the kitchen", "Ann"
    ),
    event("e4", "2025-05-01 12:00", "tv_living", "The living room television plays the news"),
    event("e5", "2025-05-02 07:00", "watch_bob", "Bob sleeps late on Saturday morning", "Bob"),
]


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[object]:
    memory = store_module.MemoryStore.open(tmp_path, embedder=HashedWords())
    memory.add_events(EVENTS)
    memory.add_edge(Edge(src="e1", dst="e3", type=EdgeType.CAUSAL))
    by_id = {e.event_id: e for e in EVENTS}
    memory.put_fused(
        FusedNode.from_members(
            "fused_run", "Ann's morning run in the park", [by_id["e1"], by_id["e2"]]
        )
    )
    yield memory
    memory.close()


def test_memfuse_search_walks_the_real_graph(store: object) -> None:
    one_seed = MEMFUSE_DEFAULT.with_(
        use_bm25=False, dense_per_query=1, guard=GuardConfig(enabled=False)
    )
    result = search(store, "Ann morning run in the park", one_seed)
    # the closest event and, in the packs' own list, the closest summary
    assert result.seeds == ["e1", "fused_run"]
    by_id = {c.node_id: c for c in result.candidates}
    assert set(by_id) == {"e1", "e2", "e3"}
    assert by_id["e1"].via_fused == "fused_run" and by_id["e2"].via_fused == "fused_run"
    assert by_id["e2"].trace.label() == "seed(dense:packs) fused_run → ~belong"
    # e3 is reached from e1 along the stored causal edge e1 -> e3
    path = [(step.edge, step.node_id, step.reverse) for step in by_id["e3"].trace.path]
    assert path == [(EdgeType.CAUSAL, "e3", False)]
    assert by_id["e3"].trace.seed_id == "e1" and by_id["e3"].prior == 0.04
    assert [f.node_id for f in result.fused] == ["fused_run"]
    scores = [c.score for c in result.candidates]
    assert scores == sorted(scores, reverse=True)  # no constraint on: the list is by score


def test_hybrid_on_the_real_store_has_no_graph(store: object) -> None:
    result = search(store, "Ann morning run in the park", HYBRID_RRF)
    assert all(c.trace.distance == 0 and c.via_fused is None for c in result.candidates)
    assert result.fused == [] and not any(s.startswith("fused_") for s in result.seeds)


def test_time_window_and_context_on_the_real_store(store: object) -> None:
    plan = RoundPlan(
        focus="who slept late in the morning",
        time_window=TimeWindow(enabled=True, date=date(2025, 5, 2), confidence=0.9),
    )
    result = search(store, plan, MEMFUSE_DEFAULT.with_(use_graph=False))
    # the window's only event leads; the other days stay reachable (a prior, not a filter)
    assert result.event_ids()[0] == "e5" and result.seeds[0] == "e5"
    assert set(result.event_ids()) == {e.event_id for e in EVENTS}
    plain = search(store, "Ann morning run in the park", MEMFUSE_DEFAULT)
    entries = assemble_context(store, plain.candidates, plain.fused)
    times = [(e.timestamp, e.node_id) for e in entries]
    assert times == sorted(times)
    texts = {e.node_id: e.text for e in entries}
    assert texts["e1"] == EVENTS[0].serialize()


def test_search_on_a_real_1300_event_store_is_fast(tmp_path: Path) -> None:
    words = ["dog", "walk", "park", "coffee", "kitchen", "sleep", "rain", "phone", "call", "door"]
    rng = np.random.default_rng(3)
    events = [
        event(
            f"x{i:04d}",
            f"2025-05-{1 + i // 48:02d} {(i % 48) // 2:02d}:{(i % 2) * 30:02d}",
            f"device_{i % 6}",
            " ".join(rng.choice(words, size=5)),
            ["Ann", "Bob", "Cy"][i % 3],
        )
        for i in range(1300)
    ]
    memory = store_module.MemoryStore.open(tmp_path, embedder=HashedWords())
    try:
        memory.add_events(events)
        for i in range(0, 1290, 5):
            memory.add_edge(
                Edge(src=events[i].event_id, dst=events[i + 1].event_id, type=EdgeType.CAUSAL)
            )
        for j in range(60):
            members = [events[k] for k in range(j * 20, j * 20 + 5)]
            memory.put_fused(
                FusedNode.from_members(
                    f"fused_{j:02d}", " ".join(words[j % 7 : j % 7 + 3]), members
                )
            )
        plan = RoundPlan(
            focus="dog walk in the park",
            semantic_queries=["walking the dog", "park visit"],
            time_window=TimeWindow(enabled=True, date=date(2025, 5, 9), confidence=0.8),
        )
        for query in (plan, "dog walk in the park"):
            ids = search(memory, query, MEMFUSE_DEFAULT).event_ids()
            assert len(ids) == 20 and len(set(ids)) == 20
    finally:
        memory.close()


def test_a_window_is_scored_in_one_gather_as_the_cached_rows_score_it(store: object) -> None:
    """`StoreCache.cosines` (the window list's products) equals `vectors(ids) @ vector` to
    the bit, through a requester's view as through the store, and keeps no row."""
    from memory.access import VisibleStore
    from memory.search.cache import StoreCache

    ids = ["e5", "e1", "e3", "e2", "e4"]
    focus = HashedWords().embed(["Ann runs in the park on a morning"])[0]
    for view in (store, VisibleStore(store, None, as_of=datetime(2025, 5, 3))):
        cache = StoreCache(view)
        products = cache.cosines(ids, focus)
        assert not cache._vectors  # scored, not kept
        expected = StoreCache(view).vectors(ids) @ focus
        assert products.dtype == np.float32 and products.tobytes() == expected.tobytes()


def test_a_turn_sharing_only_its_speakers_name_is_in_no_memfuse_lexical_list(
    tmp_path: Path,
) -> None:
    """On the real store: plain BM25L (the baselines') ranks the speaker's short turns that
    share only his name with the question next to the answer; MemFuse's lexical lists, the
    plan's and the guard's, hold the answer alone."""
    said = [
        ("t1", "Diego", "which one"),
        ("t2", "Gabi", "the taco place near the river"),
        ("t3", "Diego", "PASSED"),
        ("t4", "Gabi", "mom is visiting next week"),
        ("t5", "Diego", "I quit the restaurant to run the truck full time"),
        ("t6", "Gabi", "congratulations on the inspection"),
    ]
    memory = store_module.MemoryStore.open(tmp_path, embedder=HashedWords())
    try:
        memory.add_events(
            [
                event(i, f"2025-05-01 20:0{n}", f"chat_{who.lower()}", f"{who} said: {text}", who)
                for n, (i, who, text) in enumerate(said)
            ]
        )
        question = "Which restaurant did Diego quit?"
        assert memory.common_terms(question, 0.35) == ["diego"]  # in half the turns
        assert memory.common_terms(question, 0.5) == []
        cache = StoreCache(memory)
        assert lexical_list(cache, question, RECIPES["hybrid"]) == ["t5", "t1", "t3"]
        assert lexical_list(cache, question, RECIPES["memfuse"]) == ["t5"]
        guard = unconstrained_lists(
            memory, question, 30, common_share=RECIPES["memfuse"].common_word_share
        )
        assert guard[BM25_LIST] == ["t5"]
    finally:
        memory.close()
