"""MemoryStore behaviour. test_chroma_server.py re-collects every test here against a real
Chroma server, so nothing in this file may assume embedded Chroma."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory.errors import (
    ConfigurationError,
    EventConflictError,
    InvalidEdgeError,
    InvalidEventError,
    InvalidFusedNodeError,
    NodeNotFoundError,
)
from memory.models import Edge, EdgeType, Event, FusedNode, NodeKind, parse_events
from memory.store import MemoryStore
from memory.vector_index import VectorIndexConfig
from tests.support.counting import count_write_transactions

T0 = datetime(2024, 3, 1, 8, 0, 0)


@pytest.fixture(params=["embedded", pytest.param("server", marks=pytest.mark.server)])
def chroma_endpoint(request: pytest.FixtureRequest) -> tuple[str, int] | None:
    """Every test here runs twice: on embedded Chroma and on a real `chroma run` server."""
    if request.param == "embedded":
        return None
    endpoint: tuple[str, int] = request.getfixturevalue("chroma_server")
    return endpoint


def knee_pack(
    store: MemoryStore, summary: str = "David hurt his knee running; ice and a talk"
) -> FusedNode:
    return FusedNode.from_members("fused_knee", summary, store.get_events(["e02", "e05", "e08"]))


def crash(store: MemoryStore) -> None:
    """Simulate a process dying: SQLite is left as committed, buffered Chroma writes are lost."""
    store._db.close()
    store._closed = True


# --- a reader noticing another writer's commits -----------------------------------------


def test_a_reader_sees_what_another_connection_committed(
    open_store: Any, household: list[Event], hash_embedder: Any, tmp_path: Path
) -> None:
    """Two stores on one data dir (as `langgraph dev` serving a memory while the CLI ingests):
    the reader's `refresh` reloads exactly when the writer committed, and then finds the new
    events, pack and edges through every index, vectors not yet flushed to Chroma included."""
    writer = open_store(tmp_path / "shared")
    writer.add_events(household[:5])
    reader = open_store(tmp_path / "shared")
    assert reader.refresh() is False  # nothing new since it opened
    writer.add_events(household[5:])
    with writer.transaction():
        writer.put_fused(knee_pack(writer))
        writer.add_edge(Edge(src="e01", dst="e02", type=EdgeType.CAUSAL, weight=1.0))
    assert [i for i, _ in reader.lexical_search("cycling", 3)] == []  # stale until refreshed
    assert reader.refresh() is True
    assert reader.refresh() is False
    assert reader.stats().events == len(household) and reader.stats().fused_nodes == 1
    assert [i for i, _ in reader.lexical_search("cycling", 1)] == ["e06"]
    assert "e06" in reader.events_between(household[0].timestamp, household[-1].timestamp)
    assert "Emma" in reader.known_people()
    query = reader.embed_query("Emma's phone logged 6.1 km of cycling")
    assert reader.dense_search(query, 1, NodeKind.EVENT)[0][0] == "e06"
    assert np.allclose(reader.vector("fused_knee"), writer.vector("fused_knee"))
    assert {(e.src, e.type) for e in reader.neighbors("e02")} >= {
        ("e01", EdgeType.CAUSAL),
        ("e02", EdgeType.BELONG),
    }
    writer.delete_fused("fused_knee")
    writer.flush()
    assert reader.refresh() is True
    assert not reader.has_node("fused_knee")
    assert all(i != "fused_knee" for i, _ in reader.dense_search(query, 20))


# --- round trip --------------------------------------------------------------------------


def test_everything_survives_reopen(
    open_store: Any, household: list[Event], hash_embedder: Any
) -> None:
    store = open_store()
    store.add_events(household)
    store.put_fused(knee_pack(store))
    assert store.add_edge(Edge(src="e02", dst="e05", type=EdgeType.CAUSAL))
    assert store.add_edge(Edge(src="e07", dst="e03", type=EdgeType.SEMANTIC, weight=0.85))
    assert store.log_plan("plan_a", "e02", {"ops": ["create"], "n": 1})
    assert store.log_plan("plan_b", "e05", {"ops": []})
    store.mark_plan("plan_b", "rejected", "member missing")
    before_stats = store.stats()
    before_vector = store.vector("fused_knee")
    store.close()
    calls = hash_embedder.calls

    again = open_store()
    assert again.all_events() == sorted(household, key=lambda e: (e.timestamp, e.event_id))
    assert again.get_fused("fused_knee") == knee_pack(again)
    assert again.fused_of("e05") == ["fused_knee"]
    assert again.has_edge("e02", "e05", EdgeType.CAUSAL)
    assert again.has_edge("e03", "e07", EdgeType.SEMANTIC)
    assert again.neighbors("e03", EdgeType.SEMANTIC)[0].weight == pytest.approx(0.85)
    assert again.pending_plans() == [("plan_a", {"ops": ["create"], "n": 1})]
    assert again.plan_status("plan_b") == ("rejected", "member missing")
    assert again.stats() == before_stats
    assert np.allclose(again.vector("fused_knee"), before_vector, atol=1e-6)
    assert hash_embedder.calls == calls, "vectors come back from Chroma, not re-embedded"
    assert again.lexical_search("thermostat", 3)[0][0] == "e07"
    query = again.embed_query("fridge door left open kitchen")
    assert again.dense_search(query, 1)[0][0] == "e03"


def test_the_event_centroid_is_the_events_mean_through_packs_forget_and_reopen(
    open_store: Any, household: list[Event]
) -> None:
    """The hub correction's input (`memory.search.hubs`): the mean of the event vectors only —
    packs left out, a forgotten event taken out, the same after a reopen from Chroma."""

    def mean_of(store: MemoryStore) -> np.ndarray:
        return np.mean([store.vector(e.event_id) for e in store.all_events()], axis=0)

    store = open_store()
    assert store.event_centroid() is None
    store.add_events(household)
    store.put_fused(knee_pack(store))
    assert np.allclose(store.event_centroid(), mean_of(store), atol=1e-6)
    store.forget_events(["e01"])
    assert np.allclose(store.event_centroid(), mean_of(store), atol=1e-6)
    before = store.event_centroid()
    store.close()
    again = open_store()
    assert np.allclose(again.event_centroid(), before, atol=1e-6)


def test_stats_and_known_sources(open_store: Any, household: list[Event]) -> None:
    store = open_store()
    store.add_events(household)
    store.put_fused(knee_pack(store))
    store.add_edge(Edge(src="e02", dst="e05", type=EdgeType.CAUSAL))
    stats = store.stats()
    assert (stats.events, stats.fused_nodes, stats.mean_members) == (10, 1, 3.0)
    assert stats.edges == {"belong": 3, "causal": 1, "semantic": 0}
    assert stats.first_event == T0 and stats.last_event == T0 + timedelta(minutes=150)
    assert store.known_people() == {"David", "Emma"}
    assert store.known_devices() == {
        "watch_david",
        "cam_hall",
        "fridge_sensor",
        "speaker_kitchen",
        "cam_living",
        "phone_emma",
        "thermostat",
        "speaker_living",
    }
    assert (stats.devices, stats.people) == (8, 2)


# --- ingest: idempotence, conflicts, validation, atomicity -------------------------------


def test_reingest_is_a_noop(
    open_store: Any, household: list[Event], hash_embedder: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    store = open_store()
    first = store.add_events(household, progress=True)
    assert "embedding" in capsys.readouterr().err, "a tqdm bar when asked for"
    calls = hash_embedder.calls
    second = store.add_events(household + household[:2])
    assert len(first.added) == 10 and first.unchanged == []
    assert second.added == [] and sorted(second.unchanged) == sorted(e.event_id for e in household)
    assert hash_embedder.calls == calls
    assert store.stats().events == 10


def test_conflicting_reingest_raises_and_writes_nothing(
    open_store: Any, household: list[Event], make_event: Any, hash_embedder: Any
) -> None:
    store = open_store()
    store.add_events(household)
    calls = hash_embedder.calls
    changed = household[2].model_copy(update={"description": "Fridge closed", "location": "den"})
    fresh = make_event("e11", 200, "Zanzibar postcard arrived")
    with pytest.raises(EventConflictError) as raised:
        store.add_events([fresh, changed])
    assert raised.value.event_id == "e03"
    assert raised.value.fields == ["description", "location"]
    assert "e03" in str(raised.value) and "description" in str(raised.value)
    assert not store.has_node("e11")
    assert store.lexical_search("zanzibar", 5) == []
    assert hash_embedder.calls == calls, "validation happens before any embedding"
    store.close()
    assert not open_store().has_node("e11")


BAD_FIELDS = {
    "unknown modality": ({"modality": "smell"}, "modality"),
    "unparseable timestamp": ({"timestamp": "yesterday-ish"}, "timestamp"),
    "empty description": ({"description": "   "}, "description"),
    "missing device": ({"device": None}, "device"),
    "description too long": ({"description": "word " * 2_000}, "description"),
    "device id too long": ({"device": "d" * 300}, "device"),
    "timestamp out of range": ({"timestamp": "0001-01-01T00:00:00"}, "timestamp"),
}


def _record(event_id: str, minutes: int, **changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "event_id": event_id,
        "timestamp": (T0 + timedelta(minutes=minutes)).isoformat(),
        "device": "watch_david",
        "modality": "health",
        "location": "park",
        "description": f"reading {minutes}",
        "characters": ["David"],
    }
    record.update(changes)
    return {k: v for k, v in record.items() if v is not None}


@pytest.mark.parametrize("case", list(BAD_FIELDS))
def test_one_bad_record_rejects_the_whole_batch(open_store: Any, case: str) -> None:
    changes, field = BAD_FIELDS[case]
    store = open_store()
    records = [_record("ok1", 1), _record("bad", 2, **changes), _record("ok2", 3)]
    with pytest.raises(InvalidEventError) as raised:
        store.add_events(parse_events(records))
    assert (raised.value.event_id, raised.value.field, raised.value.position) == ("bad", field, 2)
    assert "'bad'" in str(raised.value) and field in str(raised.value)
    assert "Value error" not in str(raised.value)
    assert store.stats().events == 0


def test_a_description_at_the_size_limit_is_kept_whole(open_store: Any) -> None:
    from memory.models import MAX_DESCRIPTION_CHARS

    text = ("x" * (MAX_DESCRIPTION_CHARS - 1)) + "y"
    store = open_store()
    store.add_events(parse_events([_record("big", 1, description=text)]))
    assert store.get_events(["big"])[0].description == text
    too_long = _record("bigger", 2, description=text + "z")
    with pytest.raises(InvalidEventError, match="split a long text"):
        parse_events([too_long])


def test_add_path_rejects_reserved_ids_and_non_events(open_store: Any, make_event: Any) -> None:
    store = open_store()
    ok = make_event("ok", 1, "fine")
    with pytest.raises(InvalidEventError) as raised:
        store.add_events([ok, make_event("fused_x", 2, "pretends to be a pack")])
    assert (raised.value.event_id, raised.value.field) == ("fused_x", "event_id")
    with pytest.raises(InvalidEventError) as raised:
        store.add_events([ok, {"event_id": "raw"}])  # type: ignore[list-item]
    assert raised.value.position == 2
    with pytest.raises(InvalidEventError, match="duplicated in the batch"):
        store.add_events([ok, ok.model_copy(update={"description": "other"})])
    assert store.stats().events == 0


def test_a_failure_mid_write_leaves_nothing_behind(
    open_store: Any, household: list[Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store()
    real_add = store._temporal.add

    def failing_add(event: Event) -> None:
        if event.event_id == "e05":
            raise RuntimeError("disk on fire")
        real_add(event)

    monkeypatch.setattr(store._temporal, "add", failing_add)
    with pytest.raises(RuntimeError, match="disk on fire"):
        store.add_events(household)
    assert store.stats().events == 0 and store.all_events() == []
    assert store.known_people() == set() and store.events_between(T0, T0 + timedelta(days=1)) == []
    assert store.lexical_search("David", 10) == []
    assert store.dense_search(store.embed_query("David knee"), 10) == []
    monkeypatch.undo()
    assert len(store.add_events(household).added) == 10
    assert store.events_between(T0, T0 + timedelta(minutes=25)) == ["e01", "e02", "e03"]


def test_transaction_is_all_or_nothing(open_store: Any, household: list[Event]) -> None:
    store = open_store()
    store.add_events(household)
    with pytest.raises(RuntimeError, match="validator said no"), store.transaction():
        store.put_fused(knee_pack(store))
        store.add_edge(Edge(src="e02", dst="e05", type=EdgeType.CAUSAL))
        raise RuntimeError("validator said no")
    assert not store.has_node("fused_knee")
    assert store.edge_counts() == {"belong": 0, "causal": 0, "semantic": 0}
    assert store.fused_of("e05") == []
    assert store.lexical_search("ice talk", 5, kind=NodeKind.FUSED) == []
    assert store.dense_search(store.embed_query("knee"), 5, kind=NodeKind.FUSED) == []
    with pytest.raises(NodeNotFoundError):
        store.vector("fused_knee")
    store.close()
    again = open_store()
    assert not again.has_node("fused_knee") and again.edge_counts()["causal"] == 0


# --- fused nodes and edges ---------------------------------------------------------------


def test_fused_node_validation(open_store: Any, household: list[Event]) -> None:
    store = open_store()
    store.add_events(household)
    store.put_fused(knee_pack(store))
    events = store.get_events(["e01", "e02"])
    with pytest.raises(InvalidFusedNodeError, match="must start with"):
        store.put_fused(FusedNode.from_members("knee2", "s", events))
    with pytest.raises(NodeNotFoundError, match="e99"):
        store.put_fused(knee_pack(store).model_copy(update={"members": ["e02", "e99"]}))
    with pytest.raises(InvalidEdgeError, match="belong"):
        store.put_fused(
            knee_pack(store).model_copy(
                update={"node_id": "fused_meta", "members": ["e02", "fused_knee"]}
            )
        )
    with pytest.raises(InvalidFusedNodeError, match="repeated members: e02"):
        store.put_fused(knee_pack(store).model_copy(update={"members": ["e02", "e02"]}))
    assert store.get_fused("fused_knee") == knee_pack(store)


def test_put_fused_replaces_members_and_delete_cleans_edges(
    open_store: Any, household: list[Event], hash_embedder: Any
) -> None:
    store = open_store()
    store.add_events(household)
    store.put_fused(knee_pack(store))
    store.add_edge(Edge(src="fused_knee", dst="e01", type=EdgeType.SEMANTIC, weight=0.9))
    calls = hash_embedder.calls
    smaller = FusedNode.from_members(
        "fused_knee", knee_pack(store).summary, store.get_events(["e05", "e08"]), version=2
    )
    store.put_fused(smaller)
    assert hash_embedder.calls == calls, "unchanged summary: no re-embedding"
    assert store.fused_of("e02") == [] and store.fused_of("e05") == ["fused_knee"]
    assert store.get_fused("fused_knee").version == 2
    store.put_fused(smaller.model_copy(update={"summary": "Knee care with Emma", "version": 3}))
    assert store.lexical_search("care", 3, kind=NodeKind.FUSED) == [
        ("fused_knee", pytest.approx(store.lexical_search("care", 1)[0][1]))
    ]
    store.delete_fused("fused_knee")
    assert store.edge_counts() == {"belong": 0, "causal": 0, "semantic": 0}
    assert store.neighbors("e01") == [] and not store.has_node("fused_knee")
    with pytest.raises(NodeNotFoundError):
        store.delete_fused("fused_knee")


def test_edge_legality(open_store: Any, household: list[Event]) -> None:
    store = open_store()
    store.add_events(household)
    store.put_fused(knee_pack(store))
    with pytest.raises(InvalidEdgeError, match="put_fused"):
        store.add_edge(Edge(src="e01", dst="fused_knee", type=EdgeType.BELONG))
    with pytest.raises(InvalidEdgeError, match="two events"):
        store.add_edge(Edge(src="e01", dst="fused_knee", type=EdgeType.CAUSAL))
    with pytest.raises(InvalidEdgeError, match="self-loop"):
        store.add_edge(Edge(src="e01", dst="e01", type=EdgeType.CAUSAL))
    with pytest.raises(NodeNotFoundError):
        store.add_edge(Edge(src="e01", dst="e99", type=EdgeType.CAUSAL))
    assert store.add_edge(Edge(src="e02", dst="e05", type=EdgeType.CAUSAL))
    assert not store.add_edge(Edge(src="e02", dst="e05", type=EdgeType.CAUSAL))
    with pytest.raises(InvalidEdgeError, match="reverse"):
        store.add_edge(Edge(src="e05", dst="e02", type=EdgeType.CAUSAL))
    assert store.has_edge("e02", "e05", EdgeType.CAUSAL)
    assert not store.has_edge("e05", "e02", EdgeType.CAUSAL)
    # semantic: symmetric, stored once
    assert store.add_edge(Edge(src="e07", dst="fused_knee", type=EdgeType.SEMANTIC, weight=0.8))
    assert not store.add_edge(Edge(src="fused_knee", dst="e07", type=EdgeType.SEMANTIC, weight=0.8))
    assert store.has_edge("fused_knee", "e07", EdgeType.SEMANTIC)
    assert store.has_edge("e07", "fused_knee", EdgeType.SEMANTIC)
    (edge,) = store.neighbors("e07")
    assert edge.other("e07") == "fused_knee"
    assert [e.type for e in store.neighbors("e05")] == [EdgeType.BELONG, EdgeType.CAUSAL]
    assert {e.other("e05") for e in store.neighbors("e05")} == {"fused_knee", "e02"}
    assert store.edge_counts() == {"belong": 3, "causal": 1, "semantic": 1}


# --- indexes -----------------------------------------------------------------------------


def _brute_force(store: MemoryStore, embedder: Any, query: np.ndarray, keep: Any) -> list[str]:
    texts = {e.event_id: e.index_text() for e in store.all_events()}
    texts.update({f.node_id: f.index_text() for f in store.all_fused()})
    ids = sorted(i for i in texts if keep(i))
    sims = embedder.embed([texts[i] for i in ids]) @ query
    return [ids[j] for j in sorted(range(len(ids)), key=lambda j: (-sims[j], ids[j]))]


DENSE_PATHS = {
    "exact": VectorIndexConfig(),  # small filtered sets are scored in memory
    "chroma": VectorIndexConfig(
        exact_scan_limit=0, exact_span_limit=0
    ),  # every query goes through Chroma
    "chroma+buffered": VectorIndexConfig(exact_scan_limit=0, exact_span_limit=0),
    # too few approximate hits pass the filter: the admitted rows are scanned exactly
    "chroma+fallback": VectorIndexConfig(exact_scan_limit=0, exact_span_limit=0, max_fetch=1),
}


@pytest.mark.parametrize("path", list(DENSE_PATHS))
def test_dense_search_filters_by_kind_and_time(
    open_store: Any, household: list[Event], hash_embedder: Any, path: str
) -> None:
    store = open_store(vector_config=DENSE_PATHS[path])
    store.add_events(household[:6])
    if path != "exact":
        store.flush()
    store.add_events(household[6:])  # "chroma+buffered": these wait in the write buffer
    store.put_fused(knee_pack(store))
    if path in ("chroma", "chroma+fallback"):
        store.flush()
    query = store.embed_query("David knee ice pack injury")

    hits = store.dense_search(query, 20)
    assert [i for i, _ in hits] == _brute_force(store, hash_embedder, query, lambda i: True)
    for node_id, sim in hits:
        assert sim == pytest.approx(float(store.vector(node_id) @ query), abs=1e-5)
    fused = store.dense_search(query, 5, kind=NodeKind.FUSED)
    assert [i for i, _ in fused] == ["fused_knee"]
    window = (T0, T0 + timedelta(minutes=30))
    in_window = store.dense_search(query, 20, kind=NodeKind.EVENT, between=window)
    assert [i for i, _ in in_window] == _brute_force(
        store, hash_embedder, query, lambda i: i in {"e01", "e02", "e03", "e09"}
    )
    overlapping = store.dense_search(query, 20, between=window)
    assert {i for i, _ in overlapping} == {"e01", "e02", "e03", "e09", "fused_knee"}
    late = (T0 + timedelta(hours=3), T0 + timedelta(hours=4))
    assert store.dense_search(query, 5, between=late) == []
    assert len(store.dense_search(query, 3, kind=NodeKind.EVENT)) == 3


def test_a_filter_too_few_approximate_hits_pass_is_scanned_exactly(
    open_store: Any, household: list[Event], hash_embedder: Any
) -> None:
    """One approximate fetch; when too few of its rows pass the kind/time filter, the rows the
    filter admits are scored in memory (exactly), not asked of Chroma again."""
    store = open_store(
        vector_config=VectorIndexConfig(exact_scan_limit=0, exact_span_limit=0, max_fetch=1)
    )
    store.add_events(household)
    store.put_fused(knee_pack(store))
    store.flush()
    table = store._vectors
    query = store.embed_query("David knee ice pack injury")
    asked, scored = table.ann_queries, table.rows_scored
    hits = store.dense_search(query, 3, kind=NodeKind.EVENT)
    assert table.ann_queries - asked == 1
    assert table.rows_scored - scored >= len(household)  # every admitted row, in memory
    assert [i for i, _ in hits] == _brute_force(
        store, hash_embedder, query, lambda i: not i.startswith("fused_")
    )[:3]


def test_a_window_of_few_consecutive_rows_is_scanned_without_asking_chroma(
    open_store: Any, household: list[Event], hash_embedder: Any, tmp_path: Path
) -> None:
    """A time window admits more nodes than the exact-scan limit, but they lie within a few
    consecutive rows (a memory written in time order): scored in place, exactly, and Chroma is
    not asked; past the span limit the same window goes to Chroma first."""
    within = VectorIndexConfig(exact_scan_limit=1, exact_span_limit=len(household) + 1)
    beyond = VectorIndexConfig(exact_scan_limit=1, exact_span_limit=2)
    window = (T0, T0 + timedelta(minutes=30))
    for config, chroma_queries in ((within, 0), (beyond, 1)):
        store = open_store(tmp_path / f"asks_chroma_{chroma_queries}", vector_config=config)
        store.add_events(household)
        store.flush()
        table = store._vectors
        query = store.embed_query("David knee ice pack injury")
        asked = table.ann_queries
        hits = store.dense_search(query, 3, kind=NodeKind.EVENT, between=window)
        assert table.ann_queries - asked == chroma_queries
        expected = _brute_force(
            store, hash_embedder, query, lambda i: i in {"e01", "e02", "e03", "e09"}
        )
        assert [i for i, _ in hits] == expected[:3]
        store.close()


def test_dense_search_through_chroma_ignores_rows_not_yet_rewritten(
    open_store: Any, household: list[Event]
) -> None:
    store = open_store(vector_config=VectorIndexConfig(exact_scan_limit=0, exact_span_limit=0))
    store.add_events(household)
    store.put_fused(knee_pack(store, "knee injury ice pack"))
    store.put_fused(
        FusedNode.from_members("fused_jazz", "jazz music in the kitchen", store.get_events(["e04"]))
    )
    store.flush()
    store.delete_fused("fused_knee")  # Chroma still has it until the next flush
    store.put_fused(
        store.get_fused("fused_jazz").model_copy(
            update={"summary": "knee injury ice pack", "version": 2}
        )
    )
    query = store.embed_query("knee injury ice pack")
    assert store.dense_search(query, 5, kind=NodeKind.FUSED) == [
        ("fused_jazz", pytest.approx(1.0, abs=1e-5))
    ]
    assert "fused_knee" not in {i for i, _ in store.dense_search(query, 20)}


def test_buffered_new_nodes_do_not_widen_chroma_fetches(
    open_store: Any, household: list[Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only buffered updates and deletes can leave stale rows in Chroma, so only they make a
    query fetch extra rows; buffered new events are rescored from memory and still found."""
    from memory.vector_index import VectorIndex

    asked: list[int] = []
    real = VectorIndex._query_ids

    def spy(self: VectorIndex, q: np.ndarray, n: int) -> set[str]:
        asked.append(n)
        return real(self, q, n)

    monkeypatch.setattr(VectorIndex, "_query_ids", spy)
    store = open_store(vector_config=VectorIndexConfig(exact_scan_limit=0, exact_span_limit=0))
    store.add_events(household)
    store.put_fused(knee_pack(store, "knee injury ice pack"))
    store.flush()
    copies = [e.model_copy(update={"event_id": f"copy_{e.event_id}"}) for e in household]
    store.add_events(copies)  # new: buffered, no row in Chroma
    query = store.embed_query("knee injury ice pack")
    hits = store.dense_search(query, 2, kind=NodeKind.EVENT)
    n_all, n_events = len(household) * 2 + 1, len(household) * 2
    assert asked == [math.ceil(2 * n_all / n_events * 2)]  # oversampled, no row per new event
    assert len(hits) == 2
    new_ids = {e.event_id for e in copies}
    assert new_ids & {i for i, _ in store.dense_search(query, 20)}  # still found from memory
    asked.clear()
    store.put_fused(  # an update: Chroma's row of this pack is now stale
        store.get_fused("fused_knee").model_copy(update={"summary": "jazz", "version": 2})
    )
    store.dense_search(query, 2)
    assert asked == [3]  # n plus the one stale row


