"""The atomic and pack scores against hand-computed values (β = 0.7, paper priors)."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from memory.models import EdgeType
from memory.records import ExpansionTrace, PathStep
from memory.search.config import PackWeights, PathPriors
from memory.search.scoring import (
    atomic_score,
    max_cosines,
    mean_top,
    pack_score,
    path_prior,
    specific_boost,
    window_boost,
)


def test_atomic_score_for_a_two_hop_causal_candidate() -> None:
    # 0.9·0.7² + 2·(1/61 + 1/62) + 0.04 = 0.441 + 0.0650444… + 0.04
    score = atomic_score(0.9, 2, 1 / 61 + 1 / 62, 0.04, 0.0, beta=0.7, rrf_weight=2.0)
    assert score == pytest.approx(0.5460444, abs=1e-6)


def test_atomic_score_for_a_direct_seed() -> None:
    score = atomic_score(0.5, 0, 1 / 61, 0.08, 0.0, beta=0.7, rrf_weight=2.0)
    assert score == pytest.approx(0.5 + 2 / 61 + 0.08)


def test_pack_score_with_four_members() -> None:
    # 0.40·0.5 + 0.35·0.9 + 0.15·mean(0.9, 0.6, 0.3) + 0.10·0.7
    score = pack_score(0.5, [0.9, 0.3, 0.6, 0.2], 1, weights=PackWeights(), beta=0.7)
    assert score == pytest.approx(0.2 + 0.315 + 0.09 + 0.07)


def test_pack_score_mean_top3_uses_what_exists() -> None:
    assert mean_top([0.8, 0.4]) == pytest.approx(0.6)
    assert mean_top([]) == 0.0
    # 0.40·0.2 + 0.35·0.8 + 0.15·0.6 + 0.10·1
    score = pack_score(0.2, [0.8, 0.4], 0, weights=PackWeights(), beta=0.7)
    assert score == pytest.approx(0.08 + 0.28 + 0.09 + 0.1)


def _trace(
    *edges: EdgeType, lists: tuple[str, ...] = ("dense:0",), window: bool = False
) -> ExpansionTrace:
    path = [PathStep(edge=e, node_id=f"n{i}") for i, e in enumerate(edges)]
    return ExpansionTrace(
        seed_id="s", path=path, distance=len(path), seed_lists=list(lists), time_window_hit=window
    )


@pytest.mark.parametrize(
    ("trace", "kind", "value"),
    [
        (_trace(), "seed", 0.08),
        (_trace(lists=("temporal",), window=True), "time_window", 0.06),
        (_trace(lists=("dense:0", "temporal"), window=True), "seed", 0.08),
        (_trace(EdgeType.CAUSAL, EdgeType.CAUSAL), "causal", 0.04),
        (_trace(EdgeType.BELONG, EdgeType.BELONG), "membership", 0.03),
        (_trace(EdgeType.CAUSAL, EdgeType.BELONG), "causal", 0.04),
        (_trace(EdgeType.SEMANTIC), "semantic", 0.01),
        (_trace(EdgeType.CAUSAL, EdgeType.SEMANTIC), "semantic", 0.01),
        (ExpansionTrace(seed_id="s", distance=1, neighbor_of="a"), "temporal_neighbor", 0.04),
    ],
)
def test_prior_kind_selection(trace: ExpansionTrace, kind: str, value: float) -> None:
    assert trace.prior_kind() == kind
    assert path_prior(trace, PathPriors()) == pytest.approx(value)


def test_window_boost_applies_only_inside_the_window() -> None:
    day = datetime(2025, 3, 4, 9, 0)
    window = (datetime(2025, 3, 4, 0, 0), datetime(2025, 3, 4, 23, 59))
    assert window_boost(day, day, window, 0.0) == 0.0  # boost off
    assert window_boost(day, day, None, 0.2) == 0.0  # no confident window
    assert window_boost(day, day, window, 0.2) == 0.2
    next_day = (datetime(2025, 3, 5, 0, 0), datetime(2025, 3, 5, 23, 59))
    assert window_boost(day, day, next_day, 0.2) == 0.0
    span_end = datetime(2025, 3, 6, 9, 0)  # a fused node's span reaching into the window
    assert window_boost(day, span_end, next_day, 0.2) == 0.2


def test_cosine_is_the_best_match_over_query_vectors() -> None:
    queries = np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float32)
    nodes = np.array([[0.6, 0.8, 0], [0, 0, 1]], dtype=np.float32)
    assert max_cosines(queries, nodes).tolist() == pytest.approx([0.8, 0.0])


def test_a_window_holding_most_of_the_memory_earns_little() -> None:
    assert specific_boost(0.6, 10, 70) == pytest.approx(0.6 * 60 / 70)  # one day of a week
    assert specific_boost(0.6, 70, 70) == 0.0  # the window is the whole memory
    assert specific_boost(0.6, 0, 0) == 0.0  # nothing remembered yet
    assert specific_boost(0.0, 1, 70) == 0.0
