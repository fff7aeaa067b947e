"""What a requester's view reads off the store as a whole — the names the planner may
recognise in their question, and the events in a time span with their count and the n-th
latest time: those of the events they may see up to the view's time, read once per requester
while the store is unchanged, and read again after any write — committed, rolled back, a
re-share, a forget — so that a kept copy never names or lists what the requester may no longer
see.

Checked as a property: random writes to a real store, each followed by views of random
requesters at random times, against the names read off the events themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.access import VisibleStore, read_readable, read_readable_events
from memory.models import Event, Modality
from memory.store import MemoryStore
from memory.visibility import may_see
from tests.support.embedders import tiny_embedder

START = datetime(2026, 5, 11, 6, 0)
PEOPLE = ["Ana", "Ben", "Cleo"]
AUDIENCES = ["household", "private:Ana", "private:Ben", "people:Ana,Cleo"]


def event(n: int, person: str, visibility: str) -> Event:
    return Event(
        event_id=f"e{n:03d}",
        timestamp=START + timedelta(minutes=37 * n),
        device=f"phone_{person.lower()}_{n % 2}",
        modality=Modality.APP_USAGE,
        location="home",
        description=f"{person} checked the phone ({n})",
        characters=(person,),
        metadata={"visibility": visibility},
    )


def shown(store: MemoryStore, who: str, when: datetime) -> list[Event]:
    """The events `who` may see up to `when`, in time order, read one by one."""
    seen = store.visibilities()
    return sorted(
        (e for e in store.all_events() if may_see(who, seen[e.event_id]) and e.timestamp <= when),
        key=lambda e: (e.timestamp, e.event_id),
    )


def expected(store: MemoryStore, who: str, when: datetime) -> tuple[set[str], set[str]]:
    events = shown(store, who, when)
    return {p for e in events for p in e.characters}, {e.device for e in events}


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    opened = MemoryStore.open(tmp_path, embedder=tiny_embedder())
    yield opened
    opened.close()


writes = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(PEOPLE), st.sampled_from(AUDIENCES)),
        st.tuples(st.just("reshare"), st.integers(0, 30), st.sampled_from(AUDIENCES)),
        st.tuples(st.just("forget"), st.integers(0, 30), st.just("")),
        st.tuples(st.just("rolled back"), st.sampled_from(PEOPLE), st.just("household")),
    ),
    min_size=1,
    max_size=12,
)
asks = st.lists(
    st.tuples(
        st.sampled_from(PEOPLE),
        st.integers(-10, 12 * 37 + 10),  # the view's time, minutes after START
        st.integers(-40, 12 * 37 + 40),  # a span's start, minutes after START
        st.integers(-5, 6 * 37),  # its length in minutes (negative: an empty span)
        st.integers(1, 6),  # n for the n-th latest time
    ),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(st.tuples(writes, asks), min_size=1, max_size=3))
def test_what_a_requester_reads_follows_every_write(
    store: MemoryStore,
    steps: list[tuple[list[tuple[str, str | int, str]], list[tuple[str, int, int, int, int]]]],
) -> None:
    for event_id in [e.event_id for e in store.all_events()]:  # hypothesis reuses the store
        store.forget_events([event_id])
    added = 0
    for step_writes, step_asks in steps:
        for kind, what, visibility in step_writes:
            ids = [e.event_id for e in store.all_events()]
            if kind == "add":
                store.add_events([event(added, str(what), visibility)])
                added += 1
            elif kind == "reshare" and ids:
                store.set_visibility({ids[int(what) % len(ids)]: visibility})
            elif kind == "forget" and ids:
                store.forget_events([ids[int(what) % len(ids)]])
            elif kind == "rolled back":
                with pytest.raises(RuntimeError), store.transaction():
                    store.add_events([event(added, str(what), visibility)])
                    raise RuntimeError("the writer failed after the write")
        for who in PEOPLE:  # off the time index, as read event by event
            fast, slow = read_readable(store, who), read_readable_events(store, who)
            assert (fast.people, fast.devices, fast.keys) == (slow.people, slow.devices, slow.keys)
        for who, minutes, from_minute, length, n in step_asks:
            when = START + timedelta(minutes=minutes)
            view = VisibleStore(store, who, as_of=when)
            assert (view.known_people(), view.known_devices()) == expected(store, who, when)
            start = START + timedelta(minutes=from_minute)
            end = start + timedelta(minutes=length)
            inside = [e for e in shown(store, who, when) if start <= e.timestamp <= end]
            assert view.events_between(start, end) == [e.event_id for e in inside]
            assert view.count_events_between(start, end) == len(inside)
            for device in {e.device for e in store.all_events()} | {"phone_nobody_0"}:
                on_device = [e.event_id for e in inside if e.device == device]
                assert view.device_events_between(device, start, end) == on_device
            up_to_end = [e for e in shown(store, who, when) if e.timestamp <= end]
            latest = up_to_end[-n].timestamp if len(up_to_end) >= n else None
            assert view.nth_latest_time(end, n) == latest