def test_lexical_search_finds_names_and_filters_kind(
    open_store: Any, household: list[Event]
) -> None:
    store = open_store()
    store.add_events(household)
    store.put_fused(knee_pack(store, "Emma helped David with his knee"))
    emma = store.lexical_search("Emma", 10, kind=NodeKind.EVENT)
    assert {i for i, _ in emma} == {"e04", "e06", "e08"}
    assert all(score > 0 for _, score in emma)
    assert [i for i, _ in store.lexical_search("Emma", 10, kind=NodeKind.FUSED)] == ["fused_knee"]
    assert store.lexical_search("thermostat", 5) == [
        ("e07", pytest.approx(store.lexical_search("thermostat", 1)[0][1]))
    ]
    assert store.lexical_search("limp", 5)[0][0] == "e02", "stemmed: limping ~ limp"
    assert store.lexical_search("phone_emma", 2)[0][0] == "e06", "device ids match whole"
    assert store.lexical_search("zebra", 5) == [] and store.lexical_search("the of", 5) == []


def test_temporal_window_and_adjacency(open_store: Any, household: list[Event]) -> None:
    store = open_store()
    store.add_events(household)
    assert store.events_between(T0 + timedelta(minutes=20), T0 + timedelta(minutes=40)) == [
        "e02",
        "e03",
        "e09",
        "e04",
    ]
    assert store.adjacent_events("e09", 1, by="device") == ["e01", "e10"]
    assert store.adjacent_events("e09", 5, by="device") == ["e01", "e10"]
    assert store.adjacent_events("e06", 1, by="person") == ["e04", "e08"]
    assert store.adjacent_events("e08", 2, by="person") == ["e06", "e10"]
    assert store.adjacent_events("e03", 2, by="person") == [], "no people, no neighbours"
    with pytest.raises(NodeNotFoundError):
        store.adjacent_events("e99", 1, by="device")


