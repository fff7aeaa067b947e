"""The fusion agent's decisions: the offline twin on hand-built records, and the DSPy program
driven by DummyLM (scripted answers)."""

from __future__ import annotations

import json
from datetime import datetime

import dspy
import pytest
from dspy.utils.dummies import DummyLM

from memory.fusion.candidates import CandidateRecord, event_record
from memory.fusion.ops import CreateEdge, CreateFusionNode, FusionPlan, NoOp, UpdateFusionNode
from memory.fusion.summaries import extractive_summary
from memory.models import NodeKind, parse_event
from signatures.fusion import FusionAgentProgram, FusionBudget, ToolStep
from signatures.fusion_offline import FusionPolicyConfig, OfflineFusionPolicy


@pytest.fixture(autouse=True)
def _reset_dspy():
    dspy.settings.configure(lm=None, adapter=None)
    yield
    dspy.settings.configure(lm=None, adapter=None)


def ev(event_id, time, device, text, people, location="kitchen", sim=0.0, packs=(), rare=0.0):
    event = parse_event(
        {
            "event_id": event_id,
            "timestamp": f"2024-05-01T{time}:00",
            "device": device,
            "modality": "vision",
            "location": location,
            "description": text,
            "characters": people,
        }
    )
    return event_record(event, sim, ("dense",), packs, rare)


def pack(node_id, start, end, people, locations, sim, members=2, text="David spilled milk."):
    return CandidateRecord(
        node_id=node_id,
        kind=NodeKind.FUSED,
        timestamp=datetime.fromisoformat(f"2024-05-01T{start}:00"),
        end=datetime.fromisoformat(f"2024-05-01T{end}:00"),
        devices=("cam_kitchen",),
        people=tuple(people),
        locations=tuple(locations),
        text=text,
        similarity=sim,
        member_count=members,
    )


def budget(turns=4, searches=2, lookups=2, max_pack=12):
    return FusionBudget(
        turns_left=turns,
        searches_left=searches,
        lookups_left=lookups,
        max_pack_size=max_pack,
        max_removals_per_op=3,
        max_operations=6,
    )


CURRENT = ev(
    "cur",
    "08:05",
    "speaker_kitchen",
    "Emma asks David to wipe the spilled milk",
    ["David", "Emma"],
    sim=1.0,
)
M1 = ev("m1", "08:00", "cam_kitchen", "David spilled milk on the table", ["David"])
M2 = ev("m2", "08:01", "watch_david", "David says the milk spill is on the table", ["David"])


def decide(candidates, history=(), b=None, config=None, current=CURRENT):
    policy = OfflineFusionPolicy(config)
    return policy(
        accumulation_zone=[],
        current_event=current,
        candidates=list(candidates),
        tool_history=list(history),
        budget=b or budget(),
    )


# --- offline twin -------------------------------------------------------------------------


def test_twin_inspects_a_matching_pack_before_updating_it() -> None:
    target = pack("fused_a", "08:00", "08:01", ["David"], ["kitchen"], sim=0.6)
    first = decide([target])
    assert (first.action, first.fused_id, first.plan) == ("get_pack_members", "fused_a", None)
    lookup = ToolStep(tool="get_pack_members", argument="fused_a", results=[M1, M2])
    second = decide([target], history=[lookup])
    assert second.action == "submit"
    assert second.plan.operations == [
        UpdateFusionNode(
            fused_id="fused_a",
            summary=extractive_summary([M1, M2, CURRENT]),
            reason="same segment as fused_a (sim 0.60)",
        )
    ]


def test_twin_updates_without_lookup_when_budget_is_spent() -> None:
    target = pack("fused_a", "08:00", "08:01", ["David"], ["kitchen"], sim=0.6)
    out = decide([target], b=budget(lookups=0))
    (op,) = out.plan.operations
    assert isinstance(op, UpdateFusionNode) and op.fused_id == "fused_a"
    assert op.summary == (
        "David spilled milk. Then speaker_kitchen observed: "
        "Emma asks David to wipe the spilled milk."
    )


