"""Typed graph expansion on a hand-built graph: traces, thresholds, hop limit, fused budget.

Graph (causal edges stored in the arrow's direction):

    c ──causal──▶ a ──causal──▶ b ──causal──▶ d ──causal──▶ x
    a ~semantic 0.9~ s_hi        a ~semantic 0.7~ s_lo
    fused_A = {a, m1}   fused_B = {b, m2}   fused_D = {d, m3}
    fused_P = {p, q}, p ──causal──▶ r, p also in fused_Q = {p, t}
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.models import EdgeType
from memory.records import ExpansionTrace
from memory.search.cache import StoreCache
from memory.search.config import MEMFUSE_DEFAULT, SearchConfig
from memory.search.expansion import Expander, _extended_kind, expand, extend, root_trace
from memory.search.plan import CausalDirection
from memory.search.rrf import Seed

from .fakes import FakeStore, make_event, unit

C, B, S = EdgeType.CAUSAL, EdgeType.BELONG, EdgeType.SEMANTIC


@pytest.fixture()
def store() -> FakeStore:
    store = FakeStore()
    names = [
        "a",
        "b",
        "c",
        "d",
        "x",
        "s_hi",
        "s_lo",
        "m1",
        "m2",
        "m3",
        "p",
        "q",
        "r",
        "t",
        "w",
        "z",
    ]
    for hour, name in enumerate(names):
        store.put_event(make_event(name, f"2025-01-01T{hour:02d}:00"), unit(1, 0, 0, 0))
    store.link("c", "a", C)
    store.link("a", "b", C)
    store.link("b", "d", C)
    store.link("d", "x", C)
    store.link("a", "s_hi", S, weight=0.9)
    store.link("a", "s_lo", S, weight=0.7)
    store.link("p", "r", C)
    store.put_fused_with_vector("fused_A", "a and m1", ["a", "m1"], unit(1, 0, 0, 0))
    store.put_fused_with_vector("fused_B", "b and m2", ["b", "m2"], unit(1, 0, 0, 0))
    store.put_fused_with_vector("fused_D", "d and m3", ["d", "m3"], unit(1, 0, 0, 0))
    store.put_fused_with_vector("fused_P", "p and q", ["p", "q"], unit(1, 0, 0, 0))
    store.put_fused_with_vector("fused_Q", "p and t", ["p", "t"], unit(1, 0, 0, 0))
    return store


EXPOSING = MEMFUSE_DEFAULT.with_(fused_expansion_budget=8)
"""The paper's policy with member exposure on (the default exposes none: see the config)."""


def run(
    store: FakeStore, seeds: list[str], config: SearchConfig = MEMFUSE_DEFAULT
) -> dict[str, ExpansionTrace]:
    return expand(StoreCache(store), [Seed(s, 0.01, ("dense:0",)) for s in seeds], config)


def hops(trace: ExpansionTrace) -> list[tuple[str, str, bool]]:
    return [(step.edge.value, step.node_id, step.reverse) for step in trace.path]


def test_atomic_seed_walks_causal_edges_both_ways(store: FakeStore) -> None:
    traces = run(store, ["a"])
    assert traces["a"].distance == 0 and traces["a"].path == []
    assert hops(traces["b"]) == [("causal", "b", False)]
    assert hops(traces["c"]) == [("causal", "c", True)]  # stored c -> a, walked against it
    assert hops(traces["d"]) == [("causal", "b", False), ("causal", "d", False)]
    assert traces["d"].distance == 2 and traces["d"].seed_id == "a"


