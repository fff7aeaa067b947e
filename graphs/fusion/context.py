"""Run-time knobs of the fusion graph (LangGraph Studio's run form).

The shared fields (data dir, namespace, policy, LLM) and the rules for live objects are
`graphs.context.RunContext`'s; this adds the agent's budget, the plan limits and the commit
settings. `program` (a decision program with the FusionAgentProgram call shape, e.g. an
optimiser's student) is a live object, never a form field.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field, fields, replace
from typing import Any

from pydantic import ValidationError

from graphs.context import Hidden, RunContext, about
from memory.errors import ConfigurationError
from memory.fusion.candidates import CandidateConfig
from memory.fusion.commit import CommitConfig
from memory.fusion.validator import FusionLimits
from signatures.fusion_offline import FusionPolicyConfig


@dataclass(kw_only=True)
class FusionContext(RunContext):
    """How one fusion run decides and what its plans may do."""

    window_size: int = field(
        default=8,
        metadata=about("Accumulation zone: how many recently processed events the agent sees."),
    )
    plans_per_commit: int = field(
        default=32,
        metadata=about(
            "A bulk ingest decided offline commits this many events' plans at once (each plan "
            "still atomic and rolled back alone when it fails; a crash loses at most this many "
            "events' fusion, which stay queued and are fused again). 1 commits each plan on "
            "its own; an LLM's decisions always do, so no model call holds the write lock."
        ),
    )
    max_tool_turns: int = field(
        default=4,
        metadata=about("Tool calls the agent may make per event before it must submit a plan."),
    )
    max_searches: int = field(
        default=2,
        metadata=about(
            "Extra search_memory calls per event (the system's initial search is not counted)."
        ),
    )
    max_pack_lookups: int = field(default=2, metadata=about("get_pack_members calls per event."))
    max_pack_size: int = field(
        default=12,
        metadata=about(
            "Members a fused node may hold (the paper's table of fixed values is lost; 12 is ours)."
        ),
    )
    max_removals_per_op: int = field(default=3, metadata=about("Ids one remove_member may drop."))
    max_operations: int = field(default=6, metadata=about("Operations one plan may hold."))
    semantic_threshold: float = field(
        default=0.8, metadata=about("ρ_S: automatic semantic edges need a similarity above this.")
    )
    semantic_max_edges: int = field(
        default=5,
        metadata=about("Automatic semantic edges per inserted node (most similar first)."),
    )
    event_semantic_edges: bool = field(
        default=True,
        metadata=about(
            "Also give the inserted event its own semantic edges (the paper: any inserted node)."
        ),
    )
    candidates: dict[str, Any] | None = field(
        default=None,
        metadata=about(
            "Overrides of the candidate retrieval config (CandidateConfig field names)."
        ),
    )
    policy_config: dict[str, Any] | None = field(
        default=None,
        metadata=about(
            "Overrides of the offline policy thresholds (FusionPolicyConfig field names)."
        ),
    )
    program: InitVar[Hidden] = None

    def __post_init__(self, store: Any, settings: Any, lm: Any, program: Any) -> None:
        super().__post_init__(store, settings, lm)
        self._injected = replace(self._injected, program=program)

    def check(self) -> None:
        super().check()
        if self.plans_per_commit < 1:
            raise ConfigurationError(f"plans_per_commit must be >= 1, got {self.plans_per_commit}")
        for name in (
            "window_size",
            "max_tool_turns",
            "max_searches",
            "max_pack_lookups",
            "semantic_max_edges",
        ):
            if getattr(self, name) < 0:
                raise ConfigurationError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 0.0 <= self.semantic_threshold <= 1.0:
            raise ConfigurationError(
                f"semantic_threshold must be within [0, 1], got {self.semantic_threshold}"
            )
        try:
            self.limits(), self.candidate_config(), self.offline_policy_config()
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"])
            raise ConfigurationError(f"{where}: {problem['msg']}") from None

    # --- the subsystem configs this context implies ---
    def limits(self) -> FusionLimits:
        return FusionLimits(
            max_pack_size=self.max_pack_size,
            max_removals_per_op=self.max_removals_per_op,
            max_operations=self.max_operations,
        )

    def candidate_config(self) -> CandidateConfig:
        return CandidateConfig(**(self.candidates or {}))

    def commit_config(self) -> CommitConfig:
        return CommitConfig(
            semantic_threshold=self.semantic_threshold,
            semantic_max_edges=self.semantic_max_edges,
            event_semantic_edges=self.event_semantic_edges,
        )

    def offline_policy_config(self) -> FusionPolicyConfig:
        return FusionPolicyConfig(**(self.policy_config or {}))

    def describe(self) -> dict[str, Any]:
        """The JSON-safe settings (every field; live objects are not fields), e.g. for reports."""
        return {f.name: getattr(self, f.name) for f in fields(self)}
