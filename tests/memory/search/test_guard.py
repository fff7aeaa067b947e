"""The guard: whatever a plan asks for, the plain question's hybrid (or dense) top stays in the
result.

Properties over random stores and random plans (any window, any confidence, any mix of
coverage / timeline / neighbour constraints), plus the pure slot arithmetic.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.models import EdgeType
from memory.retrieval import HYBRID_RRF, MEMFUSE_DEFAULT, NAIVE_RAG, RoundPlan, search
from memory.search.config import GuardConfig
from memory.search.engine import applied_confidence
from memory.search.guard import guarded_order, keep_reserved, reserved_slots
from memory.search.plan import (
    CoverageDiversification,
    TemporalNeighbors,
    TimelineMode,
    TimeWindow,
)

from .fakes import FakeStore, make_event

WORDS = [
    "milk",
    "fridge",
    "door",
    "leo",
    "match",
    "ankle",
    "rain",
    "car",
    "keys",
    "walk",
    "sleep",
    "alarm",
    "pizza",
    "school",
    "park",
    "phone",
]
DEVICES = ["watch_a", "phone_a", "cam_kitchen", "speaker_living", "lock_front"]
PEOPLE = ["Ann", "Ben", "Cleo"]
START = datetime(2026, 5, 11, 0, 0)


def test_reserved_share_shrinks_with_confidence() -> None:
    guard = GuardConfig(share_unconstrained=0.6, share_confident=0.3)
    assert reserved_slots(20, 0.0, guard) == 12
    assert reserved_slots(20, 1.0, guard) == 6
    assert reserved_slots(20, 0.5, guard) == 9
    assert reserved_slots(20, 0.85, guard) == 7  # ceil(20 * 0.345)
    assert reserved_slots(20, 0.9, GuardConfig(enabled=False)) == 0
    assert reserved_slots(3, 2.0, guard) == 1  # confidence clipped to 1


@given(
    constrained=st.lists(st.sampled_from([f"e{i}" for i in range(30)]), max_size=30),
    unconstrained=st.lists(st.sampled_from([f"e{i}" for i in range(30)]), max_size=30),
    k=st.integers(1, 25),
    reserve=st.integers(0, 25),
)
def test_guarded_order_keeps_both_heads(
    constrained: list[str], unconstrained: list[str], k: int, reserve: int
) -> None:
    reserve = min(reserve, k)
    order = guarded_order(constrained, unconstrained, k, reserve)
    distinct = set(constrained) | set(unconstrained)
    assert len(order) == len(set(order)) == min(k, len(distinct))
    reserved = list(dict.fromkeys(unconstrained))[:reserve]
    assert set(reserved) <= set(order)
    rest = k - len(reserved)
    head = [i for i in dict.fromkeys(constrained) if i not in reserved][:rest]
    assert set(head) <= set(order)


@given(
    order=st.lists(st.sampled_from([f"e{i}" for i in range(30)]), max_size=30, unique=True),
    reserved=st.lists(st.sampled_from([f"e{i}" for i in range(30)]), max_size=12, unique=True),
    k=st.integers(1, 25),
)
def test_keep_reserved_keeps_the_head_and_every_reserved_id(
    order: list[str], reserved: list[str], k: int
) -> None:
    kept = keep_reserved(order, reserved, k)
    assert len(kept) == len(set(kept)) <= k
    assert set(reserved[:k]) <= set(kept)  # the first k reserved ids win
    head = [i for i in order[:k] if i in kept]
    assert head == [i for i in kept if i in order[:k]]  # order of the survivors unchanged
    dropped = [i for i in order[:k] if i not in kept]
    assert all(i not in reserved[:k] for i in dropped)
    survivors = [order.index(i) for i in head if i not in reserved[:k]]
    if dropped and survivors:  # only the tail gives way
        assert min(order.index(i) for i in dropped) > max(survivors)


@st.composite
def stores(draw: st.DrawFn) -> FakeStore:
    """20–60 events over a week: random words, devices, people; a few causal edges."""
    store = FakeStore(dim=8)
    n = draw(st.integers(20, 60))
    for i in range(n):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=5))
        minutes = draw(st.integers(0, 7 * 24 * 60 - 1))
        people = draw(st.lists(st.sampled_from(PEOPLE), max_size=2, unique=True))
        event = make_event(
            f"e{i:02d}",
            (START + timedelta(minutes=minutes)).isoformat(),
            " ".join(words),
            device=draw(st.sampled_from(DEVICES)),
            characters=people,
        )
        store.put_event(event, store._hash_vector(event.index_text()))
    for _ in range(draw(st.integers(0, 8))):
        a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        if a != b:
            store.link(f"e{a:02d}", f"e{b:02d}", EdgeType.CAUSAL)
    return store


confidences = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def plans(draw: st.DrawFn, question: str) -> RoundPlan:
    """A plan with arbitrary (possibly wrong) constraints and rewrites for the question."""
    day = date(2026, 5, 11) + timedelta(days=draw(st.integers(-3, 9)))
    start = time(draw(st.integers(0, 23)), 0)
    window = TimeWindow(
        enabled=draw(st.booleans()),
        date=day,
        start_time=start,
        end_date=day + timedelta(days=draw(st.integers(0, 3))),
        confidence=draw(confidences),
    )
    rewrites = draw(st.lists(st.sampled_from(WORDS), max_size=3))
    return RoundPlan(
        focus=draw(st.sampled_from([question, " ".join(rewrites) or question])),
        semantic_queries=rewrites,
        bm25_query=draw(st.sampled_from(["", question, " ".join(rewrites)])),
        time_window=window,
        coverage_diversification=CoverageDiversification(
            enabled=draw(st.booleans()),
            dimensions=draw(st.lists(st.sampled_from(["user", "device"]), max_size=2)),
            confidence=draw(confidences),
        ),
        timeline_mode=TimelineMode(enabled=draw(st.booleans()), confidence=draw(confidences)),
        temporal_neighbors=TemporalNeighbors(
            enabled=draw(st.booleans()),
            radius=draw(st.integers(1, 3)),
            confidence=draw(confidences),
        ),
    )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), k=st.integers(4, 20), lexical=st.booleans())
def test_any_plan_keeps_the_unconstrained_top(data: st.DataObject, k: int, lexical: bool) -> None:
    """Property: the plain question's top-R is always in the result, R ≥ 30 % of k — the
    hybrid baseline's top with `lexical` (the default; its BM25L list less the hits sharing
    only common words with the question, as every MemFuse lexical list), the naive_rag
    baseline's without — although its vector comes from the one embedding call that also
    embeds the plan's queries (and is not corrected for hubs as theirs are)."""
    store = data.draw(stores())
    question = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
    plan = data.draw(plans(question))
    default = MEMFUSE_DEFAULT.sized(k)
    config = default.model_copy(
        update={"guard": default.guard.model_copy(update={"lexical": lexical})}
    )
    store.calls.clear()
    result = search(store, plan, config, question=question)
    assert store.calls.count("embed") == 1  # the plan's queries and the asker's words at once
    baseline = (
        HYBRID_RRF.with_(common_word_share=config.common_word_share) if lexical else NAIVE_RAG
    )
    # the baseline's own list depths (as the guard's), returning as many as the guard reads
    plain = search(store, question, baseline.with_(top_k=config.guard.depth)).event_ids()
    reserve = reserved_slots(k, applied_confidence(plan, config), config.guard)
    assert reserve >= -(-k * 3 // 10)
    assert result.guard_ids == plain[:reserve]
    assert set(plain[:reserve]) <= set(result.event_ids())
    assert len(result.event_ids()) == len(set(result.event_ids())) <= k
