from __future__ import annotations

import pytest

from memory.errors import PlanConflictError
from memory.fusion.commit import (
    CommitConfig,
    apply_payload,
    commit_plan,
    fused_id_for,
    make_plan_id,
    record_rejection,
    replay_pending,
    resolve_plan,
)
from memory.fusion.ops import (
    CreateEdge,
    CreateFusionNode,
    FusionPlan,
    RemoveMember,
    UpdateFusionNode,
)
from memory.models import EdgeType, FusedNode

from .scenario import E1, E2, E3, E4, E5, E6, E7, fake_store

UPDATED = "David spilled milk on the table and Emma wiped it with a towel."


def seeded():
    s = fake_store()
    s.add_events([E1, E2, E3, E4, E5, E6, E7])
    s.put_fused(FusedNode.from_members("fused_pack", "David spilled milk on the table.", [E1, E2]))
    return s


UPDATE_PLAN = FusionPlan(
    operations=[
        UpdateFusionNode(fused_id="fused_pack", summary=UPDATED),
        CreateEdge(target_id="e1", reason="the spill made Emma wipe the table"),
    ]
)
NEIGHBORS = [("e6", 0.82), ("e2", 0.79), ("fused_pack", 0.95)]


def test_update_plan_commits_members_version_and_typed_edges() -> None:
    store = seeded()
    report = commit_plan(store, UPDATE_PLAN, E4, "plan_1", neighbors=NEIGHBORS)
    node = store.get_fused("fused_pack")
    assert node.members == ["e1", "e2", "e4"]
    assert node.version == 2 and node.summary == UPDATED
    assert store.has_edge("e4", "fused_pack", EdgeType.BELONG)
    assert store.has_edge("e1", "e4", EdgeType.CAUSAL)
    # summary words {spill, milk, table, towel}: e6 has all four (cos 1.0) and is in the past;
    # e7 is identical but later than e4 (not an existing memory yet); members are skipped.
    semantic = {e.key(): e.weight for e in store.edges.values() if e.type == EdgeType.SEMANTIC}
    assert semantic == {
        ("e6", "fused_pack", "semantic"): pytest.approx(1.0),
        ("e4", "e6", "semantic"): pytest.approx(0.82),  # the event's own neighbour above 0.8
    }
    assert report.status == "done" and report.updated == ["fused_pack"] and report.created == []
    assert report.edges_added == {"causal": 1, "semantic": 2}
    assert report.ops == {"update_fusion_node": 1, "create_edge": 1}
    assert store.plans["plan_1"]["status"] == "done"


def test_create_plan_uses_deterministic_fused_id() -> None:
    store = seeded()
    plan = FusionPlan(operations=[CreateFusionNode(member_ids=["e5", "e4"], summary=UPDATED)])
    plan_id = make_plan_id("e5", plan)
    assert plan_id == make_plan_id("e5", plan) != make_plan_id("e4", plan)
    report = commit_plan(store, plan, E5, plan_id, config=CommitConfig(semantic_max_edges=0))
    fid = fused_id_for(plan_id, 0)
    assert report.created == [fid]
    node = store.get_fused(fid)
    assert (node.members, node.version, node.devices) == (
        ["e4", "e5"],
        1,
        ["cam_kitchen", "speaker_hall"],
    )
    assert store.edge_counts() == {"belong": 4, "causal": 0, "semantic": 0}


def test_remove_then_update_bumps_version_once() -> None:
    store = seeded()
    plan = FusionPlan(
        operations=[
            RemoveMember(fused_id="fused_pack", member_ids=["e2"], summary="David spilled milk."),
            UpdateFusionNode(fused_id="fused_pack", summary=UPDATED),
        ]
    )
    report = commit_plan(store, plan, E4, "plan_rm")
    node = store.get_fused("fused_pack")
    assert (node.members, node.version) == (["e1", "e4"], 2)
    assert not store.has_edge("e2", "fused_pack", EdgeType.BELONG)
    assert store.has_node("e2")  # removal drops the belong edge, never the event
    assert report.removed == {"fused_pack": ["e2"]}


