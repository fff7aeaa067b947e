"""The fusion plan: the operations a fusion agent may propose for one incoming event.

A plan is data, never code: the validator checks it against the store and the
commit applies it. Every operation except `remove_member` acts on the *current*
event implicitly, so an operation cannot be written that forgets it:

- `create_edge` links the current event and `target_id` (or, in the paper's
  explicit form, `source_id` → `target_id`, one of which must be the current event);
- `create_fusion_node` groups the current event with `member_ids` — the current
  event is always a member and may be listed or left out (it is de-duplicated);
- `update_fusion_node` adds the current event to an existing fused node;
- `remove_member` drops clearly noisy members from a pack the agent inspected;
- `no_op` keeps the event atomic.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from memory.errors import InvalidPlanError


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateEdge(_Op):
    """Link the current event with one visible memory."""

    op: Literal["create_edge"] = "create_edge"
    target_id: str = Field(
        min_length=1,
        description="The other endpoint: a visible event (or fused node for semantic).",
    )
    edge_type: Literal["causal", "semantic"] = Field(
        default="causal",
        description="causal: event → event in time order; semantic: any two related nodes.",
    )
    direction: Literal["from_target", "to_target"] = Field(
        default="from_target",
        description="from_target: target → current (target is the earlier cause); "
        "to_target: current → target.",
    )
    source_id: str | None = Field(
        default=None,
        description="Explicit source (the paper's form); when set, the edge is "
        "source_id → target_id and `direction` is ignored. One endpoint must be the current event.",
    )
    reason: str = Field(default="", description="Why the two are related.")

    def endpoints(self, current_id: str) -> tuple[str, str]:
        """(src, dst) of the edge to store."""
        if self.source_id is not None:
            return self.source_id, self.target_id
        if self.direction == "from_target":
            return self.target_id, current_id
        return current_id, self.target_id


class CreateFusionNode(_Op):
    """Start a new fused node from the current event and other visible events."""

    op: Literal["create_fusion_node"] = "create_fusion_node"
    member_ids: list[str] = Field(
        default_factory=list,
        description="Other visible event ids; the current event is always added "
        "(listing it is allowed).",
    )
    summary: str = Field(
        default="", description="1-2 English sentences: who, when, what happened, result."
    )
    reason: str = Field(default="", description="Why these events form one concrete event segment.")

    def others(self, current_id: str) -> list[str]:
        """Member ids other than the current event, first occurrence order."""
        return [m for m in dict.fromkeys(self.member_ids) if m != current_id]


class UpdateFusionNode(_Op):
    """Add the current event to a visible fused node and rewrite its summary."""

    op: Literal["update_fusion_node"] = "update_fusion_node"
    fused_id: str = Field(min_length=1, description="A fused node id shown in the candidates.")
    summary: str = Field(default="", description="The summary of the whole pack after the update.")
    reason: str = Field(default="", description="Why the current event belongs to this segment.")


class RemoveMember(_Op):
    """Drop a few clearly noisy members of an inspected pack (belong edges only; events stay)."""

    op: Literal["remove_member"] = "remove_member"
    fused_id: str = Field(min_length=1, description="A pack inspected with get_pack_members.")
    member_ids: list[str] = Field(
        default_factory=list, description="Members to drop, as shown by the look-up."
    )
    summary: str = Field(default="", description="The summary of the remaining pack.")
    reason: str = Field(default="", description="Why the removed members break the segment.")


class NoOp(_Op):
    """Keep the current event atomic."""

    op: Literal["no_op"] = "no_op"
    reason: str = Field(default="", description="Why neither fusion nor an edge is warranted.")


Operation = Annotated[
    CreateEdge | CreateFusionNode | UpdateFusionNode | RemoveMember | NoOp,
    Field(discriminator="op"),
]
OP_NAMES: tuple[str, ...] = (
    "create_edge",
    "create_fusion_node",
    "update_fusion_node",
    "remove_member",
    "no_op",
)


# The paper's prompt names fields differently; a model primed on it may answer that way.
_FIELD_ALIASES = {
    "type": "op",
    "fusion_node_id": "fused_id",
    "remove_member_ids": "member_ids",
}


def _normalise_op(raw: Any) -> Any:
    if not isinstance(raw, dict):
        return raw
    out = {_FIELD_ALIASES.get(k, k): v for k, v in raw.items()}
    if out.get("op") == "update_fusion_node":
        out.pop("add_member_ids", None)  # always just the current event
    if out.get("op") == "create_edge" and out.get("source_id") in ("", None):
        out.pop("source_id", None)
    return out


class FusionPlan(BaseModel):
    """What the agent submits for one event: an ordered list of operations."""

    model_config = ConfigDict(extra="forbid")

    operations: list[Operation] = Field(default_factory=list, description="Applied in order.")
    rationale: str = Field(default="", description="Short overall justification.")

    @model_validator(mode="before")
    @classmethod
    def _accept_paper_form(cls, data: Any) -> Any:
        """Unwrap {"tool": ..., "plan": {...}} and rename the paper's field names."""
        if (
            isinstance(data, dict)
            and "operations" not in data
            and isinstance(data.get("plan"), dict)
        ):
            data = data["plan"]
        if isinstance(data, dict) and isinstance(data.get("operations"), list):
            data = {k: v for k, v in data.items() if k != "tool"}
            data["operations"] = [_normalise_op(o) for o in data["operations"]]
        return data

    def op_names(self) -> list[str]:
        return [o.op for o in self.operations]

    @classmethod
    def no_op(cls, reason: str) -> FusionPlan:
        return cls(operations=[NoOp(reason=reason)], rationale=reason)


_PLAN = TypeAdapter(FusionPlan)


def parse_plan(data: FusionPlan | dict[str, Any] | str) -> FusionPlan:
    """Read a plan from a model, a dict or JSON text; InvalidPlanError on anything malformed."""
    if isinstance(data, FusionPlan):
        return data
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise InvalidPlanError(f"not JSON ({exc.msg} at position {exc.pos})") from None
    if not isinstance(data, dict):
        raise InvalidPlanError(
            f"expected a JSON object with 'operations', got {type(data).__name__}"
        )
    try:
        return _PLAN.validate_python(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "<plan>"
        raise InvalidPlanError(f"{where}: {err['msg']}") from None
