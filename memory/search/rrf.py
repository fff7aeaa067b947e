"""Reciprocal rank fusion: several ranked lists become one seed score.

RRF ignores the raw scores of each retriever (cosines and BM25L scores live on
different scales) and rewards items that several retrievers rank high:
r(x) = Σ_lists w_list/(k + rank), ranks one-based, each list's weight 1 unless the caller
weights it (the engine weights the time window's list when the plan asks for its events: see
`SearchConfig.window_list_weight`). Pure functions, no store access.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Seed:
    """One fused seed: its RRF score and the names of the lists that ranked it (in list order)."""

    node_id: str
    score: float
    lists: tuple[str, ...]


def rrf_scores(
    lists: Mapping[str, Sequence[str]], k: int, weights: Mapping[str, float] | None = None
) -> dict[str, float]:
    """r(x) = Σ w/(k + rank) over the lists containing x (w: the list's weight in `weights`,
    else 1); a repeat inside one list counts once."""
    scores: dict[str, float] = {}
    for name, ranked in lists.items():
        weight = (weights or {}).get(name, 1.0)
        seen: set[str] = set()
        rank = 0
        for node_id in ranked:
            if node_id in seen:
                continue
            seen.add(node_id)
            rank += 1
            scores[node_id] = scores.get(node_id, 0.0) + weight / (k + rank)
    return scores


def fuse_lists(
    lists: Mapping[str, Sequence[str]],
    k: int,
    keep: int,
    weights: Mapping[str, float] | None = None,
) -> list[Seed]:
    """The `keep` best positive-score seeds, best first (`weights`: as in `rrf_scores`).

    Ties (equal RRF sums) go to the item with the better single rank, then to the
    earlier list, then to the id, so the seed order never depends on dict order.
    """
    scores = rrf_scores(lists, k, weights)
    members: dict[str, list[str]] = {}
    best_rank: dict[str, tuple[int, int]] = {}
    for list_index, (name, ranked) in enumerate(lists.items()):
        for rank, node_id in enumerate(dict.fromkeys(ranked), start=1):
            members.setdefault(node_id, []).append(name)
            best_rank[node_id] = min(best_rank.get(node_id, (rank, list_index)), (rank, list_index))
    ordered = sorted(
        (node_id for node_id, score in scores.items() if score > 0.0),
        key=lambda node_id: (-scores[node_id], best_rank[node_id], node_id),
    )
    return [Seed(node_id, scores[node_id], tuple(members[node_id])) for node_id in ordered[:keep]]
