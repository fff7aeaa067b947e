"""What a search returns: ranked candidates with their expansion traces, and context entries.

Every entry keeps the path that brought it (seed, typed hops, distance) so that the
CLI and the reader can show why an event is in the context.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from memory.models import EdgeType, Event, NodeKind


class PathStep(BaseModel):
    """One hop of an expansion path: the edge type walked and the node reached."""

    edge: EdgeType
    node_id: str
    reverse: bool = Field(default=False, description="Walked against the stored direction.")


PIVOT_LIST_PREFIX = "pivot:"
"""The seed lists of a pivot round (`memory.search.pivot`) are named with this prefix."""
ROUND_SEARCH = "search"
"""What found a later round's event that no pivot list did: that round's search of its plan."""


class ExpansionTrace(BaseModel):
    """How a candidate was reached: originating seed, typed relation path, and graph distance."""

    seed_id: str = Field(
        description="The seed the expansion started from (the candidate itself for a seed)."
    )
    path: list[PathStep] = Field(default_factory=list, description="Typed hops from the seed.")
    distance: int = Field(default=0, ge=0, description="Number of hops (h in the scoring formula).")
    seed_lists: list[str] = Field(
        default_factory=list,
        description="Which seed lists ranked the seed (dense:0, bm25, temporal…).",
    )
    time_window_hit: bool = Field(
        default=False, description="Reached through a confident time window."
    )
    neighbor_of: str | None = Field(
        default=None, description="Pulled in as a temporal neighbour (same device/person) of this."
    )

    def label(self) -> str:
        """Short human-readable provenance, e.g. ``seed(dense,bm25)`` or
        ``seed → causal → belong``."""
        if self.neighbor_of is not None:
            pivot = self.pivot_list()
            if pivot is not None:  # reached from evidence already found, not as a neighbour
                return f"{pivot} of {self.neighbor_of}"
            return f"temporal neighbour of {self.neighbor_of}"
        head = f"seed({','.join(self.seed_lists)})" if self.seed_lists else "seed"
        if not self.path:
            return head
        hops = " → ".join(f"{'~' if s.reverse else ''}{s.edge.value}" for s in self.path)
        return f"{head} {self.seed_id} → {hops}"

    def pivot_list(self) -> str | None:
        """The pivot list that found this candidate (``pivot:series``…), None for any other."""
        return next((s for s in self.seed_lists if s.startswith(PIVOT_LIST_PREFIX)), None)

    def prior_kind(self) -> str:
        """Which path-prior term applies: seed, time_window, causal, membership, semantic or
        temporal_neighbor."""
        if self.neighbor_of is not None:
            return "temporal_neighbor"
        if not self.path:
            return (
                "time_window"
                if self.time_window_hit and not self.seed_lists_without_time()
                else "seed"
            )
        kinds = {s.edge for s in self.path}
        if EdgeType.SEMANTIC in kinds:
            return "semantic"
        if EdgeType.CAUSAL in kinds:
            return "causal"
        return "membership"

    def seed_lists_without_time(self) -> list[str]:
        return [name for name in self.seed_lists if not name.startswith("temporal")]


class Candidate(BaseModel):
    """A scored node in the shared ranking pool (atomic event or fused node)."""

    node_id: str
    kind: NodeKind
    score: float = Field(
        description="Ranking score: s(x) for events, s_pack(v) for fused nodes and for the "
        "member events projected from one (their own s(x) follows from cosine, rrf and prior)."
    )
    cosine: float = Field(default=0.0, description="cos(q, x) with the best matching query vector.")
    rrf: float = Field(
        default=0.0, description="Reciprocal-rank-fusion seed score (0 if not a seed)."
    )
    prior: float = Field(default=0.0, description="Path prior π.")
    trace: ExpansionTrace
    via_fused: str | None = Field(
        default=None, description="Fused node this event was projected from."
    )


class ContextEntry(BaseModel):
    """One line of reader context, with its provenance."""

    kind: NodeKind
    node_id: str
    timestamp: datetime
    device: str
    location: str
    text: str = Field(description="The serialized line the reader sees.")
    score: float
    provenance: str = Field(description="The path that brought it, human readable.")
    via_fused: str | None = None

    @classmethod
    def for_event(
        cls, event: Event, score: float, provenance: str, via_fused: str | None = None
    ) -> ContextEntry:
        """The entry of one atomic event, serialized as the reader sees it."""
        return cls(
            kind=NodeKind.EVENT,
            node_id=event.event_id,
            timestamp=event.timestamp,
            device=event.device,
            location=event.location,
            text=event.serialize(),
            score=score,
            provenance=provenance,
            via_fused=via_fused,
        )


class SearchHits(BaseModel):
    """One search call's output: seeds, the ranked event-level candidates and timings."""

    query: str
    seeds: list[str] = Field(default_factory=list, description="Seed ids in RRF order.")
    candidates: list[Candidate] = Field(
        default_factory=list, description="Ranked, projected to events, deduped, top-k."
    )
    fused: list[Candidate] = Field(
        default_factory=list, description="Ranked fused nodes (for context packs)."
    )
    guard_ids: list[str] = Field(
        default_factory=list,
        description="Events the guard reserved: the unconstrained (hybrid) top, always in "
        "candidates.",
    )
    elapsed_ms: float = 0.0

    def event_ids(self) -> list[str]:
        return [c.node_id for c in self.candidates]
