"""Reciprocal rank fusion against a hand-computed example (k = 60, one-based ranks)."""

from __future__ import annotations

import pytest

from memory.search.rrf import fuse_lists, rrf_scores

LISTS = {
    "dense:0": ["a", "b", "c"],
    "dense:1": ["b", "d"],
    "bm25": ["c", "a", "e"],
}


def test_rrf_scores_match_hand_computation() -> None:
    scores = rrf_scores(LISTS, k=60)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["d"] == pytest.approx(1 / 62)
    assert scores["e"] == pytest.approx(1 / 63)


def test_fused_order_names_lists_and_breaks_ties_by_best_rank() -> None:
    seeds = fuse_lists(LISTS, k=60, keep=30)
    # a and b tie on 1/61 + 1/62; a holds rank 1 in the earlier list.
    assert [s.node_id for s in seeds] == ["a", "b", "c", "d", "e"]
    assert seeds[0].lists == ("dense:0", "bm25")
    assert seeds[1].lists == ("dense:0", "dense:1")
    assert seeds[4].lists == ("bm25",)


def test_repeat_inside_one_list_counts_once_and_keeps_ranks_one_based() -> None:
    scores = rrf_scores({"x": ["a", "a", "b"]}, k=60)
    assert scores == pytest.approx({"a": 1 / 61, "b": 1 / 62})


def test_seed_pool_keeps_only_the_best_30() -> None:
    ranked = [f"n{i:02d}" for i in range(50)]
    seeds = fuse_lists({"dense:0": ranked, "bm25": list(reversed(ranked))}, k=60, keep=30)
    assert len(seeds) == 30
    assert all(s.score > 0 for s in seeds)
    # n00 = 1/61 + 1/110 and n49 tie; every item appears in both lists, the extremes win.
    expected = sorted(ranked, key=lambda n: -(1 / (61 + int(n[1:])) + 1 / (110 - int(n[1:]))))
    assert {s.node_id for s in seeds} == set(expected[:30])


def test_a_different_constant_changes_the_scores() -> None:
    assert rrf_scores({"x": ["a"]}, k=1)["a"] == pytest.approx(0.5)


def test_a_weighted_list_counts_as_that_many_copies_of_it() -> None:
    weighted = fuse_lists(LISTS, k=60, keep=30, weights={"bm25": 3.0})
    copies = fuse_lists({**LISTS, "bm25_2": LISTS["bm25"], "bm25_3": LISTS["bm25"]}, k=60, keep=30)
    assert [(s.node_id, pytest.approx(s.score)) for s in weighted] == [
        (s.node_id, s.score) for s in copies
    ]
    assert weighted[0].node_id == "c"  # bm25's first, now worth three first places
    assert rrf_scores(LISTS, k=60, weights={}) == rrf_scores(LISTS, k=60)
