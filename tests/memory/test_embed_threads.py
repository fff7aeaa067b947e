"""The thread count of small embedding calls follows what is measured, and changes with it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest
import torch  # loaded, as the embedder has it: `run` reads torch's configured thread count
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.embed_threads import ThreadChooser, torch_threads


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _simulate(
    chooser: ThreadChooser, clock: _Clock, calls: int, cost: Callable[[int], float]
) -> list[int]:
    """`calls` small calls of 100 characters whose wall time is cost(threads) per character;
    returns the thread counts chosen, in order."""
    chosen = []
    for _ in range(calls):
        with chooser.run(100) as threads:
            clock.now += cost(threads) * 100
        chosen.append(threads)
    return chosen


def test_the_faster_count_runs_and_the_other_is_retried_now_and_then() -> None:
    clock = _Clock()
    chooser = ThreadChooser(explore_every=10, clock=clock)
    with torch_threads(2):
        chosen = _simulate(chooser, clock, 200, lambda n: 0.012 if n == 2 else 0.017)
    assert Counter(chosen[:4]) == {1: 2, 2: 2}  # each count warmed up twice
    later = Counter(chosen[4:])
    assert later[1] == 20 and later[2] == 176  # one call in ten re-tries the slower count
    assert chooser.costs() == {1: pytest.approx(0.017), 2: pytest.approx(0.012)}


def test_a_load_that_slows_two_threads_moves_the_calls_to_one() -> None:
    clock = _Clock()
    chooser = ThreadChooser(explore_every=8, clock=clock)
    busy = False

    def cost(n: int) -> float:
        return (0.190 if busy else 0.012) if n == 2 else 0.035 if busy else 0.017

    with torch_threads(2):
        quiet = _simulate(chooser, clock, 41, cost)  # call 40 re-tried one thread
        busy = True
        loaded = _simulate(chooser, clock, 80, cost)
        busy = False
        calm_again = _simulate(chooser, clock, 80, cost)
    assert quiet[-1] == 2 and Counter(quiet[4:])[2] > Counter(quiet[4:])[1]
    # two slow calls move the median: from then on two threads run only as re-tries
    assert loaded[:2] == [2, 2] and loaded[2] == 1
    assert Counter(loaded[2:]) == {1: 68, 2: 10}
    # and two good re-tries bring them back
    assert calm_again[-1] == 2 and Counter(calm_again[20:])[2] >= 50


def test_a_pools_first_call_does_not_count() -> None:
    clock = _Clock()
    chooser = ThreadChooser(explore_every=32, clock=clock)
    first = {1: True, 2: True}

    def cost(n: int) -> float:
        if first[n]:
            first[n] = False
            return 5.0  # starting a pool
        return 0.012 if n == 2 else 0.017

    with torch_threads(2):
        chosen = _simulate(chooser, clock, 10, cost)
    assert chosen[4:] == [2] * 6
    assert chooser.costs() == {1: pytest.approx(0.017), 2: pytest.approx(0.012)}


def test_one_thread_available_means_one_thread() -> None:
    clock = _Clock()
    chooser = ThreadChooser(clock=clock)
    with torch_threads(1):
        assert set(_simulate(chooser, clock, 50, lambda n: 0.01)) == {1}


def test_run_sets_the_chosen_count_and_restores_it() -> None:
    chooser = ThreadChooser()
    with torch_threads(2):
        for _ in range(6):
            with chooser.run(10) as threads:
                assert torch.get_num_threads() == threads
            assert torch.get_num_threads() == 2


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="explore_every"):
        ThreadChooser(explore_every=1)


@settings(max_examples=60, deadline=None)
@given(
    costs=st.lists(st.tuples(st.floats(1e-4, 1.0), st.floats(1e-4, 1.0)), min_size=5, max_size=120),
    explore_every=st.integers(2, 40),
)
def test_after_the_warm_up_the_count_measured_cheaper_runs_bar_the_retries(
    costs: list[tuple[float, float]], explore_every: int
) -> None:
    """Whatever the measurements, every call runs on one thread or on all; after the warm-up
    a call runs on the count whose recent median is higher only as a re-try, at most one
    call in `explore_every`."""
    clock = _Clock()
    chooser = ThreadChooser(explore_every=explore_every, clock=clock)
    against_the_measure = 0
    with torch_threads(2):
        for call, (one, two) in enumerate(costs, start=1):
            before = chooser.costs()
            with chooser.run(100) as threads:
                clock.now += (one if threads == 1 else two) * 100
            assert threads in (1, 2)
            if call <= 4:
                assert threads == (1 if call % 2 else 2)
            elif before[threads] > min(before.values()):
                against_the_measure += 1
    assert against_the_measure <= len(costs) // explore_every
