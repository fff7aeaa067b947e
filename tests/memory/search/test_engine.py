"""One search call end to end on the fake store, against hand-computed scores."""

from __future__ import annotations

from datetime import date, time

import pytest

from memory.errors import InvalidQueryError, UnknownRecipeError
from memory.models import EdgeType, NodeKind
from memory.records import Candidate
from memory.retrieval import MEMFUSE_DEFAULT, RoundPlan, search
from memory.search.config import GuardConfig
from memory.search.plan import CausalLinks, SeedQuotas, TimeWindow
from memory.search.scoring import atomic_score

from .fakes import FakeStore, make_event, unit

# The guard (tests/memory/search/test_guard.py) is off: these tests check the engine's own
# ranking, which the guard only tops up with the plain question's hybrid hits.
NO_GUARD = MEMFUSE_DEFAULT.with_(guard=GuardConfig(enabled=False))
NO_BM25 = NO_GUARD.with_(use_bm25=False, dense_per_query=1)


def own_score(candidate: Candidate) -> float:
    """s(x) from the candidate's parts (a projected member's `score` is its pack's)."""
    return atomic_score(
        candidate.cosine,
        candidate.trace.distance,
        candidate.rrf,
        candidate.prior,
        0.0,
        beta=0.7,
        rrf_weight=2.0,
    )


@pytest.fixture()
def pack_store() -> FakeStore:
    """q = (1,0,0,0); e1 cos 1.0; fused_F summary cos 0.8 with members m1 (0.6) and m2 (0)."""
    store = FakeStore()
    store.set_query("q", unit(1, 0, 0, 0))
    store.put_event(make_event("e1", "2025-01-01T10:00"), unit(1, 0, 0, 0))
    store.put_event(make_event("m1", "2025-01-01T11:00"), unit(0.6, 0.8, 0, 0))
    store.put_event(make_event("m2", "2025-01-01T12:00"), unit(0, 0, 1, 0))
    store.put_fused_with_vector("fused_F", "the summary", ["m1", "m2"], unit(0.8, 0.6, 0, 0))
    return store


def test_scores_and_projection_match_hand_computation(pack_store: FakeStore) -> None:
    result = search(pack_store, "q", NO_BM25)
    # rank 1 of the events' dense list and of the packs' list
    assert result.seeds == ["e1", "fused_F"]
    assert result.event_ids() == ["e1", "m1", "m2"]
    e1, m1, m2 = result.candidates
    assert e1.score == pytest.approx(1.0 + 2 / 61 + 0.08)
    assert e1.rrf == pytest.approx(1 / 61) and e1.trace.seed_lists == ["dense:0"]
    # the members' own s(x): membership path, distance 1
    assert own_score(m1) == pytest.approx(0.6 * 0.7 + 0.03)
    assert own_score(m2) == pytest.approx(0.0 * 0.7 + 0.03)
    assert (m1.via_fused, m2.via_fused, e1.via_fused) == ("fused_F", "fused_F", None)
    s_v = 0.8 + 2 / 61 + 0.08
    s_pack = 0.40 * s_v + 0.35 * 0.45 + 0.15 * (0.45 + 0.03) / 2 + 0.10 * 1.0
    assert [f.node_id for f in result.fused] == ["fused_F"]
    assert result.fused[0].score == pytest.approx(s_pack)
    assert result.fused[0].kind == NodeKind.FUSED
    # projected members carry the pack's score, the one that placed them
    assert m1.score == m2.score == pytest.approx(s_pack)


def test_packs_rank_in_a_list_of_their_own(pack_store: FakeStore) -> None:
    """fused_F (cos 0.8) is nearer the question than m1 (0.6), but the question's dense list
    holds events only: m1 keeps its place there and the pack seeds from `dense:packs`."""
    result = search(pack_store, "q", NO_BM25.with_(dense_per_query=2, use_graph=False))
    assert result.seeds == ["e1", "fused_F", "m1"]
    assert [c.trace.seed_lists for c in result.candidates if c.node_id == "m1"] == [["dense:0"]]
    no_packs = NO_BM25.with_(dense_per_query=2, pack_seeds=0, use_graph=False)
    without = search(pack_store, "q", no_packs)
    assert without.seeds == ["e1", "m1"] and without.fused == []