def test_the_plans_causal_direction_picks_which_causal_edges_are_walked(store: FakeStore) -> None:
    """`CausalLinks`: back walks from the seed to its causes (and theirs), forward to its
    effects (and theirs), none walks no causal edge; semantic edges are walked as always."""

    def reached(direction: str) -> set[str]:
        seeds = [Seed("a", 0.01, ("dense:0",))]
        traces = expand(StoreCache(store), seeds, MEMFUSE_DEFAULT, direction)  # type: ignore[arg-type]
        return set(traces) & {"b", "c", "d", "s_hi"}

    assert reached("both") == {"b", "c", "d", "s_hi"}
    assert reached("back") == {"c", "s_hi"}  # c ──▶ a: a's cause; b and d are its effects
    assert reached("forward") == {"b", "d", "s_hi"}
    assert reached("none") == {"s_hi"}
    # from the end of a chain, back reaches two causes up within the hop limit
    back_from_d = expand(
        StoreCache(store), [Seed("d", 0.01, ("dense:0",))], MEMFUSE_DEFAULT, "back"
    )
    assert hops(back_from_d["a"]) == [("causal", "b", True), ("causal", "a", True)]
    assert "x" not in back_from_d


def test_semantic_edges_can_be_left_unwalked(store: FakeStore) -> None:
    seeds = [Seed("a", 0.01, ("dense:0",))]
    traces = expand(StoreCache(store), seeds, MEMFUSE_DEFAULT, "both", semantic=False)
    assert "s_hi" not in traces and {"b", "c", "d"} <= set(traces)


def test_hop_limit_is_respected(store: FakeStore) -> None:
    assert "x" not in run(store, ["a"])  # three causal hops away
    one_hop = run(store, ["a"], MEMFUSE_DEFAULT.with_(max_hops=1))
    assert "b" in one_hop and "d" not in one_hop


def test_semantic_edges_below_threshold_are_not_walked(store: FakeStore) -> None:
    traces = run(store, ["a"])
    assert hops(traces["s_hi"]) == [("semantic", "s_hi", False)]
    assert "s_lo" not in traces
    lowered = run(store, ["a"], MEMFUSE_DEFAULT.with_(semantic_threshold=0.6))
    assert "s_lo" in lowered


def test_a_semantic_hop_ends_its_path_and_a_causal_chain_goes_on(store: FakeStore) -> None:
    """`semantic_leaves`: a semantic neighbour is a candidate, but the walk does not go on
    from it (its own causal and semantic neighbours stay out); a causal neighbour's semantic
    neighbour is still reached, at the second hop."""
    store.link("s_hi", "e1", C)  # from a semantic neighbour: a causal hop ...
    store.link("s_hi", "e2", S, weight=0.95)  # ... and a semantic one
    store.link("b", "e3", S, weight=0.95)  # from a causal neighbour: a semantic hop
    for hour, name in enumerate(["e1", "e2", "e3"], start=16):
        store.put_event(make_event(name, f"2025-01-01T{hour:02d}:00"), unit(1, 0, 0, 0))
    traces = run(store, ["a"])
    assert hops(traces["s_hi"]) == [("semantic", "s_hi", False)]
    assert "e1" not in traces and "e2" not in traces
    assert hops(traces["e3"]) == [("causal", "b", False), ("semantic", "e3", False)]
    assert hops(traces["d"]) == [("causal", "b", False), ("causal", "d", False)]
    walked_on = run(store, ["a"], MEMFUSE_DEFAULT.with_(semantic_leaves=False))
    assert hops(walked_on["e1"]) == [("semantic", "s_hi", False), ("causal", "e1", False)]
    assert hops(walked_on["e2"]) == [("semantic", "s_hi", False), ("semantic", "e2", False)]


def test_belong_from_the_seed_and_from_a_one_causal_hop_neighbour(store: FakeStore) -> None:
    traces = run(store, ["a"], EXPOSING)
    assert hops(traces["fused_A"]) == [("belong", "fused_A", False)]
    assert hops(traces["m1"]) == [("belong", "fused_A", False), ("belong", "m1", True)]
    assert traces["m1"].distance == 2
    assert hops(traces["fused_B"]) == [("causal", "b", False), ("belong", "fused_B", False)]
    assert hops(traces["m2"]) == [
        ("causal", "b", False),
        ("belong", "fused_B", False),
        ("belong", "m2", True),
    ]
    # d is two causal hops away: its fused node is not followed.
    assert "fused_D" not in traces and "m3" not in traces


