"""Which events a governance command means: by id, device, person, time range, visibility.

`memfuse events` lists with these filters, `memfuse forget` removes what they select and
`memfuse export` writes it, so one definition decides all three. A person matches an event
that names them or that their own device recorded (its owner): forgetting "everything of
Maya's" must reach her watch's heart-rate readings, which do not name her.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, Field

from memory.errors import MemFuseError, NodeNotFoundError
from memory.models import Event
from memory.store_api import MemoryStoreAPI


class EventFilter(BaseModel):
    """Every given selector must hold (they narrow each other); none given selects nothing
    for a destructive command (see `require_selector`) and everything for a listing."""

    event_ids: list[str] = Field(default_factory=list, description="Exactly these events.")
    device: str | None = Field(default=None, description="Recorded by this device.")
    person: str | None = Field(default=None, description="Naming this person, or on their device.")
    since: datetime | None = Field(default=None, description="At or after this time.")
    until: datetime | None = Field(default=None, description="At or before this time.")
    visibility: str | None = Field(default=None, description="With this canonical visibility.")

    def empty(self) -> bool:
        return not (
            self.event_ids
            or self.device
            or self.person
            or self.since
            or self.until
            or self.visibility
        )

    def require_selector(self, command: str) -> None:
        if self.empty():
            raise MemFuseError(
                f"{command} needs a selector: event ids, --device, --person, --since or --until "
                "(nothing is selected by default)"
            )
        if self.since and self.until and self.since > self.until:
            raise MemFuseError(
                f"--since {self.since.isoformat()} is after --until {self.until.isoformat()}"
            )

    def matches(self, event: Event, visibility: str) -> bool:
        person = (self.person or "").casefold()
        return (
            (not self.device or event.device == self.device)
            and (
                not person
                or person in {c.casefold() for c in event.characters}
                or person == (event.owner or "").casefold()
            )
            and (self.since is None or event.timestamp >= self.since)
            and (self.until is None or event.timestamp <= self.until)
            and (self.visibility is None or visibility == self.visibility)
        )


def select_events(store: MemoryStoreAPI, selector: EventFilter) -> list[Event]:
    """The events the filter selects, in time order. Named ids must all exist (one unknown id
    is an error, so a typo never turns into a silent no-op)."""
    if selector.event_ids:
        missing = [i for i in selector.event_ids if not _is_event(store, i)]
        if missing:
            raise NodeNotFoundError(missing[0], "event")
        pool: Sequence[Event] = sorted(
            store.get_events(dict.fromkeys(selector.event_ids)),
            key=lambda e: (e.timestamp, e.event_id),
        )
    else:
        start = selector.since or datetime.min
        end = selector.until or datetime.max
        pool = store.get_events(store.events_between(start, end))
    return [e for e in pool if selector.matches(e, store.visibility_of(e.event_id))]


def _is_event(store: MemoryStoreAPI, node_id: str) -> bool:
    try:
        store.get_event(node_id)
    except NodeNotFoundError:
        return False
    return True
