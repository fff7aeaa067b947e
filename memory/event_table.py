"""The store's events by id, each held as its JSON bytes rather than as a pydantic object.

A decoded `Event` costs about 1.9 KB of Python objects; its JSON (the very body the store
writes to its database) about 470 bytes. At a million events that difference is well over
a gigabyte of resident memory, while the store reads only a handful of events per search.
So the table keeps the bytes and decodes on access, with a small LRU of decoded events so
that a search, a fusion step or a view reading the same events again does not pay the
decode (~15 µs) each time.

Decoding must give back an event equal to the one stored. Every field of `Event` is typed
and survives its JSON, except `metadata`, which keeps whatever it was given: a tuple
comes back a list, a datetime a string, a NaN null. An event whose metadata is not plain
JSON is therefore kept as the object itself (rare: the generators and the JSON formats
only ever produce plain metadata).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from datetime import datetime
from functools import lru_cache
from typing import Any

from memory.models import Event

DEFAULT_CACHE_SIZE = 4096
# Between the event id's value and the timestamp's: inside a JSON string a quote is escaped,
# so the first match is the timestamp key itself.
_TIMESTAMP_KEY = b'","timestamp":"'


class EventTable:
    """Event id → event, insertion-ordered, compact; decoded events are cached (LRU)."""

    def __init__(self, cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        self._rows: dict[str, bytes | Event] = {}
        # Keyed by the body itself, so a deleted (or re-added) id can never be served a
        # stale event; lru_cache is thread-safe, as reads run outside the store's lock.
        self._cached = lru_cache(maxsize=cache_size)(Event.model_validate_json)

    @classmethod
    def from_events(
        cls, events: Iterable[Event], cache_size: int = DEFAULT_CACHE_SIZE
    ) -> EventTable:
        table = cls(cache_size)
        for event in events:
            table.add(event)
        return table

    def add(self, event: Event, body: str | bytes | None = None) -> None:
        """Store `event` (replacing any event with its id). `body`, when the caller already
        has it, must be JSON that decodes to `event` (its `model_dump_json()`, or the
        database body it was decoded from); it saves serialising the event again."""
        if not _plain_json(event.metadata):
            self._rows[event.event_id] = event
            return
        if body is None:
            body = event.model_dump_json()
        self._rows[event.event_id] = body.encode() if isinstance(body, str) else body

    def __delitem__(self, event_id: str) -> None:
        del self._rows[event_id]

    def __contains__(self, event_id: object) -> bool:
        return event_id in self._rows

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[str]:
        """The ids, in insertion order."""
        return iter(self._rows)

    def __getitem__(self, event_id: str) -> Event:
        row = self._rows[event_id]
        return row if isinstance(row, Event) else self._cached(row)

    def get(self, event_id: str) -> Event | None:
        row = self._rows.get(event_id)
        if row is None:
            return None
        return row if isinstance(row, Event) else self._cached(row)

    def timestamp(self, event_id: str) -> datetime | None:
        """The event's time without decoding it (None for an unknown id): read off its JSON,
        where `event_id` comes first and `timestamp` second. A view checks the time of every
        id a search hands it, and decoding each (~15 µs) was a tenth of a question's time on
        a 100k-event store; a body that does not read so is decoded after all."""
        row = self._rows.get(event_id)
        if row is None:
            return None
        if isinstance(row, Event):
            return row.timestamp
        start = row.find(_TIMESTAMP_KEY)
        if start > 0:
            start += len(_TIMESTAMP_KEY)
            end = row.find(b'"', start)
            try:
                stamp = datetime.fromisoformat(row[start:end].decode())
            except ValueError:
                stamp = None
            if stamp is not None and stamp.tzinfo is None:  # stored times are naive UTC
                return stamp
        return self._cached(row).timestamp

    def decode(self, event_id: str) -> Event:
        """The event, decoded afresh: for scans over many events, which would only flush
        the hot events out of the cache."""
        row = self._rows[event_id]
        return row if isinstance(row, Event) else Event.model_validate_json(row)

    def scan(self) -> Iterator[Event]:
        """Every event in insertion order, decoded without touching the cache."""
        for row in self._rows.values():
            yield row if isinstance(row, Event) else Event.model_validate_json(row)


def _plain_json(value: Any) -> bool:
    """Whether `value` comes back from a JSON round trip as an equal value of the same
    types: str, int, finite float, bool, None, and lists and str-keyed dicts of those."""
    kind = type(value)
    if kind in (str, int, bool) or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(_plain_json(item) for item in value)
    if kind is dict:
        return all(type(k) is str and _plain_json(v) for k, v in value.items())
    return False
