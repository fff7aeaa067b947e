"""A growable float32 matrix of rows kept in fixed-size blocks, so that growing never copies.

The dense index's table (`memory.vector_table`) holds every vector in memory. As one matrix
grown by doubling, each growth copied all rows into a matrix twice the size: for a moment the
old and the new copy were both resident, a transient of the whole table (1.5 GiB at a
million 384-dimension rows, 0.75 GiB measured in the 500k fused `bench-perf` peak). Here the
first block doubles up to `BLOCK_ROWS` (cheap while small), and past that a new block is
appended: rows never move, so a row view stays valid and growth costs one block of zeros,
which the allocator maps lazily (only rows written become resident).
"""

from __future__ import annotations

import numpy as np

__all__ = ["BLOCK_ROWS", "RowBlocks"]

BLOCK_ROWS = 1 << 16
"""Rows per block: 96 MiB at 384 dimensions, large enough that a scan is a few matrix-vector
products, small enough that growing past a block is a small step."""


class RowBlocks:
    """Rows by slot (0, 1, ...), in blocks of `block_rows`; the width is set by the first
    `reserve` that names one (0 before: an empty table has no dimension yet)."""

    def __init__(self, block_rows: int = BLOCK_ROWS) -> None:
        self._block_rows = block_rows
        self._blocks: list[np.ndarray] = []
        self.dim = 0
        self.capacity = 0  # rows the blocks hold, written or not

    def reserve(self, rows: int, dim: int) -> None:
        """Room for slots below `rows`, each `dim` wide (a new width starts an empty table)."""
        if dim != self.dim:
            self._blocks, self.dim, self.capacity = [], dim, 0
        while self.capacity < rows:
            if len(self._blocks) == 1 and self._blocks[0].shape[0] < self._block_rows:
                first = self._blocks[0]
                grown = np.zeros((min(2 * first.shape[0], self._block_rows), dim), np.float32)
                grown[: first.shape[0]] = first
                self._blocks[0] = grown
            else:
                size = self._block_rows if self._blocks else min(1024, self._block_rows)
                self._blocks.append(np.zeros((size, dim), dtype=np.float32))
            self.capacity = sum(block.shape[0] for block in self._blocks)

    def _at(self, slot: int) -> tuple[np.ndarray, int]:
        return self._blocks[slot // self._block_rows], slot % self._block_rows

    def row(self, slot: int) -> np.ndarray:
        """The row itself (a view: rows never move, so it stays valid)."""
        block, offset = self._at(slot)
        row: np.ndarray = block[offset]
        return row

    def put(self, slot: int, vector: np.ndarray) -> None:
        block, offset = self._at(slot)
        block[offset] = vector

    def take(self, slots: np.ndarray | list[int]) -> np.ndarray:
        """The rows of `slots`, in their order (a copy)."""
        slots = np.asarray(slots, dtype=np.int64)
        if slots.size == 0:
            return np.empty((0, self.dim), dtype=np.float32)
        first, last = int(slots.min()) // self._block_rows, int(slots.max()) // self._block_rows
        if first == last:  # the common case: one block (a small table, or recent rows)
            rows: np.ndarray = self._blocks[first][slots - first * self._block_rows]
            return rows
        out = np.empty((slots.size, self.dim), dtype=np.float32)
        blocks = slots // self._block_rows
        for b in range(first, last + 1):
            here = blocks == b
            out[here] = self._blocks[b][slots[here] - b * self._block_rows]
        return out

    def dot_range(self, query: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """Each row of slots lo..hi-1 times `query`, scored in place (no row is copied)."""
        parts = [np.zeros(0, dtype=np.float32)]
        parts.extend(rows @ query for rows in self._views(lo, hi))
        return parts[1] if len(parts) == 2 else np.concatenate(parts)

    def dot_range_many(self, queries: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """Each of `queries` (one a row) times each row of slots lo..hi-1: one row of hi - lo
        products per query, from one matrix product per block (the rows are not copied)."""
        qs = np.asarray(queries, dtype=np.float32)
        parts = [np.zeros((qs.shape[0], 0), dtype=np.float32)]
        parts.extend(qs @ rows.T for rows in self._views(lo, hi))
        return parts[1] if len(parts) == 2 else np.concatenate(parts, axis=1)

    def _views(self, lo: int, hi: int) -> list[np.ndarray]:
        """Slots lo..hi-1 as views of the blocks that hold them, in order."""
        views = []
        for b in range(lo // self._block_rows, -(-hi // self._block_rows)):
            start = max(lo - b * self._block_rows, 0)
            stop = min(hi - b * self._block_rows, self._block_rows)
            views.append(self._blocks[b][start:stop])
        return views

    def dot_rows(self, query: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """Each row of `slots` times `query`, in their order (the rows gathered first)."""
        sims: np.ndarray = self.take(slots) @ query
        return sims