def test_unreached_members_are_scored_one_belong_hop_beyond_the_pack(pack_store: FakeStore) -> None:
    result = search(pack_store, "q", NO_BM25.with_(use_graph=False))
    by_id = {c.node_id: c for c in result.candidates}
    assert own_score(by_id["m1"]) == pytest.approx(0.6 * 0.7 + 0.03)
    assert by_id["m1"].trace.label() == "seed(dense:packs) fused_F → ~belong"


def test_fused_member_cap_comes_from_the_context_budget(pack_store: FakeStore) -> None:
    capped = NO_BM25.context.model_copy(update={"max_members": 1})
    no_graph = NO_BM25.with_(use_graph=False, context=capped)
    assert search(pack_store, "q", no_graph).event_ids() == ["e1", "m1"]
    # exposing members (a fused-expansion budget), m2 is a candidate of its own and competes
    # on its own score
    exposing = NO_BM25.with_(context=capped, fused_expansion_budget=8)
    assert [(c.node_id, c.via_fused) for c in search(pack_store, "q", exposing).candidates] == [
        ("e1", None),
        ("m1", "fused_F"),
        ("m2", None),
    ]
    # by default nothing is exposed: the pack's projection alone places its best member
    with_graph = search(pack_store, "q", NO_BM25.with_(context=capped))
    assert [(c.node_id, c.via_fused) for c in with_graph.candidates] == [
        ("e1", None),
        ("m1", "fused_F"),
    ]


def test_top_k_truncates_the_projection(pack_store: FakeStore) -> None:
    assert search(pack_store, "q", NO_BM25.with_(top_k=2)).event_ids() == ["e1", "m1"]


def test_rewrites_are_separate_dense_lists(pack_store: FakeStore) -> None:
    pack_store.set_query("rewrite", unit(0, 0, 1, 0))
    plan = RoundPlan(focus="q", semantic_queries=["rewrite"])
    result = search(pack_store, plan, NO_BM25.with_(pack_seeds=0))
    assert result.seeds == ["e1", "m2"]
    by_id = {c.node_id: c for c in result.candidates}
    assert by_id["m2"].trace.seed_lists == ["dense:1"]
    assert by_id["m2"].cosine == pytest.approx(1.0)  # best over focus and rewrite vectors
    without = search(pack_store, plan, NO_BM25.with_(pack_seeds=0, use_rewrites=False))
    assert without.seeds == ["e1"]


@pytest.fixture()
def two_days() -> FakeStore:
    """Day 1 and day 2 events; the best dense matches sit on day 2."""
    store = FakeStore()
    store.set_query("walk", unit(1, 0, 0, 0))
    store.put_event(make_event("d2_best", "2025-01-02T09:00", "walk in the park"), unit(1, 0, 0, 0))
    store.put_event(make_event("d2_good", "2025-01-02T10:00", "walk home"), unit(0.9, 0.1, 0, 0))
    store.put_event(make_event("d1_fair", "2025-01-01T09:00", "walk to work"), unit(0.5, 0.5, 0, 0))
    store.put_event(make_event("d1_poor", "2025-01-01T10:00", "coffee"), unit(0, 1, 0, 0))
    store.put_fused_with_vector("fused_d2", "walks", ["d2_best", "d2_good"], unit(0.95, 0.05, 0, 0))
    return store


def window(confidence: float) -> TimeWindow:
    return TimeWindow(
        enabled=True,
        date=date(2025, 1, 1),
        start_time=time(0, 0),
        end_time=time(23, 59),
        confidence=confidence,
    )


