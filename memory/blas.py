"""One BLAS thread for the store's many small vector products.

Fusion and search multiply a query by a few hundred stored vectors at a time. On a small,
busy machine numpy's OpenBLAS pool spins its second thread against other work for products
that small: a 1,300 × 384 product took 0.36 ms on two threads against 0.10 ms on one (with
torch loaded, as it is here), fused ingest spent most of its dense-search time there, and a
benchmark search's p50 went from 27.7 to 18.3 ms with one thread
(`/work/exp/s15/search_blas.py`, a fused bench store). Big batched work (the embedding
model) runs on torch's own pool and keeps its threads.

The limit is process-wide while a block runs (BLAS has no per-thread setting) and restored
after it; two threads that overlap may restore each other's value early, which changes
speed only, never a result.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager

from threadpoolctl import ThreadpoolController


@functools.cache
def _controller() -> ThreadpoolController:
    # built once: inspecting the loaded libraries costs ~0.3 ms, a limit ~65 µs after that
    return ThreadpoolController()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with numpy's BLAS on one thread, then restore the previous count."""
    with _controller().limit(limits=1, user_api="blas"):
        yield
