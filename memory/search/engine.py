"""One search call: seeds → RRF → typed expansion → scoring → constraints → projection → top-k.

The engine only orchestrates; every number comes from the SearchConfig recipe and
every stage lives in its own module (seeds, rrf, expansion, scoring/pool,
constraints). It talks to the store only through the MemoryStoreAPI Protocol, through
a per-call cache that batches event and vector reads.
"""

from __future__ import annotations

import time
from datetime import date, datetime, timedelta

import numpy as np

from memory.models import Event
from memory.records import Candidate, SearchResult
from memory.search.cache import StoreCache
from memory.search.config import MEMFUSE_DEFAULT, SearchConfig
from memory.search.constraints import diversify, temporal_neighbors, timeline_slots
from memory.search.expansion import expand
from memory.search.plan import RoundPlan
from memory.search.pool import Scorer, project
from memory.search.rrf import fuse_lists
from memory.search.seeds import (
    Window,
    active_window,
    collect_seed_lists,
    confident,
    drop_after,
    seed_queries,
)
from memory.store_api import MemoryStoreAPI


def run_search(
    store: MemoryStoreAPI,
    plan: RoundPlan,
    config: SearchConfig = MEMFUSE_DEFAULT,
    *,
    requester: str | None = None,
    question_time: datetime | None = None,
) -> SearchResult:
    """Run one round plan against the store and return the top-k events with their traces.

    `requester` (who asks) gives the asker's own events the first turn when the plan
    asks to cover several people; `question_time` (when they ask) hides later events
    when the recipe's ``hide_after_question_time`` is on.
    """
    started = time.perf_counter()
    cache = StoreCache(store)
    window = active_window(plan, config)
    query_vectors = _embed_queries(store, seed_queries(plan, config), config, window)

    cutoff = question_time if config.hide_after_question_time else None
    lists = collect_seed_lists(cache, plan, config, query_vectors, window)
    if cutoff is not None:
        lists = drop_after(cache, lists, cutoff)
    seeds = fuse_lists(lists, config.rrf_k, config.seed_pool)
    traces = expand(cache, seeds, config)

    scorer = Scorer(
        cache, config, query_vectors, {s.node_id: s.score for s in seeds}, _days(window), cutoff
    )
    pool = scorer.pool(traces)
    neighbors = plan.temporal_neighbors
    if neighbors.enabled and confident(neighbors.confidence, config) and pool.events:
        keep = plan.seed.temporal_neighbor_keep or config.temporal_neighbor_keep
        anchors = pool.top_events(config.neighbor_anchors)
        pulled = temporal_neighbors(cache, anchors, neighbors.radius, keep, set(pool.events))
        scorer.add_neighbors(pool, pulled)
    scorer.add_fused(pool, traces)

    diversifying = _coverage_dimensions(plan, config) or _timeline_on(plan, config)
    depth = config.top_k * (config.coverage_depth if diversifying else 1)
    projected = project(pool, config.context.max_members, depth, config.context.max_fused)
    events = cache.events(c.node_id for c in projected)
    selected = _select(projected, events, plan, config, window, requester)

    contributors = {c.via_fused for c in selected if c.via_fused}
    fused = [c for c in pool.ranking() if c.node_id in contributors]
    return SearchResult(
        query=plan.focus,
        seeds=[s.node_id for s in seeds],
        candidates=selected,
        fused=fused,
        elapsed_ms=(time.perf_counter() - started) * 1000.0,
    )


def _embed_queries(
    store: MemoryStoreAPI, queries: list[str], config: SearchConfig, window: Window | None
) -> np.ndarray | None:
    """Query vectors, or None when nothing reads them (the BM25 baseline never embeds)."""
    needed = (
        config.use_dense
        or config.rank_by == "fusion_score"
        or (config.use_temporal and window is not None)
    )
    if not needed:
        return None
    return np.atleast_2d(np.asarray(store.embed_queries(queries), dtype=np.float32))


def _days(window: Window | None) -> frozenset[date]:
    """The calendar days a confident window covers: the targets of the date-match boost."""
    if window is None:
        return frozenset()
    first, last = window[0].date(), window[1].date()
    return frozenset(first + timedelta(days=i) for i in range((last - first).days + 1))


def _coverage_dimensions(plan: RoundPlan, config: SearchConfig) -> list[str]:
    coverage = plan.coverage_diversification
    if coverage.enabled and confident(coverage.confidence, config):
        return list(coverage.dimensions)
    return []


def _timeline_on(plan: RoundPlan, config: SearchConfig) -> bool:
    timeline = plan.timeline_mode
    return timeline.enabled and confident(timeline.confidence, config)


def _select(
    projected: list[Candidate],
    events: dict[str, Event],
    plan: RoundPlan,
    config: SearchConfig,
    window: Window | None,
    requester: str | None,
) -> list[Candidate]:
    """The final top-k, in the order chosen.

    Plain: the first k of the projected ranking. Timeline mode first reserves the best
    event of each time bucket (at most min(timeline_buckets, k) slots); coverage
    diversification then fills the remaining slots round-robin over people/devices,
    counting the reserved events as already covering theirs; without coverage the rest
    is filled in rank order.
    """
    k = config.top_k
    order = [c.node_id for c in projected]
    chosen: list[str] = []
    if _timeline_on(plan, config):
        chosen = timeline_slots(order, events, min(config.timeline_buckets, k), span=window)
    dimensions = _coverage_dimensions(plan, config)
    if dimensions:
        chosen += diversify(
            order, events, dimensions, k - len(chosen), already=chosen, requester=requester
        )
    else:
        taken = set(chosen)
        chosen += [i for i in order if i not in taken][: k - len(chosen)]
    by_id = {c.node_id: c for c in projected}
    return [by_id[i] for i in chosen]