def test_confident_time_window_adds_seeds_and_never_drops(two_days: FakeStore) -> None:
    plan = RoundPlan(focus="walk", bm25_query="walk", time_window=window(0.8))
    result = search(two_days, plan, NO_GUARD.with_(use_graph=False))
    # day-2 hits stay: a window is a prior, not a filter
    assert {"d2_best", "d2_good", "d1_fair", "d1_poor"} <= set(result.seeds)
    by_id = {c.node_id: c for c in result.candidates}
    # d1_fair: dense rank 4 (after fused_d2 and the day-2 events), bm25, temporal rank 1
    assert by_id["d1_fair"].trace.seed_lists == ["dense:0", "bm25", "temporal"]
    # d1_poor is found by the dense list's tail and by the window's list
    assert by_id["d1_poor"].trace.seed_lists == ["dense:0", "temporal"]
    plain = search(
        two_days, RoundPlan(focus="walk", bm25_query="walk"), NO_GUARD.with_(use_graph=False)
    )
    assert by_id["d1_fair"].rrf > {c.node_id: c for c in plain.candidates}["d1_fair"].rrf


def test_time_window_only_hit_gets_the_time_window_prior(two_days: FakeStore) -> None:
    plan = RoundPlan(focus="walk", bm25_query="walk", time_window=window(0.8))
    config = MEMFUSE_DEFAULT.with_(use_dense=False, use_graph=False)
    by_id = {c.node_id: c for c in search(two_days, plan, config).candidates}
    assert by_id["d1_poor"].trace.seed_lists == ["temporal"]
    assert by_id["d1_poor"].prior == pytest.approx(0.06)
    assert by_id["d1_fair"].prior == pytest.approx(0.08)
    # temporal list is ranked by cosine to the focus: d1_fair (0.707) before d1_poor (0)
    assert by_id["d1_poor"].rrf == pytest.approx(1 / 62)


@pytest.mark.parametrize(
    ("quota", "weight", "expected"),
    [(None, 3.0, 1.0), (10, 3.0, 1.0), (15, 3.0, 3.0), (15, 1.0, 1.0), (25, 2.0, 2.0)],
)
def test_a_plan_asking_for_more_window_events_weights_the_window_list(
    two_days: FakeStore, quota: int | None, weight: float, expected: float
) -> None:
    """The window's list votes `window_list_weight` in RRF only when the plan asks for more
    of the window's events than the recipe's default quota (10)."""
    plan = RoundPlan(
        focus="walk",
        bm25_query="walk",
        time_window=window(0.8),
        seed=SeedQuotas(time_window_quota=quota),
    )
    config = MEMFUSE_DEFAULT.with_(use_dense=False, use_graph=False, window_list_weight=weight)
    by_id = {c.node_id: c for c in search(two_days, plan, config).candidates}
    assert by_id["d1_poor"].trace.seed_lists == ["temporal"]
    assert by_id["d1_poor"].rrf == pytest.approx(expected / 62)


def test_a_weighted_window_list_lifts_its_event_past_the_pool_cut() -> None:
    """Each of the four dense lists (the question and three rewrites) holds two day-2 events;
    the window's list holds the day-1 event none of them finds. With one vote it ties the
    dense lists' first places and loses the tie (a later list); weighted, it leads."""
    store = FakeStore()
    directions = [(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)]
    for index, (query, direction) in enumerate(zip(("walk", "a", "b", "c"), directions)):
        store.set_query(query, unit(*direction))
        near = tuple(0.9 * x + 0.1 for x in direction)
        store.put_event(make_event(f"d2_{index}a", f"2025-01-02T0{index}:00"), unit(*direction))
        store.put_event(make_event(f"d2_{index}b", f"2025-01-02T0{index}:30"), unit(*near))
    store.put_event(make_event("d1_walk", "2025-01-01T09:00"), unit(0.5, 0.5, 0.5, 0.5))
    plan = RoundPlan(
        focus="walk",
        semantic_queries=["a", "b", "c"],
        time_window=window(0.8),
        seed=SeedQuotas(time_window_quota=15),
    )
    config = NO_GUARD.with_(use_bm25=False, use_graph=False, dense_per_query=2, seed_pool=4)
    assert search(store, plan, config).seeds[0] == "d1_walk"
    assert "d1_walk" not in search(store, plan, config.with_(window_list_weight=1.0)).seeds


