"""The deterministic half of agentic fusion: plan operations, the rule validator, the
crash-safe commit, candidate retrieval and extractive summaries. No LLM is called here;
the agent that proposes plans lives in `signatures.fusion` and `graphs.fusion`.
"""

from memory.fusion.candidates import (
    CandidateConfig,
    CandidateRecord,
    pack_members,
    retrieve_candidates,
    search_memory,
)
from memory.fusion.commit import (
    CommitConfig,
    CommitReport,
    commit_plan,
    fused_id_for,
    make_plan_id,
    record_rejection,
    replay_pending,
)
from memory.fusion.ops import (
    CreateEdge,
    CreateFusionNode,
    FusionPlan,
    NoOp,
    Operation,
    RemoveMember,
    UpdateFusionNode,
    parse_plan,
)
from memory.fusion.rarity import DocumentFrequency, content_tokens, frequencies_for
from memory.fusion.summaries import extractive_summary
from memory.fusion.validator import FusionLimits, validate_plan

__all__ = [
    "CandidateConfig",
    "CandidateRecord",
    "CommitConfig",
    "CommitReport",
    "CreateEdge",
    "CreateFusionNode",
    "DocumentFrequency",
    "FusionLimits",
    "FusionPlan",
    "NoOp",
    "Operation",
    "RemoveMember",
    "UpdateFusionNode",
    "commit_plan",
    "content_tokens",
    "extractive_summary",
    "frequencies_for",
    "fused_id_for",
    "make_plan_id",
    "pack_members",
    "parse_plan",
    "record_rejection",
    "replay_pending",
    "retrieve_candidates",
    "search_memory",
    "validate_plan",
]
