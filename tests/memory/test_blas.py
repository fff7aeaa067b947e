"""memory.blas: numpy's BLAS runs on one thread inside the block and gets its count back."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController, threadpool_limits

from memory.blas import one_blas_thread


def _blas_threads() -> list[int]:
    return [
        pool.num_threads for pool in ThreadpoolController().select(user_api="blas").lib_controllers
    ]


def test_the_block_runs_on_one_blas_thread_and_the_count_comes_back() -> None:
    if not _blas_threads():
        pytest.skip("numpy is linked against no BLAS threadpoolctl can see")
    with threadpool_limits(2, user_api="blas"):  # a known count to come back to
        before = _blas_threads()
        with one_blas_thread():
            assert _blas_threads() == [1] * len(before)
            product = np.ones((64, 8), dtype=np.float32) @ np.ones(8, dtype=np.float32)
        assert _blas_threads() == before
    assert product.tolist() == [8.0] * 64


def test_the_count_comes_back_when_the_block_raises() -> None:
    if not _blas_threads():
        pytest.skip("numpy is linked against no BLAS threadpoolctl can see")
    before = _blas_threads()
    with pytest.raises(RuntimeError), one_blas_thread():
        raise RuntimeError("boom")
    assert _blas_threads() == before


def test_the_pools_are_inspected_again_once_more_modules_are_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An extension imported after the first use may bring a BLAS of its own (the full test
    run loads two): the next block must see it, not a controller built before it came."""
    import sys
    import types

    from memory import blas

    with one_blas_thread():
        pass
    first = blas._controller()
    assert blas._controller() is first  # nothing new loaded: no second inspection
    monkeypatch.setitem(sys.modules, "memfuse_test_extension", types.ModuleType("x"))
    assert blas._controller() is not first
