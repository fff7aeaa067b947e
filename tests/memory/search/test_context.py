"""Context assembly budgets: entries, fused nodes × members, chars, dedupe, pins, time order."""

from __future__ import annotations

import pytest

from memory.models import EdgeType, NodeKind
from memory.records import Candidate, ExpansionTrace, PathStep
from memory.retrieval import ContextBudget, assemble_context, render_context

from .fakes import FakeStore, make_event, unit

FUSED = ["fused_1", "fused_2", "fused_3", "fused_4"]


@pytest.fixture()
def store() -> FakeStore:
    """Four fused nodes of 12 members each (one day each) and ten atomic events (day 9)."""
    store = FakeStore()
    for day, fused_id in enumerate(FUSED, start=1):
        members = []
        for hour in range(12):
            event_id = f"f{day}_m{hour:02d}"
            store.put_event(
                make_event(event_id, f"2025-01-0{day}T{hour + 8:02d}:00"), unit(1, 0, 0, 0)
            )
            members.append(event_id)
        store.put_fused_with_vector(fused_id, f"summary of day {day}", members, unit(1, 0, 0, 0))
    for i in range(10):
        store.put_event(make_event(f"a{i:02d}", f"2025-01-09T{i + 8:02d}:00"), unit(1, 0, 0, 0))
    return store


def candidate(node_id: str, score: float, via: str | None = None) -> Candidate:
    kind = NodeKind.FUSED if node_id.startswith("fused_") else NodeKind.EVENT
    if via is None:
        trace = ExpansionTrace(seed_id=node_id, seed_lists=["dense:0"])
    else:
        trace = ExpansionTrace(
            seed_id=via,
            seed_lists=["bm25"],
            distance=1,
            path=[PathStep(edge=EdgeType.BELONG, node_id=node_id, reverse=True)],
        )
    return Candidate(node_id=node_id, kind=kind, score=score, trace=trace, via_fused=via)


def ranking() -> tuple[list[Candidate], list[Candidate]]:
    """All members of fused_1..4 (in that order), then the atomic events a00..a09."""
    events: list[Candidate] = []
    score = 10.0
    for day, fused_id in enumerate(FUSED, start=1):
        for hour in range(12):
            score -= 0.01
            events.append(candidate(f"f{day}_m{hour:02d}", score, via=fused_id))
    for i in range(10):
        score -= 0.01
        events.append(candidate(f"a{i:02d}", score))
    fused = [candidate(f, 5.0 - i) for i, f in enumerate(FUSED)]
    return events, fused


def ids(entries: list) -> list[str]:
    return [e.node_id for e in entries]


def test_default_budget_twenty_events_summaries_on_top(store: FakeStore) -> None:
    events, fused = ranking()
    entries = assemble_context(store, events, fused)
    assert len([e for e in entries if e.kind == NodeKind.EVENT]) == 20
    kinds = [e.kind for e in entries]
    assert kinds.count(NodeKind.FUSED) == 2  # fused_1 (1 + 10 members), fused_2 (1 + 10)
    assert {e.node_id for e in entries if e.via_fused == "fused_1"} == {
        f"f1_m{h:02d}" for h in range(10)
    }
    assert len([e for e in entries if e.via_fused == "fused_2"]) == 10


def test_summaries_take_entries_in_the_paper_budget(store: FakeStore) -> None:
    events, fused = ranking()
    paper = ContextBudget(summaries_take_entries=True)
    entries = assemble_context(store, events, fused, paper)
    assert len(entries) == 20
    assert [e.kind for e in entries].count(NodeKind.FUSED) == 2  # fused_1 (1 + 10), fused_2 (1 + 8)
    assert len([e for e in entries if e.via_fused == "fused_2"]) == 8


def test_at_most_three_fused_nodes_with_ten_members_each(store: FakeStore) -> None:
    events, fused = ranking()
    entries = assemble_context(store, events, fused, ContextBudget(entries=40))
    assert len(entries) == 43  # 40 events and three summaries
    assert [e.node_id for e in entries if e.kind == NodeKind.FUSED] == [
        "fused_1",
        "fused_2",
        "fused_3",
    ]
    for via in ("fused_1", "fused_2", "fused_3"):
        assert len([e for e in entries if e.via_fused == via]) == 10
    assert not any(e.node_id.startswith("f4_") or e.node_id == "fused_4" for e in entries)
    # 30 pack members, then the atomic events in rank order fill the last 10
    assert sorted(e.node_id for e in entries if e.node_id.startswith("a")) == [
        f"a{i:02d}" for i in range(10)
    ]


def test_summaries_can_be_left_out(store: FakeStore) -> None:
    events, fused = ranking()
    entries = assemble_context(store, events, fused, ContextBudget(include_summaries=False))
    assert len(entries) == 20 and all(e.kind == NodeKind.EVENT for e in entries)
    assert len([e for e in entries if e.via_fused == "fused_2"]) == 10


def test_entries_are_ordered_by_time_and_carry_serialized_text(store: FakeStore) -> None:
    events, fused = ranking()
    shuffled = events[::-1]  # rank order must not leak into the output order
    entries = assemble_context(store, shuffled, fused, ContextBudget(entries=60, max_fused=4))
    keys = [(e.timestamp, e.node_id) for e in entries]
    assert keys == sorted(keys)
    # walked in reverse, fused_1 keeps its members m11..m02 (cap 10); its summary starts at 08:00
    assert [e.node_id for e in entries[:2]] == ["fused_1", "f1_m02"]
    a00 = next(e for e in entries if e.node_id == "a00")
    assert a00.text == store.get_event("a00").serialize()
    assert a00.provenance == "seed(dense:0)"
    summary = next(e for e in entries if e.node_id == "fused_1")
    assert summary.text == store.get_fused("fused_1").serialize()


def test_duplicates_are_dropped(store: FakeStore) -> None:
    atomic = [candidate("a00", 3.0), candidate("a01", 2.0), candidate("a00", 1.0)]
    assert ids(assemble_context(store, atomic)) == ["a00", "a01"]


def test_pinned_ids_come_first(store: FakeStore) -> None:
    events, fused = ranking()
    entries = assemble_context(store, events, fused, pinned_ids=["a09", "fused_4"])
    assert {"a09", "fused_4"} <= set(ids(entries))
    assert len([e for e in entries if e.kind == NodeKind.EVENT]) == 20
    # pins took one event and one of the three fused slots: fused_1 (10) then fused_2 (9)
    assert [e.node_id for e in entries if e.kind == NodeKind.FUSED] == [
        "fused_1",
        "fused_2",
        "fused_4",
    ]
    assert len([e for e in entries if e.via_fused == "fused_2"]) == 9
    pinned_alone = assemble_context(store, [], [], pinned_ids=["a05"])
    assert pinned_alone[0].provenance == "pinned by the controller"


def test_character_cap_drops_the_lowest_ranked(store: FakeStore) -> None:
    atomic = [candidate(f"a{i:02d}", 10.0 - i) for i in range(10)]
    line = len(store.get_event("a00").serialize())  # every line has the same length here
    cap = 4 * line + 3  # four lines and three line breaks
    entries = assemble_context(store, atomic, budget=ContextBudget(max_chars=cap))
    assert ids(entries) == ["a00", "a01", "a02", "a03"]
    assert len(render_context(entries)) == cap
    one_short = assemble_context(store, atomic, budget=ContextBudget(max_chars=cap - 1))
    assert ids(one_short) == ["a00", "a01", "a02"]


def test_default_character_cap_is_128000() -> None:
    assert ContextBudget().max_chars == 128_000
