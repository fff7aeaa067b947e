"""The compact event table: exact round trips, the bounded decode cache, deletion, and the
temporal index that now holds keys only."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.errors import NodeNotFoundError
from memory.event_table import EventTable
from memory.models import EARLIEST, LATEST, Event, Modality, SourceKind
from memory.temporal_index import TemporalIndex

T0 = datetime(2024, 3, 1, 8, 0, 0)


def _event(event_id: str, minutes: float = 0, **fields: Any) -> Event:
    base: dict[str, Any] = {
        "event_id": event_id,
        "timestamp": T0 + timedelta(minutes=minutes),
        "device": "watch_david",
        "modality": "health",
        "description": f"heart rate reading {event_id}",
        "characters": ("David",),
    }
    return Event.model_validate(base | fields)


def test_round_trip_keeps_every_field_equal() -> None:
    event = _event(
        "e1",
        timestamp=datetime(2024, 3, 1, 8, 0, 0, 123456),
        characters=("David", "Emma"),
        location="kitchen",
        source="storyline",
        owner="David",
        episode_id="ep1",
        metadata={"bpm": 72, "ratio": 0.1, "ok": True, "none": None, "tags": ["a"], "n": {"x": 1}},
    )
    table = EventTable.from_events([event])
    for got in (table["e1"], table.decode("e1"), table.get("e1"), next(table.scan())):
        assert got == event
        assert got.timestamp.tzinfo is None and got.timestamp.microsecond == 123456
        assert got.characters == ("David", "Emma")
        assert got.model_dump_json() == event.model_dump_json()


def test_plain_events_are_held_as_bytes_and_their_given_body_is_kept() -> None:
    event = _event("e1")
    table = EventTable()
    body = event.model_dump_json()
    table.add(event, body)
    assert table._rows["e1"] == body.encode()
    assert table["e1"] == event


@pytest.mark.parametrize(
    "metadata",
    [
        {"tags": ("a", "b")},  # a tuple would come back a list
        {"when": datetime(2024, 1, 1)},  # a datetime would come back a string
        {"nested": [{"s": {1, 2}}]},
        {"nested": {1: "int key"}},  # a key would come back a string
    ],
)
def test_metadata_that_json_would_change_is_kept_as_the_object(metadata: dict[Any, Any]) -> None:
    event = _event("e1", metadata=metadata)
    table = EventTable.from_events([event])
    assert table["e1"] is event


def test_the_decode_cache_is_bounded_and_serves_hot_events_from_it() -> None:
    events = [_event(f"e{i}", i) for i in range(10)]
    table = EventTable.from_events(events, cache_size=3)
    first = table["e0"]
    assert table["e0"] is first  # cached
    for i in range(1, 10):
        table[f"e{i}"]
    assert table._cached.cache_info().currsize == 3
    assert table["e0"] is not first and table["e0"] == first  # evicted, decoded again
    assert table.decode("e9") is not table["e9"]  # decode bypasses the cache


def test_deletion_membership_order_and_length() -> None:
    table = EventTable.from_events([_event("b", 1), _event("a", 2), _event("c", 3)])
    assert list(table) == ["b", "a", "c"] and len(table) == 3
    table["a"]
    del table["a"]
    assert "a" not in table and "b" in table and len(table) == 2
    assert table.get("a") is None
    with pytest.raises(KeyError):
        table["a"]
    with pytest.raises(KeyError):
        del table["a"]
    changed = _event("a", 9, description="re-added with other content")
    table.add(changed)
    assert table["a"] == changed  # never the cached decode of the deleted body
    assert [e.event_id for e in table.scan()] == ["b", "c", "a"]


# Names hold no control characters (Cc) and ids are no paths: the model refuses both.
_text = st.text(st.characters(exclude_categories=("Cs", "Cc")), max_size=20)
_finite = st.floats(allow_nan=False, allow_infinity=False)  # the model refuses NaN and Infinity
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _finite | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_anything = _json | st.tuples(st.integers()) | st.datetimes() | _finite
_events = st.builds(
    Event,
    event_id=st.text(
        st.characters(exclude_categories=("Cs", "Cc"), exclude_characters="/\\"),
        min_size=1,
        max_size=12,
    ).filter(lambda i: i.strip() not in (".", "..")),
    timestamp=st.datetimes(min_value=EARLIEST, max_value=LATEST),
    device=st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
    modality=st.sampled_from(Modality),
    location=_text,
    description=st.from_regex(
        r"[A-Za-z][^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]{0,40}[A-Za-z.]", fullmatch=True
    ),
    characters=st.lists(st.from_regex(r"[A-Z][a-z]{0,6}", fullmatch=True), max_size=3).map(tuple),
    source=st.sampled_from(SourceKind),
    owner=st.none() | _text,
    episode_id=st.none() | _text,
    metadata=st.dictionaries(_text, _anything, max_size=4),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(_events, max_size=6, unique_by=lambda e: e.event_id))
def test_random_events_come_back_equal(events: list[Event]) -> None:
    table = EventTable.from_events(events, cache_size=2)
    assert list(table) == [e.event_id for e in events]
    for event in events:
        assert table[event.event_id] == event
        assert table.decode(event.event_id) == event
        assert table[event.event_id].fingerprint() == event.fingerprint()
        assert table.timestamp(event.event_id) == event.timestamp  # read without decoding
    assert list(table.scan()) == events
    assert table.timestamp("no such event" + "".join(table)) is None


def test_the_time_read_off_a_body_is_the_events_own_whatever_its_text_holds() -> None:
    """The time is read off the JSON where the id ends: an id, a description or metadata that
    spell out a timestamp key of their own do not fool it (inside a JSON string a quote is
    escaped), and microseconds survive."""
    decoy = '","timestamp":"1999-01-01T00:00:00'
    event = _event("a", 0).model_copy(
        update={
            "event_id": f"x{decoy}",
            "timestamp": datetime(2026, 5, 11, 6, 0, 0, 123456),
            "description": f"said {decoy} aloud",
            "metadata": {"timestamp": "1999-01-01T00:00:00", decoy: decoy},
        }
    )
    table = EventTable.from_events([event], cache_size=0)
    assert table.timestamp(event.event_id) == datetime(2026, 5, 11, 6, 0, 0, 123456)


def test_temporal_index_removes_and_finds_neighbours_of_the_events_handed_in() -> None:
    index = TemporalIndex()
    a, b = _event("a", 0), _event("b", 1, characters=("David", "Emma"))
    c = _event("c", 2, device="phone_emma", characters=("Emma",))
    for event in (c, a, b, b):  # out of order, and one twice
        index.add(event)
    assert len(index) == 3 and a in index
    assert index.adjacent(b, 1, "device") == ["a"]
    assert index.adjacent(b, 2, "person") == ["a", "c"]
    assert index.device_between("watch_david", a.timestamp, c.timestamp) == ["a", "b"]
    assert index.device_between("watch_david", b.timestamp, c.timestamp) == ["b"]
    assert index.device_between("phone_emma", a.timestamp, b.timestamp) == []
    assert index.device_between("no_such_device", a.timestamp, c.timestamp) == []
    index.remove(a)
    index.remove(a)  # not indexed any more: ignored
    assert a not in index and len(index) == 2
    assert index.adjacent(b, 1, "device") == []
    with pytest.raises(NodeNotFoundError):
        index.adjacent(a, 1, "device")