# --- plan log ----------------------------------------------------------------------------


def test_plan_log(open_store: Any) -> None:
    store = open_store()
    assert store.log_plan("p1", "e1", {"step": 1})
    assert store.log_plan("p2", "e2", {"step": 2})
    assert not store.log_plan("p1", "e1", {"step": "other"}), "first record wins"
    store.mark_plan("p1", "done")
    assert store.pending_plans() == [("p2", {"step": 2})]
    assert store.plan_counts() == {"pending": 1, "done": 1, "rejected": 0}
    assert store.stats().pending_plans == 1
    assert store.log_plan("p3", "e1", {"step": 3})  # a second attempt at e1
    assert [store.plan_attempts(e) for e in ("e1", "e2", "e9")] == [2, 1, 0]
    with pytest.raises(NodeNotFoundError, match="plan 'p9'"):
        store.mark_plan("p9", "done")
    with pytest.raises(ValueError, match="plan status"):
        store.mark_plan("p2", "finished")  # type: ignore[arg-type]


def test_a_plan_audit_entry_is_the_same_marked_now_or_after_a_reopen(open_store: Any) -> None:
    """The entry queued when a plan is marked names its event and plan and counts its
    operations, whether the store that logged the plan marks it (from what it remembers) or
    a reopened one does (reading the payload back, as a replay after a crash does)."""
    store = open_store()
    payload = {"ops": {"create_fusion_node": 1, "create_edge": 2}, "event_id": "e1"}
    assert store.log_plan("p1", "e1", payload)
    assert store.log_plan("p2", "e2", {**payload, "event_id": "e2"})
    assert not store.log_plan("p1", "e1", {"ops": {"create_edge": 9}}), "first record wins"
    store.mark_plan("p1", "done")
    store.close()
    reopened = open_store()
    reopened.mark_plan("p2", "rejected", "member missing")
    entries = [(q.op, q.args["counts"], q.args["ids"]) for q in reopened.audit_outbox()]
    assert entries[-2:] == [
        ("fusion_plan", {"ops": 3}, ["e1", "p1"]),
        ("fusion_plan", {"ops": 3}, ["e2", "p2"]),
    ]
    assert [q.args["details"]["status"] for q in reopened.audit_outbox()[-2:]] == [
        "accepted",
        "rejected",
    ]


