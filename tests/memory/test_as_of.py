"""As-of reads: a question asked at time T never sees an event observed after T.

Checked as a property over random question times, for every baseline recipe, the MemFuse
recipe and the full multi-round controller (whose pivot round reads around its anchors),
on one real store with fused packs that straddle the times asked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphs.retrieval import ABLATIONS, retrieve
from memory import access
from memory.access import VisibleStore, as_of
from memory.errors import NodeNotFoundError
from memory.models import Edge, EdgeType, Event, FusedNode, Link
from memory.retrieval import assemble_context, search
from memory.search.config import RECIPES
from memory.store import MemoryStore
from tests.support.embedders import tiny_embedder

START = datetime(2026, 5, 11, 6, 0)
WORDS = ["kettle", "door", "alarm", "walk", "milk", "oven", "piano", "sleep"]
EVENTS = [
    Event(
        event_id=f"e{i:02d}",
        timestamp=START + timedelta(minutes=47 * i),
        device=["kitchen_plug", "hall_door", "phone_ana"][i % 3],
        modality="app_usage",
        location=["kitchen", "hallway"][i % 2],
        description=f"{WORDS[i % len(WORDS)]} then {WORDS[(i * 3) % len(WORDS)]} noted",
        characters=("Ana",) if i % 3 == 2 else (),
    )
    for i in range(40)
]
LAST = EVENTS[-1].timestamp


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    opened = MemoryStore.open(Path(tmp_path_factory.mktemp("as_of")), embedder=tiny_embedder())
    opened.add_events(EVENTS)
    for n in range(0, 39, 3):  # causal chains across the times asked
        opened.add_edge(Edge(src=f"e{n:02d}", dst=f"e{n + 1:02d}", type=EdgeType.CAUSAL))
    for n in range(0, 40, 8):  # packs of eight consecutive events: some straddle any time
        pack = EVENTS[n : n + 8]
        opened.put_fused(
            FusedNode(
                node_id=f"fused_{n}",
                summary="kettle door",
                members=[e.event_id for e in pack],
                start=pack[0].timestamp,
                end=pack[-1].timestamp,
            )
        )
    yield opened
    opened.close()


def known_at(when: datetime) -> set[str]:
    return {e.event_id for e in EVENTS if e.timestamp <= when}


times = st.integers(min_value=-60, max_value=int((LAST - START).total_seconds() // 60) + 60).map(
    lambda minutes: START + timedelta(minutes=minutes)
)
queries = st.sampled_from(["kettle", "why did the door alarm go off", "milk oven", "Ana walk"])
property_settings = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@property_settings
@given(when=times, query=queries, recipe=st.sampled_from(sorted(RECIPES)))
def test_no_recipe_returns_an_event_after_the_question_time(
    store: MemoryStore, when: datetime, query: str, recipe: str
) -> None:
    result = search(store, query, RECIPES[recipe].sized(10), question_time=when)
    assert set(result.event_ids()) <= known_at(when)
    context = assemble_context(as_of(store, when), result.candidates, result.fused)
    assert {e.node_id for e in context if e.kind == "event"} <= known_at(when)
    packs = [e.node_id for e in context if e.kind == "fused"]
    assert all(store.get_fused(p).end <= when for p in packs)  # no summary of a later event


@property_settings
@given(when=times, query=queries, system=st.sampled_from(sorted(ABLATIONS)))
def test_no_controller_round_reads_past_the_question_time(
    store: MemoryStore, when: datetime, query: str, system: str
) -> None:
    result = retrieve(store, query, question_time=when, admin=True, k=8, options=ABLATIONS[system])
    assert set(result.event_ids) <= known_at(when)
    for plan in result.plans:
        assert set(plan.pivot.anchors) <= known_at(when)


def test_a_view_narrows_and_never_widens(store: MemoryStore) -> None:
    early, late = EVENTS[5].timestamp, EVENTS[30].timestamp
    view = as_of(store, early)
    assert as_of(view, late) is view  # a later time cannot bring the future back
    assert set(as_of(view, EVENTS[2].timestamp).events_between(START, LAST)) == known_at(
        EVENTS[2].timestamp
    )
    private = as_of(VisibleStore(store, "Ana"), late)
    assert isinstance(private, VisibleStore) and private.requester == "Ana"
    assert private.count_events_between(START, LAST) == len(known_at(late))
    assert as_of(store, None) is store
    assert not view.has_node("fused_0")  # its later members make it part of the future
    assert view.has_node("e00")


@property_settings
@given(when=times, end=times, n=st.integers(min_value=1, max_value=45))
def test_a_view_counts_back_only_over_what_it_shows(
    store: MemoryStore, when: datetime, end: datetime, n: int
) -> None:
    """The n-th latest event before `end`, through a time cut and through a reader's view, is
    the n-th latest of the events that view lists."""
    for view in (as_of(store, when), as_of(VisibleStore(store, "Ana"), when)):
        shown = sorted(view.get_event(i).timestamp for i in view.events_between(START, end))
        expected = shown[-n] if len(shown) >= n else None
        assert view.nth_latest_time(end, n) == expected


@property_settings
@given(when=times)
def test_a_views_links_are_the_neighbours_it_shows(store: MemoryStore, when: datetime) -> None:
    """What a graph walk reads through a view is what the view's edge list shows: nothing
    from or to a node the reader may not see, or one observed after the time asked."""
    nodes = [e.event_id for e in EVENTS] + [f"fused_{n}" for n in range(0, 40, 8)]
    untyped = VisibleStore(UntypedStore(store), "Ana")  # type: ignore[arg-type]
    for view in (as_of(store, when), as_of(VisibleStore(store, "Ana"), when), as_of(untyped, when)):
        for node in nodes:
            links = view.links(node)
            assert links == [Link.of(edge, node) for edge in view.neighbors(node)]
            assert all(view.may_see(link.other) for link in links)
            assert view.may_see(node) or links == []
            for edge_type in EdgeType:  # the walk's typed read: the shown links, filtered
                for least in (0.0, 0.9):
                    assert view.links_of(node, edge_type, least) == [
                        link for link in links if link.type == edge_type and link.weight >= least
                    ]
        if when < LAST:  # the cut hides something
            shown = sum(len(view.links(n)) for n in nodes)
            assert shown < sum(len(store.links(n)) for n in nodes)


class UntypedStore:
    """The real store without its typed link read: a view filters the links it shows."""

    def __init__(self, store: MemoryStore):
        self.store = store

    def __getattr__(self, name: str) -> Any:
        if name == "links_of":
            raise AttributeError(name)
        return getattr(self.store, name)


class CountingStore:
    """The real store, counting the index searches and edge reads a view asks of it."""

    def __init__(self, store: MemoryStore):
        self.store = store
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.store, name)
        if name in ("dense_search", "lexical_search", "links"):
            self.calls[name] += 1
        return found


def test_a_view_runs_a_repeated_search_and_walk_once(store: MemoryStore) -> None:
    """A question's later rounds repeat some of its first round's searches and walk the same
    edges: the view answers them again from what it read, with the same hits, as copies."""
    counting = CountingStore(store)
    view = VisibleStore(counting, as_of=EVENTS[30].timestamp)  # type: ignore[arg-type]
    vector = store.embed_query("kettle")
    first = view.dense_search(vector, 5)
    asked = dict(counting.calls)  # a filtered search may ask the index more than once
    first.append(("mutated", 1.0))  # a caller's change stays the caller's
    assert view.dense_search(vector, 5) == first[:-1] and counting.calls == asked
    assert len(view.dense_search(vector, 6)) == 6 and counting.calls != asked
    asked = dict(counting.calls)
    words = view.lexical_search("door alarm", 4)
    assert counting.calls != asked
    asked = dict(counting.calls)
    assert view.lexical_search("door alarm", 4) == words and counting.calls == asked
    links = view.links("e03")
    asked = dict(counting.calls)
    assert view.links("e03") == links and counting.calls == asked
    assert links == [Link.of(edge, "e03") for edge in view.neighbors("e03")] and links


@property_settings
@given(when=times)
def test_a_time_cut_shows_the_same_whether_it_lists_ids_or_reads_events(
    store: MemoryStore, when: datetime
) -> None:
    """A short past is checked against the ids up to the cut, listed once; a long one by
    reading each event's time. Both show exactly the events observed by then, and the packs
    all of whose members were."""
    nodes = [e.event_id for e in EVENTS] + [f"fused_{n}" for n in range(0, 40, 8)] + ["nope"]
    listed = as_of(store, when)
    with mock.patch.object(access, "_CUT_SET_LIMIT", 0):
        read = as_of(store, when)
        shown_by_reading = {node for node in nodes if read.may_see(node)}
    assert {node for node in nodes if listed.may_see(node)} == shown_by_reading
    packs = {f"fused_{n}": EVENTS[min(n + 7, 39)].timestamp for n in range(0, 40, 8)}
    assert shown_by_reading == known_at(when) | {p for p, end in packs.items() if end <= when}


def test_a_views_vectors_are_its_vectors_one_by_one(store: MemoryStore) -> None:
    """The batch read a search's cache uses gives each id's own vector, in order, and refuses
    an id the view does not show (or the store does not hold) as `vector` does."""
    view = as_of(store, EVENTS[20].timestamp)
    ids = ["e03", "e20", "e07", "fused_0", "e03"]
    assert np.array_equal(view.vectors(ids), np.stack([view.vector(i) for i in ids]))
    assert np.array_equal(store.vectors(ids), view.vectors(ids))
    with pytest.raises(NodeNotFoundError):
        view.vectors(["e03", "e21"])  # observed after the time asked
    with pytest.raises(NodeNotFoundError):
        store.vectors(["e03", "nope"])


@property_settings
@given(
    when=times,
    first=st.integers(0, len(EVENTS) - 1),
    span=st.integers(0, len(EVENTS)),
    requester=st.sampled_from([None, "Ana"]),
)
def test_ids_a_view_listed_read_in_one_batch_and_others_are_still_checked(
    store: MemoryStore, when: datetime, first: int, span: int, requester: str | None
) -> None:
    """A view trusts the ids it listed itself (a time window's events) for its batch reads,
    so they read as the store's own; a batch with any id it did not list and may not show (an
    event after the time asked, a pack with such a member, an unknown id) is refused as
    before, whatever it listed."""
    view = VisibleStore(store, requester, as_of=when)
    start = EVENTS[first].timestamp
    listed = view.events_between(start, start + timedelta(minutes=47 * span))
    assert set(listed) <= known_at(when)
    assert [e.event_id for e in view.get_events(listed)] == listed
    if listed:
        assert np.array_equal(view.vectors(listed), store.vectors(listed))
    nodes = [e.event_id for e in EVENTS] + [f"fused_{n}" for n in range(0, 40, 8)] + ["nope"]
    for hidden in (node for node in nodes if not view.may_see(node)):
        with pytest.raises(NodeNotFoundError):
            view.vectors([*listed, hidden])
        if not hidden.startswith("fused_"):
            with pytest.raises(NodeNotFoundError):
                view.get_events([*listed, hidden])
