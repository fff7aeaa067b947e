"""One search call: seeds → RRF → typed expansion → scoring → constraints → projection → top-k.

The engine only orchestrates; every number comes from the SearchConfig recipe and
every stage lives in its own module (seeds, rrf, expansion, scoring/pool,
constraints). It talks to the store only through the MemoryStoreAPI Protocol, through
a per-call cache that batches event and vector reads.
"""

from __future__ import annotations

import time
from datetime import datetime

import numpy as np

from memory.models import Event
from memory.records import Candidate, SearchHits
from memory.search.cache import StoreCache
from memory.search.config import MEMFUSE_DEFAULT, SearchConfig
from memory.search.constraints import diversify, temporal_neighbors, timeline_slots
from memory.search.expansion import expand, unconstrained_trace
from memory.search.guard import guarded_order, reserved_slots
from memory.search.hubs import hub_corrected
from memory.search.plan import CausalDirection, RoundPlan
from memory.search.pool import ScoredPool, Scorer, project
from memory.search.rrf import fuse_lists
from memory.search.scoring import specific_boost
from memory.search.seeds import (
    TEMPORAL_LIST,
    Window,
    active_window,
    collect_seed_lists,
    confident,
    seed_queries,
    unconstrained_lists,
)
from memory.store_api import MemoryStoreAPI