@pytest.mark.parametrize(
    "target",
    [
        pack("fused_far", "05:00", "07:50", ["David"], ["kitchen"], sim=0.9),  # 15 min after end
        pack("fused_place_only", "08:00", "08:01", ["Zoe"], ["kitchen"], sim=0.9),
        pack("fused_dissimilar", "08:00", "08:01", ["David"], ["kitchen"], sim=0.34),
        pack("fused_strangers", "08:00", "08:01", ["Zoe"], ["garage"], sim=0.9),
        pack("fused_full", "08:00", "08:01", ["David"], ["kitchen"], sim=0.9, members=12),
    ],
)
def test_twin_does_not_join_packs_outside_the_segment(target) -> None:
    out = decide([target])
    assert out.action == "submit"
    assert [type(o) for o in out.plan.operations] == [NoOp]


def test_twin_creates_a_pack_from_the_same_moment_on_other_devices() -> None:
    near = ev(
        "near", "08:03", "cam_kitchen", "David and Emma at the table with milk", ["David"], sim=0.5
    )
    same_device = ev(
        "same_dev", "08:04", "speaker_kitchen", "Emma talks about milk", ["Emma"], sim=0.9
    )
    packed = ev(
        "packed",
        "08:04",
        "cam_hall",
        "Emma and David with milk",
        ["Emma"],
        sim=0.9,
        packs=("fused_x",),
    )
    far = ev("far", "07:40", "cam_kitchen", "David pours milk", ["David"], sim=0.4)
    out = decide(
        [near, same_device, packed, far], config=FusionPolicyConfig(causal_min_shared_tokens=99)
    )
    assert out.plan.operations == [
        CreateFusionNode(
            member_ids=["cur", "near"],
            summary=extractive_summary([CURRENT, near]),
            reason="other devices observed the same moment",
        )
    ]


def test_twin_adds_a_causal_edge_from_a_plausible_earlier_cause() -> None:
    cause = ev(
        "cause",
        "06:00",
        "cam_kitchen",
        "David spilled milk while pouring cereal",
        ["David"],
        sim=0.6,
        rare=7.5,
    )
    rarer = ev(
        "rarer_but_old", "01:00", "cam_kitchen", "David bought milk", ["David"], sim=0.6, rare=12.0
    )  # more than 6 hours before
    boilerplate = ev(
        "boiler", "07:00", "phone_david", "Battery 40%, signal 4 bars", ["David"], sim=0.7, rare=1.0
    )
    near_duplicate = ev(
        "dup",
        "07:00",
        "cam_hall",
        "Emma asks David to wipe the spilled milk",
        ["David"],
        location="hall",
        sim=0.97,
        rare=9.0,
    )
    stranger = ev(
        "stranger",
        "07:30",
        "cam_hall",
        "Zoe spilled milk on the table",
        ["Zoe"],
        location="hall",
        sim=0.7,
        rare=9.0,
    )
    out = decide([cause, rarer, boilerplate, near_duplicate, stranger])
    assert out.plan.operations == [
        CreateEdge(
            target_id="cause",
            edge_type="causal",
            direction="from_target",
            reason="earlier event with the same people and shared details",
        )
    ]


def test_twin_keeps_unrelated_events_atomic() -> None:
    other = ev("o", "03:00", "cam_garden", "Emma watered the plants", ["Emma"], "garden", sim=0.1)
    out = decide([other])
    assert [type(o) for o in out.plan.operations] == [NoOp]