def test_unconfident_window_is_ignored(two_days: FakeStore) -> None:
    plan = RoundPlan(focus="walk", bm25_query="walk", time_window=window(0.5))
    result = search(two_days, plan, NO_GUARD.with_(use_graph=False))
    assert result.seeds[0] == "d2_best" and "events_between" not in two_days.calls


def test_window_keeps_fused_nodes_overlapping_it(two_days: FakeStore) -> None:
    day2 = TimeWindow(enabled=True, date=date(2025, 1, 2), confidence=0.9)
    plan = RoundPlan(focus="walk", bm25_query="walk", time_window=day2)
    assert "fused_d2" in search(two_days, plan, MEMFUSE_DEFAULT).seeds


def test_a_question_time_hides_later_events(two_days: FakeStore) -> None:
    result = search(two_days, "walk", MEMFUSE_DEFAULT, question_time="2025-01-01T23:00:00")
    assert set(result.event_ids()) == {"d1_fair", "d1_poor"}
    assert set(result.seeds) == {"d1_fair", "d1_poor"}  # later nodes take no seed place
    assert set(search(two_days, "walk", MEMFUSE_DEFAULT).event_ids()) >= {"d2_best", "d2_good"}


def linked(events: dict[str, str], links: list[tuple[str, str, EdgeType]]) -> FakeStore:
    """Query "q" = (1,0,0,0); the first event matches it, each other one its own axis."""
    store = FakeStore()
    store.set_query("q", unit(1, 0, 0, 0))
    for axis, (name, when) in enumerate(events.items()):
        store.put_event(make_event(name, when), unit(*[1 if i == axis else 0 for i in range(4)]))
    for src, dst, edge_type in links:
        store.link(src, dst, edge_type, weight=0.95)
    return store


def test_causal_neighbour_enters_with_its_trace() -> None:
    store = linked(
        {"seed": "2025-01-01T10:00", "cause": "2025-01-01T09:00"},
        [("cause", "seed", EdgeType.CAUSAL)],
    )
    result = search(store, "q", MEMFUSE_DEFAULT.with_(use_bm25=False, dense_per_query=1))
    cause = {c.node_id: c for c in result.candidates}["cause"]
    assert cause.score == pytest.approx(0.0 * 0.7 + 0.04)
    assert cause.trace.label() == "seed(dense:0) seed → ~causal"


@pytest.mark.parametrize(
    ("direction", "confidence", "use_constraints", "reached"),
    [
        ("back", 0.8, True, {"cause"}),  # why …? the seed's cause, not its effect
        ("forward", 0.8, True, {"effect"}),
        ("none", 0.8, True, set()),
        ("none", 0.5, True, {"cause", "effect"}),  # unsure: both ways, as without the plan's say
        ("none", 0.8, False, {"cause", "effect"}),  # constraints off (memfuse_no_rc)
    ],
)
def test_the_plans_causal_links_decide_which_causal_neighbours_enter(
    direction: str, confidence: float, use_constraints: bool, reached: set[str]
) -> None:
    store = linked(
        {"seed": "2025-01-01T10:00", "cause": "2025-01-01T09:00", "effect": "2025-01-01T11:00"},
        [("cause", "seed", EdgeType.CAUSAL), ("seed", "effect", EdgeType.CAUSAL)],
    )
    plan = RoundPlan(
        focus="q",
        causal_links=CausalLinks(direction=direction, confidence=confidence),  # type: ignore[arg-type]
    )
    config = NO_GUARD.with_(use_bm25=False, dense_per_query=1, use_constraints=use_constraints)
    found = {c.node_id for c in search(store, plan, config).candidates}
    assert found - {"seed"} == reached


