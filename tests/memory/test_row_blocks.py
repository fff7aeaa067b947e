"""RowBlocks against one plain numpy matrix: the same rows, the same products, and rows that
never move when the table grows."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memory.row_blocks import RowBlocks


@settings(max_examples=60, deadline=None)
@given(
    block_rows=st.sampled_from([1, 2, 3, 8]),
    rows=st.integers(min_value=1, max_value=40),
    seed=st.integers(min_value=0, max_value=2**16),
)
@example(block_rows=1, rows=24, seed=0)  # a product near zero (see below)
def test_blocks_read_as_one_matrix(block_rows: int, rows: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    dim = 5
    plain = rng.standard_normal((rows, dim)).astype(np.float32)
    blocks = RowBlocks(block_rows)
    for slot, vector in enumerate(plain):
        blocks.reserve(slot + 1, dim)
        blocks.put(slot, vector)
    assert blocks.capacity >= rows and blocks.dim == dim
    query = rng.standard_normal(dim).astype(np.float32)
    lo = int(rng.integers(0, rows))
    hi = int(rng.integers(lo, rows + 1))
    # float32 sums in another order: a product near zero differs by ~1e-8 absolute, which
    # is no relative tolerance at all (seed 0, 24 rows: 1.29558e-4 against 1.29528e-4)
    rtol, atol = 1e-5, 1e-6
    np.testing.assert_allclose(blocks.dot_range(query, lo, hi), plain[lo:hi] @ query, rtol, atol)
    slots = rng.integers(0, rows, size=int(rng.integers(1, 12)))
    np.testing.assert_array_equal(blocks.take(slots), plain[slots])
    np.testing.assert_allclose(blocks.dot_rows(query, slots), plain[slots] @ query, rtol, atol)
    for slot in range(rows):
        np.testing.assert_array_equal(blocks.row(slot), plain[slot])


def test_growing_past_a_block_moves_no_row() -> None:
    """The reason for blocks: a row view taken before the table grows is the same memory
    after it (a doubling matrix copied every row, holding two copies for a moment)."""
    blocks = RowBlocks(block_rows=4)
    blocks.reserve(4, 3)
    blocks.put(2, np.array([1.0, 2.0, 3.0], dtype=np.float32))
    view = blocks.row(2)
    blocks.reserve(100, 3)
    assert blocks.capacity == 100
    assert np.shares_memory(view, blocks.row(2))
    blocks.put(2, np.array([4.0, 5.0, 6.0], dtype=np.float32))
    assert view.tolist() == [4.0, 5.0, 6.0]


def test_the_first_block_doubles_while_small() -> None:
    blocks = RowBlocks(block_rows=4096)
    blocks.reserve(1, 2)
    assert blocks.capacity == 1024
    blocks.put(1000, np.ones(2, dtype=np.float32))
    blocks.reserve(1500, 2)
    assert blocks.capacity == 2048 and blocks.row(1000).tolist() == [1.0, 1.0]
    blocks.reserve(5000, 2)
    assert blocks.capacity == 4096 * 2


def test_a_new_width_starts_an_empty_table() -> None:
    blocks = RowBlocks(block_rows=4)
    blocks.reserve(3, 2)
    blocks.reserve(1, 7)
    assert blocks.dim == 7 and blocks.capacity == 4
    assert blocks.dot_range(np.ones(7, dtype=np.float32), 0, 0).shape == (0,)
