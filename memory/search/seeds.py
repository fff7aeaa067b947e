"""Seed retrieval: the ranked lists that reciprocal rank fusion turns into seeds.

Lists are named so that every seed can say who found it: ``dense:0`` is the focus
query, ``dense:1…3`` its rewrites, ``bm25`` the lexical query, ``temporal`` the
events of a confident time window ranked by cosine to the focus query.

A confident window also constrains the dense and lexical lists: an event outside
the window is dropped (not merely demoted, because a confident planner has said the
answer lies inside it; the temporal list and graph expansion still reach across the
edge of the window when evidence is linked to it), and a fused node is kept only
when its member span overlaps the window.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from memory.models import NodeKind, is_fused_id
from memory.search.cache import StoreCache
from memory.search.config import SearchConfig
from memory.search.plan import MAX_REWRITES, RoundPlan

Window = tuple[datetime, datetime]

DENSE_PREFIX = "dense"
BM25_LIST = "bm25"
TEMPORAL_LIST = "temporal"


def confident(confidence: float, config: SearchConfig) -> bool:
    """A constraint is honoured only when constraints are on and the planner is sure enough."""
    return config.use_constraints and confidence >= config.constraint_confidence


def active_window(plan: RoundPlan, config: SearchConfig) -> Window | None:
    """The plan's time window when it is enabled, bounded and confident; otherwise None."""
    window = plan.time_window
    if not confident(window.confidence, config):
        return None
    return window.bounds()


def seed_queries(plan: RoundPlan, config: SearchConfig) -> list[str]:
    """The focus query, then (with rewrites on) up to three rewrites other than the focus."""
    queries = [plan.focus]
    if config.use_rewrites:
        queries += [q for q in plan.semantic_queries if q != plan.focus]
    return list(dict.fromkeys(queries))[: 1 + MAX_REWRITES]


def _overlaps(span: Window, window: Window) -> bool:
    return span[0] <= window[1] and span[1] >= window[0]


def _in_window(cache: StoreCache, ids: list[str], window: Window) -> list[str]:
    """Ids whose time span overlaps the window (events in one batch, fused nodes by span)."""
    events = cache.events([i for i in ids if not is_fused_id(i)])
    kept: list[str] = []
    for node_id in ids:
        if is_fused_id(node_id):
            if _overlaps(cache.span(node_id), window):
                kept.append(node_id)
        elif node_id in events and window[0] <= events[node_id].timestamp <= window[1]:
            kept.append(node_id)
    return kept


def dense_list(
    cache: StoreCache, vector: np.ndarray, config: SearchConfig, window: Window | None
) -> list[str]:
    """One query's dense hits: events and (with fusion on) fused summaries in one ranking."""
    n = config.dense_per_query
    store = cache.store
    if window is None:
        kind = None if config.use_fused else NodeKind.EVENT
        return [node_id for node_id, _ in store.dense_search(vector, n, kind=kind)]
    hits = store.dense_search(vector, n, kind=NodeKind.EVENT, between=window)
    if config.use_fused:
        fused = store.dense_search(vector, n, kind=NodeKind.FUSED)
        kept = set(_in_window(cache, [node_id for node_id, _ in fused], window))
        hits = hits + [(node_id, score) for node_id, score in fused if node_id in kept]
    hits = sorted(hits, key=lambda pair: (-pair[1], pair[0]))
    return [node_id for node_id, _ in hits[:n]]


def lexical_list(
    cache: StoreCache, query: str, config: SearchConfig, window: Window | None
) -> list[str]:
    """BM25L hits for the lexical query; under a window, over-fetched then filtered to it."""
    kind = None if config.use_fused else NodeKind.EVENT
    fetch = config.bm25_top * (config.window_overfetch if window is not None else 1)
    ids = [node_id for node_id, _ in cache.store.lexical_search(query, fetch, kind=kind)]
    if window is not None:
        ids = _in_window(cache, ids, window)
    return ids[: config.bm25_top]


def temporal_list(
    cache: StoreCache, focus_vector: np.ndarray, quota: int, window: Window
) -> list[str]:
    """Events inside the window, ranked by cosine to the focus query (ties by id)."""
    ids = cache.store.events_between(*window)
    if not ids:
        return []
    cosines = cache.vectors(ids) @ focus_vector
    order = sorted(range(len(ids)), key=lambda i: (-float(cosines[i]), ids[i]))
    return [ids[i] for i in order[:quota]]


def collect_seed_lists(
    cache: StoreCache,
    plan: RoundPlan,
    config: SearchConfig,
    query_vectors: np.ndarray | None,
    window: Window | None,
) -> dict[str, list[str]]:
    """Every enabled retriever's ranked list, keyed by list name, in a fixed order."""
    lists: dict[str, list[str]] = {}
    if config.use_dense and query_vectors is not None:
        for index, vector in enumerate(query_vectors):
            lists[f"{DENSE_PREFIX}:{index}"] = dense_list(cache, vector, config, window)
    if config.use_bm25:
        lists[BM25_LIST] = lexical_list(cache, plan.lexical_query(), config, window)
    if config.use_temporal and window is not None and query_vectors is not None:
        quota = plan.seed.time_window_quota or config.time_window_quota
        lists[TEMPORAL_LIST] = temporal_list(cache, query_vectors[0], quota, window)
    return lists


def drop_after(
    cache: StoreCache, lists: dict[str, list[str]], cutoff: datetime
) -> dict[str, list[str]]:
    """The lists without nodes observed after `cutoff` (a fused node counts from its start),
    so that hidden future events do not take seed-pool places from visible ones."""
    ids = list(dict.fromkeys(i for ranked in lists.values() for i in ranked))
    cache.events(i for i in ids if not is_fused_id(i))
    visible = {i for i in ids if cache.span(i)[0] <= cutoff}
    return {name: [i for i in ranked if i in visible] for name, ranked in lists.items()}
