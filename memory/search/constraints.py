"""The planner's soft constraints beyond the time window (which seeds.py applies).

Each is applied only when the plan enables it with confidence ≥ the config's
``constraint_confidence`` and the recipe has ``use_constraints`` on; the engine checks
that, these functions only do the work:

- temporal neighbours: the events just before and after the top hits on the same
  device or involving the same person (what led up to / followed an observation);
- coverage diversification: a final selection that spreads over people and/or
  devices instead of letting one source take every slot;
- timeline mode: a final selection that reserves slots across the time span, so that
  a sequence question sees its beginning, middle and end.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from memory.models import Event
from memory.search.cache import StoreCache

Window = tuple[datetime, datetime]
NOBODY = "(nobody)"


def temporal_neighbors(
    cache: StoreCache,
    anchors: Sequence[str],
    radius: int,
    keep: int,
    known: set[str],
) -> list[tuple[str, str]]:
    """Up to `keep` new (neighbour, anchor) pairs around the anchors (best hit first).

    Each anchor's neighbours (same device, and same person when it involves anyone)
    are ordered by closeness in time; the anchors then take turns, one neighbour each
    per turn, so the nearest context of several top hits arrives before the far
    context of one. Events already among the candidates are not pulled again.
    """
    per_anchor: list[tuple[str, list[str]]] = []
    for anchor in anchors:
        event = cache.event(anchor)
        nearby = list(cache.store.adjacent_events(anchor, radius, by="device"))
        if event.characters:
            nearby += cache.store.adjacent_events(anchor, radius, by="person")
        found = cache.events(nearby)
        ordered = sorted(
            (n for n in dict.fromkeys(nearby) if n in found and n != anchor and n not in known),
            key=lambda n: (abs((found[n].timestamp - event.timestamp).total_seconds()), n),
        )
        per_anchor.append((anchor, ordered))
    pulled: list[tuple[str, str]] = []
    taken = set(known)
    turn = 0
    while len(pulled) < keep and any(turn < len(ordered) for _, ordered in per_anchor):
        for anchor, ordered in per_anchor:
            if turn < len(ordered) and ordered[turn] not in taken and len(pulled) < keep:
                taken.add(ordered[turn])
                pulled.append((ordered[turn], anchor))
        turn += 1
    return pulled


def _values(event: Event, dimension: str) -> list[str]:
    if dimension == "device":
        return [event.device]
    return list(event.characters) or [NOBODY]


def diversify(
    ranked: Sequence[str],
    events: dict[str, Event],
    dimensions: Sequence[str],
    k: int,
    *,
    already: Sequence[str] = (),
    requester: str | None = None,
) -> list[str]:
    """Pick k of `ranked` so that every person/device with a hit gets a slot early.

    Greedy round-robin: each pick is the best-ranked event whose least-covered value
    in each requested dimension has been picked the fewest times so far (summed over
    the dimensions). With one dimension this is exactly "the best event of every device
    (or person), then the second best of each, …" in rank order; an event involving
    several people covers whichever of them is least covered. Only `ranked` is
    considered, so diversity never pulls in an event the search did not find relevant.
    When `requester` is given and users are a dimension, the requester's best event
    goes first: a question about "us" starts from the asker's own record.
    """
    counts: dict[str, Counter[str]] = {d: Counter() for d in dimensions}

    def take(event_id: str) -> None:
        for dimension in dimensions:
            counts[dimension].update(_values(events[event_id], dimension))

    def cost(event_id: str) -> int:
        return sum(
            min(counts[d][value] for value in _values(events[event_id], d)) for d in dimensions
        )

    for event_id in already:
        if event_id in events:
            take(event_id)
    skip = set(already)
    remaining = [e for e in dict.fromkeys(ranked) if e in events and e not in skip]
    chosen: list[str] = []
    if requester and "user" in dimensions and not already:
        own = next((e for e in remaining if requester in events[e].characters), None)
        if own is not None and k > 0:
            chosen.append(own)
            remaining.remove(own)
            take(own)
    # The best (cost, rank) first, from a heap whose costs are refreshed only when popped: a
    # cost never falls (counts only grow), so a popped entry whose cost is still the one it
    # was pushed with is the minimum, ties by rank, exactly as rescanning every remaining
    # event each pick found it (k rescans of up to top_k x coverage_depth events).
    heap = [(cost(event_id), rank) for rank, event_id in enumerate(remaining)]
    heapq.heapify(heap)
    while heap and len(chosen) < k:
        pushed, rank = heapq.heappop(heap)
        event_id = remaining[rank]
        now = cost(event_id)
        if now != pushed:
            heapq.heappush(heap, (now, rank))
            continue
        chosen.append(event_id)
        take(event_id)
    return chosen


def timeline_slots(
    ranked: Sequence[str],
    events: dict[str, Event],
    buckets: int,
    span: Window | None = None,
) -> list[str]:
    """The best-ranked event of each time bucket, in rank order (≤ `buckets` ids).

    The span (the confident window, else the time range of the ranked events) is cut
    into equal buckets; events outside a given span reserve nothing. Reserving one slot
    per non-empty bucket before filling by rank is what gives a "what happened after…"
    question its ordered coverage instead of ten hits from the same minute.
    """
    stamped = [e for e in ranked if e in events]
    if not stamped:
        return []
    if span is None:
        times = [events[e].timestamp for e in stamped]
        span = (min(times), max(times))
    start, end = span
    width = (end - start) / buckets
    reserved: dict[int, str] = {}
    for event_id in stamped:
        ts = events[event_id].timestamp
        if not start <= ts <= end:
            continue
        bucket = 0 if width.total_seconds() <= 0 else min(int((ts - start) / width), buckets - 1)
        reserved.setdefault(bucket, event_id)
    chosen = set(reserved.values())
    return [e for e in stamped if e in chosen]
