"""The vector table's filters and scoring: whatever writes came before (new rows, moved spans,
deletes, rolled-back writes, reused slots), a kind/time filter read through the zone map
admits exactly the rows a scan of every row admits, and search scores them as a full scan
does."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.models import NodeKind
from memory.vector_index import IndexedVector
from memory.vector_table import ZONE, VectorTable, epoch_seconds

START = datetime(2026, 5, 11)
DIM = 8

# one write: (op, node number, kind, start minute, length in minutes)
_WRITES = st.lists(
    st.tuples(
        st.sampled_from(["put", "put", "put", "delete", "undo"]),
        st.integers(0, 2 * ZONE + 300),
        st.sampled_from([NodeKind.EVENT, NodeKind.FUSED]),
        st.integers(0, 20_000),
        st.integers(0, 600),
    ),
    max_size=60,
)


def _item(number: int, kind: NodeKind, minute: int, length: int) -> IndexedVector:
    rng = np.random.default_rng(number * 7919 + minute)
    vector = rng.normal(size=DIM).astype(np.float32)
    start = START + timedelta(minutes=minute)
    end = start + timedelta(minutes=length if kind == NodeKind.FUSED else 0)
    return IndexedVector(f"n{number}", vector / np.linalg.norm(vector), kind, start, end, "t")


def _table(writes: list[tuple[str, int, NodeKind, int, int]]) -> VectorTable:
    """A table past its first zones (a stream written in time order), then the writes."""
    table = VectorTable()
    table.upsert([_item(i, NodeKind.EVENT, 3 * i, 0) for i in range(2 * ZONE + 200)])
    for op, number, kind, minute, length in writes:
        if op == "put":
            table.upsert([_item(number, kind, minute, length)])
        elif op == "delete":
            table.delete([f"n{number}"])
        else:  # a write rolled back: the table as it was
            table.upsert([_item(number, kind, minute, length)])()
    return table


def _scan(table: VectorTable, kind: NodeKind | None, lo: datetime, hi: datetime) -> np.ndarray:
    size = len(table._ids)
    rows = table._kind[:size] != 0
    if kind is not None:
        rows &= table._kind[:size] == {NodeKind.EVENT: 1, NodeKind.FUSED: 2}[kind]
    rows &= (table._start[:size] <= epoch_seconds(hi)) & (table._end[:size] >= epoch_seconds(lo))
    return rows


@settings(max_examples=60, deadline=None)
@given(
    _WRITES,
    st.sampled_from([None, NodeKind.EVENT, NodeKind.FUSED]),
    st.integers(0, 21_000),
    st.integers(0, 4_000),
)
def test_the_zone_map_admits_exactly_the_rows_a_full_scan_admits(
    writes: list[tuple[str, int, NodeKind, int, int]],
    kind: NodeKind | None,
    minute: int,
    width: int,
) -> None:
    table = _table(writes)
    lo = START + timedelta(minutes=minute)
    hi = lo + timedelta(minutes=width)
    expected = np.flatnonzero(_scan(table, kind, lo, hi))
    assert np.array_equal(table._admitted(kind, (lo, hi)), expected)
    if expected.size:  # the top scores equal a full scan's (ties may order apart)
        query = _item(10**6, NodeKind.EVENT, 0, 0).vector
        scanned = np.sort(table._matrix.dot_range(query, 0, len(table._ids))[expected])[::-1][:10]
        found = table._top(query, table._admitted(kind, (lo, hi)), 10)
        assert np.allclose([s for _, s in found], scanned, atol=1e-6)


def test_a_recent_window_reads_the_last_zones_only() -> None:
    table = _table([])
    rows = len(table)
    before = table.rows_masked
    recent = START + timedelta(minutes=3 * (rows - 50))
    table._admitted(NodeKind.EVENT, (recent, recent + timedelta(hours=5)))
    assert table.rows_masked - before <= ZONE < rows


@settings(max_examples=60, deadline=None)
@given(_WRITES)
def test_the_event_centroid_is_the_mean_of_the_event_rows(
    writes: list[tuple[str, int, NodeKind, int, int]],
) -> None:
    """Kept as a running sum through new rows, rows changing kind, deletes, rolled-back
    writes and reused slots: always the mean a scan of the event rows gives."""
    table = _table(writes)
    size = len(table._ids)
    events = np.flatnonzero(table._kind[:size] == 1)
    centroid = table.event_centroid()
    if events.size == 0:
        assert centroid is None
    else:
        assert centroid is not None
        scanned = table._matrix.take(events).astype(np.float64).mean(axis=0)
        assert np.allclose(centroid, scanned, atol=1e-6)


def test_a_table_without_events_has_no_centroid() -> None:
    table = VectorTable()
    assert table.event_centroid() is None
    table.upsert([_item(1, NodeKind.FUSED, 0, 30)])
    assert table.event_centroid() is None
    table.upsert([_item(2, NodeKind.EVENT, 0, 0)])
    assert np.allclose(table.event_centroid(), _item(2, NodeKind.EVENT, 0, 0).vector)
    table.delete(["n2"])
    assert table.event_centroid() is None
