"""Settling a loaded heap: what is alive is frozen out of the collector's full passes, and
handed back when the store closes."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from memory import heap


class _Cycle:
    """An object only the cyclic collector can free."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    heap.thaw()
    yield
    heap.thaw()


def test_settle_collects_the_garbage_and_freezes_the_living() -> None:
    dropped = weakref.ref(_Cycle())
    kept = [_Cycle() for _ in range(3)]
    assert dropped() is not None  # a cycle: reference counting alone never frees it
    heap.settle()
    assert dropped() is None
    assert heap.frozen() > 0
    assert not any(type(o) is _Cycle for o in gc.get_objects())  # out of the passes' view
    heap.thaw()
    assert heap.frozen() == 0
    assert sum(type(o) is _Cycle for o in gc.get_objects()) == len(kept)


def test_a_frozen_cycle_waits_for_thaw() -> None:
    doomed = _Cycle()
    ref = weakref.ref(doomed)
    heap.settle()
    del doomed
    gc.collect()
    assert ref() is not None  # frozen: no pass reaches it
    heap.thaw()
    gc.collect()
    assert ref() is None
