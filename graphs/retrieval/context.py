"""Run-time configuration of the retrieval controller (shown as a form in LangGraph Studio).

The programmatic-only fields (`store`, `lm`, `settings`) let the benchmark and tests
inject an open store, a DSPy LM and settings; Studio leaves them empty and the graph
opens the store under `data_dir`. Fields left at None fall back to the `MEMFUSE_*`
settings, read only when needed (an injected store never touches the environment).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from memory.errors import ConfigurationError, UnknownRecipeError
from memory.search.config import RECIPES

Policy = Literal["auto", "offline", "llm"]
Backfill = Literal["history", "score"]


@dataclass(kw_only=True)
class RetrievalContext:
    """Knobs of one retrieval run."""

    data_dir: str | None = field(
        default=None,
        metadata={"description": "Directory of the memory store (default: MEMFUSE_DATA_DIR)."},
    )
    namespace: str | None = field(
        default=None,
        metadata={"description": "Store namespace in the data directory (default: "
                  "MEMFUSE_NAMESPACE, else 'default')."},
    )
    chroma_host: str | None = field(
        default=None,
        metadata={"description": "Chroma server host (default: MEMFUSE_CHROMA_HOST; unset = "
                  "embedded Chroma under data_dir)."},
    )
    chroma_port: int | None = field(
        default=None, metadata={"description": "Chroma server port (default: MEMFUSE_CHROMA_PORT)."}
    )
    recipe: str = field(
        default="memfuse",
        metadata={"description": f"Search recipe for every round: one of {sorted(RECIPES)}."},
    )
    k: int = field(default=20, metadata={"description": "Events in the final context."})
    min_rounds: int = field(
        default=2, metadata={"description": "Rounds before the judge may stop (paper: 2)."}
    )
    max_rounds: int = field(default=5, metadata={"description": "Hard cap on rounds (paper: 5)."})
    use_controller: bool = field(
        default=True,
        metadata={"description": "Multi-round judged loop; off = one search round (w/o AR)."},
    )
    use_constraints: bool = field(
        default=True,
        metadata={"description": "Honour plan constraints; off = rewritten queries only (w/o RC)."},
    )
    policy: Policy = field(
        default="auto",
        metadata={
            "description": "Who plans and judges: llm, offline, or auto (llm when one is configured)."
        },
    )
    backfill: Backfill = field(
        default="history",
        metadata={"description": "Order of the back-fill after the judged ids: history (as the "
                  "searches found them, round by round) or score (best score across rounds)."},
    )
    store: Any = field(
        default=None,
        metadata={"description": "An open MemoryStore (programmatic callers only)."},
    )
    lm: Any = field(
        default=None, metadata={"description": "A DSPy LM to use (programmatic callers only)."}
    )
    settings: Any = field(
        default=None,
        metadata={"description": "MemFuseSettings to use instead of the environment."},
    )

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ConfigurationError(f"k must be at least 1, got {self.k}")
        if self.min_rounds < 1:
            raise ConfigurationError(f"min_rounds must be at least 1, got {self.min_rounds}")
        if self.max_rounds < self.min_rounds:
            raise ConfigurationError(
                f"max_rounds ({self.max_rounds}) must be at least min_rounds ({self.min_rounds})"
            )
        if self.policy not in ("auto", "offline", "llm"):
            raise ConfigurationError(f"policy must be auto, offline or llm, got {self.policy!r}")
        if self.backfill not in ("history", "score"):
            raise ConfigurationError(f"backfill must be history or score, got {self.backfill!r}")
        if self.recipe not in RECIPES:
            raise UnknownRecipeError(self.recipe, sorted(RECIPES))
