"""The agent's tools and the resources they act on: the store, the deciding policy, its LM.

Stores are opened once per process and cached (opening one embeds nothing but loads the
indexes); unfinished plans are replayed the first time a store is opened here.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import dspy

from graphs.fusion.context import FusionContext
from graphs.fusion.state import ToolCall
from memory.errors import ConfigurationError
from memory.fusion.candidates import CandidateConfig, CandidateRecord, pack_members, search_memory
from memory.fusion.commit import replay_pending
from memory.models import Event, is_fused_id
from memory.store_api import MemoryStoreAPI
from signatures.fusion import ToolStep
from signatures.fusion_offline import FusionPolicyConfig, OfflineFusionPolicy
from signatures.lm import lm_from_settings
from signatures.programs import fusion_policy, program_for

_LOCK = threading.Lock()
_STORES: dict[tuple[str, str, str | None, int], MemoryStoreAPI] = {}
_LMS: dict[tuple[Any, ...], dspy.LM] = {}


def store_for(ctx: FusionContext) -> MemoryStoreAPI:
    """The injected store, or the cached store of (data_dir, namespace, chroma)."""
    if ctx.store is not None:
        return ctx.store
    key = (
        str(Path(ctx.data_dir or ".memfuse").resolve()),
        ctx.namespace or "default",
        ctx.chroma_host,
        ctx.chroma_port,
    )
    with _LOCK:
        if key not in _STORES:
            from memory.store import MemoryStore

            store = MemoryStore.open(
                key[0], namespace=key[1], chroma_host=ctx.chroma_host, chroma_port=ctx.chroma_port
            )
            replay_pending(store)
            _STORES[key] = store
        return _STORES[key]


def forget_stores() -> None:
    """Drop the per-process store cache (tests; a CLI that re-opens a data dir)."""
    with _LOCK:
        for store in _STORES.values():
            close = getattr(store, "close", None)
            if callable(close):
                close()
        _STORES.clear()


def policy_for(ctx: FusionContext) -> Any:
    """The decision program: an injected one, the DSPy agent (a compiled one when
    `signatures.programs` finds it) or the offline twin (with a tuned policy's thresholds,
    which the context's own `policy_config` overrides)."""
    if ctx.program is not None:
        return ctx.program
    if ctx.policy == "llm":
        return program_for("fusion")
    tuned = fusion_policy().policy
    if not tuned:
        return OfflineFusionPolicy(ctx.offline_policy_config())
    return OfflineFusionPolicy(FusionPolicyConfig(**{**tuned, **(ctx.policy_config or {})}))


def lm_scope(ctx: FusionContext) -> AbstractContextManager[Any]:
    """`dspy.context(lm=...)` for the llm policy (never the global configure); no-op offline."""
    if ctx.policy != "llm":
        return nullcontext()
    lm = ctx.lm
    if lm is None:
        if not ctx.llm_model:
            raise ConfigurationError(
                "policy 'llm' needs an LLM model (llm_model or MEMFUSE_LLM_MODEL)"
            )
        key = (ctx.llm_model, ctx.llm_base_url, ctx.llm_temperature, ctx.llm_max_tokens)
        with _LOCK:
            if key not in _LMS:
                from memory.settings import load_settings

                settings = load_settings(
                    llm_model=ctx.llm_model,
                    llm_base_url=ctx.llm_base_url,
                    llm_temperature=ctx.llm_temperature,
                    llm_max_tokens=ctx.llm_max_tokens,
                )
                _LMS[key] = lm_from_settings(settings)
            lm = _LMS[key]
    return dspy.context(lm=lm)


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
