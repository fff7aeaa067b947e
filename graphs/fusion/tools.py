"""The agent's tools, and who decides: the injected program, the DSPy agent (a compiled
one when `signatures.programs` finds it) or the offline twin.

The store, the LM and the programs come from `graphs.resources` (opened once per process).
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

import dspy

from graphs.fusion.context import FusionContext
from graphs.fusion.state import ToolCall
from graphs.resources import Resources
from memory.fusion.candidates import CandidateConfig, CandidateRecord, pack_members, search_memory
from memory.models import Event, is_fused_id
from memory.store_api import MemoryStoreAPI
from signatures.fusion import ToolStep
from signatures.fusion_offline import FusionPolicyConfig, OfflineFusionPolicy


def decision_program(ctx: FusionContext, resources: Resources) -> Any:
    """The injected program, the DSPy agent when the run has an LM, else the offline twin
    (with a tuned policy's thresholds, which the context's own `policy_config` overrides)."""
    if resources.injected.program is not None or resources.lm is not None:
        return resources.program("fusion")
    tuned = resources.fusion_policy().policy
    if not tuned:
        return OfflineFusionPolicy(ctx.offline_policy_config())
    return OfflineFusionPolicy(FusionPolicyConfig(**{**tuned, **(ctx.policy_config or {})}))


def lm_scope(resources: Resources) -> AbstractContextManager[Any]:
    """`dspy.context(lm=...)` when the run has an LM (never the global configure)."""
    return dspy.context(lm=resources.lm) if resources.lm is not None else nullcontext()


def run_tool(
    store: MemoryStoreAPI,
    call: ToolCall,
    current: Event,
    visible: set[str],
    inspected: dict[str, list[str]],
    config: CandidateConfig,
) -> ToolStep:
    """Execute one agent tool call; a bad argument yields an empty result with a note (the turn
    is spent), never an error."""
    if call.tool == "search_memory":
        query = call.argument.strip()
        if not query:
            return ToolStep(tool="search_memory", argument="", note="empty query: nothing searched")
        results = search_memory(store, query, current, config)
        return ToolStep(tool="search_memory", argument=query, results=results)
    fused_id = call.argument.strip()
    if not is_fused_id(fused_id) or fused_id not in visible or not store.has_node(fused_id):
        return ToolStep(
            tool="get_pack_members",
            argument=fused_id,
            note="not a fused node id shown in the candidates: nothing to inspect",
        )
    node = store.get_fused(fused_id)
    if len(node.members) <= 1:  # the paper: never inspect a singleton (its member is a candidate)
        return ToolStep(
            tool="get_pack_members",
            argument=fused_id,
            note="singleton pack: not inspected (turn wasted); it can be joined, not repaired",
        )
    note = "already inspected in this trajectory (turn wasted)" if fused_id in inspected else ""
    members: list[CandidateRecord] = pack_members(store, fused_id, current, config)
    header = f"pack of {len(node.members)} members; summary: {node.summary}"
    return ToolStep(
        tool="get_pack_members",
        argument=fused_id,
        results=members,
        note=f"{header}. {note}".strip(),
    )