def test_fused_expansion_budget_limits_exposed_members(store: FakeStore) -> None:
    traces = run(store, ["a"], MEMFUSE_DEFAULT.with_(fused_expansion_budget=1))
    assert "fused_A" in traces and "m1" in traces  # reached first, within budget
    assert "fused_B" in traces  # still a candidate ...
    assert "m2" not in traces  # ... but its members are not exposed
    none = run(store, ["a"])  # the default budget: packs are candidates, members are not
    assert "fused_A" in none and "fused_B" in none and "m1" not in none and "m2" not in none


def test_fused_seed_exposes_members_first_then_walks_from_them(store: FakeStore) -> None:
    traces = run(store, ["fused_P"], EXPOSING)
    assert hops(traces["p"]) == [("belong", "p", True)] and traces["p"].distance == 1
    assert hops(traces["q"]) == [("belong", "q", True)]
    assert hops(traces["r"]) == [("belong", "p", True), ("causal", "r", False)]
    assert traces["r"].seed_id == "fused_P"
    # no belong hop out of a member of a fused seed
    assert "fused_Q" not in traces and "t" not in traces


def test_without_fusion_no_belong_edges_are_walked(store: FakeStore) -> None:
    traces = run(store, ["a"], MEMFUSE_DEFAULT.with_(use_fused=False))
    assert set(traces) == {"a", "b", "c", "d", "s_hi"}


def test_without_graph_only_seeds_remain(store: FakeStore) -> None:
    assert set(run(store, ["a", "fused_P"], MEMFUSE_DEFAULT.with_(use_graph=False))) == {
        "a",
        "fused_P",
    }


def test_shortest_distance_wins_across_seeds(store: FakeStore) -> None:
    store.link("z", "d", C)
    traces = run(store, ["a", "z"])  # d is 2 hops from a, 1 hop from z
    assert traces["d"].seed_id == "z" and traces["d"].distance == 1


def test_equal_distance_keeps_the_higher_prior(store: FakeStore) -> None:
    store.link("a", "w", S, weight=0.95)
    store.link("z", "w", C)
    traces = run(store, ["a", "z"])  # semantic from the first seed, causal from the second
    assert traces["w"].prior_kind() == "causal" and traces["w"].seed_id == "z"


def test_a_seed_keeps_its_own_trace(store: FakeStore) -> None:
    traces = run(store, ["a", "b"])
    assert traces["b"].distance == 0 and traces["b"].seed_id == "b"


def test_max_expanded_caps_the_pool_but_keeps_seeds(store: FakeStore) -> None:
    traces = run(store, ["a", "p"], MEMFUSE_DEFAULT.with_(max_expanded=3))
    assert len(traces) == 3 and {"a", "p"} <= set(traces)


# --- the walk builds a trace only when it is kept or walked on -----------------------------


class EagerExpander(Expander):
    """The walk as first written: every hop builds its trace and offers it to the pool."""

    def _may_keep(self, node_id: str, distance: int, kind: str) -> bool:
        return True


NODES = [f"n{i}" for i in range(9)]
DIRECTIONS: list[CausalDirection] = ["both", "back", "forward", "none"]
graphs = st.tuples(
    st.lists(
        st.tuples(
            st.sampled_from(NODES),
            st.sampled_from(NODES),
            st.sampled_from([C, S]),
            st.sampled_from([0.55, 0.75, 0.95]),
        ),
        max_size=24,
    ),
    st.lists(st.lists(st.sampled_from(NODES), min_size=2, max_size=4, unique=True), max_size=3),
)


