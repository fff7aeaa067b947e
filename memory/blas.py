"""One BLAS thread for the store's many small vector products.

Fusion and search multiply a query by a few hundred stored vectors at a time. On a small,
busy machine numpy's OpenBLAS pool spins its second thread against other work for products
that small: a 1,300 × 384 product took 0.36 ms on two threads against 0.10 ms on one (with
torch loaded, as it is here), fused ingest spent most of its dense-search time there, and a
benchmark search's p50 went from 27.7 to 18.3 ms with one thread (a fused bench store;
`memfuse bench-perf --mode fused` reports search p50/p95). Big batched work (the embedding
model) runs on torch's own pool and keeps its threads.

The limit is process-wide while a block runs (BLAS has no per-thread setting) and restored
after it; two threads that overlap may restore each other's value early, which changes
speed only, never a result.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from threadpoolctl import ThreadpoolController

_CONTROLLER: tuple[int, ThreadpoolController] | None = None


def _controller() -> ThreadpoolController:
    """The loaded thread pools, inspected again only when Python has imported more modules
    since (an extension such as torch or scipy may bring a BLAS of its own): inspecting
    costs ~0.5 ms, a limit on a known controller ~65 µs."""
    global _CONTROLLER
    loaded = len(sys.modules)
    if _CONTROLLER is None or _CONTROLLER[0] != loaded:
        _CONTROLLER = (loaded, ThreadpoolController())  # a race only inspects twice
    return _CONTROLLER[1]


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with numpy's BLAS on one thread, then restore the previous count."""
    with _controller().limit(limits=1, user_api="blas"):
        yield
