"""How many torch threads embed a handful of texts fastest here, now — measured, not assumed.

A handful of texts (a query, one fused summary) is latency-bound, and the right intra-op
thread count depends on the machine's load, which changes under a running process: on the
quiet 2-core development box one summary under bfloat16 took 12 ms on two threads and 17 ms
on one; with other processes busy, a two-thread OpenMP pool spins against them and one short
text took ~190 ms instead of ~35 ms on one thread. So the embedder keeps a running cost per
thread count (seconds per character, the median of its last three calls), uses the cheaper
one, and re-tries the other now and then to notice the machine changing. (What that saves a
whole ingest was not measurable here: two cold `memfuse bench --systems memfuse` runs of the
default benchmark read 102 s and 121 s with two threads mostly, the machine drifting by that
much between runs.) Which count runs changes speed only: the vectors are the same to float
rounding.
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

SMALL_BATCH = 8
"""Texts; up to this many are embedded on the thread count `ThreadChooser` picks, more on
the configured count (a batch keeps every thread busy)."""


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with `n` torch intra-op threads (if torch is loaded), then restore."""
    torch = sys.modules.get("torch")
    if n is None or torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class ThreadChooser:
    """Picks one thread or all of them for small embedding calls, by measured cost.

    Each count is tried twice before any comparison (its first call pays for starting the
    pool and is not counted); after that the count with the lower median of its last three
    costs runs, and every `explore_every`-th call runs the other one, so a load that comes
    or goes is seen within two re-tries, and one slow call (a pause elsewhere) moves
    nothing."""

    def __init__(self, explore_every: int = 32, clock: Callable[[], float] = time.perf_counter):
        if explore_every < 2:
            raise ValueError(f"explore_every must be >= 2, got {explore_every}")
        self.explore_every = explore_every
        self._clock = clock
        self._lock = threading.Lock()
        self._recent: dict[int, deque[float]] = {}  # seconds per character, newest last
        self._samples: Counter[int] = Counter()
        self._calls = 0

    def choose(self, available: int) -> int:
        """The thread count for the next small call, given `available` (the configured)."""
        arms = (1, available) if available > 1 else (1,)
        with self._lock:
            self._calls += 1
            fresh = [n for n in arms if self._samples[n] < 2]
            if fresh:
                return min(fresh, key=lambda n: self._samples[n])
            best = min(arms, key=lambda n: statistics.median(self._recent[n]))
            if len(arms) > 1 and self._calls % self.explore_every == 0:
                return next(n for n in arms if n != best)
            return best

    def record(self, threads: int, seconds: float, characters: int) -> None:
        """One finished call: its thread count, wall time and total text length."""
        with self._lock:
            self._samples[threads] += 1
            if self._samples[threads] == 1:  # the pool's start-up: measured again to count
                return
            recent = self._recent.setdefault(threads, deque(maxlen=3))
            recent.append(seconds / max(characters, 1))

    def costs(self) -> dict[int, float]:
        """Seconds per character by thread count: the median of the last three measured."""
        with self._lock:
            return {n: statistics.median(r) for n, r in self._recent.items()}

    @contextmanager
    def run(self, characters: int) -> Iterator[int]:
        """Run a small call on the chosen count (torch's current count is what's available),
        timing it; yields the count."""
        torch = sys.modules.get("torch")
        available = int(torch.get_num_threads()) if torch is not None else 1
        threads = self.choose(available)
        started = self._clock()
        with torch_threads(threads):
            yield threads
        self.record(threads, self._clock() - started, characters)
