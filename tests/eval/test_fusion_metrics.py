from __future__ import annotations

from pathlib import Path

import pytest

from eval.fusion_metrics import fusion_stats, node_purity, storyline_episode, storyline_event
from memory.models import Edge, EdgeType, Event, FusedNode, parse_event
from memory.store import MemoryStore
from tests.support.embedders import ConstantEmbedder


def ev(event_id: str, minute: int, source: str, episode: str | None, story: str | None) -> Event:
    record = {
        "event_id": event_id,
        "timestamp": f"2024-05-01T08:{minute:02d}:00",
        "device": "cam",
        "modality": "vision",
        "description": f"event {event_id}",
        "source": source,
    }
    if episode:
        record["episode_id"] = episode
    if story:
        record["storyline_event_id"] = story  # an unknown key: parse_event keeps it in metadata
    return parse_event(record)


A1 = ev("a1", 0, "storyline", "ep1", "s1")
A2 = ev("a2", 1, "storyline", "ep1", "s1")
A3 = ev("a3", 2, "storyline", "ep1", "s2")
B1 = ev("b1", 3, "storyline", "ep2", "s3")
R1 = ev("r1", 4, "routine", "bg_day1", None)
R2 = ev("r2", 5, "periodic", "bg_day1", None)


def test_labels() -> None:
    assert (storyline_event(A1), storyline_episode(A1)) == ("s1", "ep1")
    assert (storyline_event(R1), storyline_episode(R1)) == (None, None)  # background episode


def test_node_purity_counts_unlabelled_members_as_impure() -> None:
    assert node_purity([A1, A2, A3], storyline_episode) == 1.0
    assert node_purity([A1, A2, A3], storyline_event) == pytest.approx(2 / 3)
    assert node_purity([A1, B1, R1], storyline_episode) == pytest.approx(1 / 3)
    assert node_purity([R1, R2], storyline_episode) == 0.0
    assert node_purity([], storyline_episode) == 0.0


def test_fusion_stats_on_a_store(tmp_path: Path) -> None:
    store = MemoryStore.open(tmp_path, embedder=ConstantEmbedder())
    events = [A1, A2, A3, B1, R1, R2]
    store.add_events(events)
    store.put_fused(FusedNode.from_members("fused_1", "a pack of ep1", [A1, A2, A3]))
    store.put_fused(FusedNode.from_members("fused_2", "a mixed pack", [A1, B1, R1]))
    store.put_fused(FusedNode.from_members("fused_3", "a routine pack", [R1, R2]))
    for src, dst in [("a1", "a3"), ("a3", "b1"), ("r1", "a1")]:
        store.add_edge(Edge(src=src, dst=dst, type=EdgeType.CAUSAL))
    store.log_plan("p1", "a1", {"kind": "apply"})
    store.mark_plan("p1", "rejected", "bad")
    stats = fusion_stats(store, events)
    assert stats["fused_nodes"] == 3 and stats["mean_members"] == pytest.approx(8 / 3, abs=1e-3)
    assert stats["max_members"] == 3 and stats["singleton_nodes"] == 0
    assert stats["events_in_fused"] == 1.0
    assert stats["edges"] == {"belong": 8, "causal": 3, "semantic": 0}
    assert stats["plan_rejections"] == 1
    assert stats["fusion_purity"] == pytest.approx((1 + 1 / 3 + 0) / 3, abs=1e-4)
    assert stats["segment_purity"] == pytest.approx((2 / 3 + 1 / 3 + 0) / 3, abs=1e-4)
    # the routine pack holds no storyline member: it is the unlabelled third, left out here
    assert stats["unlabelled_share"] == pytest.approx(1 / 3, abs=1e-4)
    assert stats["labelled_purity"] == pytest.approx((1 + 1 / 3) / 2, abs=1e-4)
    assert stats["causal_in_episode"] == pytest.approx(1 / 3, abs=1e-4)
    store.close()


def test_segment_purity_is_none_where_no_event_names_its_happening(tmp_path: Path) -> None:
    # hand-written households label episodes only: their packs have no segment purity
    first, second = ev("h1", 0, "storyline", "ep1", None), ev("h2", 1, "storyline", "ep1", None)
    routine = ev("h3", 2, "routine", "bg_day1", None)
    store = MemoryStore.open(tmp_path, embedder=ConstantEmbedder())
    store.add_events([first, second, routine])
    store.put_fused(FusedNode.from_members("fused_1", "a pack of ep1", [first, second, routine]))
    stats = fusion_stats(store, [first, second, routine])
    assert stats["segment_purity"] is None
    assert stats["fusion_purity"] == pytest.approx(2 / 3, abs=1e-4)
    assert stats["unlabelled_share"] == 0.0 and stats["labelled_purity"] == stats["fusion_purity"]
    store.close()