# --- recovery and configuration ----------------------------------------------------------


def test_reopen_repairs_vectors_lost_in_a_crash(
    open_store: Any, household: list[Event], hash_embedder: Any
) -> None:
    store = open_store()
    store.add_events(household[:5])
    store.put_fused(
        FusedNode.from_members("fused_early", "early morning", store.get_events(["e01", "e02"]))
    )
    store.flush()
    store.add_events(household[5:])  # committed to SQLite, still buffered for Chroma
    store.delete_fused("fused_early")  # Chroma still holds its vector
    crash(store)
    again = open_store()
    assert again.open_repairs == {"deleted": 1, "embedded": 5, "retagged": 0}
    query = again.embed_query("Thermostat set to 21.5 degrees")
    assert again.dense_search(query, 1)[0][0] == "e07"
    assert [i for i, _ in again.dense_search(query, 20, kind=NodeKind.FUSED)] == []
    again.close()
    assert open_store().open_repairs == {"deleted": 0, "embedded": 0, "retagged": 0}


def test_refuses_another_embedding_model_and_bad_namespace(
    open_store: Any, hash_embedder: Any
) -> None:
    open_store().close()
    other = type(hash_embedder)(model_id="test:other")
    with pytest.raises(ConfigurationError, match="test:hash-256"):
        open_store(embedder=other)
    with pytest.raises(ConfigurationError, match="namespace"):
        open_store(namespace="no spaces!")


