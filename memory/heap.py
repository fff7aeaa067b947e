"""Keeping CPython's full garbage-collection passes off the read path of a loaded store.

An open store keeps what it loaded (tables, indexes, the events a benchmark parsed) for as long
as it is open: hundreds of thousands of long-lived objects. The collector's oldest generation is
scanned whole from time to time, and on a benchmark process (seed 11: 380k tracked objects) one
such pass took 200 ms in the middle of a search — one question in a few hundred paid for it, and
on a source of 18 questions that one was the p95. Freezing what is alive once a store is loaded
moves it out of the collector's view: a later full pass scans only what was allocated since.

Only long-lived processes settle (a served store, a benchmark between loading a store and
asking it); a one-shot command exits before a full pass would come. Reference counting still
frees frozen objects; only cycles among them wait until `thaw`.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Collect what loading left as garbage, then freeze everything still alive."""
    gc.collect()
    gc.freeze()


def thaw() -> None:
    """Hand the frozen objects back to the collector (a store was closed: its cycles, if any,
    may be garbage now)."""
    gc.unfreeze()


def frozen() -> int:
    """How many objects are frozen (0 after `thaw`)."""
    return gc.get_freeze_count()
