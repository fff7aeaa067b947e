from __future__ import annotations

import pytest

from memory.fusion.ops import (
    CreateEdge,
    CreateFusionNode,
    FusionPlan,
    NoOp,
    RemoveMember,
    UpdateFusionNode,
)
from memory.fusion.validator import FusionLimits, summary_problem, validate_plan
from memory.models import Edge, EdgeType, FusedNode

from .scenario import E1, E2, E3, E4, E5, fake_store

SUMMARY = "David spilled milk on the kitchen table and Emma wiped it with a towel."
ALL_VISIBLE = ["e1", "e2", "e3", "fused_pack", "fused_single"]


@pytest.fixture
def store():
    s = fake_store()
    s.add_events([E1, E2, E3, E4, E5])
    s.put_fused(FusedNode.from_members("fused_pack", "David spilled milk on the table.", [E1, E2]))
    s.put_fused(FusedNode.from_members("fused_single", "Emma watered the garden.", [E3]))
    return s


def check(store, *ops, visible=ALL_VISIBLE, inspected=None, limits=None, current="e4"):
    plan = FusionPlan(operations=list(ops))
    return validate_plan(store, plan, current, visible, inspected or {}, limits)


def test_valid_plan_has_no_violations(store) -> None:
    assert (
        check(
            store,
            UpdateFusionNode(fused_id="fused_pack", summary=SUMMARY),
            CreateEdge(target_id="e1", reason="the spill caused the wiping"),
        )
        == []
    )
    assert check(store, NoOp(reason="unrelated")) == []
    assert check(store, CreateFusionNode(member_ids=["e4", "e1"], summary=SUMMARY)) == []
    assert check(store, CreateEdge(target_id="fused_pack", edge_type="semantic")) == []


def test_invented_and_unseen_ids_are_rejected(store) -> None:
    assert check(store, CreateEdge(target_id="e99")) == [
        "op 0 (create_edge): id 'e99' was not shown to the agent (invented or unseen)"
    ]
    assert check(store, CreateEdge(target_id="e99"), visible=["e99"]) == [
        "op 0 (create_edge): id 'e99' does not exist"
    ]
    # e3 exists but the agent never saw it
    assert check(store, CreateFusionNode(member_ids=["e3"], summary=SUMMARY), visible=["e1"]) == [
        "op 0 (create_fusion_node): id 'e3' was not shown to the agent (invented or unseen)"
    ]


def test_members_shown_by_a_lookup_are_visible(store) -> None:
    ops = [CreateEdge(target_id="e2")]
    assert check(store, *ops, visible=["fused_pack"], inspected={"fused_pack": ["e1", "e2"]}) == []


def test_edge_between_two_old_memories_is_rejected(store) -> None:
    assert check(store, CreateEdge(source_id="e1", target_id="e2")) == [
        "op 0 (create_edge): connects two old memories 'e1' and 'e2'"
    ]


def test_self_loop_duplicate_and_wrong_kind_edges(store) -> None:
    assert check(store, CreateEdge(target_id="e4")) == ["op 0 (create_edge): self-loop on 'e4'"]
    store.add_edge(Edge(src="e1", dst="e4", type=EdgeType.CAUSAL))
    assert check(store, CreateEdge(target_id="e1")) == [
        "op 0 (create_edge): causal edge 'e1' -> 'e4' already exists"
    ]
    twice = check(store, CreateEdge(target_id="e2"), CreateEdge(target_id="e2"))
    assert twice == ["op 1 (create_edge): causal edge 'e2' -> 'e4' already exists"]
    assert check(store, CreateEdge(target_id="fused_pack")) == [
        "op 0 (create_edge): causal edges join two events; 'fused_pack' is a fused node"
    ]
    assert check(store, CreateEdge(target_id="e2", direction="to_target")) == [
        "op 0 (create_edge): causal edge points back in time ('e4' is later than 'e2')"
    ]


def test_semantic_duplicate_is_detected_in_either_order(store) -> None:
    store.add_edge(Edge(src="e4", dst="e2", type=EdgeType.SEMANTIC, weight=0.9))
    assert check(store, CreateEdge(target_id="e2", edge_type="semantic")) == [
        "op 0 (create_edge): semantic edge 'e2' -> 'e4' already exists"
    ]


def test_create_fusion_node_rules(store) -> None:
    assert check(store, CreateFusionNode(member_ids=["e4"], summary=SUMMARY)) == [
        "op 0 (create_fusion_node): a new fused node needs at least one member besides the"
        + " current event"
    ]
    assert check(store, CreateFusionNode(member_ids=["fused_pack"], summary=SUMMARY)) == [
        "op 0 (create_fusion_node): member 'fused_pack' is a fused node; members are events"
    ]
    too_big = check(
        store,
        CreateFusionNode(member_ids=["e1", "e2"], summary=SUMMARY),
        limits=FusionLimits(max_pack_size=2),
    )
    assert too_big == ["op 0 (create_fusion_node): pack of 3 exceeds the maximum of 2"]
    assert check(store, CreateFusionNode(member_ids=["e1"], summary="")) == [
        "op 0 (create_fusion_node): summary is missing"
    ]


