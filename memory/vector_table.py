"""The dense index's in-memory side: every vector in float32 rows (fixed blocks that growing never
copies, `memory.row_blocks`), and the writes Chroma has yet to get.

`VectorIndex` (memory.vector_index) scores every candidate from this table, never from Chroma,
and answers a narrow query from it exactly. A write lands here at once (searchable at once,
and undoable for a rolled-back transaction) and waits in the buffer for the index's next
flush. Its own module so the table's bookkeeping (slots, growth, undo, exact scoring) reads
apart from the index's work with Chroma.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from memory.errors import ConfigurationError
from memory.models import NodeKind
from memory.row_blocks import RowBlocks

if TYPE_CHECKING:  # defined beside VectorIndex, which builds on this table
    from memory.vector_index import IndexedVector

_KIND_CODE = {NodeKind.EVENT: 1, NodeKind.FUSED: 2}
_CODE_KIND = {code: kind for kind, code in _KIND_CODE.items()}
ZONE = 1024
"""Rows per zone of the time zone map: a time-window query reads the kind and time columns
of the zones whose span meets the window only (see `VectorTable._admitted`)."""


def epoch_seconds(ts: datetime) -> float:
    """Naive household-local time as a sortable number (read as UTC; only order matters)."""
    return ts.replace(tzinfo=UTC).timestamp()


def text_fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class VectorTable:
    """The in-memory table of the dense index and its buffer of writes for Chroma (see the
    module docstring); `VectorIndex` adds the Chroma collection."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._slot_of: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._free: list[int] = []
        self._matrix = RowBlocks()
        self._kind = np.zeros(0, dtype=np.int8)
        self._start = np.zeros(0, dtype=np.float64)
        self._end = np.zeros(0, dtype=np.float64)
        # the zone map: per ZONE rows, the earliest start and the latest end any row put there
        # ever had (never narrowed when a row leaves or moves: a superset is still right)
        self._zone_start = np.zeros(0, dtype=np.float64)
        self._zone_end = np.zeros(0, dtype=np.float64)
        self._text_fp: dict[str, str] = {}
        # the sum and count of the event rows, kept with every write, for `event_centroid`
        self._event_sum = np.zeros(0, dtype=np.float64)
        self._event_rows = 0
        self._pending: dict[str, Literal["upsert", "delete"]] = {}
        # pending nodes Chroma has never held: no row of theirs can be stale there, so a
        # query need not fetch extra rows for them (a fused ingest buffers hundreds)
        self._not_in_chroma: set[str] = set()
        # the work of the searches so far, for tests that hold a query's cost flat as the
        # memory grows (as the lexical index's `postings_scored`)
        self.rows_scored = 0  # matrix rows multiplied by a query vector
        self.ann_queries = 0  # queries that went to Chroma's approximate index
        self.rows_masked = 0  # rows whose kind and time were read to filter a query
        # the longest row ever put: it bounds how far a float32 product can be off (`_margin`)
        self._max_norm = 0.0
        # products of announced queries with a run of rows (`VectorIndex.prime`)
        self._held: HeldScreens | None = None

    # --- the in-memory table ----------------------------------------------------------

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._slot_of

    def get(self, node_id: str) -> np.ndarray | None:
        slot = self._slot_of.get(node_id)
        return None if slot is None else self._matrix.row(slot)

    def take(self, node_ids: Sequence[str]) -> np.ndarray | None:
        """The rows of `node_ids`, in their order, in one gather (a copy); None when one of
        them has no row."""
        slots = [self._slot_of.get(i) for i in node_ids]
        if None in slots:
            return None
        return self._matrix.take(np.asarray(slots, dtype=np.int64))

    def _grow(self, dim: int) -> None:
        if len(self._ids) < self._matrix.capacity and dim == self._matrix.dim:
            return
        self._matrix.reserve(len(self._ids) + 1, dim)
        if self._kind.shape[0] >= self._matrix.capacity:
            return
        capacity = max(self._matrix.capacity, 2 * self._kind.shape[0])
        for name in ("_kind", "_start", "_end"):
            old = getattr(self, name)
            new = np.zeros(capacity, dtype=old.dtype)
            new[: old.shape[0]] = old
            setattr(self, name, new)
        zones = -(-capacity // ZONE)
        for name, empty in (("_zone_start", np.inf), ("_zone_end", -np.inf)):
            old = getattr(self, name)
            new = np.full(zones, empty, dtype=np.float64)
            new[: old.shape[0]] = old
            setattr(self, name, new)

    def _put(
        self, node_id: str, vector: np.ndarray, kind: int, start: float, end: float, text_fp: str
    ) -> None:
        if self._matrix.dim not in (0, vector.shape[0]):
            raise ConfigurationError(
                f"vector of {node_id!r} has dimension {vector.shape[0]}, "
                f"the index {self._matrix.dim} (was the embedding model changed?)"
            )
        slot = self._slot_of.get(node_id)
        if slot is not None:
            self._uncount(slot)
        else:
            if self._free:
                slot = self._free.pop()
                self._ids[slot] = node_id
            else:
                self._grow(vector.shape[0])
                slot = len(self._ids)
                self._ids.append(node_id)
            self._slot_of[node_id] = slot
        self._matrix.put(slot, vector)
        self._changed(slot)
        self._max_norm = max(self._max_norm, float(np.sqrt(np.dot(vector, vector))))
        self._kind[slot] = kind
        if kind == _KIND_CODE[NodeKind.EVENT]:
            if self._event_sum.shape[0] != vector.shape[0]:
                self._event_sum = np.zeros(vector.shape[0], dtype=np.float64)
            self._event_sum += self._matrix.row(slot)
            self._event_rows += 1
        self._start[slot] = start
        self._end[slot] = end
        zone = slot // ZONE
        self._zone_start[zone] = min(self._zone_start[zone], start)
        self._zone_end[zone] = max(self._zone_end[zone], end)
        self._text_fp[node_id] = text_fp

    def _drop(self, node_id: str) -> None:
        slot = self._slot_of.pop(node_id)
        self._changed(slot)
        self._uncount(slot)
        self._ids[slot] = None
        self._kind[slot] = 0
        self._free.append(slot)
        self._text_fp.pop(node_id, None)

    def _changed(self, slot: int) -> None:
        """The row at `slot` is new, changed or gone: a held product of it is stale."""
        held = self._held
        if held is not None and held.lo <= slot < held.hi and not held.stale[slot - held.lo]:
            held.stale[slot - held.lo] = True
            held.changed += 1
            if held.changed * 4 > held.hi - held.lo:
                self._held = None  # mostly stale: rescoring would cost more than it saves

    def _uncount(self, slot: int) -> None:
        """Take a row that is leaving or changing out of the event sum (if it is an event's)."""
        if self._kind[slot] != _KIND_CODE[NodeKind.EVENT]:
            return
        self._event_rows -= 1
        if self._event_rows == 0:
            self._event_sum[:] = 0.0  # no rounding left over from rows long gone
        else:
            self._event_sum -= self._matrix.row(slot)

    def event_centroid(self) -> np.ndarray | None:
        """The mean of the event rows (None without events): the direction every event of
        this memory shares, whatever it is about — a conversation's "X said:", a household's
        device and room words. Search subtracts part of it from a query (see
        `SearchConfig.hub_penalty`). Kept as a running sum, so reading it costs one division."""
        with self._lock:
            if self._event_rows == 0:
                return None
            mean: np.ndarray = (self._event_sum / self._event_rows).astype(np.float32)
            return mean

    def _snapshot(self, node_id: str) -> tuple[Any, ...] | None:
        slot = self._slot_of.get(node_id)
        if slot is None:
            return None
        return (
            self._matrix.row(slot).copy(),
            int(self._kind[slot]),
            float(self._start[slot]),
            float(self._end[slot]),
            self._text_fp[node_id],
        )

    def _restorer(self, node_ids: Sequence[str]) -> Callable[[], None]:
        """Capture the current state of node_ids; the returned function puts it back."""
        before = {i: self._snapshot(i) for i in node_ids}
        pending_before = {i: self._pending.get(i) for i in node_ids}
        outside_before = {i for i in node_ids if i in self._not_in_chroma}

        def restore() -> None:
            with self._lock:
                for node_id, state in before.items():
                    if state is None:
                        if node_id in self._slot_of:
                            self._drop(node_id)
                    else:
                        self._put(node_id, *state)
                    previous = pending_before[node_id]
                    if previous is None:
                        self._pending.pop(node_id, None)
                    else:
                        self._pending[node_id] = previous
                    if node_id in outside_before:
                        self._not_in_chroma.add(node_id)
                    else:
                        self._not_in_chroma.discard(node_id)

        return restore

    # --- writes -----------------------------------------------------------------------

    def upsert(self, items: Sequence[IndexedVector]) -> Callable[[], None]:
        """Insert or replace nodes now (searchable at once); Chroma follows on flush.

        Returns a function that undoes exactly this call (for a rolled-back transaction).
        """
        with self._lock:
            undo = self._restorer([item.node_id for item in items])
            try:
                for item in items:
                    if item.node_id not in self._slot_of and item.node_id not in self._pending:
                        self._not_in_chroma.add(item.node_id)  # brand new since the last flush
                    vector = np.asarray(item.vector, dtype=np.float32).reshape(-1)
                    self._put(
                        item.node_id,
                        vector,
                        _KIND_CODE[item.kind],
                        epoch_seconds(item.start),
                        epoch_seconds(item.end),
                        text_fingerprint(item.text),
                    )
                    self._pending[item.node_id] = "upsert"
            except BaseException:
                undo()  # all of the call or none of it
                raise
            return undo

    def delete(self, node_ids: Sequence[str]) -> Callable[[], None]:
        with self._lock:
            present = [i for i in node_ids if i in self._slot_of]
            undo = self._restorer(present)
            for node_id in present:
                self._drop(node_id)
                self._pending[node_id] = "delete"
            return undo

    @property
    def pending(self) -> int:
        return len(self._pending)

    # --- exact scoring ----------------------------------------------------------------

    def _admitted(
        self, kind: NodeKind | None, between: tuple[datetime, datetime] | None
    ) -> np.ndarray:
        """Slots (ascending) of the live rows of `kind` whose span meets `between`.

        With a time window only the zones that can hold such rows are read: in a memory written
        in time order a recent window is the last few zones, so the filter costs the same at a
        million rows as at ten thousand. Nothing the size of the whole table is built for a
        window (a full-length mask, summed and scanned for its slots, made every fused event
        cost more as the memory grew: three passes over 108k rows a search at 100k events).
        """
        size = len(self._ids)
        if between is None:
            self.rows_masked += size
            return np.flatnonzero(self._rows(kind, 0, size))
        lo, hi = epoch_seconds(between[0]), epoch_seconds(between[1])
        zones = -(-size // ZONE)
        meets = (self._zone_start[:zones] <= hi) & (self._zone_end[:zones] >= lo)
        parts = [np.zeros(0, dtype=np.int64)]
        for first, last in _runs(np.flatnonzero(meets)):
            start, stop = first * ZONE, min((last + 1) * ZONE, size)
            self.rows_masked += stop - start
            part = self._rows(kind, start, stop)
            part &= (self._start[start:stop] <= hi) & (self._end[start:stop] >= lo)
            parts.append(np.flatnonzero(part) + start)
        return parts[1] if len(parts) == 2 else np.concatenate(parts)

    def _rows(self, kind: NodeKind | None, start: int, stop: int) -> np.ndarray:
        if kind is None:
            live: np.ndarray = self._kind[start:stop] != 0
            return live
        of_kind: np.ndarray = self._kind[start:stop] == _KIND_CODE[kind]
        return of_kind

    def _similarities(self, query: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """Cosines of `slots` to `query`, from the cheapest of three passes. Slots spread over
        much of the index: one pass over the contiguous matrix beats gathering their rows first
        (1,300 of 1,300 rows, 0.1 ms against 3.7 ms for the gather, which copies the rows out).
        A time window of a memory written in time order is a few contiguous rows: scored in
        place (a view, no copy) — also when it is an eighth of the index or more but under half
        of it (a window of 2,048 events in a 16,000-row index took a full pass, 0.5 ms a search,
        where its rows take a sixth of that). A few scattered slots: gathered."""
        size = len(self._ids)
        lo, hi = int(slots.min()), int(slots.max()) + 1
        if slots.size * 8 >= size and (hi - lo) * 2 >= size:
            self.rows_scored += size
            sims: np.ndarray = self._matrix.dot_range(query, 0, size)[slots]
            return sims
        if hi - lo <= slots.size * 8:
            self.rows_scored += hi - lo
            ranged: np.ndarray = self._matrix.dot_range(query, lo, hi)[slots - lo]
            return ranged
        self.rows_scored += slots.size
        gathered: np.ndarray = self._matrix.dot_rows(query, slots)
        return gathered

    def _top(self, query: np.ndarray, slots: np.ndarray, n: int) -> list[tuple[str, float]]:
        return self._select(query, slots, self._screen(query, slots), n)

    def _screen(self, query: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """Float32 products of `query` with `slots`: read off the held products where `query`
        was announced (`VectorIndex.prime`) and the row has not changed since, computed for
        the rest."""
        held = self._held
        row = None if held is None else held.rows.get(query.tobytes())
        if held is None or row is None:
            return self._similarities(query, slots)
        offsets = slots - held.lo
        kept = (offsets >= 0) & (offsets < held.hi - held.lo)
        if held.changed:
            kept[kept] = ~held.stale[offsets[kept]]
        screen = np.empty(slots.size, dtype=np.float32)
        screen[kept] = held.screens[row, offsets[kept]]
        rest = slots[~kept]
        if rest.size:
            self.rows_scored += rest.size
            screen[~kept] = self._matrix.dot_rows(query, rest)
        return screen

    def _hold(self, queries: np.ndarray, lo: int, hi: int) -> None:
        """Score `queries` (one a row) against rows lo..hi-1 in one product, and hold it for
        their searches until the next call."""
        self._held = None
        self.rows_scored += hi - lo
        rows = {q.tobytes(): i for i, q in enumerate(queries)}
        screens = self._matrix.dot_range_many(queries, lo, hi)
        stale = np.zeros(hi - lo, dtype=bool)
        self._held = HeldScreens(rows=rows, lo=lo, hi=hi, screens=screens, stale=stale)

    def _select(
        self, query: np.ndarray, slots: np.ndarray, screen: np.ndarray, n: int
    ) -> list[tuple[str, float]]:
        """The n best of `slots` by exact cosine, best first, from `screen` (their float32
        products, however computed). A matrix product's last bits depend on the path a row
        takes through it (a block or a tail of the kernel, one query or many), so `screen`
        only narrows the field: the rows within `_margin` of its n-th best hold the n best by
        exact cosine, and those are rescored row by row (`_exact`). So every path that screens
        the same slots picks the same nodes with the same similarities."""
        if slots.size > n:
            cut = np.partition(screen, slots.size - n)[slots.size - n]
            slots = slots[screen >= cut - self._margin(query)]
        sims = self._exact(query, slots)
        if slots.size > n:
            # The n best, ties at the cut broken by id: which of several equally similar nodes
            # make the cut must not depend on slot order, which a reopen reshuffles.
            cut = np.partition(sims, slots.size - n)[slots.size - n]
            above = np.flatnonzero(sims > cut)
            tied = sorted(np.flatnonzero(sims == cut), key=lambda j: self._ids[slots[j]])
            keep = np.concatenate([above, np.asarray(tied[: n - above.size], dtype=np.int64)])
            slots, sims = slots[keep], sims[keep]
        order = sorted(range(slots.size), key=lambda j: (-float(sims[j]), self._ids[slots[j]]))
        return [(str(self._ids[slots[j]]), float(sims[j])) for j in order]

    def _exact(self, query: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """Cosines of `slots` summed row by row in float64, rounded to float32: a row's value
        does not depend on which rows are scored with it."""
        rows = self._matrix.take(slots).astype(np.float64)
        exact: np.ndarray = (rows * query.astype(np.float64)).sum(axis=1).astype(np.float32)
        return exact

    def _margin(self, query: np.ndarray) -> float:
        """Twice the most a float32 product of `query` with a row can differ from its exact
        value or from `_exact`'s (n·2⁻²⁴·|q|·|row| each, summed in any order), doubled
        again for safety: a screen's n-th best minus this keeps every row of the exact n best."""
        dim = max(self._matrix.dim, 1)
        size = float(np.sqrt(np.dot(query, query))) * self._max_norm
        return 4.0 * (dim + 2) * 2.0**-24 * size


@dataclass
class HeldScreens:
    """Products of a few announced queries with the rows lo..hi-1, and which of those rows
    changed since (rescored when searched)."""

    rows: dict[bytes, int]
    """Query bytes -> its row of `screens`."""
    lo: int
    hi: int
    screens: np.ndarray
    stale: np.ndarray
    """One flag per row lo..hi-1: changed since the products were taken."""
    changed: int = 0


def _runs(zones: np.ndarray) -> list[tuple[int, int]]:
    """Sorted zone numbers as (first, last) runs of consecutive zones: one slice per run."""
    if zones.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(zones) > 1)
    firsts = np.concatenate(([zones[0]], zones[breaks + 1]))
    lasts = np.concatenate((zones[breaks], [zones[-1]]))
    return [(int(a), int(b)) for a, b in zip(firsts, lasts, strict=True)]