def test_person_blind_observations_fuse_by_place_not_by_name() -> None:
    """A motion sensor names nobody: with the evidence anchor it joins the camera that saw the
    same moment in the same room; the person anchor of the first build never fused it."""
    motion = ev("motion", "08:05", "motion_kitchen", "Motion detected in the kitchen", [], sim=1.0)
    camera = ev("cam", "08:04", "cam_kitchen", "David at the kitchen table", ["David"], sim=0.5)
    elsewhere = ev("hall", "08:04", "motion_hall", "Motion in the hallway", [], "hallway", sim=0.6)
    no_causes = {"causal_min_rarity": 99.0}
    out = decide([camera, elsewhere], current=motion, config=FusionPolicyConfig(**no_causes))
    assert [type(o) for o in out.plan.operations] == [CreateFusionNode]
    assert out.plan.operations[0].member_ids == ["motion", "cam"]  # the hallway is elsewhere
    by_person = FusionPolicyConfig(anchor="person", **no_causes)
    assert [
        type(o) for o in decide([camera], current=motion, config=by_person).plan.operations
    ] == [NoOp]


def test_named_people_must_overlap_even_in_the_same_room() -> None:
    emma = ev("emma", "08:04", "cam_kitchen", "Emma making tea", ["Emma"], sim=0.6)
    lily = ev("lily", "08:05", "speaker_kitchen", "Lily asks for a song", ["Lily"], sim=1.0)
    out = decide([emma], current=lily, config=FusionPolicyConfig(causal_min_rarity=99.0))
    assert [type(o) for o in out.plan.operations] == [NoOp]


def test_a_person_blind_reading_elsewhere_needs_shared_rare_details() -> None:
    door = ev("door", "08:05", "contact_back", "Back door opened", [], "back door", sim=1.0)
    shared = ev(
        "cam",
        "08:04",
        "cam_garden",
        "Emma opens the back door",
        ["Emma"],
        "garden",
        sim=0.5,
        rare=7.0,
    )
    plain = shared.model_copy(update={"node_id": "cam2", "rare_overlap": 1.0})
    config = FusionPolicyConfig(causal_min_rarity=99.0)
    assert decide([plain], current=door, config=config).plan.operations[0].__class__ is NoOp
    created = decide([shared], current=door, config=config).plan.operations[0]
    assert isinstance(created, CreateFusionNode) and created.member_ids == ["door", "cam"]


# --- DSPy program with scripted answers -----------------------------------------------------

PLAN = {
    "operations": [{"op": "create_edge", "target_id": "m1", "reason": "spill then wipe"}],
    "rationale": "cause",
}


def run_program(answers, b):
    lm = DummyLM(answers)
    with dspy.context(lm=lm):
        out = FusionAgentProgram()(
            accumulation_zone=[], current_event=CURRENT, candidates=[M1], tool_history=[], budget=b
        )
    return out, lm


def test_program_returns_a_tool_call() -> None:
    out, lm = run_program(
        [{"action": "search_memory", "query": "milk spill", "fused_id": ""}], budget()
    )
    assert (out.action, out.query, out.plan) == ("search_memory", "milk spill", None)
    assert len(lm.history) == 1


def test_program_proposes_after_submit() -> None:
    out, lm = run_program(
        [{"action": "submit", "query": "", "fused_id": ""}, {"plan": json.dumps(PLAN)}], budget()
    )
    assert out.action == "submit"
    assert out.plan == FusionPlan.model_validate(PLAN)
    assert len(lm.history) == 2


def test_program_skips_the_choice_when_no_tool_budget_is_left() -> None:
    out, lm = run_program([{"plan": json.dumps(PLAN)}], budget(turns=0))
    assert out.action == "submit" and out.plan.operations[0].target_id == "m1"
    assert len(lm.history) == 1


def test_program_turns_an_over_budget_tool_call_into_a_plan() -> None:
    out, lm = run_program(
        [{"action": "search_memory", "query": "more", "fused_id": ""}, {"plan": json.dumps(PLAN)}],
        budget(searches=0),
    )
    assert out.action == "submit" and len(lm.history) == 2


def test_instructions_state_the_validator_rules() -> None:
    from signatures.fusion import ChooseFusionAction, ProposeFusionPlan

    for sig in (ChooseFusionAction, ProposeFusionPlan):
        text = sig.instructions
        for phrase in (
            "Never invent",
            "never link two old",
            "singleton",
            "max_removals_per_op",
            "English",
            "same concrete activity",
        ):
            assert phrase in text, (sig.__name__, phrase)
