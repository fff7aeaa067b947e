"""The fusion-aware scores, as pure functions of numbers (paper, Appendix C).

Atomic events use s(x) = cos(q,x)·β^h + w_rrf·r_RRF(x) + π(path) + b_date; fused
nodes use s_pack(v), which mixes the summary's own s(v) with its members' scores so
that a pack ranks high when it holds strong evidence, not merely a good summary.
Keeping them free of the store makes the hand-computed tests exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from memory.records import ExpansionTrace
from memory.search.config import PackWeights, PathPriors


def atomic_score(
    cosine: float,
    distance: int,
    rrf: float,
    prior: float,
    date_boost: float,
    *,
    beta: float,
    rrf_weight: float,
) -> float:
    """s(x) = cos·β^h + w_rrf·r_RRF + π + b_date: farther graph hops count for less relevance."""
    return cosine * beta**distance + rrf_weight * rrf + prior + date_boost


def mean_top(values: Sequence[float], n: int = 3) -> float:
    """Mean of the n largest values; fewer than n values average whatever exists (0 for none)."""
    if not values:
        return 0.0
    best = sorted(values, reverse=True)[:n]
    return sum(best) / len(best)


def pack_score(
    summary_score: float,
    member_scores: Sequence[float],
    distance: int,
    *,
    weights: PackWeights,
    beta: float,
) -> float:
    """s_pack(v) = w_s·s_v + w_max·max_j s_j + w_top3·MeanTop3_j s_j + w_hop·β^h_v."""
    best = max(member_scores) if member_scores else 0.0
    return (
        weights.summary * summary_score
        + weights.max_member * best
        + weights.mean_top3 * mean_top(member_scores, 3)
        + weights.hop * beta**distance
    )


def path_prior(trace: ExpansionTrace, priors: PathPriors) -> float:
    """π(path): the prior of the trace's kind (seed, time window, causal, membership, semantic…)."""
    return priors.value(trace.prior_kind())


def window_boost(
    start: datetime, end: datetime, window: tuple[datetime, datetime] | None, boost: float
) -> float:
    """b_date: `boost` when the node's span [start, end] overlaps the plan's confident window.

    This is how a time window ranks: as a prior inside the plan's own ranking, never as
    a filter. It can be strong, because the guard (memory.search.guard) keeps the plain
    question's best hits whatever the window says.
    """
    if boost == 0.0 or window is None:
        return 0.0
    return boost if start <= window[1] and end >= window[0] else 0.0


def specific_boost(boost: float, inside: int, total: int) -> float:
    """The window bonus scaled by how much of the memory the window leaves out.

    A window holding most of what is remembered ("why … on Saturday?" looking back three
    days over a three-day memory) says little about where the evidence is; a one-day window
    over a week says a lot. So b_date = boost · (1 − inside / total).
    """
    if boost == 0.0 or total <= 0:
        return 0.0
    return boost * (1.0 - min(inside, total) / total)


def max_cosines(query_vectors: np.ndarray, node_vectors: np.ndarray) -> np.ndarray:
    """cos(q, x) per node: the best match over the focus and rewrite query vectors.

    Vectors are L2-normalised, so one matrix product gives every cosine at once.
    """
    if node_vectors.size == 0 or query_vectors.size == 0:
        return np.zeros(len(node_vectors), dtype=np.float32)
    best: np.ndarray = (node_vectors @ query_vectors.T).max(axis=1)
    return best