# --- speed -------------------------------------------------------------------------------


def test_ingest_one_at_a_time_then_search_finds_each_event(
    open_store: Any, make_event: Any
) -> None:
    """The fusion agent's pattern: add one event, search, repeat — each new event must be
    findable right away (dense and lexical), with no flush or rebuild in between."""
    store = open_store()
    words = [
        "heart",
        "rate",
        "kitchen",
        "fridge",
        "jazz",
        "knee",
        "ice",
        "cycling",
        "park",
        "sleep",
        "battery",
        "hallway",
    ]
    for i in range(1500):
        text = " ".join(words[(i * 7 + k) % len(words)] for k in range(6)) + f" reading {i}"
        event = make_event(f"ev{i:05d}", i, text, device=f"dev{i % 9}")
        store.add_events([event])
        query = store.embed_query(event.index_text())
        hits = store.dense_search(query, 10)
        assert f"ev{i:05d}" in {node for node, sim in hits if sim > 0.999}
        assert store.lexical_search(f"reading {i}", 10)
    assert store.stats().events == 1500
    assert (
        len(store.dense_search(store.embed_query("knee ice kitchen"), 10, kind=NodeKind.EVENT))
        == 10
    )


def test_memory_store_implements_the_protocol() -> None:
    """Every MemoryStoreAPI method exists on MemoryStore with the same parameters."""
    import inspect

    from memory.store_api import MemoryStoreAPI

    members = [
        name
        for name, value in vars(MemoryStoreAPI).items()
        if callable(value) and not name.startswith("_")
    ]
    assert len(members) == 52, "update this test when the Protocol grows"
    for name in members:
        wanted = inspect.signature(getattr(MemoryStoreAPI, name)).parameters
        have = inspect.signature(getattr(MemoryStore, name)).parameters
        assert list(have) == list(wanted), name
        assert [p.default for p in have.values()] == [p.default for p in wanted.values()], name


