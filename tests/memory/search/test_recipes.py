"""The named recipes behave exactly as their names say (baselines and ablations)."""

from __future__ import annotations

import numpy as np
import pytest

from memory.models import EdgeType, NodeKind
from memory.retrieval import (
    HYBRID_RRF,
    MEMFUSE_DEFAULT,
    MEMFUSE_NO_FUSION,
    MEMFUSE_NO_GRAPH,
    NAIVE_RAG,
    search,
)
from memory.search.config import RECIPES
from memory.search.rrf import fuse_lists

from .fakes import FakeStore, make_event, unit

QUERY = "dog walk park"
VOCAB = ["dog", "walk", "park", "coffee", "kitchen", "sleep", "run", "rain"]


@pytest.fixture()
def store() -> FakeStore:
    rng = np.random.default_rng(7)
    store = FakeStore(dim=8)
    store.set_query(QUERY, unit(1, 1, 0, 0, 0, 0, 0, 0))
    for i in range(40):
        words = " ".join(rng.choice(VOCAB, size=3, replace=False))
        event = make_event(f"e{i:02d}", f"2025-01-01T{i // 4:02d}:{(i % 4) * 15:02d}", words)
        store.put_event(event, unit(*rng.normal(size=8)))
    store.put_fused_with_vector(
        "fused_0", "dog walk park", ["e01", "e02", "e03"], unit(1, 1, 0, 0, 0, 0, 0, 0)
    )
    store.put_fused_with_vector(
        "fused_1", "coffee kitchen", ["e04", "e05"], unit(1, 0.9, 0, 0, 0, 0, 0, 0)
    )
    for i in range(0, 38, 3):
        store.link(f"e{i:02d}", f"e{i + 1:02d}", EdgeType.CAUSAL)
    store.calls.clear()
    return store


def dense_ranking(store: FakeStore, n: int) -> list[str]:
    return [i for i, _ in store.dense_search(store.query_vectors[QUERY], n, kind=NodeKind.EVENT)]


def lexical_ranking(store: FakeStore, n: int) -> list[str]:
    return [i for i, _ in store.lexical_search(QUERY, n, kind=NodeKind.EVENT)]


def test_naive_rag_is_dense_top_k(store: FakeStore) -> None:
    result = search(store, QUERY, NAIVE_RAG)
    assert "lexical" not in store.calls and "links" not in store.calls
    assert store.calls.count("dense:event") == 1 and "dense:all" not in store.calls
    assert result.event_ids() == dense_ranking(store, 20)
    assert result.fused == []


def test_bm25_only_is_lexical_top_k(store: FakeStore) -> None:
    result = search(store, QUERY, "bm25")
    assert not any(c.startswith("dense") for c in store.calls)
    assert "embed" not in store.calls and "links" not in store.calls
    expected = lexical_ranking(store, 30)[:20]
    assert len(expected) == 20 and result.event_ids() == expected
    assert all(c.trace.seed_lists == ["bm25"] for c in result.candidates)


def test_hybrid_is_dense_plus_bm25_rrf_without_graph(store: FakeStore) -> None:
    result = search(store, QUERY, HYBRID_RRF)
    assert "links" not in store.calls and "events_between" not in store.calls
    lists = {"dense:0": dense_ranking(store, 30), "bm25": lexical_ranking(store, 30)}
    expected = [s.node_id for s in fuse_lists(lists, 60, 30)][:20]
    assert result.event_ids() == expected
    assert [c.score for c in result.candidates] == pytest.approx([c.rrf for c in result.candidates])
    assert all(c.trace.distance == 0 for c in result.candidates)


def test_memfuse_default_uses_graph_and_fusion(store: FakeStore) -> None:
    result = search(store, QUERY, MEMFUSE_DEFAULT.with_(top_k=60))  # deep enough to see hops
    assert "links" in store.calls and "dense:fused" in store.calls
    assert any(c.trace.distance > 0 for c in result.candidates)
    assert "fused_0" in result.seeds


def test_memfuse_no_graph_walks_no_edge(store: FakeStore) -> None:
    result = search(store, QUERY, MEMFUSE_NO_GRAPH)
    assert "links" not in store.calls
    assert "fused_0" in result.seeds  # fused nodes still seed, and project to members
    assert all(c.trace.distance == 0 or c.via_fused for c in result.candidates)


def test_memfuse_no_fusion_ignores_fused_nodes_but_keeps_causal_edges(store: FakeStore) -> None:
    result = search(store, QUERY, MEMFUSE_NO_FUSION.with_(top_k=60))  # deep enough to see hops
    assert MEMFUSE_NO_FUSION.use_graph and not MEMFUSE_NO_FUSION.use_fused
    assert "dense:all" not in store.calls and "dense:event" in store.calls
    assert not any(s.startswith("fused_") for s in result.seeds)
    assert result.fused == [] and all(c.via_fused is None for c in result.candidates)
    walked = [c for c in result.candidates if c.trace.path]
    assert walked and all(step.edge == EdgeType.CAUSAL for c in walked for step in c.trace.path)


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_only_memfuse_with_fusion_reads_moments(store: FakeStore, recipe: str) -> None:
    """Moments are fusion's reading of a conversation (`memory.moments`): the baselines and
    the ablations without fusion or without moments never ask for them."""
    search(store, QUERY, recipe)
    reads = "moments" in store.calls
    assert reads == (
        recipe not in {"naive_rag", "bm25", "hybrid", "memfuse_no_fusion", "memfuse_no_moments"}
    )
    assert reads == RECIPES[recipe].use_moments


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_memfuse_drops_lexical_hits_on_common_words_and_the_baselines_do_not(
    store: FakeStore, recipe: str
) -> None:
    """Every BM25L list of a MemFuse recipe (the plan's and the guard's) leaves out the hits
    that share only common words with the question; a baseline is plain BM25L."""
    search(store, QUERY, recipe)
    baseline = recipe in {"naive_rag", "bm25", "hybrid"}
    expected = None if baseline else 0.4
    assert RECIPES[recipe].common_word_share == expected
    # naive_rag has no BM25L list; the dense guard's reserved slots read none either
    lexical_lists = {"naive_rag": 0, "bm25": 1, "hybrid": 1, "memfuse_dense_guard": 1}.get(
        recipe, 2
    )
    assert store.common_shares == [expected] * lexical_lists


def test_at_most_max_fused_packs_contribute_members(store: FakeStore) -> None:
    deep = MEMFUSE_DEFAULT.with_(top_k=60)
    packs = {c.via_fused for c in search(store, QUERY, deep).candidates if c.via_fused}
    assert 1 <= len(packs) <= deep.context.max_fused
    one = deep.with_(context=deep.context.model_copy(update={"max_fused": 1}))
    assert len({c.via_fused for c in search(store, QUERY, one).candidates if c.via_fused}) == 1