def test_new_pack_may_not_copy_an_existing_one(store) -> None:
    store.put_fused(FusedNode.from_members("fused_copy", "Emma and the garden.", [E3, E4]))
    assert check(store, CreateFusionNode(member_ids=["e3"], summary=SUMMARY)) == [
        "op 0 (create_fusion_node): fused node 'fused_copy' already has exactly these members"
    ]


def test_update_rules(store) -> None:
    assert check(store, UpdateFusionNode(fused_id="e1", summary=SUMMARY)) == [
        "op 0 (update_fusion_node): 'e1' is not a fused node id"
    ]
    assert check(
        store, UpdateFusionNode(fused_id="fused_pack", summary=SUMMARY), visible=["e1"]
    ) == [
        "op 0 (update_fusion_node): id 'fused_pack' was not shown to the agent (invented or unseen)"
    ]
    full = check(
        store,
        UpdateFusionNode(fused_id="fused_pack", summary=SUMMARY),
        limits=FusionLimits(max_pack_size=2),
    )
    assert full == ["op 0 (update_fusion_node): 'fused_pack' is full (2 of 2 members)"]
    store.put_fused(FusedNode.from_members("fused_mine", "Emma wiped the table.", [E4, E5]))
    assert check(
        store, UpdateFusionNode(fused_id="fused_mine", summary=SUMMARY), visible=["fused_mine"]
    ) == ["op 0 (update_fusion_node): the current event already belongs to 'fused_mine'"]
    twice = check(
        store,
        UpdateFusionNode(fused_id="fused_pack", summary=SUMMARY),
        UpdateFusionNode(fused_id="fused_pack", summary=SUMMARY),
    )
    assert twice[0] == "op 1 (update_fusion_node): 'fused_pack' is updated twice in one plan"


def test_removal_before_update_makes_room_in_a_full_pack(store) -> None:
    ops = [
        RemoveMember(fused_id="fused_pack", member_ids=["e2"], summary="David spilled milk."),
        UpdateFusionNode(fused_id="fused_pack", summary=SUMMARY),
    ]
    assert (
        check(
            store,
            *ops,
            inspected={"fused_pack": ["e1", "e2"]},
            limits=FusionLimits(max_pack_size=2),
        )
        == []
    )


def test_remove_member_rules(store) -> None:
    summary = "David spilled milk on the table."
    assert check(
        store, RemoveMember(fused_id="fused_pack", member_ids=["e2"], summary=summary)
    ) == ["op 0 (remove_member): 'fused_pack' was not inspected with get_pack_members"]
    assert check(
        store,
        RemoveMember(fused_id="fused_single", member_ids=["e3"], summary=summary),
        inspected={"fused_single": ["e3"]},
    ) == ["op 0 (remove_member): 'fused_single' is a singleton pack; removing would empty it"]
    inspected = {"fused_pack": ["e1", "e2"]}
    assert check(
        store,
        RemoveMember(fused_id="fused_pack", member_ids=["e1", "e2"], summary=summary),
        inspected=inspected,
        limits=FusionLimits(max_removals_per_op=1),
    ) == [
        "op 0 (remove_member): 2 removals exceed the limit of 1",
        "op 0 (remove_member): removal would leave 'fused_pack' without members",
    ]
    assert check(
        store,
        RemoveMember(fused_id="fused_pack", member_ids=["e2"], summary=summary),
        inspected={"fused_pack": ["e1"]},
    ) == ["op 0 (remove_member): 'e2' was not shown by the look-up of 'fused_pack'"]
    assert check(
        store,
        RemoveMember(fused_id="fused_pack", member_ids=["e4"], summary=summary),
        inspected=inspected,
    ) == ["op 0 (remove_member): the current event cannot be removed"]
    assert check(
        store,
        RemoveMember(fused_id="fused_pack", member_ids=["e1"], summary=""),
        inspected=inspected,
    ) == ["op 0 (remove_member): summary is missing"]


def test_operation_count_is_bounded(store) -> None:
    assert check(store) == ["plan has no operations (use no_op to keep the event atomic)"]
    assert check(store, *[NoOp()] * 7) == ["plan has 7 operations; at most 6"]


def test_current_event_must_be_stored(store) -> None:
    assert check(store, NoOp(), current="nope") == ["current event 'nope' is not a stored event"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("David spilled milk on the kitchen table.", None),
        ("   ", "summary is missing"),
        ("Milk.", "summary is too short (5 < 12 chars)"),
        ("大卫把牛奶洒在厨房的桌子上了，艾玛用毛巾擦干净。", "summary is not English"),
        ("David ha versado la leche sobre la mesa y Emilie la limpia.", "summary is not English"),
        ("Emma wiped it.", None),
        ("x" * 1501, "summary is too long (1501 > 1500 chars)"),
    ],
)
def test_summary_problem(text: str, problem: str | None) -> None:
    assert summary_problem(text, FusionLimits()) == problem
