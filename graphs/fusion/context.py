"""Run-time configuration of the fusion graph (LangGraph Studio shows it as the run form).

Every field carries a description. Fields left at None fall back to the `MEMFUSE_*`
settings (environment / `.env`), and only then to the built-in defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from memory.fusion.candidates import CandidateConfig
from memory.fusion.commit import CommitConfig
from memory.fusion.validator import FusionLimits
from signatures.fusion_offline import FusionPolicyConfig


def _d(text: str) -> dict[str, str]:
    return {"description": text}


@dataclass(kw_only=True)
class FusionContext:
    """How one fusion run reaches its store and decides."""

    data_dir: str | None = field(
        default=None,
        metadata=_d("Directory of the memory store (default: MEMFUSE_DATA_DIR, else .memfuse)."),
    )
    namespace: str | None = field(
        default=None,
        metadata=_d(
            "Store namespace inside the data directory "
            "(default: MEMFUSE_NAMESPACE, else 'default')."
        ),
    )
    chroma_host: str | None = field(
        default=None,
        metadata=_d(
            "Chroma server host for a remote dense index; unset = embedded Chroma under data_dir."
        ),
    )
    chroma_port: int = field(default=8000, metadata=_d("Chroma server port."))
    window_size: int = field(
        default=8,
        metadata=_d("Accumulation zone: how many recently processed events the agent sees."),
    )
    max_tool_turns: int = field(
        default=4,
        metadata=_d("Tool calls the agent may make per event before it must submit a plan."),
    )
    max_searches: int = field(
        default=2,
        metadata=_d(
            "Extra search_memory calls per event (the system's initial search is not counted)."
        ),
    )
    max_pack_lookups: int = field(default=2, metadata=_d("get_pack_members calls per event."))
    policy: Literal["offline", "llm"] | None = field(
        default=None,
        metadata=_d(
            "Who decides: 'offline' (deterministic twin) or 'llm' (DSPy program); "
            "default: 'llm' when an LLM model is configured, else 'offline'."
        ),
    )
    llm_model: str | None = field(
        default=None, metadata=_d("Chat model for the llm policy (default: MEMFUSE_LLM_MODEL).")
    )
    llm_base_url: str | None = field(
        default=None, metadata=_d("OpenAI-compatible endpoint (default: MEMFUSE_LLM_BASE_URL).")
    )
    llm_temperature: float | None = field(
        default=None,
        metadata=_d("Decision temperature (default: MEMFUSE_LLM_TEMPERATURE, paper: 1)."),
    )
    llm_max_tokens: int | None = field(
        default=None,
        metadata=_d("Token limit of one decision (default: MEMFUSE_LLM_MAX_TOKENS, paper: 4096)."),
    )
    max_pack_size: int = field(
        default=12,
        metadata=_d(
            "Members a fused node may hold (the paper's table of fixed values is lost; 12 is ours)."
        ),
    )
    max_removals_per_op: int = field(default=3, metadata=_d("Ids one remove_member may drop."))
    max_operations: int = field(default=6, metadata=_d("Operations one plan may hold."))
    semantic_threshold: float = field(
        default=0.8, metadata=_d("ρ_S: automatic semantic edges need a similarity above this.")
    )
    semantic_max_edges: int = field(
        default=5, metadata=_d("Automatic semantic edges per inserted node (most similar first).")
    )
    event_semantic_edges: bool = field(
        default=True,
        metadata=_d(
            "Also give the inserted event its own semantic edges (the paper: any inserted node)."
        ),
    )
    candidates: dict[str, Any] | None = field(
        default=None,
        metadata=_d("Overrides of the candidate retrieval config (CandidateConfig field names)."),
    )
    policy_config: dict[str, Any] | None = field(
        default=None,
        metadata=_d("Overrides of the offline policy thresholds (FusionPolicyConfig field names)."),
    )
    store: Any = field(
        default=None,
        metadata=_d(
            "An open memory store (Python callers and tests); when set, data_dir is ignored."
        ),
    )
    lm: Any = field(
        default=None,
        metadata=_d(
            "A dspy.LM to decide with (Python callers and tests); overrides the llm_* settings."
        ),
    )
    program: Any = field(
        default=None,
        metadata=_d(
            "A decision program with the FusionAgentProgram call shape (e.g. an optimised one)."
        ),
    )

    def __post_init__(self) -> None:
        env_backed = (
            "data_dir",
            "namespace",
            "policy",
            "llm_model",
            "llm_base_url",
            "llm_temperature",
            "llm_max_tokens",
        )
        if all(getattr(self, name) is not None for name in env_backed):
            return
        from memory.settings import load_settings

        settings = load_settings()
        self.data_dir = self.data_dir or str(settings.data_dir)
        self.namespace = self.namespace or settings.namespace
        self.llm_model = self.llm_model or settings.llm_model
        self.llm_base_url = self.llm_base_url or settings.llm_base_url
        if self.llm_temperature is None:
            self.llm_temperature = settings.llm_temperature
        if self.llm_max_tokens is None:
            self.llm_max_tokens = settings.llm_max_tokens
        if self.policy is None:
            self.policy = "llm" if (self.llm_model or self.lm is not None) else "offline"

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
        """The JSON-safe settings (no injected objects), e.g. for reports."""
        skip = {"store", "lm", "program"}
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}