def test_count_events_between_matches_the_listed_events(
    open_store: Any, household: list[Event]
) -> None:
    store = open_store()
    store.add_events(household)
    spans = [(datetime.min, datetime.max), *((e.timestamp, e.timestamp) for e in household)]
    spans.append((household[0].timestamp, household[-1].timestamp - timedelta(seconds=1)))
    for start, end in spans:
        assert store.count_events_between(start, end) == len(store.events_between(start, end))
    assert store.count_events_between(datetime(1990, 1, 1), datetime(1990, 1, 2)) == 0


def test_the_fusion_queue_is_written_with_the_events_and_survives_reopen(
    open_store: Any, household: list[Event]
) -> None:
    store = open_store()
    store.add_events(household[:2])  # plain ingest: nothing to fuse later
    store.add_events(household[2:], pending=True)
    later = sorted(household[2:], key=lambda e: (e.timestamp, e.event_id))
    assert store.pending_fusion() == [e.event_id for e in later]
    store.add_events(household, pending=True)  # identical re-add: queues nothing new
    store.note_pending(later[0].event_id, "ConnectionError: endpoint down")
    store.mark_fused(later[1].event_id)
    begun = count_write_transactions(store)
    store.mark_fused(later[1].event_id)  # idempotent: no longer queued, so nothing written
    assert begun() == 0
    store.close()
    reopened = open_store()
    expected = [e.event_id for e in later if e.event_id != later[1].event_id]
    assert reopened.pending_fusion() == expected
    assert reopened.pending_reasons() == {later[0].event_id: "ConnectionError: endpoint down"}
    assert reopened.stats().pending_fusion == len(expected)


