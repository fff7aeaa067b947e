"""Graph commitment: apply a validated plan so that a crash can never leave it half-applied.

The plan is first *resolved* against the store into absolute post-states (the final fused
nodes with their members, summary and version; the exact edges to add) and that redo record
is written to the store's durable plan log as `pending`. Only then is it applied — inside one
store transaction where the store offers one (`MemoryStore.transaction()`: SQLite and the
in-memory indexes roll back together; Chroma is reconciled from SQLite on open) — and marked
`done` in that same transaction. Applying writes absolute states with
idempotent primitives — `put_fused` is an upsert, `add_edge` ignores duplicates, fused ids
are derived from the plan id — so `replay_pending` can re-apply an interrupted plan on reopen
and reach exactly the state an uninterrupted commit would have reached.

Automatic semantic edges (paper: ρ_S = 0.8): every created or updated fused node is linked
to existing nodes whose embedding similarity to it *exceeds* ρ_S, except its own members
(the belong edge already ties them, so a semantic edge would add nothing). The current event
gets the same treatment from the similarities its candidate retrieval already computed (no
extra search), except the packs it belongs to after the plan. Only past memories count as
"existing": events sorting after the current event (a batch embedded up front) are skipped.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memory.errors import PlanConflictError
from memory.fusion.ops import (
    CreateEdge,
    CreateFusionNode,
    FusionPlan,
    RemoveMember,
    UpdateFusionNode,
)
from memory.models import Edge, EdgeType, Event, FusedNode, is_fused_id, parse_timestamp
from memory.store_api import MemoryStoreAPI

PAYLOAD_FORMAT = 1


class CommitConfig(BaseModel):
    """Knobs of graph commitment."""

    model_config = ConfigDict(frozen=True)

    semantic_threshold: float = Field(
        default=0.8, ge=0.0, le=1.0, description="ρ_S: a semantic edge needs similarity above this."
    )
    semantic_max_edges: int = Field(
        default=5, ge=0, description="Semantic edges added per inserted node (most similar first)."
    )
    semantic_search_n: int = Field(
        default=20, ge=1, description="Neighbours searched per fused node (members are skipped)."
    )
    event_semantic_edges: bool = Field(
        default=True,
        description="Also link the inserted event itself (the paper: any inserted node).",
    )


class CommitReport(BaseModel):
    """What one plan did to the store."""

    plan_id: str
    event_id: str
    status: Literal["done", "rejected"]
    created: list[str] = Field(default_factory=list, description="Fused nodes created.")
    updated: list[str] = Field(default_factory=list, description="Fused nodes updated.")
    removed: dict[str, list[str]] = Field(
        default_factory=dict, description="Members dropped per pack."
    )
    edges_added: dict[str, int] = Field(
        default_factory=dict, description="New causal/semantic edges."
    )
    ops: dict[str, int] = Field(default_factory=dict, description="Operations by type.")
    reasons: list[str] = Field(default_factory=list, description="Violations of a rejected plan.")
    replayed: bool = Field(default=False, description="Applied by replay_pending after a crash.")


def make_plan_id(event_id: str, plan: FusionPlan | None, salt: str = "") -> str:
    """A deterministic id for (event, plan, salt); fused ids derive from it, so a replay
    recreates the same nodes. The graph salts it with the plan log's size, which makes it
    unique per attempt and still reproducible for the same ingest sequence."""
    body = plan.model_dump_json() if plan is not None else ""
    digest = hashlib.sha1(f"{event_id}\n{body}\n{salt}".encode()).hexdigest()[:20]
    return f"plan_{digest}"


def fused_id_for(plan_id: str, op_index: int) -> str:
    """The id of the node the `op_index`-th operation of `plan_id` creates (deterministic)."""
    return "fused_" + hashlib.sha1(f"{plan_id}:{op_index}".encode()).hexdigest()[:16]


def _cosine(store: MemoryStoreAPI, a: str, b: str) -> float:
    return float(np.clip(np.dot(store.vector(a), store.vector(b)), 0.0, 1.0))


def resolve_plan(
    store: MemoryStoreAPI,
    plan: FusionPlan,
    current: Event,
    plan_id: str,
    neighbors: Sequence[tuple[str, float]] = (),
    config: CommitConfig | None = None,
) -> dict[str, Any]:
    """Turn a (validated) plan into the redo record: absolute fused states and exact edges."""
    cfg = config or CommitConfig()
    cid = current.event_id
    nodes: dict[str, dict[str, Any]] = {}  # fused id -> {"members", "summary", "version"}
    created: list[str] = []
    updated: list[str] = []
    removed: dict[str, list[str]] = {}
    edges: list[Edge] = []

    def working(fid: str) -> dict[str, Any]:
        if fid not in nodes:
            node = store.get_fused(fid)
            nodes[fid] = {
                "members": list(node.members),
                "summary": node.summary,
                "version": node.version + 1,
            }
        return nodes[fid]

    for i, op in enumerate(plan.operations):
        if isinstance(op, CreateFusionNode):
            fid = fused_id_for(plan_id, i)
            nodes[fid] = {
                "members": [cid, *op.others(cid)],
                "summary": op.summary.strip(),
                "version": 1,
            }
            created.append(fid)
        elif isinstance(op, UpdateFusionNode):
            node = working(op.fused_id)
            if cid not in node["members"]:
                node["members"].append(cid)
            node["summary"] = op.summary.strip()
            updated.append(op.fused_id)
        elif isinstance(op, RemoveMember):
            node = working(op.fused_id)
            node["members"] = [m for m in node["members"] if m not in set(op.member_ids)]
            node["summary"] = op.summary.strip()
            removed.setdefault(op.fused_id, []).extend(op.member_ids)
            if op.fused_id not in updated:
                updated.append(op.fused_id)
        elif isinstance(op, CreateEdge):
            src, dst = op.endpoints(cid)
            etype = EdgeType(op.edge_type)
            weight = 1.0 if etype == EdgeType.CAUSAL else _cosine(store, src, dst)
            edges.append(Edge(src=src, dst=dst, type=etype, weight=weight))

    fused: list[FusedNode] = []
    for fid, state in nodes.items():
        members = store.get_events(state["members"])
        fused.append(
            FusedNode.from_members(fid, state["summary"], members, version=state["version"])
        )

    own_packs = {n.node_id for n in fused if cid in n.members} | set(store.fused_of(cid))
    own_packs -= {fid for fid, ids in removed.items() if cid in ids}
    if cfg.event_semantic_edges:
        linked = 0
        for node_id, sim in sorted(neighbors, key=lambda p: (-p[1], p[0])):  # ties: by id
            if linked >= cfg.semantic_max_edges:
                break
            if sim > cfg.semantic_threshold and node_id != cid and node_id not in own_packs:
                edges.append(
                    Edge(src=cid, dst=node_id, type=EdgeType.SEMANTIC, weight=min(sim, 1.0))
                )
                linked += 1

    return {
        "format": PAYLOAD_FORMAT,
        "kind": "apply",
        "event_id": cid,
        "horizon": [current.timestamp.isoformat(), cid],
        "plan": plan.model_dump(mode="json"),
        "fused": [n.model_dump(mode="json") for n in fused],
        "edges": [e.model_dump(mode="json") for e in edges],
        "semantic_for": [*created, *[u for u in updated if u not in created]],
        "created": created,
        "updated": updated,
        "removed": removed,
        "ops": dict(Counter(plan.op_names())),
        "config": cfg.model_dump(mode="json"),
    }


def fused_semantic_edges(
    store: MemoryStoreAPI, node: FusedNode, horizon: tuple[datetime, str], cfg: CommitConfig
) -> list[Edge]:
    """Edges from a (just re-embedded) fused node to existing, past, non-member nodes."""
    if cfg.semantic_max_edges == 0:
        return []
    vector = store.vector(node.node_id)
    skip = {node.node_id, *node.members}
    hits = [
        (i, s)
        for i, s in store.dense_search(vector, cfg.semantic_search_n + len(skip))
        if s > cfg.semantic_threshold and i not in skip
    ]
    events = {e.event_id: e for e in store.get_events([i for i, _ in hits if not is_fused_id(i)])}
    out: list[Edge] = []
    for node_id, sim in hits:
        past = is_fused_id(node_id) or (
            node_id in events and (events[node_id].timestamp, node_id) <= horizon
        )
        if past:
            out.append(
                Edge(src=node.node_id, dst=node_id, type=EdgeType.SEMANTIC, weight=min(sim, 1.0))
            )
        if len(out) >= cfg.semantic_max_edges:
            break
    return out


def apply_payload(
    store: MemoryStoreAPI, plan_id: str, payload: dict[str, Any], replayed: bool = False
) -> CommitReport:
    """Apply a logged redo record (idempotent), then mark the plan done."""
    event_id = str(payload.get("event_id", ""))
    if payload.get("kind") == "rejected":
        reasons = [str(r) for r in payload.get("reasons", [])]
        store.mark_plan(plan_id, "rejected", "; ".join(reasons) or None)
        return CommitReport(
            plan_id=plan_id,
            event_id=event_id,
            status="rejected",
            reasons=reasons,
            replayed=replayed,
        )
    cfg = CommitConfig.model_validate(payload.get("config", {}))
    horizon = (parse_timestamp(payload["horizon"][0]), str(payload["horizon"][1]))
    fused = [FusedNode.model_validate(n) for n in payload["fused"]]
    by_id = {n.node_id: n for n in fused}
    added: Counter[str] = Counter()
    with store.transaction():  # one atomic write
        for node in fused:
            store.put_fused(node)
        edges = [Edge.model_validate(raw) for raw in payload["edges"]]
        for fid in payload["semantic_for"]:
            edges.extend(fused_semantic_edges(store, by_id[fid], horizon, cfg))
        for edge in edges:
            if store.add_edge(edge):
                added[edge.type.value] += 1
        store.mark_plan(plan_id, "done")
    return CommitReport(
        plan_id=plan_id,
        event_id=event_id,
        status="done",
        created=list(payload.get("created", [])),
        updated=list(payload.get("updated", [])),
        removed={k: list(v) for k, v in payload.get("removed", {}).items()},
        edges_added=dict(added),
        ops=dict(payload.get("ops", {})),
        replayed=replayed,
    )


def commit_plan(
    store: MemoryStoreAPI,
    plan: FusionPlan,
    current_event: Event,
    plan_id: str,
    *,
    neighbors: Iterable[tuple[str, float]] = (),
    config: CommitConfig | None = None,
) -> CommitReport:
    """Log the resolved plan (pending), apply it, mark it done. The plan must be validated.

    `neighbors`: (node id, similarity) of existing nodes to the current event — the candidate
    retrieval's dense hits — used for the event's own automatic semantic edges.
    """
    payload = resolve_plan(store, plan, current_event, plan_id, list(neighbors), config)
    _log(store, plan_id, current_event.event_id, payload)
    return apply_payload(store, plan_id, payload)


def _log(store: MemoryStoreAPI, plan_id: str, event_id: str, payload: dict[str, Any]) -> None:
    if store.log_plan(plan_id, event_id, payload) is False:
        raise PlanConflictError(plan_id)


def record_rejection(
    store: MemoryStoreAPI,
    plan_id: str,
    event_id: str,
    reasons: Sequence[str],
    plan: FusionPlan | dict[str, Any] | str | None = None,
) -> CommitReport:
    """Keep a rejected plan and its violations in the plan log; nothing else is written."""
    raw: Any = plan.model_dump(mode="json") if isinstance(plan, FusionPlan) else plan
    payload = {
        "format": PAYLOAD_FORMAT,
        "kind": "rejected",
        "event_id": event_id,
        "plan": raw,
        "reasons": list(reasons),
    }
    _log(store, plan_id, event_id, payload)
    return apply_payload(store, plan_id, payload)


def replay_pending(store: MemoryStoreAPI) -> list[CommitReport]:
    """Finish every plan a crash left pending, in log order (call when a store is opened)."""
    return [
        apply_payload(store, plan_id, payload, replayed=True)
        for plan_id, payload in store.pending_plans()
    ]
