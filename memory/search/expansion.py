"""Typed graph expansion: from the seeds along belong, causal and semantic edges.

Direct retrieval usually finds one fragment of the evidence; the typed edges lead to
the rest. Policy by seed type (paper, "Typed Graph Expansion"):

- atomic seed: breadth-first over causal edges (both directions, or only toward causes or
  effects as the plan's ``causal_links`` asks, or none) and semantic edges of weight ≥ the
  threshold (none for a window within one day, ``semantic_in_day_windows``), up to
  ``max_hops`` such hops; a semantic hop ends its path
  (``semantic_leaves``: the walk goes on from causal neighbours only); from the seed itself
  and from an event one causal hop away, belong edges lead to the fused nodes holding
  them, and such a fused node exposes its members;
- fused seed: its members first (reverse belong, distance 1), then the same causal
  and semantic walk from each member (no further belong hops).

``max_hops`` bounds the causal/semantic walk; belong hops are bounded structurally
(one belong hop plus one reverse-belong hop, only from the places above) and by
``fused_expansion_budget``, the number of fused nodes whose members may become
candidates. A fused node reached by a semantic edge is a candidate, but it exposes no
members (its pack score still reads them). MemFuse's default budget is 0: packs are
candidates and project their members into the context, but no member competes on its own
score from here (exposed members pushed better events out; see `SearchConfig`). Every hop
counts in the distance h, so members sit at β² or β³ in the score. ``max_expanded`` caps the
pool size.

A node reached several ways keeps its best trace: shortest distance, then highest
path prior, then the first found (seeds are walked in RRF order).
"""

from __future__ import annotations

from collections import deque

from memory.models import EdgeType, is_fused_id
from memory.records import ExpansionTrace, PathStep
from memory.search.cache import StoreCache
from memory.search.config import SearchConfig
from memory.search.plan import CausalDirection
from memory.search.rrf import Seed
from memory.search.seeds import TEMPORAL_LIST
from memory.trusted import TrustedBuilder

# traces are built from values made here (an expansion builds ~900 per question; pydantic's
# model_construct walked each model's fields every time: 7 % of a memfuse question)
_TRACE = TrustedBuilder(ExpansionTrace)
_STEP = TrustedBuilder(PathStep)


def root_trace(seed: Seed) -> ExpansionTrace:
    """The trace of a seed itself: distance 0, with the lists that ranked it."""
    return _TRACE(
        seed_id=seed.node_id,
        path=[],
        distance=0,
        seed_lists=list(seed.lists),
        time_window_hit=TEMPORAL_LIST in seed.lists,
        neighbor_of=None,
    )


def unconstrained_trace(node_id: str) -> ExpansionTrace:
    """The trace of an event the guard reserved (the plain question's hybrid hit)."""
    return _TRACE(
        seed_id=node_id,
        path=[],
        distance=0,
        seed_lists=["guard"],
        time_window_hit=False,
        neighbor_of=None,
    )


def extend(
    trace: ExpansionTrace, edge: EdgeType, node_id: str, reverse: bool = False
) -> ExpansionTrace:
    """The trace one hop further (validation skipped: every field is built here)."""
    return _TRACE(
        seed_id=trace.seed_id,
        path=[*trace.path, _STEP(edge=edge, node_id=node_id, reverse=reverse)],
        distance=trace.distance + 1,
        seed_lists=trace.seed_lists,
        time_window_hit=trace.time_window_hit,
        neighbor_of=None,
    )


class TracePool:
    """Best trace per node, capped at `limit` nodes (an existing node may still improve)."""

    def __init__(self, config: SearchConfig):
        self.config = config
        self.traces: dict[str, ExpansionTrace] = {}
        self._ranks: dict[str, tuple[int, float]] = {}

    def rank(self, distance: int, kind: str) -> tuple[int, float]:
        """A trace's rank from its distance and prior kind (lower is better)."""
        return distance, -self.config.priors.value(kind)

    def would_take(self, node_id: str, rank: tuple[int, float]) -> bool:
        """Whether `offer` would keep a trace of this rank: asked before a trace is built,
        since most hops of a walk reach a node already held as well or better (building
        every such trace was about 30 % of the expansion's profiled time on seed 7)."""
        current = self._ranks.get(node_id)
        if current is None:
            return len(self.traces) < self.config.max_expanded
        return rank < current

    def offer(self, node_id: str, trace: ExpansionTrace) -> bool:
        """Keep the trace if the node is new (and the pool not full) or the trace is better."""
        rank = self.rank(trace.distance, trace.prior_kind())
        if not self.would_take(node_id, rank):
            return False
        self.traces[node_id] = trace
        self._ranks[node_id] = rank
        return True


