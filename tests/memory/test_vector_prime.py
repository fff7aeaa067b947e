"""Announced searches (`VectorIndex.prime`, used by a bulk fused ingest: the rows of their
windows scored with all the query vectors in one product) answer exactly as unannounced ones,
also after rows change in between (those are scored afresh); and whichever float32 products
screen the rows, a search keeps the same nodes with the same similarities
(`VectorTable._select`).

On a real VectorIndex over embedded Chroma; the vectors are drawn with many exact ties (rows
repeated, and a small alphabet of values), where a path-dependent last bit would show."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.models import NodeKind
from memory.vector_index import IndexedVector, VectorIndex
from memory.vector_table import VectorTable, epoch_seconds

T0 = datetime(2026, 5, 11, 7, 0)
DIM = 24


@pytest.fixture(scope="module")
def chroma_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("chroma")


def _vectors(seed: int, n: int, repeats: int) -> np.ndarray:
    """Unit rows from a small alphabet of values; every `repeats`-th row a copy of an earlier
    one (exact ties)."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(-2, 3, size=(n, DIM)).astype(np.float32)
    rows[:, 0] += 0.5  # no zero rows
    for i in range(repeats, n, repeats):
        rows[i] = rows[rng.integers(0, i)]
    unit: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


def _event(i: int, vector: np.ndarray) -> IndexedVector:
    at = T0 + timedelta(minutes=3 * i)
    return IndexedVector(f"e{i:04d}", vector, NodeKind.EVENT, at, at, "t")


def _pack(i: int, vector: np.ndarray, first: int, last: int) -> IndexedVector:
    start, end = T0 + timedelta(minutes=3 * first), T0 + timedelta(minutes=3 * last)
    return IndexedVector(f"fused_{i:04d}", vector, NodeKind.FUSED, start, end, "t")


@pytest.fixture
def index(chroma_dir: Path) -> Iterator[VectorIndex]:
    opened = VectorIndex.open("home", uuid.uuid4().hex[:8], path=chroma_dir)
    yield opened
    opened.close(flush=False)


