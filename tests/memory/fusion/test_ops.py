from __future__ import annotations

import json

import pytest

from memory.errors import InvalidPlanError
from memory.fusion.ops import (
    CreateEdge,
    CreateFusionNode,
    FusionPlan,
    NoOp,
    RemoveMember,
    UpdateFusionNode,
    parse_plan,
)


def test_parse_plan_reads_every_operation_type_in_order() -> None:
    raw = {
        "operations": [
            {"op": "remove_member", "fused_id": "fused_a", "member_ids": ["e1"], "summary": "s"},
            {"op": "update_fusion_node", "fused_id": "fused_a", "summary": "s2"},
            {"op": "create_fusion_node", "member_ids": ["e2"], "summary": "s3"},
            {"op": "create_edge", "target_id": "e3"},
            {"op": "no_op", "reason": "r"},
        ],
        "rationale": "why",
    }
    plan = parse_plan(json.dumps(raw))
    assert [type(o) for o in plan.operations] == [
        RemoveMember,
        UpdateFusionNode,
        CreateFusionNode,
        CreateEdge,
        NoOp,
    ]
    edge = plan.operations[3]
    assert isinstance(edge, CreateEdge)
    assert (edge.edge_type, edge.direction, edge.source_id) == ("causal", "from_target", None)
    assert plan.op_names() == [
        "remove_member",
        "update_fusion_node",
        "create_fusion_node",
        "create_edge",
        "no_op",
    ]


def test_edge_endpoints_follow_direction_or_explicit_source() -> None:
    assert CreateEdge(target_id="old").endpoints("cur") == ("old", "cur")
    assert CreateEdge(target_id="old", direction="to_target").endpoints("cur") == ("cur", "old")
    assert CreateEdge(target_id="b", source_id="a").endpoints("cur") == ("a", "b")


def test_create_fusion_node_others_excludes_current_and_repeats() -> None:
    op = CreateFusionNode(member_ids=["cur", "a", "b", "a"], summary="x")
    assert op.others("cur") == ["a", "b"]


def test_paper_form_is_accepted() -> None:
    raw = {
        "tool": "submit_fusion_plan",
        "plan": {
            "operations": [
                {
                    "type": "update_fusion_node",
                    "fusion_node_id": "fused_x",
                    "add_member_ids": ["cur"],
                    "summary": "s",
                    "reason": "r",
                },
                {
                    "type": "remove_member",
                    "fusion_node_id": "fused_x",
                    "remove_member_ids": ["m"],
                    "summary": "s",
                },
                {
                    "type": "create_edge",
                    "source_id": "a",
                    "target_id": "cur",
                    "edge_type": "causal",
                },
            ]
        },
    }
    plan = parse_plan(raw)
    update, remove, edge = plan.operations
    assert isinstance(update, UpdateFusionNode) and update.fused_id == "fused_x"
    assert isinstance(remove, RemoveMember) and remove.member_ids == ["m"]
    assert isinstance(edge, CreateEdge) and edge.endpoints("cur") == ("a", "cur")


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "expected a JSON object"),
        ({"operations": [{"op": "explode"}]}, "operations.0"),
        ({"operations": [{"op": "update_fusion_node", "summary": "s"}]}, "fused_id"),
        ({"operations": [{"op": "no_op", "colour": "red"}]}, "colour"),
        ({"operations": "no_op"}, "operations"),
    ],
)
def test_malformed_plans_raise_typed_error(raw: object, fragment: str) -> None:
    with pytest.raises(InvalidPlanError) as info:
        parse_plan(raw)  # type: ignore[arg-type]
    assert fragment in str(info.value)
    assert str(info.value).startswith("malformed fusion plan:")


def test_plan_round_trips_through_json() -> None:
    plan = FusionPlan(operations=[CreateEdge(target_id="a", edge_type="semantic"), NoOp()])
    assert parse_plan(plan.model_dump_json()) == plan