def test_a_missing_sqlite_next_to_its_vectors_is_an_error_not_a_wipe(
    tmp_path: Path, household: list[Event]
) -> None:
    """Deleting default.sqlite used to make the next open silently delete every vector; now
    the open refuses, names the recovery, leaves no empty SQLite behind, and keeps the vectors."""
    from memory.errors import ConfigurationError
    from tests.support.embedders import tiny_embedder

    store = MemoryStore.open(tmp_path, embedder=tiny_embedder())
    store.add_events(household)
    collection = store.collection_name
    store.close()
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"default.sqlite{suffix}").unlink(missing_ok=True)
    for _ in range(2):  # and again: the refusal leaves nothing that would let it pass
        with pytest.raises(ConfigurationError, match="restore the SQLite file"):
            MemoryStore.open(tmp_path, embedder=tiny_embedder())
        assert not (tmp_path / "default.sqlite").exists()
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    assert client.get_collection(collection).count() == len(household)


def test_equally_similar_nodes_make_the_cut_by_id_before_and_after_reopen(
    open_store: Any, make_event: Any
) -> None:
    """Ties at the n-th place must not depend on slot order (a reopen reshuffles slots):
    fusion's automatic semantic edges are chosen from these hits."""
    twins = [make_event(f"z{i}", i, "the same words") for i in (5, 3, 9, 1, 7)]
    store = open_store()
    store.add_events(twins)
    query = store.embed_query("the same words")
    first = [i for i, _ in store.dense_search(query, 2)]
    store.close()
    again = [i for i, _ in open_store().dense_search(query, 2)]
    assert first == again == ["z1", "z3"]


