"""How well ingest fused: sizes, edges, rejections and purity against the generator's labels.

Labels (from a MemFuseBench scenario's `memory_events(labels=True)`): an event derived from
a storyline carries `metadata["storyline_event_id"]` (the concrete happening; several devices
observing it share the id) and, as a storyline event, its `episode_id`. Routine, periodic,
noise and other background events carry no storyline label.

Purity of one fused node with members M (the macro average over fused nodes is reported):

- `fusion_purity`: the majority label is the storyline episode most members belong to (ties:
  smallest id); purity = |members of that episode| / |M|. A member of the same storyline event
  is necessarily of the same episode, so this is "same storyline event or episode". Members
  without a storyline label count as impure; a node without any labelled member scores 0.
- `segment_purity`: the same with the storyline event id instead of the episode (stricter:
  only observations of one concrete happening count together); None when no member carries
  a storyline event id.
- `unlabelled_share` and `labelled_purity` split `fusion_purity` in two: the share of fused
  nodes without a single storyline member, and the purity of the others. The generator writes
  everyday happenings too (a commute seen by the doorbell, the lock and the car within
  minutes) but labels none of them, so a pack of one such happening scores 0 like a pack of
  unrelated noise; on the generated benchmark about two packs in three are of that kind, and
  the split tells a pack that mixes storylines from one that holds none.

`causal_in_episode` is the share of causal edges whose two events belong to the same
storyline episode (unlabelled endpoints count as a miss).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from statistics import mean
from typing import Any

from memory.models import EdgeType, Event, FusedNode, SourceKind
from memory.store_api import MemoryStoreAPI


def storyline_event(event: Event) -> str | None:
    value = event.metadata.get("storyline_event_id")
    return str(value) if value else None


def storyline_episode(event: Event) -> str | None:
    """The episode of a storyline-derived event; None for background events."""
    if event.episode_id and (storyline_event(event) or event.source == SourceKind.STORYLINE):
        return event.episode_id
    return None


def node_purity(members: list[Event], label: Callable[[Event], str | None]) -> float:
    """Share of members carrying the node's majority label (unlabelled = impure)."""
    return label_purity([label(e) for e in members])


def label_purity(labels: Sequence[str | None]) -> float:
    """Share of a node's member labels that are its majority label (None = impure)."""
    counts = Counter(x for x in labels if x is not None)
    return max(counts.values()) / len(labels) if counts else 0.0


def pack_purity(nodes: Iterable[FusedNode], episode_of: Mapping[str, str]) -> float | None:
    """`fusion_purity` from member ids alone (`episode_of`: storyline episode by event id,
    background events absent), for stores too large to hold their labelled events twice."""
    purities = [label_purity([episode_of.get(m) for m in node.members]) for node in nodes]
    return mean(purities) if purities else None


def fusion_stats(store: MemoryStoreAPI, events: Iterable[Event] = ()) -> dict[str, Any]:
    """Fusion quality of a store; `events` (with labels) override the stored copies."""
    labelled = {e.event_id: e for e in events}

    def member_events(node: FusedNode) -> list[Event]:
        return [labelled.get(m) or store.get_event(m) for m in node.members]

    nodes = store.all_fused()
    sizes = [len(n.members) for n in nodes]
    members = [member_events(n) for n in nodes]
    all_events = store.all_events()
    in_fused = {m for n in nodes for m in n.members}
    causal = {
        e.key(): e for ev in all_events for e in store.neighbors(ev.event_id, EdgeType.CAUSAL)
    }
    lookup = {e.event_id: labelled.get(e.event_id, e) for e in all_events}
    same_episode = [
        storyline_episode(lookup[e.src]) is not None
        and storyline_episode(lookup[e.src]) == storyline_episode(lookup[e.dst])
        for e in causal.values()
    ]
    plan_counts = store.plan_counts()
    purities = [node_purity(m, storyline_episode) for m in members]
    # a node scores above 0 exactly when some member carries a storyline label
    storyline_purities = [p for p in purities if p > 0]
    return {
        "events": len(all_events),
        "fused_nodes": len(nodes),
        "mean_members": round(mean(sizes), 3) if sizes else 0.0,
        "max_members": max(sizes, default=0),
        "singleton_nodes": sum(1 for s in sizes if s == 1),
        "events_in_fused": round(len(in_fused) / len(all_events), 4) if all_events else 0.0,
        "edges": store.edge_counts(),
        "plans": dict(plan_counts),
        "plan_rejections": int(plan_counts.get("rejected", 0)),
        "fusion_purity": round(mean(purities), 4) if purities else 0.0,
        # None where no event names its happening (hand-written files label episodes only)
        "segment_purity": round(mean(node_purity(m, storyline_event) for m in members), 4)
        if any(storyline_event(e) for m in members for e in m)
        else None,
        "unlabelled_share": round(1 - len(storyline_purities) / len(purities), 4)
        if purities
        else 0.0,
        "labelled_purity": round(mean(storyline_purities), 4) if storyline_purities else 0.0,
        "causal_in_episode": round(sum(same_episode) / len(same_episode), 4)
        if same_episode
        else 0.0,
    }