def _filled(chroma_dir: Path, seed: int, n: int, repeats: int) -> VectorIndex:
    """n events, one every 3 minutes, with packs over them in between (rows of the other kind
    inside every window)."""
    index = VectorIndex.open("home", uuid.uuid4().hex[:8], path=chroma_dir)
    vectors = _vectors(seed, n + n // 5, repeats)
    index.upsert([_event(i, vectors[i]) for i in range(n)])
    index.upsert([_pack(k, vectors[n + k], 5 * k, 5 * k + 4) for k in range(n // 5)])
    return index


def _reference(
    index: VectorIndex, query: np.ndarray, n: int, kind: NodeKind, window: tuple[datetime, datetime]
) -> list[tuple[str, float]]:
    """The exact answer, by brute force: every node of `kind` whose span meets the window,
    cosine in float64 rounded to float32, best first, ties by id."""
    code = {NodeKind.EVENT: 1, NodeKind.FUSED: 2}[kind]
    lo, hi = epoch_seconds(window[0]), epoch_seconds(window[1])
    rows = []
    for node_id, slot in index._slot_of.items():
        if index._kind[slot] == code and index._start[slot] <= hi and index._end[slot] >= lo:
            exact = np.dot(index._matrix.row(slot).astype(np.float64), query.astype(np.float64))
            rows.append((-float(np.float32(exact)), node_id))
    return [(node_id, -minus) for minus, node_id in sorted(rows)[:n]]


def _windows(last: range, reach: int) -> list[tuple[datetime, datetime]]:
    return [(T0 + timedelta(minutes=3 * i - reach), T0 + timedelta(minutes=3 * i)) for i in last]


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    size=st.integers(30, 400),
    repeats=st.integers(2, 9),
    n=st.integers(1, 12),
    reach=st.integers(5, 500),
    group=st.integers(1, 40),
)
def test_announced_searches_answer_as_they_would_have(
    chroma_dir: Path, seed: int, size: int, repeats: int, n: int, reach: int, group: int
) -> None:
    """A run of consecutive events, each asking for its n nearest events and packs of the
    `reach` minutes before it (as a fused ingest asks): announced, each search gives the
    answer it gives alone, which is the brute-force exact answer, and the event searches
    score no row of their own."""
    index = _filled(chroma_dir, seed, size, repeats)
    try:
        last = range(max(size - group, 0), size)
        queries = np.stack([index.get(f"e{i:04d}") for i in last])
        windows = _windows(last, reach)
        asks = [(q, k, w) for q, w in zip(queries, windows) for k in NodeKind]
        alone = [index.search(q, n, k, w) for q, k, w in asks]
        assert alone == [_reference(index, q, n, k, w) for q, k, w in asks]
        assert index.prime(queries, windows) > 0
        scored = index.rows_scored
        events = [index.search(q, n, NodeKind.EVENT, w) for q, w in zip(queries, windows)]
        assert index.rows_scored == scored  # read off the products `prime` held
        assert [index.search(q, n, k, w) for q, k, w in asks] == alone
        assert events == alone[::2]
    finally:
        index.close(flush=False)


# a write after the announcement: (op, node number, start minute)
_LATER = st.lists(
    st.tuples(
        st.sampled_from(["event", "pack", "delete", "undo"]),
        st.integers(0, 500),
        st.integers(0, 1200),
    ),
    max_size=30,
)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), writes=_LATER, n=st.integers(1, 10))
def test_rows_written_after_the_announcement_are_scored_afresh(
    chroma_dir: Path, seed: int, writes: list[tuple[str, int, int]], n: int
) -> None:
    """New, changed, deleted and rolled-back rows of either kind between `prime` and the
    searches (a group's plans write packs between its events' searches): every search
    still gives the brute-force exact answer."""
    index = _filled(chroma_dir, seed, 300, 4)
    try:
        last = range(270, 300)
        queries = np.stack([index.get(f"e{i:04d}") for i in last])
        windows = _windows(last, 300)
        assert index.prime(queries, windows) > 0
        fresh = _vectors(seed + 1, len(writes) + 1, 2)
        for (op, number, minute), vector in zip(writes, fresh):
            if op == "event":  # a new event, or one written again with another vector
                index.upsert([_event(number % 320, vector)])
            elif op == "pack":
                index.upsert([_pack(number % 80, vector, minute // 3, minute // 3 + 7)])
            elif op == "delete":
                index.delete([f"e{number % 300:04d}", f"fused_{number % 60:04d}"])
            else:  # a write rolled back
                index.upsert([_pack(number % 80, vector, minute // 3, minute // 3 + 2)])()
        for q, w in zip(queries, windows):
            for kind in NodeKind:
                assert index.search(q, n, kind, w) == _reference(index, q, n, kind, w)
    finally:
        index.close(flush=False)


def test_a_mostly_rewritten_run_of_rows_is_let_go(index: VectorIndex) -> None:
    """Once most of the held rows changed, rescoring them one by one would cost more than a
    fresh product: the products are dropped (and searches are as exact as ever)."""
    vectors = _vectors(3, 200, 4)
    index.upsert([_event(i, vectors[i]) for i in range(100)])
    queries = vectors[90:100]
    assert index.prime(queries, _windows(range(90, 100), 300)) > 0
    assert index._held is not None
    index.upsert([_event(i, vectors[100 + i]) for i in range(60)])
    assert index._held is None
    window = (T0, T0 + timedelta(hours=10))
    assert index.search(queries[0], 5, NodeKind.EVENT, window) == _reference(
        index, queries[0], 5, NodeKind.EVENT, window
    )


def test_windows_far_apart_are_not_primed(index: VectorIndex) -> None:
    """One product over rows the windows do not need would cost more than it saves."""
    vectors = _vectors(5, 400, 7)
    index.upsert([_event(i, v) for i, v in enumerate(vectors)])
    early = (T0, T0 + timedelta(minutes=30))
    late = (T0 + timedelta(minutes=3 * 390), T0 + timedelta(minutes=3 * 399))
    assert index.prime(vectors[:2], [early, late]) == 0 and index._held is None
    assert index.prime(vectors[:2], [late, late]) == 10


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    size=st.integers(1, 300),
    n=st.integers(1, 15),
    noise=st.floats(0.0, 1.0),
)
def test_any_screen_within_float32_rounding_selects_the_same(
    seed: int, size: int, n: int, noise: float
) -> None:
    """The screen's values may be off by as much as a float32 product can be (any summation
    order, one query or many); the nodes and similarities chosen are the same."""
    table = VectorTable()
    vectors = _vectors(seed, size + 1, 3)
    table.upsert(
        [IndexedVector(f"n{i:04d}", v, NodeKind.EVENT, T0, T0, "t") for i, v in enumerate(vectors)]
    )
    query = vectors[-1] * np.float32(1.5)  # a query need not be unit length
    slots = np.arange(size, dtype=np.int64)
    exact = table._exact(query, slots)
    bound = DIM * 2.0**-24 * float(np.linalg.norm(query)) * table._max_norm
    rng = np.random.default_rng(seed)
    off = (rng.uniform(-1, 1, size) * noise * bound).astype(np.float64)
    screen = (exact.astype(np.float64) + off).astype(np.float32)
    expected = table._select(query, slots, exact, n)
    assert table._select(query, slots, screen, n) == expected
    assert table._select(query, slots, table._matrix.dot_range(query, 0, size), n) == expected
    assert [s for _, s in expected] == sorted((s for _, s in expected), reverse=True)
