"""Forgetting: remove events from every store and re-fuse the packs that lose members.

A forget is one atomic change of the memory graph: the events' rows, edges and index
entries go, every pack that listed one of them is written again from the members it has
left (summary rewritten by the fusion layer's pack summariser, LLM or offline twin, so it
stops quoting what was forgotten; re-embedded; its semantic edges recomputed with the
commit rules new packs get) or removed when fewer than two members remain (a pack of one
is just its event). Either all of that commits or none of it. Only then are the bytes
scrubbed: deleted vectors from the vector store's files, cached embeddings nobody still
uses, the WAL. The plan is computed before anything is written, so a dry run shows
exactly what a real run does.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from memory.audit_outbox import audited_as
from memory.fusion.commit import CommitConfig, fused_semantic_edges
from memory.models import EdgeType, FusedNode
from memory.store_api import MemoryStoreAPI
from signatures.pack_summary import pack_summary

#: A pack keeps existing only with at least this many members left.
MIN_PACK_MEMBERS = 2
_LAST_ID = "\U0010ffff"  # sorts after every id: a re-fused pack's horizon is its last member


class PackChange(BaseModel):
    """What a forget does to one pack."""

    fused_id: str
    action: str = Field(
        description="'refused' (written again from its remaining members) or "
        "'removed' (fewer than two left)."
    )
    members_before: int
    members_after: int
    decided_by: str = Field(default="", description="Who wrote the new summary.")


class ForgetReport(BaseModel):
    """What a forget removed (ids only: the report may be printed or logged)."""

    event_ids: list[str] = Field(description="The forgotten events.")
    packs: list[PackChange] = Field(default_factory=list)
    edges_removed: int = 0
    plans_removed: int = 0
    scrubbed: dict[str, int] = Field(default_factory=dict)
    dry_run: bool = False
    seconds: float = 0.0


def plan_forget(
    store: MemoryStoreAPI, event_ids: Sequence[str], lm: Any | None = None
) -> tuple[list[PackChange], dict[str, FusedNode | None]]:
    """The packs a forget touches and their new state (None: removed), summaries written."""
    doomed = set(event_ids)
    for event_id in doomed:
        store.get_event(event_id)  # NodeNotFoundError before anything is planned
    changes: list[PackChange] = []
    new_state: dict[str, FusedNode | None] = {}
    for fused_id in sorted({f for i in doomed for f in store.fused_of(i)}):
        node = store.get_fused(fused_id)
        remaining = [m for m in node.members if m not in doomed]
        if len(remaining) < MIN_PACK_MEMBERS:
            new_state[fused_id] = None
            changes.append(
                PackChange(
                    fused_id=fused_id,
                    action="removed",
                    members_before=len(node.members),
                    members_after=len(remaining),
                )
            )
            continue
        members = store.get_events(remaining)
        summary, decided_by = pack_summary(members, lm)
        new_state[fused_id] = FusedNode.from_members(
            fused_id, summary, members, version=node.version + 1
        )
        changes.append(
            PackChange(
                fused_id=fused_id,
                action="refused",
                members_before=len(node.members),
                members_after=len(remaining),
                decided_by=decided_by,
            )
        )
    return changes, new_state


def forget_events(
    store: MemoryStoreAPI,
    event_ids: Sequence[str],
    *,
    lm: Any | None = None,
    commit: CommitConfig | None = None,
    dry_run: bool = False,
) -> ForgetReport:
    """Forget `event_ids` (all must exist) and re-fuse what they leave behind; see the
    module docstring. `lm`: the decision LM that rewrites pack summaries (None: offline)."""
    started = time.perf_counter()
    ids = list(dict.fromkeys(event_ids))
    changes, new_state = plan_forget(store, ids, lm)
    report = ForgetReport(event_ids=ids, packs=changes, dry_run=dry_run)
    if dry_run or not ids:
        report.seconds = round(time.perf_counter() - started, 3)
        return report
    cfg = commit or CommitConfig()
    texts = [e.index_text() for e in store.get_events(ids)]
    texts += [store.get_fused(f).index_text() for f in new_state]
    packs = {
        "packs_refused": sum(p.action == "refused" for p in changes),
        "packs_removed": sum(p.action == "removed" for p in changes),
        "decided_by": ",".join(sorted({p.decided_by for p in changes if p.decided_by})),
    }
    with audited_as(None, **packs), store.transaction():  # the forget's entry says what it cost
        counts = store.forget_events(ids)
        for fused_id, node in new_state.items():
            if node is None:
                store.delete_fused(fused_id)
                continue
            for edge in store.neighbors(fused_id, EdgeType.SEMANTIC):
                store.remove_edge(edge)
            store.put_fused(node)
            for edge in fused_semantic_edges(store, node, (node.end, _LAST_ID), cfg):
                store.add_edge(edge)
    report.edges_removed = counts["edges"]
    report.plans_removed = counts["plans"]
    report.scrubbed = store.scrub_forgotten(texts)
    report.seconds = round(time.perf_counter() - started, 3)
    return report
