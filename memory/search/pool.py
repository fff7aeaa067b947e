"""The shared ranking pool: scored atomic events and fused packs, then projection to events.

Atomic candidates carry s(x); fused candidates carry s_pack(v), built from the
summary's own s(v) and its members' s(x). The two compete in one ranking, and a
fused node that wins a place is projected to its best members, because answers are
grounded in events, never in summaries alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from memory.models import EdgeType, NodeKind, is_fused_id
from memory.records import Candidate, ExpansionTrace
from memory.search.cache import StoreCache
from memory.search.config import SearchConfig
from memory.search.expansion import extend
from memory.search.scoring import (
    atomic_score,
    max_cosines,
    pack_score,
    path_prior,
    window_boost,
)
from memory.trusted import TrustedBuilder

_CANDIDATE = TrustedBuilder(Candidate)


@dataclass
class ScoredPool:
    """Every scored candidate of one search, plus each fused node's members best first."""

    events: dict[str, Candidate] = field(default_factory=dict)
    fused: dict[str, Candidate] = field(default_factory=dict)
    members: dict[str, list[Candidate]] = field(default_factory=dict)
    seed_order: dict[str, int] = field(default_factory=dict)

    def _key(self, candidate: Candidate) -> tuple[float, int, int, str]:
        """Score, then shorter distance, then seed (RRF) order, then id: equal scores keep
        the seed order, so an RRF-ranked recipe returns exactly the fused list's order."""
        position = self.seed_order.get(candidate.node_id, len(self.seed_order))
        return -candidate.score, candidate.trace.distance, position, candidate.node_id

    def ranking(self) -> list[Candidate]:
        """Events and fused nodes in one list, best first."""
        return sorted([*self.events.values(), *self.fused.values()], key=self._key)

    def top_events(self, n: int) -> list[str]:
        return [c.node_id for c in sorted(self.events.values(), key=self._key)[:n]]


