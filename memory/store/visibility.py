"""Who may see each event (see memory.visibility): stored beside the immutable event, since a
household may change it, and kept in memory for every read that filters by audience.

Its own part because visibility changes after the event is written; events only set it first.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from memory.errors import NodeNotFoundError
from memory.store.audit import AuditOutbox

# Written in the SQL both backends run (see memory.backends.postgres.translate): an upsert,
# not OR REPLACE.
SET_VISIBILITY = (
    "INSERT INTO event_visibility (event_id, visibility) VALUES (?, ?) "
    "ON CONFLICT (event_id) DO UPDATE SET visibility = excluded.visibility"
)


class EventVisibility(AuditOutbox):
    """Reads and changes the events' visibilities."""

    # --- visibility (see memory.visibility) --------------------------------------------

    def visibility_of(self, event_id: str) -> str:
        """The event's canonical visibility; NodeNotFoundError for an unknown id."""
        value = self._visibility.get(event_id)
        if value is None:
            raise NodeNotFoundError(event_id, "event")
        return value

    def visibilities(self) -> dict[str, str]:
        """Event id → visibility, for every event (a copy)."""
        with self._db.lock:
            return dict(self._visibility)

    def set_visibility(self, changes: Mapping[str, str]) -> list[str]:
        """Give events new (canonical) visibilities in one transaction; returns the ids whose
        visibility changed. Every id must be a stored event (checked before any write)."""
        with self._db.lock:
            for event_id in changes:
                self.visibility_of(event_id)
            changed = {i: sys.intern(v) for i, v in changes.items() if self._visibility[i] != v}
            if not changed:
                return []
            previous = {i: self._visibility[i] for i in changed}
            with self._db.transaction() as db:
                db.executemany(
                    SET_VISIBILITY,
                    list(changed.items()),
                )
                values = sorted(set(changed.values()))
                self._queue_audit(
                    db,
                    "visibility",
                    {"events": len(changed)},
                    sorted(changed),
                    {"visibility": values[0] if len(values) == 1 else "several"},
                )
                self._visibility.update(changed)
                db.on_rollback(lambda: self._visibility.update(previous))
            return sorted(changed)
