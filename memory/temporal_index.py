"""Events in time order, overall and per device and per person, for window and neighbour lookups.

Sorted `(timestamp, event_id)` lists searched with bisect: a window is two bisections,
and "what happened just before/after on the same watch (or to the same person)" is a
slice around the event's position. Events arrive mostly in time order, so inserts are
nearly always appends.

The index holds no events, only their keys: whoever removes an event or asks for its
neighbours hands the event in (the store holds events compactly, see
`memory.event_table`, and a second id → event map here would keep them all decoded).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from typing import Literal

from memory.errors import NodeNotFoundError
from memory.models import Event

_Key = tuple[datetime, str]
_MAX_ID = "\U0010ffff"  # sorts after any event id


class TemporalIndex:
    """Time-ordered event ids, globally and grouped by device and by person."""

    def __init__(self) -> None:
        self._all: list[_Key] = []
        self._by_device: dict[str, list[_Key]] = defaultdict(list)
        self._by_person: dict[str, list[_Key]] = defaultdict(list)

    def __len__(self) -> int:
        return len(self._all)

    def __contains__(self, event: Event) -> bool:
        key = (event.timestamp, event.event_id)
        at = bisect.bisect_left(self._all, key)
        return at < len(self._all) and self._all[at] == key

    def add(self, event: Event) -> None:
        """Index the event; one already indexed is left as it is."""
        if event in self:
            return
        key = (event.timestamp, event.event_id)
        for keys in self._lists_of(event):
            if not keys or keys[-1] < key:
                keys.append(key)
            else:
                bisect.insort(keys, key)

    def remove(self, event: Event) -> None:
        """Drop the event (the one indexed: same id, time, device and people); one not
        indexed is ignored."""
        if event not in self:
            return
        key = (event.timestamp, event.event_id)
        for keys in self._lists_of(event):
            del keys[bisect.bisect_left(keys, key)]

    def _lists_of(self, event: Event) -> list[list[_Key]]:
        lists = [self._all, self._by_device[event.device]]
        lists += [self._by_person[p] for p in dict.fromkeys(event.characters)]
        return lists

    def between(self, start: datetime, end: datetime) -> list[str]:
        """Event ids with start <= timestamp <= end, in (timestamp, id) order."""
        return [event_id for _, event_id in self.keys_between(start, end)]

    def keys_between(self, start: datetime, end: datetime) -> list[tuple[datetime, str]]:
        """(timestamp, id) of the events with start <= timestamp <= end, in that order."""
        lo, hi = key_span(self._all, start, end)
        return self._all[lo:hi]

    def device_between(self, device: str, start: datetime, end: datetime) -> list[str]:
        """`between` for one device's events, off its own list (no other event is looked at)."""
        keys = self._by_device.get(device, [])
        lo, hi = key_span(keys, start, end)
        return [event_id for _, event_id in keys[lo:hi]]

    def first_named(
        self, admitted: Callable[[str], bool]
    ) -> tuple[dict[str, datetime], dict[str, datetime]]:
        """When each person, and each device, is first named by an event `admitted` accepts
        (by id); a name no such event carries is left out. Read off the per-person and
        per-device lists, so no event is read: usually the first of each list is admitted."""
        return _first_admitted(self._by_person, admitted), _first_admitted(
            self._by_device, admitted
        )

    def count_between(self, start: datetime, end: datetime) -> int:
        """How many events lie in [start, end]: two bisections, no list built."""
        lo, hi = key_span(self._all, start, end)
        return hi - lo

    def nth_latest(self, end: datetime, n: int) -> datetime | None:
        """The time of the n-th latest event at or before `end` (n = 1: the latest); None
        when fewer events lie there. One bisection: `count_between(t, end) >= n` exactly when
        `t <=` this time, which answers "how far back do n events reach" without probing."""
        if n < 1:
            raise ValueError(f"expected n >= 1, got {n}")
        hi = bisect.bisect_right(self._all, (end, _MAX_ID))
        return self._all[hi - n][0] if hi >= n else None

    def first(self) -> datetime | None:
        return self._all[0][0] if self._all else None

    def last(self) -> datetime | None:
        return self._all[-1][0] if self._all else None

    def adjacent(self, event: Event, radius: int, by: Literal["device", "person"]) -> list[str]:
        """Up to `radius` events before and `radius` after `event`, in time order.

        by="device": on the same device. by="person": sharing at least one character with
        it (the nearest ones across all its people); an event with no people has none.
        """
        if event not in self:
            raise NodeNotFoundError(event.event_id, "event")
        if radius <= 0:
            return []
        key = (event.timestamp, event.event_id)
        if by == "device":
            groups = [self._by_device[event.device]]
        elif by == "person":
            groups = [self._by_person[p] for p in dict.fromkeys(event.characters)]
        else:
            raise ValueError(f"expected by='device' or 'person', got {by!r}")
        before: set[_Key] = set()
        after: set[_Key] = set()
        for keys in groups:
            at = bisect.bisect_left(keys, key)
            before.update(keys[max(0, at - radius) : at])
            after.update(keys[at + 1 : at + 1 + radius])
        chosen = sorted(before)[-radius:] + sorted(after)[:radius]
        return [event_id for _, event_id in chosen]


def key_span(keys: list[_Key], start: datetime, end: datetime) -> tuple[int, int]:
    """The positions in sorted (timestamp, id) `keys` of those with start <= timestamp <= end."""
    lo = bisect.bisect_left(keys, (start, ""))
    hi = bisect.bisect_right(keys, (end, _MAX_ID))
    return lo, max(hi, lo)


def _first_admitted(
    groups: dict[str, list[_Key]], admitted: Callable[[str], bool]
) -> dict[str, datetime]:
    firsts: dict[str, datetime] = {}
    for name, keys in groups.items():
        for timestamp, event_id in keys:
            if admitted(event_id):
                firsts[name] = timestamp
                break
    return firsts