def test_a_write_call_settles_its_vectors_where_readers_need_them(
    open_store: Any, household: list[Event], chroma_endpoint: tuple[str, int] | None
) -> None:
    """Embedded Chroma, read by this process only, takes a small write with the next full
    buffer (a streamed event pays no upsert); a server, read by others, takes it at once.
    A crash before the buffer is written loses nothing: the reopen writes it from the cache."""
    store = open_store()
    store.add_events(household[:3])
    store.settle()
    chroma = store._vectors._col
    if chroma_endpoint is None:
        assert (chroma.count(), store._vectors.pending) == (0, 3)
    else:
        assert (chroma.count(), store._vectors.pending) == (3, 0)
    crash(store)
    reopened = open_store()
    assert reopened._vectors._col.count() == 3 and reopened._vectors.pending == 0
    first = household[0]
    hits = reopened.dense_search(reopened.vector(first.event_id), 1)
    assert hits[0][0] == first.event_id


def test_the_pending_plans_are_found_through_an_index(tmp_path: Path, hash_embedder: Any) -> None:
    """Every ingest first replays the plans still pending; that look must not scan the whole
    plan log, which grows by one row per fused event (a streamed event paid for the scan, more
    the larger the memory: `memfuse bench-perf --events 100000 --mode fused --stream`)."""
    store = MemoryStore.open(tmp_path / "plans", embedder=hash_embedder)
    try:
        plan = store._db.execute(
            "EXPLAIN QUERY PLAN SELECT plan_id, payload FROM plan_log "
            "WHERE status = 'pending' ORDER BY rowid"
        ).fetchall()
        details = " ".join(str(row[-1]) for row in plan)
        assert "USING INDEX plan_log_pending" in details and "TEMP B-TREE" not in details
    finally:
        store.close()
