"""Counting what a store does, for tests that bound the work (or the writes) per event."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def count_write_transactions(store: Any) -> Callable[[], int]:
    """From now on, count the write transactions the store's database begins (nested ones
    join the outermost and are not counted); returns the reader of the count."""
    db, begun = store._db, [0]
    real = db._begin

    def counted() -> None:
        begun[0] += 1
        real()

    db._begin = counted
    return lambda: begun[0]