@pytest.mark.parametrize(
    ("span", "in_day_windows", "walked"),
    [
        (None, False, True),  # no time phrase: the same record on another day may be news
        ((date(2025, 1, 2), date(2025, 1, 2)), False, False),  # one day: not walked
        ((date(2025, 1, 1), date(2025, 1, 3)), False, True),  # several days: walked
        ((date(2025, 1, 2), date(2025, 1, 2)), True, True),  # the knob on: walked as before
    ],
)
def test_semantic_edges_are_not_walked_for_a_window_within_one_day(
    span: tuple[date, date] | None, in_day_windows: bool, walked: bool
) -> None:
    store = linked(
        {"seed": "2025-01-02T10:00", "alike": "2025-01-01T10:00", "cause": "2025-01-02T09:00"},
        [("seed", "alike", EdgeType.SEMANTIC), ("cause", "seed", EdgeType.CAUSAL)],
    )
    when = (
        TimeWindow(enabled=True, date=span[0], end_date=span[1], confidence=0.9)
        if span
        else TimeWindow()
    )
    plan = RoundPlan(focus="q", time_window=when)
    config = NO_GUARD.with_(
        use_bm25=False, dense_per_query=1, semantic_in_day_windows=in_day_windows
    )
    found = {c.node_id for c in search(store, plan, config).candidates}
    assert ("alike" in found) == walked
    assert "cause" in found  # causal edges follow the plan's causal_links (unset: both ways)


def test_bad_input_raises_typed_errors(pack_store: FakeStore) -> None:
    with pytest.raises(InvalidQueryError):
        search(pack_store, "   ")
    with pytest.raises(UnknownRecipeError, match="unknown search recipe 'nope'"):
        search(pack_store, "q", "nope")
    with pytest.raises(InvalidQueryError):
        search(pack_store, "q", question_time="yesterday")


def test_a_rewrite_is_searched_without_the_words_every_record_carries() -> None:
    """Sam's name is in each of her turns: the rewrite "Sam series watch" is searched as
    "series watch" (its vector leads to the recommendation, the full rewrite's to her turn
    naming Marcus), while the focus query stays as asked and a baseline's rewrites untouched."""
    store = FakeStore()
    store.put_event(make_event("t1", "2025-01-01T10:00", "Sam said: Marcus!"), unit(0, 1, 0, 0))
    store.put_event(
        make_event("t2", "2025-01-01T10:01", "Sam said: watch the series Borgen"),
        unit(0, 0, 1, 0),
    )
    store.put_event(make_event("t3", "2025-01-01T10:02", "Marcus said: ok"), unit(0, 0, 0, 1))
    store.set_query("Which series did Sam tell Marcus to watch", unit(0, 0, 0, 1))
    store.set_query("Sam series watch", unit(0, 1, 0, 0))
    store.set_query("Sam", unit(0, 1, 0, 0))
    store.set_query("series watch", unit(0, 0, 1, 0))
    plan = RoundPlan(
        focus="Which series did Sam tell Marcus to watch",
        semantic_queries=["Sam series watch", "Sam"],
    )
    config = NO_BM25.with_(pack_seeds=0, use_moments=False)
    assert config.common_word_share == 0.4 and store.common_terms("Sam series", 0.4) == ["sam"]
    stripped = search(store, plan, config)
    lists = {c.node_id: c.trace.seed_lists for c in stripped.candidates}
    assert lists["t3"] == ["dense:0"]  # the focus as asked
    assert lists["t2"] == ["dense:1"] and "t1" not in lists  # "Sam" alone is gone
    plain = search(store, plan, config.with_(common_word_share=None))
    lists = {c.node_id: c.trace.seed_lists for c in plain.candidates}
    assert "dense:1" in lists["t1"] and "t2" not in lists
