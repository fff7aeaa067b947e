"""The fusion agent's deterministic twin: same inputs and outputs as `FusionAgentProgram`.

It reads only what the agent is shown (the candidate records and tool results) and decides
with explicit, tunable thresholds (`FusionPolicyConfig`):

1. *update* the most similar fused node whose time range the event extends by at most
   `segment_gap_minutes`, that is anchored to it (`_anchored`: a shared person, or for a
   person-blind observation the same place or shared rare details), is similar enough and
   not full — after one `get_pack_members` look-up (when budget remains) so that the new summary
   is written from the members themselves;
2. otherwise *create* a fused node with events from OTHER devices that observed the same
   moment (within `same_moment_minutes`, anchored, similar enough);
3. in addition, add one *causal* edge from an earlier event (within `causal_window_hours`)
   that is anchored to and shares rare words with the current event and is similar but not a
   near-duplicate reading;
4. otherwise *no_op*.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

import dspy
from pydantic import BaseModel, ConfigDict, Field

from memory.fusion.candidates import CandidateRecord
from memory.fusion.ops import (
    CreateEdge,
    CreateFusionNode,
    FusionPlan,
    NoOp,
    Operation,
    UpdateFusionNode,
)
from memory.fusion.summaries import extractive_summary
from signatures.fusion import FusionBudget, ToolStep


class FusionPolicyConfig(BaseModel):
    """Every threshold of the offline fusion policy (to be tuned on MemFuseBench).

    Defaults come from a first look at one synthetic scenario: a shared *person* is by far
    the strongest sign that two nearby observations belong to one storyline (a shared place
    or a similar text is common among unrelated background logs), and a cause shares rare
    words with its effect (see `memory.fusion.rarity`). The fusion grid's winner (0.45 / 5 /
    0.4 for `update_min_similarity` / `same_moment_minutes` / `create_min_similarity`, in
    programs/fusion_policy.json) raised purity but lowered downstream evidence recall on dev
    and on the full benchmark's fusion questions, so it is not the default: load it with
    MEMFUSE_FUSION_POLICY when purer packs matter more than recall.
    """

    model_config = ConfigDict(frozen=True)

    # what makes two memories one segment
    anchor: Literal["person", "person_or_place", "evidence"] = Field(
        default="evidence",
        description="What fused memories must share besides time and text. person: a person "
        "(the first build; person-blind sensors never fuse); person_or_place: a person or a "
        "place; evidence: a person when both name people, otherwise (a motion, door or "
        "thermostat reading names nobody) the same place or shared rare details.",
    )
    blind_min_rarity: float = Field(
        default=6.0,
        ge=0,
        description="With the evidence anchor, rare-word overlap (Σ idf) that ties a person-blind "
        "observation to another one at a different place.",
    )
    # update an existing pack
    segment_gap_minutes: float = Field(
        default=10.0, ge=0, description="How far outside a pack's time range the event may fall."
    )
    update_min_similarity: float = Field(
        default=0.35, ge=-1, le=1, description="Min cosine between the event and the pack summary."
    )
    inspect_before_update: bool = Field(
        default=True, description="Look up the pack's members first, to summarise from them."
    )
    # create a new pack from the same moment seen by other devices
    same_moment_minutes: float = Field(
        default=10.0, ge=0, description="Max time distance of a companion event."
    )
    create_min_similarity: float = Field(
        default=0.3, ge=-1, le=1, description="Min cosine between the event and a companion."
    )
    create_max_members: int = Field(default=6, ge=2, description="Size cap of a new pack.")
    skip_packed_companions: bool = Field(
        default=True, description="Ignore companions already in a pack (that pack is the place)."
    )
    # causal edge
    causal_window_hours: float = Field(
        default=6.0, ge=0, description="How far back a cause may be."
    )
    causal_min_rarity: float = Field(
        default=6.0, ge=0, description="Min rare-word overlap (Σ idf) between cause and effect."
    )
    causal_min_similarity: float = Field(
        default=0.5, ge=-1, le=1, description="Min cosine to a cause."
    )
    causal_max_similarity: float = Field(
        default=0.95,
        ge=-1,
        le=1,
        description="Above this the two are repeated readings, not cause/effect.",
    )
    max_causal_edges: int = Field(default=1, ge=0, description="Causal edges per event.")
    summary_terms: int = Field(default=6, ge=0, description="Shared details listed in a summary.")


class OfflineFusionPolicy:
    """Deterministic stand-in for `FusionAgentProgram` (same call shape, same prediction)."""

    def __init__(self, config: FusionPolicyConfig | None = None):
        self.config = config or FusionPolicyConfig()

    def __call__(self, **inputs: object) -> dspy.Prediction:
        return self.forward(**inputs)  # type: ignore[arg-type]

    def forward(
        self,
        accumulation_zone: list[CandidateRecord],
        current_event: CandidateRecord,
        candidates: list[CandidateRecord],
        tool_history: list[ToolStep],
        budget: FusionBudget,
    ) -> dspy.Prediction:
        cfg = self.config
        visible = self._visible(candidates, tool_history)
        inspected = {s.argument: s.results for s in tool_history if s.tool == "get_pack_members"}
        pack = self._pack_to_join(current_event, visible, budget)
        wants_lookup = (
            pack is not None
            and cfg.inspect_before_update
            and pack.node_id not in inspected
            and pack.member_count > 1
            and budget.lookups_left > 0
            and budget.turns_left > 0
        )
        if pack is not None and wants_lookup:
            return dspy.Prediction(
                action="get_pack_members", query="", fused_id=pack.node_id, plan=None
            )
        ops: list[Operation] = []
        joined: set[str] = set()
        if pack is not None:
            members = [
                r for r in inspected.get(pack.node_id, []) if r.node_id != current_event.node_id
            ]
            summary = (
                self._summary([*members, current_event])
                if members
                else self._grown_summary(pack, current_event)
            )
            ops.append(
                UpdateFusionNode(
                    fused_id=pack.node_id,
                    summary=summary,
                    reason=f"same segment as {pack.node_id} (sim {pack.similarity:.2f})",
                )
            )
            joined = {r.node_id for r in members}
        else:
            companions = self._companions(current_event, visible)
            if companions:
                ops.append(
                    CreateFusionNode(
                        member_ids=[current_event.node_id, *(c.node_id for c in companions)],
                        summary=self._summary([current_event, *companions]),
                        reason="other devices observed the same moment",
                    )
                )
                joined = {c.node_id for c in companions}
        for cause in self._causes(current_event, visible, exclude=joined):
            ops.append(
                CreateEdge(
                    target_id=cause.node_id,
                    edge_type="causal",
                    direction="from_target",
                    reason="earlier event with the same people and shared details",
                )
            )
        if not ops:
            ops.append(
                NoOp(reason="no same-segment pack, same-moment observation or plausible cause")
            )
        plan = FusionPlan(
            operations=ops[: budget.max_operations], rationale="offline fusion policy"
        )
        return dspy.Prediction(action="submit", query="", fused_id="", plan=plan)

    # --- the three decisions ---
    @staticmethod
    def _visible(
        candidates: list[CandidateRecord], history: list[ToolStep]
    ) -> list[CandidateRecord]:
        """Candidates first, then tool results (first sighting wins: a search result's
        similarity is to its query, not to the current event)."""
        seen: dict[str, CandidateRecord] = {}
        for record in [*candidates, *(r for s in history for r in s.results)]:
            seen.setdefault(record.node_id, record)
        return list(seen.values())

    def _anchored(self, event: CandidateRecord, other: CandidateRecord) -> bool:
        """Do the current event and a candidate share who or where, not only when?

        Real person-blind sensors (motion, contact, thermostat, lights) carry no names, so
        under the `evidence` anchor the person test applies only when both sides name
        people; otherwise the place, or rare details they share, must tie them.
        """
        if set(event.people) & set(other.people):
            return True
        same_place = bool(set(event.locations) & set(other.locations))
        if self.config.anchor == "person_or_place":
            return same_place
        if self.config.anchor == "person" or (event.people and other.people):
            return False
        return same_place or other.rare_overlap >= self.config.blind_min_rarity

    def _pack_to_join(
        self, event: CandidateRecord, visible: list[CandidateRecord], budget: FusionBudget
    ) -> CandidateRecord | None:
        cfg = self.config
        gap = timedelta(minutes=cfg.segment_gap_minutes)
        best: CandidateRecord | None = None
        for r in visible:
            if not r.is_fused or r.node_id in event.packs or r.member_count >= budget.max_pack_size:
                continue
            if not (r.timestamp - gap <= event.timestamp <= (r.end or r.timestamp) + gap):
                continue
            if r.similarity < cfg.update_min_similarity:
                continue
            if not self._anchored(event, r):
                continue
            if best is None or (r.similarity, r.node_id) > (best.similarity, best.node_id):
                best = r
        return best

    def _companions(
        self, event: CandidateRecord, visible: list[CandidateRecord]
    ) -> list[CandidateRecord]:
        cfg = self.config
        window = timedelta(minutes=cfg.same_moment_minutes)
        found = [
            r
            for r in visible
            if not r.is_fused
            and r.node_id != event.node_id
            and set(r.devices).isdisjoint(event.devices)
            and abs(r.timestamp - event.timestamp) <= window
            and r.similarity >= cfg.create_min_similarity
            and self._anchored(event, r)
            and not (cfg.skip_packed_companions and r.packs)
        ]
        found.sort(key=lambda r: (abs(r.timestamp - event.timestamp), -r.similarity, r.node_id))
        return found[: cfg.create_max_members - 1]

    def _causes(
        self, event: CandidateRecord, visible: list[CandidateRecord], exclude: set[str]
    ) -> list[CandidateRecord]:
        cfg = self.config
        if cfg.max_causal_edges == 0:
            return []
        scored: list[tuple[float, float, str, CandidateRecord]] = []
        for r in visible:
            if r.is_fused or r.node_id == event.node_id or r.node_id in exclude:
                continue
            age = event.timestamp - r.timestamp
            if not timedelta(0) < age <= timedelta(hours=cfg.causal_window_hours):
                continue
            if not self._anchored(event, r):
                continue
            if not cfg.causal_min_similarity <= r.similarity <= cfg.causal_max_similarity:
                continue
            if r.rare_overlap >= cfg.causal_min_rarity:
                scored.append((r.rare_overlap, r.similarity, r.node_id, r))
        scored.sort(key=lambda t: (-t[0], -t[1], t[2]))
        return [t[3] for t in scored[: cfg.max_causal_edges]]

    # --- summaries ---
    def _summary(self, members: list[CandidateRecord]) -> str:
        return extractive_summary(members, max_terms=self.config.summary_terms)

    @staticmethod
    def _grown_summary(pack: CandidateRecord, event: CandidateRecord) -> str:
        """Without a look-up: the old summary plus the new observation (both stay evidence)."""
        old = pack.text.strip().rstrip(".")
        if len(old) > 900:  # keep the summary bounded however often the pack grows
            old = old[:897].rstrip() + "..."
        return f"{old}. Then {', '.join(event.devices)} observed: {event.text.strip().rstrip('.')}."