class Expander:
    """Walks the typed graph from the seeds for one search call."""

    def __init__(
        self,
        cache: StoreCache,
        config: SearchConfig,
        causal: CausalDirection = "both",
        semantic: bool = True,
    ):
        self.cache = cache
        self.config = config
        self.causal = causal
        self.semantic = semantic
        self.pool = TracePool(config)
        self._exposed: dict[str, int] = {}  # fused node -> distance its members were exposed from

    def run(self, seeds: list[Seed]) -> dict[str, ExpansionTrace]:
        roots = [(seed, root_trace(seed)) for seed in seeds]
        for seed, trace in roots:  # seeds first, so the expansion cap never evicts a seed
            self.pool.offer(seed.node_id, trace)
        if self.config.use_graph:
            for seed, trace in roots:
                if is_fused_id(seed.node_id):
                    for member, member_trace in self._expose_members(seed.node_id, trace):
                        self._walk(member, member_trace, allow_belong=False)
                else:
                    self._walk(seed.node_id, trace, allow_belong=self.config.use_fused)
        return self.pool.traces

    def _expose_members(
        self, fused_id: str, trace: ExpansionTrace
    ) -> list[tuple[str, ExpansionTrace]]:
        """Members of a fused node as candidates, one reverse-belong hop further.

        Uses one unit of the fused-expansion budget per distinct fused node; a node
        reached again from closer re-exposes its members at the shorter distance.
        """
        if not self.config.use_fused:
            return []
        previous = self._exposed.get(fused_id)
        if previous is None and len(self._exposed) >= self.config.fused_expansion_budget:
            return []
        if previous is not None and previous <= trace.distance:
            return []
        self._exposed[fused_id] = trace.distance
        exposed = []
        for member in self.cache.fused(fused_id).members:
            member_trace = extend(trace, EdgeType.BELONG, member, reverse=True)
            self.pool.offer(member, member_trace)
            exposed.append((member, member_trace))
        return exposed

    def _walk(self, origin: str, start: ExpansionTrace, allow_belong: bool) -> None:
        """Breadth-first causal/semantic walk from one event, within the hop limit."""
        config = self.config
        visited = {origin}
        frontier: deque[tuple[str, ExpansionTrace, int]] = deque([(origin, start, 0)])
        while frontier:
            node, trace, hops = frontier.popleft()
            one_causal_hop = hops == 1 and trace.path[-1].edge == EdgeType.CAUSAL
            if allow_belong and (hops == 0 or one_causal_hop):
                for fused_id in self.cache.fused_of(node):
                    fused_trace = extend(trace, EdgeType.BELONG, fused_id)
                    self.pool.offer(fused_id, fused_trace)
                    self._expose_members(fused_id, fused_trace)
            if hops >= config.max_hops:
                continue
            causal_kind = _extended_kind(trace, EdgeType.CAUSAL)
            for other, reverse in self._causal(node):
                self._step(
                    trace,
                    EdgeType.CAUSAL,
                    other,
                    causal_kind,
                    visited,
                    frontier,
                    hops,
                    reverse=reverse,
                )
            if not self.semantic:
                continue
            semantic_kind = _extended_kind(trace, EdgeType.SEMANTIC)
            for other, _weight in self.cache.semantic(node, config.semantic_threshold):
                fused = is_fused_id(other)
                if fused and not config.use_fused:
                    continue
                self._step(
                    trace,
                    EdgeType.SEMANTIC,
                    other,
                    semantic_kind,
                    visited,
                    frontier,
                    hops,
                    walk_on=not fused and not config.semantic_leaves,
                )

    def _causal(self, node: str) -> list[tuple[str, bool]]:
        """The node's causal neighbours the walk may take: walked in reverse (effect → cause)
        toward causes only for `back`, forward toward effects only for `forward`."""
        if self.causal == "none":
            return []
        links = self.cache.causal(node)
        if self.causal == "both":
            return links
        backward = self.causal == "back"
        return [(other, reverse) for other, reverse in links if reverse == backward]

    def _step(
        self,
        trace: ExpansionTrace,
        edge: EdgeType,
        other: str,
        kind: str,
        visited: set[str],
        frontier: deque[tuple[str, ExpansionTrace, int]],
        hops: int,
        *,
        reverse: bool = False,
        walk_on: bool = True,
    ) -> None:
        """One hop: offer `other` the longer trace and queue it for the walk when new. The
        trace is built only when the pool keeps it or the walk goes on from it."""
        goes_on = walk_on and other not in visited
        if not goes_on and not self._may_keep(other, trace.distance + 1, kind):
            return
        next_trace = extend(trace, edge, other, reverse)
        self.pool.offer(other, next_trace)
        if goes_on:
            visited.add(other)
            frontier.append((other, next_trace, hops + 1))

    def _may_keep(self, node_id: str, distance: int, kind: str) -> bool:
        """Whether the pool would keep a trace of this distance and prior kind."""
        return self.pool.would_take(node_id, self.pool.rank(distance, kind))


_PRECEDENCE = {EdgeType.SEMANTIC: "semantic", EdgeType.CAUSAL: "causal"}


def _extended_kind(trace: ExpansionTrace, edge: EdgeType) -> str:
    """`prior_kind` of `trace` one `edge` hop further (`extend` clears `neighbor_of`),
    without building that trace."""
    kinds = {s.edge for s in trace.path} | {edge}
    for edge_type, kind in _PRECEDENCE.items():
        if edge_type in kinds:
            return kind
    return "membership"


def expand(
    cache: StoreCache,
    seeds: list[Seed],
    config: SearchConfig,
    causal: CausalDirection = "both",
    semantic: bool = True,
) -> dict[str, ExpansionTrace]:
    """Candidate id → best expansion trace, seeds included (only seeds when use_graph is off);
    `causal`: which way causal edges are walked (`CausalLinks`); `semantic`: whether semantic
    edges are (`SearchConfig.semantic_in_day_windows`)."""
    return Expander(cache, config, causal, semantic).run(seeds)