class Scorer:
    """Scores candidates of one search: batched vectors, cosines against every query vector.

    With ``rank_by == "rrf"`` the score is the seed RRF score alone (the baselines), and
    cosines are still reported when query vectors exist.
    """

    def __init__(
        self,
        cache: StoreCache,
        config: SearchConfig,
        query_vectors: np.ndarray | None,
        rrf: dict[str, float],
        window: tuple[datetime, datetime] | None,
        window_bonus: float,
    ):
        self.cache = cache
        self.config = config
        self.query_vectors = query_vectors
        self.rrf = rrf
        self.window = window
        self.window_bonus = window_bonus
        self._cosines: dict[str, float] = {}

    # --- batching ---
    def prefetch(self, node_ids: Iterable[str]) -> None:
        """Fetch events and vectors for these ids in one batch each; fused members included."""
        ids = list(dict.fromkeys(node_ids))
        fused_members = [m for f in ids if is_fused_id(f) for m in self.cache.fused(f).members]
        everything = list(dict.fromkeys([*ids, *fused_members]))
        self.cache.events([i for i in everything if not is_fused_id(i)])
        missing = [i for i in everything if i not in self._cosines]
        if self.query_vectors is not None and missing:
            cosines = max_cosines(self.query_vectors, self.cache.vectors(missing))
            self._cosines.update(zip(missing, (float(c) for c in cosines)))
            if self.config.use_moments:  # a dialogue turn scores by its moments
                self._cosines.update(self.cache.store.moment_cosines(self.query_vectors, missing))

    # --- scores ---
    def _score(
        self, node_id: str, trace: ExpansionTrace, span: tuple[datetime, datetime]
    ) -> Candidate:
        config = self.config
        cosine = self._cosines.get(node_id, 0.0)
        rrf = self.rrf.get(node_id, 0.0) if trace.distance == 0 else 0.0
        prior = path_prior(trace, config.priors)
        if config.rank_by == "rrf":
            score = rrf
        else:
            boost = window_boost(span[0], span[1], self.window, self.window_bonus)
            score = atomic_score(
                cosine,
                trace.distance,
                rrf,
                prior,
                boost,
                beta=config.beta,
                rrf_weight=config.rrf_weight,
            )
        kind = NodeKind.FUSED if is_fused_id(node_id) else NodeKind.EVENT
        return _CANDIDATE(  # every value typed here (about 200 a question)
            node_id=node_id,
            kind=kind,
            score=score,
            cosine=cosine,
            rrf=rrf,
            prior=prior,
            trace=trace,
        )

    def event(self, event_id: str, trace: ExpansionTrace) -> Candidate:
        """s(x) for an atomic event."""
        return self._score(event_id, trace, self.cache.span(event_id))

    def fused(
        self, fused_id: str, trace: ExpansionTrace, scored_events: dict[str, Candidate]
    ) -> tuple[Candidate, list[Candidate]] | None:
        """s_pack(v) and the members best first; None for a pack without members.

        A member already in the pool keeps its own (best) candidate; any other member is
        scored as if reached through this node, one reverse-belong hop further.
        """
        members: list[Candidate] = []
        for member in self.cache.fused(fused_id).members:
            known = scored_events.get(member)
            if known is None:
                known = self.event(member, extend(trace, EdgeType.BELONG, member, reverse=True))
            members.append(known)
        if not members:
            return None
        members.sort(key=lambda c: (-c.score, c.trace.distance, c.node_id))
        summary = self._score(fused_id, trace, self.cache.span(fused_id))
        if self.config.rank_by == "fusion_score":
            s_pack = pack_score(
                summary.score,
                [m.score for m in members],
                trace.distance,
                weights=self.config.pack,
                beta=self.config.beta,
            )
            summary = summary.model_copy(update={"score": s_pack})
        return summary, members

    def pool(self, traces: dict[str, ExpansionTrace]) -> ScoredPool:
        """Score every traced event; fused nodes come later (add_fused)."""
        self.prefetch(traces)
        pool = ScoredPool(seed_order={node_id: i for i, node_id in enumerate(self.rrf)})
        for node_id, trace in traces.items():
            if not is_fused_id(node_id):
                pool.events[node_id] = self.event(node_id, trace)
        return pool

    def add_neighbors(self, pool: ScoredPool, pulled: list[tuple[str, str]]) -> None:
        """Temporal neighbours as distance-1 candidates with their own cosine."""
        self.prefetch(n for n, _ in pulled)
        for neighbor, anchor in pulled:
            if neighbor in pool.events:
                continue
            anchor_trace = pool.events[anchor].trace
            trace = ExpansionTrace(seed_id=anchor_trace.seed_id, distance=1, neighbor_of=anchor)
            pool.events[neighbor] = self.event(neighbor, trace)

    def add_fused(self, pool: ScoredPool, traces: dict[str, ExpansionTrace]) -> None:
        """Score the fused candidates last, so their member scores see every atomic candidate."""
        for node_id, trace in traces.items():
            if not is_fused_id(node_id):
                continue
            scored = self.fused(node_id, trace, pool.events)
            if scored is not None:
                pool.fused[node_id], pool.members[node_id] = scored


def project(
    pool: ScoredPool, max_members: int, limit: int, max_fused: int | None = None
) -> list[Candidate]:
    """Walk the shared ranking down to `limit` distinct events.

    An event enters as itself; one of the first `max_fused` fused nodes (None: any number)
    enters as its best `max_members` members — later packs are skipped, as in the paper at
    most three fused nodes contribute, so packs cannot crowd out direct hits —
    each marked ``via_fused`` and carrying the pack's score, the score that won them their
    place (so the list stays ordered by score, and a caller that merges rounds by score
    keeps a pack's members where the pack ranked). The first appearance of an event wins.
    """
    projected: list[Candidate] = []
    seen: set[str] = set()
    packs = 0
    for candidate in pool.ranking():
        if len(projected) >= limit:
            break
        if candidate.kind == NodeKind.EVENT:
            if candidate.node_id not in seen:
                seen.add(candidate.node_id)
                projected.append(candidate)
            continue
        if max_fused is not None and packs >= max_fused:
            continue
        packs += 1
        for member in pool.members[candidate.node_id][:max_members]:
            if len(projected) >= limit:
                break
            if member.node_id not in seen:
                seen.add(member.node_id)
                placed = {"via_fused": candidate.node_id, "score": candidate.score}
                projected.append(member.model_copy(update=placed))
    return projected