def run_search(
    store: MemoryStoreAPI,
    plan: RoundPlan,
    config: SearchConfig = MEMFUSE_DEFAULT,
    *,
    requester: str | None = None,
    question_time: datetime | None = None,
    question: str | None = None,
) -> SearchHits:
    """Run one round plan against the store and return the top-k events with their traces.

    `question` is the asker's own words (default: the plan's focus): the guard's
    unconstrained lists search exactly them, so its reserved slots hold what plain hybrid
    retrieval (or dense, without `GuardConfig.lexical`) finds for the question (see
    `memory.search.guard`). `requester` (who asks) gives the asker's own events the first
    turn when the plan asks to cover several people; `question_time` (when they ask) anchors
    the window prior. The caller hands in the store
    as the asker may read it then (`memory.access`: `memory.retrieval.search` does).
    """
    started = time.perf_counter()
    cache = StoreCache(store)
    window = active_window(plan, config)
    asked = question or plan.focus
    query_vectors, asked_vector = _embed_queries(
        store,
        seed_queries(plan, config, store),
        config,
        window,
        asked if config.guard.enabled else None,
    )

    lists = collect_seed_lists(cache, plan, config, query_vectors, window)
    guard_lists = (
        unconstrained_lists(
            store,
            asked,
            config.guard.depth,
            config.guard.lexical,
            vector=asked_vector,
            moments=config.use_moments,
            common_share=config.common_word_share,
        )
        if config.guard.enabled
        else {}
    )
    seeds = fuse_lists(lists, config.rrf_k, config.seed_pool, _list_weights(plan, config))
    traces = expand(
        cache, seeds, config, causal_direction(plan, config), walks_semantic(plan, config)
    )

    scorer = Scorer(
        cache,
        config,
        query_vectors,
        {s.node_id: s.score for s in seeds},
        window,
        _window_bonus(store, window, config, question_time),
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

    guard_ids: list[str] = []
    if config.guard.enabled:
        reserve = reserved_slots(config.top_k, applied_confidence(plan, config), config.guard)
        unconstrained = _ranked(guard_lists, config.rrf_k)
        guard_ids = unconstrained[:reserve]
        selected = _guarded(selected, unconstrained, reserve, config.top_k, scorer, pool)

    contributors = {c.via_fused for c in selected if c.via_fused}
    fused = [c for c in pool.ranking() if c.node_id in contributors]
    return SearchHits(
        query=plan.focus,
        seeds=[s.node_id for s in seeds],
        candidates=selected,
        fused=fused,
        guard_ids=guard_ids,
        elapsed_ms=(time.perf_counter() - started) * 1000.0,
    )


def _list_weights(plan: RoundPlan, config: SearchConfig) -> dict[str, float]:
    """The time window's list weighs `window_list_weight` when the plan asks for more of the
    window's events than the recipe's default quota; every other list (and that one
    otherwise) weighs 1."""
    asked = plan.seed.time_window_quota
    if asked is not None and asked > config.time_window_quota:
        return {TEMPORAL_LIST: config.window_list_weight}
    return {}


def _window_bonus(
    store: MemoryStoreAPI, window: Window | None, config: SearchConfig, asked: datetime | None
) -> float:
    """b_date for this window: `date_boost` scaled by the share of the memory as of asking
    (events up to the question time) that the window leaves out."""
    if window is None or config.date_boost == 0.0:
        return 0.0
    horizon = asked or datetime.max
    total = store.count_events_between(datetime.min, horizon)
    inside = store.count_events_between(window[0], min(window[1], horizon))
    return specific_boost(config.date_boost, inside, total)


def causal_direction(plan: RoundPlan, config: SearchConfig) -> CausalDirection:
    """The plan's `causal_links` direction when honoured, else both ways (as before it)."""
    links = plan.causal_links
    return links.direction if confident(links.confidence, config) else "both"


def walks_semantic(plan: RoundPlan, config: SearchConfig) -> bool:
    """Semantic edges are walked unless the honoured window lies within one day
    (`SearchConfig.semantic_in_day_windows`)."""
    if active_window(plan, config) is None or config.semantic_in_day_windows:
        return True
    return plan.time_window.over_days(config.constraint_confidence)


def applied_confidence(plan: RoundPlan, config: SearchConfig) -> float:
    """The confidence the guard scales by: the highest among the constraints this search
    honours (a window adds seeds and a prior; coverage, timeline and neighbours reorder);
    0 when it honours none."""
    neighbors = plan.temporal_neighbors
    honoured = (
        plan.time_window.confidence if active_window(plan, config) is not None else 0.0,
        plan.coverage_diversification.confidence if _coverage_dimensions(plan, config) else 0.0,
        plan.timeline_mode.confidence if _timeline_on(plan, config) else 0.0,
        neighbors.confidence
        if neighbors.enabled and confident(neighbors.confidence, config)
        else 0.0,
    )
    return max(honoured)


def _ranked(lists: dict[str, list[str]], rrf_k: int) -> list[str]:
    """The lists fused by RRF, best first (the hybrid baseline's order)."""
    return [seed.node_id for seed in fuse_lists(lists, rrf_k, keep=sum(map(len, lists.values())))]


def _guarded(
    selected: list[Candidate],
    unconstrained: list[str],
    reserve: int,
    k: int,
    scorer: Scorer,
    pool: ScoredPool,
) -> list[Candidate]:
    """The selection with the guard's `reserve` best ids in it (see `memory.search.guard`),
    filled up to k from the rest of the guard's ranking when the plan's ran short."""
    order = guarded_order([c.node_id for c in selected], unconstrained, k, reserve)
    by_id = {c.node_id: c for c in selected}
    missing = [i for i in order if i not in by_id]
    if missing:
        scorer.prefetch(missing)
    for node_id in missing:
        known = pool.events.get(node_id)
        by_id[node_id] = known or scorer.event(node_id, unconstrained_trace(node_id))
    return [by_id[i] for i in order]


def _embed_queries(
    store: MemoryStoreAPI,
    queries: list[str],
    config: SearchConfig,
    window: Window | None,
    asked: str | None = None,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The plan's query vectors, or None when nothing reads them (the BM25 baseline never
    embeds); with `hub_penalty`, less that share of the memory's mean event vector
    (`memory.search.hubs`). With `asked` (the guard's words), also their plain vector, from
    the same call: one look-up of the embedding cache a round instead of two."""
    needed = (
        config.use_dense
        or config.rank_by == "fusion_score"
        or (config.use_temporal and window is not None)
    )
    texts = [*(queries if needed else []), *([asked] if asked is not None else [])]
    if not texts:
        return None, None
    vectors = np.atleast_2d(np.asarray(store.embed_queries(texts), dtype=np.float32))
    asked_vector = vectors[-1] if asked is not None else None
    if not needed:
        return None, asked_vector
    return hub_corrected(store, vectors[: len(queries)], config.hub_penalty), asked_vector


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
