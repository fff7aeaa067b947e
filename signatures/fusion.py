"""The fusion agent's decisions as DSPy signatures, and the program that composes them.

One agent turn either calls a tool (`search_memory`, `get_pack_members`) or submits a plan.
`FusionAgentProgram` and its offline twin `signatures.fusion_offline.OfflineFusionPolicy`
take the same inputs and return the same prediction fields, so the fusion graph does not
care which one decides. The instructions restate the rules the validator enforces: a plan
that breaks one of them is rejected whole, so the model is told them up front.
"""

from __future__ import annotations

from typing import Literal

import dspy
from pydantic import BaseModel, Field

from memory.fusion.candidates import CandidateRecord
from memory.fusion.ops import FusionPlan
from signatures.untrusted import DATA_NOTICE

ToolName = Literal["search_memory", "get_pack_members"]
Action = Literal["search_memory", "get_pack_members", "submit"]


class ToolStep(BaseModel):
    """One executed tool call of the trajectory and what it returned."""

    tool: ToolName
    argument: str = Field(
        description="The query (search_memory) or the fused id (get_pack_members)."
    )
    results: list[CandidateRecord] = Field(default_factory=list, description="Records returned.")
    automatic: bool = Field(default=False, description="Made by the system, not the agent.")
    note: str = Field(default="", description="Why the call was made, or why it returned nothing.")


class FusionBudget(BaseModel):
    """What the agent may still do for this event, and the structural limits a plan must meet."""

    turns_left: int = Field(ge=0, description="Tool calls left before the plan must be submitted.")
    searches_left: int = Field(ge=0, description="search_memory calls left.")
    lookups_left: int = Field(ge=0, description="get_pack_members calls left.")
    max_pack_size: int = Field(ge=2, description="A fused node holding this many members is full.")
    max_removals_per_op: int = Field(ge=1, description="Ids one remove_member may drop.")
    max_operations: int = Field(ge=1, description="Operations one plan may hold.")

    def can_call_tools(self) -> bool:
        return self.turns_left > 0 and (self.searches_left > 0 or self.lookups_left > 0)


_RULES = """
Hard rules (one broken rule rejects the whole plan and nothing is stored):
- Use only ids you were shown: candidates, accumulation-zone events, search results, and the
  members a get_pack_members call listed. Never invent or guess an id.
- Every operation except remove_member must involve the current event; never link two old
  memories to each other. create_edge joins the current event and target_id; causal edges go
  from the earlier event (the cause) to the later one and join two events, not fused nodes.
- create_fusion_node groups the current event (always included) with other visible events;
  update_fusion_node adds the current event to a fused node shown in the candidates.
- A fused node holding max_pack_size members is full: do not update it unless the same plan
  first removes members. A node with one member is a singleton: do not inspect it, and never
  remove from it.
- remove_member only for a pack you inspected with get_pack_members in this trajectory, only
  ids that look-up listed, at most max_removals_per_op ids, and at least one member must stay.
  Remove only members that clearly belong to another concrete event segment, never to make room.
- Summaries (required for create, update and remove) are 1-2 English sentences, about 40-100
  words: who, when, which sources, what concretely happened and the result. For an update, the
  summary describes the whole pack after the change.
- At most max_operations operations; use a single no_op to keep the event atomic.
Fusion standard: fuse only events of the same concrete activity instance or short scene
(several devices observing the same moment, consecutive steps of one activity, a dialogue and
its direct follow-up, evidence before and after one problem). Sharing a topic, a person, a day
or a device is relatedness, not fusion: prefer a causal edge or no_op. When unsure, no_op.
""".strip()


_CHOOSE = """You fuse one newly observed household event into a long-term memory graph. Decide the
next step: call `search_memory` with a new, specific query when the candidates clearly lack
evidence you need; call `get_pack_members` on a fused node when you need its member events
(you are considering joining a full pack, or suspect clear noise in it); otherwise `submit`.
The system already searched once with the event itself; prefer submitting when the visible
evidence suffices, and never repeat a look-up of the same pack."""


class ChooseFusionAction(dspy.Signature):
    __doc__ = _CHOOSE + "\n\n" + _RULES + "\n" + DATA_NOTICE

    accumulation_zone: list[CandidateRecord] = dspy.InputField(
        desc="Recently processed events (sliding window), oldest first."
    )
    current_event: CandidateRecord = dspy.InputField(desc="The new event to fuse.")
    candidates: list[CandidateRecord] = dspy.InputField(
        desc="Related past events and fused nodes "
        "(with member count, time range, subjects, devices)."
    )
    tool_history: list[ToolStep] = dspy.InputField(desc="Tool calls made so far and their results.")
    budget: FusionBudget = dspy.InputField(desc="Calls left and the plan limits.")
    action: Action = dspy.OutputField(desc="search_memory, get_pack_members or submit.")
    query: str = dspy.OutputField(desc="The search query for search_memory; empty otherwise.")
    fused_id: str = dspy.OutputField(
        desc="The fused node id for get_pack_members; empty otherwise."
    )


_PROPOSE = """You fuse one newly observed household event into a long-term memory graph. Submit the
fusion plan: the operations (create_edge, create_fusion_node, update_fusion_node,
remove_member, no_op) that place the current event among the memories you were shown."""


class ProposeFusionPlan(dspy.Signature):
    __doc__ = _PROPOSE + "\n\n" + _RULES + "\n" + DATA_NOTICE

    accumulation_zone: list[CandidateRecord] = dspy.InputField(
        desc="Recently processed events (sliding window), oldest first."
    )
    current_event: CandidateRecord = dspy.InputField(desc="The new event to fuse.")
    candidates: list[CandidateRecord] = dspy.InputField(
        desc="Related past events and fused nodes "
        "(with member count, time range, subjects, devices)."
    )
    tool_history: list[ToolStep] = dspy.InputField(desc="Tool calls made so far and their results.")
    budget: FusionBudget = dspy.InputField(desc="Calls left and the plan limits.")
    plan: FusionPlan = dspy.OutputField(
        desc="The operations, applied in order, and a short rationale."
    )


class FusionAgentProgram(dspy.Module):
    """One agent turn: choose an action; when it is `submit` (or no tool budget is left), propose
    the plan. The graph loops turns and executes the tools between them."""

    def __init__(self) -> None:
        super().__init__()
        self.choose = dspy.Predict(ChooseFusionAction)
        self.propose = dspy.Predict(ProposeFusionPlan)

    def forward(
        self,
        accumulation_zone: list[CandidateRecord],
        current_event: CandidateRecord,
        candidates: list[CandidateRecord],
        tool_history: list[ToolStep],
        budget: FusionBudget,
    ) -> dspy.Prediction:
        inputs = {
            "accumulation_zone": accumulation_zone,
            "current_event": current_event,
            "candidates": candidates,
            "tool_history": tool_history,
            "budget": budget,
        }
        if budget.can_call_tools():
            choice = self.choose(**inputs)
            if choice.action == "search_memory" and budget.searches_left and choice.query.strip():
                return dspy.Prediction(
                    action="search_memory", query=choice.query.strip(), fused_id="", plan=None
                )
            if (
                choice.action == "get_pack_members"
                and budget.lookups_left
                and choice.fused_id.strip()
            ):
                return dspy.Prediction(
                    action="get_pack_members", query="", fused_id=choice.fused_id.strip(), plan=None
                )
        proposal = self.propose(**inputs)
        return dspy.Prediction(action="submit", query="", fused_id="", plan=proposal.plan)