@settings(max_examples=150, deadline=None)
@given(
    graph=graphs,
    seeds=st.lists(
        st.sampled_from([*NODES, "fused_0", "fused_1"]), min_size=1, max_size=4, unique=True
    ),
    max_hops=st.integers(1, 3),
    max_expanded=st.integers(2, 30),
    budget=st.integers(0, 3),
    leaves=st.booleans(),
    direction=st.sampled_from(DIRECTIONS),
    semantic=st.booleans(),
)
def test_lazy_traces_change_nothing_the_walk_finds(
    graph: tuple[list[tuple[str, str, EdgeType, float]], list[list[str]]],
    seeds: list[str],
    max_hops: int,
    max_expanded: int,
    budget: int,
    leaves: bool,
    direction: CausalDirection,
    semantic: bool,
) -> None:
    """Whatever the graph, limits and edges walked, the walk keeps the same best trace
    per node, in the same order, as one that builds and offers every trace."""
    store = _graph_store(*graph)
    seeds = [s for s in seeds if store.has_node(s)]
    config = MEMFUSE_DEFAULT.with_(
        max_hops=max_hops,
        max_expanded=max_expanded,
        fused_expansion_budget=budget,
        semantic_leaves=leaves,
    )
    roots = [Seed(s, 0.01, ("dense:0",)) for s in seeds]
    lazy = Expander(StoreCache(store), config, direction, semantic).run(roots)
    eager = EagerExpander(StoreCache(store), config, direction, semantic).run(roots)
    assert list(lazy.items()) == list(eager.items())


def _graph_store(
    edges: list[tuple[str, str, EdgeType, float]], packs: list[list[str]]
) -> FakeStore:
    store = FakeStore()
    for hour, name in enumerate(NODES):
        store.put_event(make_event(name, f"2025-01-01T{hour:02d}:00"), unit(1, 0, 0, 0))
    for src, dst, edge_type, weight in edges:
        if src != dst:
            store.link(src, dst, edge_type, weight=weight)
    for n, members in enumerate(packs):
        store.put_fused_with_vector(f"fused_{n}", "pack", members, unit(1, 0, 0, 0))
    return store


@settings(max_examples=150, deadline=None)
@given(
    graph=graphs,
    seeds=st.lists(st.sampled_from(NODES), min_size=1, max_size=3, unique=True),
    direction=st.sampled_from(DIRECTIONS),
)
def test_every_causal_step_goes_the_way_the_plan_asks(
    graph: tuple[list[tuple[str, str, EdgeType, float]], list[list[str]]],
    seeds: list[str],
    direction: CausalDirection,
) -> None:
    """back: every causal step is walked against the stored edge (effect to cause); forward:
    along it; none: no causal step at all; and whatever one way reaches, both ways reach too
    (the pool is not capped here)."""
    store = _graph_store(*graph)
    config = MEMFUSE_DEFAULT.with_(max_expanded=400)
    roots = [Seed(s, 0.01, ("dense:0",)) for s in seeds]
    traces = expand(StoreCache(store), roots, config, direction)
    steps = [step for trace in traces.values() for step in trace.path if step.edge == C]
    if direction == "none":
        assert steps == []
    elif direction != "both":
        assert all(step.reverse == (direction == "back") for step in steps)
    assert set(traces) <= set(expand(StoreCache(store), roots, config, "both"))


def test_a_visited_node_still_takes_a_better_trace_at_the_same_distance() -> None:
    """x is reached twice at two hops: first through a semantic edge (o → a ~ x), then through
    causal edges only (o → b → x), whose prior is higher: the walk must build that second
    trace although x is already visited."""
    store = FakeStore()
    for hour, name in enumerate(["o", "a", "b", "x"]):
        store.put_event(make_event(name, f"2025-01-01T{hour:02d}:00"), unit(1, 0, 0, 0))
    store.link("o", "a", C)
    store.link("o", "b", C)
    store.link("a", "x", S, weight=0.95)
    store.link("b", "x", C)
    traces = run(store, ["o"])
    assert hops(traces["x"]) == [("causal", "b", False), ("causal", "x", False)]


paths = st.lists(st.sampled_from([C, S, B]), max_size=3)


@given(path=paths, edge=st.sampled_from([C, S]), neighbour=st.booleans())
def test_the_kind_a_hop_is_ranked_by_is_the_kind_of_its_trace(
    path: list[EdgeType], edge: EdgeType, neighbour: bool
) -> None:
    trace = root_trace(Seed("n0", 0.01, ("dense:0",)))
    for n, step in enumerate(path):
        trace = extend(trace, step, f"n{n + 1}")
    if neighbour:
        trace = trace.model_copy(update={"neighbor_of": "n9"})
    assert _extended_kind(trace, edge) == extend(trace, edge, "x").prior_kind()
