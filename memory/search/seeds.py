"""Seed retrieval: the ranked lists that reciprocal rank fusion turns into seeds.

Lists are named so that every seed can say who found it: ``dense:0`` is the focus
query, ``dense:1…3`` its rewrites, ``dense:packs`` the fused summaries nearest the focus
query, ``bm25`` the lexical query, ``temporal`` the events of a confident time window
ranked by cosine to the focus query.

The dense lists of the question and its rewrites hold events only, and fused summaries
come in one list of their own: a summary is written from many events and sits near many
phrasings of a question, so in a shared ranking packs took 4–6 of each query's 10 places,
and four near-copies of one query voted those packs above the atomic evidence.

A time window never filters: the dense and lexical lists are the same with or without
one, and the window only *adds* the ``temporal`` list (and, in scoring, a small prior).
A planner's window is a reading of the question, and a wrong reading must not be able
to remove the evidence the plain question finds — the causes of "why was the match
cancelled on Saturday?" may lie on Thursday.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from memory.models import NodeKind
from memory.search.cache import StoreCache
from memory.search.config import SearchConfig
from memory.search.plan import MAX_REWRITES, RoundPlan
from memory.store_api import MemoryStoreAPI
from memory.text import tokenize

Window = tuple[datetime, datetime]

DENSE_PREFIX = "dense"
BM25_LIST = "bm25"
MOMENT_LIST = f"{DENSE_PREFIX}:moments"  # the guard's dense hits read with their moments
TEMPORAL_LIST = "temporal"
PACK_LIST = f"{DENSE_PREFIX}:packs"


def confident(confidence: float, config: SearchConfig) -> bool:
    """A constraint is honoured only when constraints are on and the planner is sure enough."""
    return config.use_constraints and confidence >= config.constraint_confidence


def active_window(plan: RoundPlan, config: SearchConfig) -> Window | None:
    """The plan's time window when it is enabled, bounded and confident; otherwise None."""
    window = plan.time_window
    if not confident(window.confidence, config):
        return None
    return window.bounds()


def seed_queries(
    plan: RoundPlan, config: SearchConfig, store: MemoryStoreAPI | None = None
) -> list[str]:
    """The focus query, then (with rewrites on) up to three rewrites other than the focus;
    with `store` and `SearchConfig.common_word_share`, each rewrite less its common words."""
    queries = [plan.focus]
    if config.use_rewrites:
        queries += [q for q in plan.semantic_queries if q != plan.focus]
    queries = list(dict.fromkeys(queries))[: 1 + MAX_REWRITES]
    if store is None or config.common_word_share is None:
        return queries
    focus, *rewrites = queries
    stripped = (without_common_words(store, q, config.common_word_share) for q in rewrites)
    return list(dict.fromkeys([focus, *(q for q in stripped if q)]))


def without_common_words(store: MemoryStoreAPI, query: str, share: float) -> str:
    """`query` less the words all of whose tokens are in more than `share` of the memory's
    records (`MemoryStoreAPI.common_terms`); words with no token (stopwords) stay. A rewrite
    is a few key words, and a speaker's name, carried by every turn they said, pulls a short
    query's vector to all of their turns ("Sam series watch" to "Sam said: ...")."""
    common = set(store.common_terms(query, share))
    if not common:
        return query
    return " ".join(
        word for word in query.split() if not (tokens := tokenize(word)) or set(tokens) - common
    )


def dense_list(
    cache: StoreCache,
    vector: np.ndarray,
    depth: int,
    kind: NodeKind = NodeKind.EVENT,
    moments: bool = False,
) -> list[str]:
    """One query's `depth` best dense hits of one node kind; with `moments`, events read
    with their moments where the store holds any (`moment_read`)."""
    if moments and kind == NodeKind.EVENT:
        read = moment_read(cache.store, vector, depth)
        if read is not None:
            return read
    return [node_id for node_id, _ in cache.store.dense_search(vector, depth, kind=kind)]


def moment_read(store: MemoryStoreAPI, vector: np.ndarray, depth: int) -> list[str] | None:
    """The `depth` best events for the query when a dialogue turn that has a moment is
    scored by it (`memory.moments`) and every other event by its cosine (the store's
    `moment_search`); None when the memory holds no moment."""
    hits = store.moment_search(vector, depth)
    return [node_id for node_id, _ in hits] if hits else None


def lexical_list(cache: StoreCache, query: str, config: SearchConfig) -> list[str]:
    """BM25L hits for the lexical query."""
    kind = None if config.use_fused else NodeKind.EVENT
    hits = cache.store.lexical_search(
        query, config.bm25_top, kind=kind, common_share=config.common_word_share
    )
    return [node_id for node_id, _ in hits]


def temporal_list(
    cache: StoreCache, focus_vector: np.ndarray, quota: int, window: Window
) -> list[str]:
    """Events inside the window, ranked by cosine to the focus query (ties by id)."""
    ids = cache.store.events_between(*window)
    if not ids:
        return []
    cosines = cache.cosines(ids, focus_vector)
    if 0 < quota < len(ids):
        # only events at or above the quota-th best cosine can make the cut (ties included),
        # so only they are sorted (a week of the generated benchmark is ~1,400 events, the
        # default quota 15)
        cut = np.partition(cosines, len(ids) - quota)[len(ids) - quota]
        within: list[int] = np.flatnonzero(cosines >= cut).tolist()
    else:
        within = list(range(len(ids)))
    order = sorted(within, key=lambda i: (-float(cosines[i]), ids[i]))
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
            lists[f"{DENSE_PREFIX}:{index}"] = dense_list(
                cache, vector, config.dense_per_query, moments=config.use_moments
            )
        if config.use_fused and config.pack_seeds:
            lists[PACK_LIST] = dense_list(
                cache, query_vectors[0], config.pack_seeds, NodeKind.FUSED
            )
    if config.use_bm25:
        lists[BM25_LIST] = lexical_list(cache, plan.lexical_query(), config)
    if config.use_temporal and window is not None and query_vectors is not None:
        quota = plan.seed.time_window_quota or config.time_window_quota
        lists[TEMPORAL_LIST] = temporal_list(cache, query_vectors[0], quota, window)
    return lists


def unconstrained_lists(
    store: MemoryStoreAPI,
    question: str,
    depth: int,
    lexical: bool = True,
    vector: np.ndarray | None = None,
    moments: bool = False,
    common_share: float | None = None,
) -> dict[str, list[str]]:
    """The guard's lists: the question's `depth` best dense events and, with `lexical`, its
    BM25L events — the `hybrid` baseline's lists (the dense one alone is `naive_rag`'s),
    untouched by any plan, less the BM25L hits that share only common words with the question
    when `common_share` is given — and with `moments`, where the reader sees any, one more: the
    dense events read with their moments (`moment_read`). `vector`: the question's plain
    vector, when the caller has it."""
    if vector is None:
        vector = np.asarray(store.embed_queries([question]), dtype=np.float32)[0]
    dense = store.dense_search(vector, depth, kind=NodeKind.EVENT)
    lists = {f"{DENSE_PREFIX}:0": [node_id for node_id, _ in dense]}
    read = moment_read(store, vector, depth) if moments else None
    if read is not None:
        lists[MOMENT_LIST] = read
    if lexical:
        lexical_hits = store.lexical_search(
            question, depth, kind=NodeKind.EVENT, common_share=common_share
        )
        lists[BM25_LIST] = [node_id for node_id, _ in lexical_hits]
    return lists