def test_reapplying_a_payload_is_idempotent() -> None:
    store = seeded()
    commit_plan(store, UPDATE_PLAN, E4, "plan_1", neighbors=NEIGHBORS)
    before = store.snapshot()
    payload = store.plans["plan_1"]["payload"]
    again = apply_payload(store, "plan_1", payload, replayed=True)
    assert store.snapshot() == before
    assert again.edges_added == {} and again.replayed


def _clean_end_state():
    store = seeded()
    commit_plan(store, UPDATE_PLAN, E4, "plan_1", neighbors=NEIGHBORS)
    return store.snapshot()


def test_crash_inside_put_fused_is_repaired_by_replay() -> None:
    store = seeded()
    store.fail_next_put_fused = True  # belong edges written, fused node and vector not
    with pytest.raises(RuntimeError, match="injected crash"):
        commit_plan(store, UPDATE_PLAN, E4, "plan_1", neighbors=NEIGHBORS)
    assert store.plan_counts() == {"pending": 1}
    reports = replay_pending(store)
    assert [r.plan_id for r in reports] == ["plan_1"] and reports[0].replayed
    assert store.snapshot() == _clean_end_state()
    assert store.plan_counts() == {"done": 1}


def test_crash_after_logging_is_repaired_by_replay() -> None:
    store = seeded()
    store.log_plan("plan_1", "e4", resolve_plan(store, UPDATE_PLAN, E4, "plan_1", NEIGHBORS))
    assert store.get_fused("fused_pack").members == ["e1", "e2"]  # nothing applied yet
    replay_pending(store)
    assert store.snapshot() == _clean_end_state()


def test_crash_before_marking_done_is_repaired_by_replay(monkeypatch) -> None:
    store = seeded()
    calls = []

    def fail_once(plan_id, status, reason=None):
        calls.append(status)
        if len(calls) == 1:
            raise RuntimeError("crash before mark")
        type(store).mark_plan(store, plan_id, status, reason)

    monkeypatch.setattr(store, "mark_plan", fail_once)
    with pytest.raises(RuntimeError):
        commit_plan(store, UPDATE_PLAN, E4, "plan_1", neighbors=NEIGHBORS)
    replay_pending(store)
    assert store.snapshot() == _clean_end_state()
    assert store.plans["plan_1"]["status"] == "done"


def test_rejection_is_recorded_and_writes_nothing_else() -> None:
    store = seeded()
    before = store.snapshot()
    report = record_rejection(
        store, "plan_bad", "e4", ["op 0 (create_edge): x", "op 1: y"], UPDATE_PLAN
    )
    assert store.snapshot() == before
    assert report.status == "rejected" and report.reasons == ["op 0 (create_edge): x", "op 1: y"]
    assert store.plans["plan_bad"]["status"] == "rejected"
    assert store.plans["plan_bad"]["reason"] == "op 0 (create_edge): x; op 1: y"
    assert store.plans["plan_bad"]["payload"]["plan"]["operations"][0]["op"] == "update_fusion_node"


def test_pending_rejection_replays_as_rejection_only() -> None:
    store = seeded()
    store.log_plan(
        "plan_bad",
        "e4",
        {"format": 1, "kind": "rejected", "event_id": "e4", "plan": None, "reasons": ["bad"]},
    )
    before = store.snapshot()
    replay_pending(store)
    assert store.snapshot() == before and store.plans["plan_bad"]["status"] == "rejected"


def test_agent_semantic_edge_weight_is_the_cosine() -> None:
    store = seeded()
    plan = FusionPlan(operations=[CreateEdge(target_id="e1", edge_type="semantic")])
    commit_plan(store, plan, E4, "plan_sem", config=CommitConfig(event_semantic_edges=False))
    # e4 {table, towel} vs e1 {milk, spill, table}: one shared word -> 1 / sqrt(2 * 3)
    (edge,) = [e for e in store.edges.values() if e.type == EdgeType.SEMANTIC]
    assert (edge.src, edge.dst) == ("e1", "e4")  # from_target: the older memory first
    assert edge.weight == pytest.approx(1 / 6**0.5, abs=1e-6)


def test_a_plan_id_is_never_logged_twice() -> None:
    store = seeded()
    commit_plan(store, UPDATE_PLAN, E4, "plan_1", neighbors=NEIGHBORS)
    with pytest.raises(PlanConflictError, match="plan_1"):
        commit_plan(store, FusionPlan.no_op("again"), E4, "plan_1")
