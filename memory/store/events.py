"""Events, the immutable source of truth: a batch validated whole, the new events written in
one transaction (rows, visibility, fusion queue, audit entry) and indexed, and read back.

Its own part because everything else refers to events; only forgetting removes them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

import numpy as np

from memory.backends.base import BaseDatabase
from memory.errors import EventConflictError, InvalidEventError, NodeNotFoundError
from memory.models import FUSED_PREFIX, Event, NodeKind, is_fused_id
from memory.store.audit import AuditOutbox
from memory.store.visibility import SET_VISIBILITY
from memory.store_api import AddReport
from memory.vector_index import IndexedVector
from memory.visibility import derive as derive_visibility


class EventLog(AuditOutbox):
    """Adds, checks and reads events."""

    # --- events (immutable) -----------------------------------------------------------

    def add_events(
        self,
        events: Sequence[Event],
        progress: bool = False,
        pending: bool = False,
        visibility: Mapping[str, str] | None = None,
    ) -> AddReport:
        """Validate the whole batch, then write the new events in one transaction.

        Raises InvalidEventError (bad record, reserved id, same id twice with different
        content, a bad `visibility` field) or EventConflictError (an id stored with other
        content) before anything is written. Identical re-adds are reported as `unchanged`
        (their visibility untouched: `set_visibility` changes it). With `pending`, the new
        events are queued for fusion in the same transaction (see `pending_fusion`).
        `visibility` gives canonical visibilities by id (the caller's policy applied); an
        event it leaves out gets the default derivation.
        """
        with self._db.lock:  # validation must see the state the write will change
            return self._add_events(events, progress, pending, visibility or {})

    def check_events(self, events: Sequence[Event]) -> AddReport:
        """What `add_events` would do with this batch (added / unchanged), raising the same
        errors, and writing nothing: a caller that stores a large batch in parts checks the
        whole batch first, so a bad record at its end cannot leave its beginning written."""
        with self._db.lock:
            new, unchanged, _ = self._validated(events)
            return AddReport(added=[e.event_id for e in new], unchanged=unchanged)

    def _validated(self, events: Sequence[Event]) -> tuple[list[Event], list[str], dict[str, str]]:
        """(new events, unchanged ids, fingerprint by id) of a batch, or the first problem."""
        batch: dict[str, Event] = {}
        fingerprints: dict[str, str] = {}
        for position, event in enumerate(events, start=1):
            if not isinstance(event, Event):
                raise InvalidEventError(
                    None, "<record>", f"expected an Event, got {type(event).__name__}", position
                )
            event_id = event.event_id
            if is_fused_id(event_id):
                raise InvalidEventError(
                    event_id,
                    "event_id",
                    f"must not start with {FUSED_PREFIX!r} (reserved for fused nodes)",
                    position,
                )
            fingerprint = event.fingerprint()
            if event_id in batch:
                if fingerprints[event_id] != fingerprint:
                    raise InvalidEventError(
                        event_id,
                        "event_id",
                        "duplicated in the batch with different content",
                        position,
                    )
                continue
            batch[event_id] = event
            fingerprints[event_id] = fingerprint
        new: list[Event] = []
        unchanged: list[str] = []
        for event_id, event in batch.items():
            stored = self._fingerprints.get(event_id)
            if stored is None:
                new.append(event)
            elif stored == fingerprints[event_id]:
                unchanged.append(event_id)
            else:
                raise EventConflictError(event_id, self._events[event_id].differing_fields(event))
        return new, unchanged, fingerprints

    def _add_events(
        self,
        events: Sequence[Event],
        progress: bool,
        pending: bool,
        visibility: Mapping[str, str],
    ) -> AddReport:
        new, unchanged, fingerprints = self._validated(events)
        if not new:
            return AddReport(unchanged=unchanged)
        audiences = {
            e.event_id: sys.intern(visibility.get(e.event_id) or derive_visibility(e)) for e in new
        }
        vectors = self._embed([e.index_text() for e in new], progress)
        bodies = {e.event_id: e.model_dump_json() for e in new}
        with self._db.transaction() as db:
            db.executemany(
                "INSERT INTO events (event_id, ts, fingerprint, body) VALUES (?, ?, ?, ?)",
                [
                    (
                        e.event_id,
                        e.timestamp.isoformat(),
                        fingerprints[e.event_id],
                        bodies[e.event_id],
                    )
                    for e in new
                ],
            )
            db.executemany(
                SET_VISIBILITY,
                list(audiences.items()),
            )
            if pending:
                db.executemany(
                    "INSERT INTO pending_fusion (event_id, ts) VALUES (?, ?) "
                    "ON CONFLICT DO NOTHING",
                    [(e.event_id, e.timestamp.isoformat()) for e in new],
                )
            self._index_events(db, new, fingerprints, bodies, vectors)
            self._queue_audit(
                db,
                "ingest",
                {"stored": len(new), "unchanged": len(unchanged)},
                [e.event_id for e in new],
                {"mode": "fused" if pending else "plain"},
            )
            self._visibility.update(audiences)

            def unset() -> None:
                for event_id in audiences:
                    self._visibility.pop(event_id, None)

            db.on_rollback(unset)
            db.after_commit(self._vectors.maybe_flush)
        return AddReport(added=[e.event_id for e in new], unchanged=unchanged)

    def _index_events(
        self,
        db: BaseDatabase,
        new: list[Event],
        fingerprints: Mapping[str, str],
        bodies: Mapping[str, str],
        vectors: np.ndarray,
    ) -> None:
        """Put new events in the in-memory indexes, undone on rollback; `bodies` are their
        JSON as written to the database, kept as the event table's compact rows."""
        indexed: list[Event] = []

        def forget() -> None:  # registered first: undoes however far the loop below got
            for event in indexed:
                del self._events[event.event_id]
                del self._fingerprints[event.event_id]
                self._count_sources(event, -1)
                self._temporal.remove(event)

        db.on_rollback(forget)
        for event in new:
            self._events.add(event, bodies[event.event_id])
            self._fingerprints[event.event_id] = fingerprints[event.event_id]
            self._count_sources(event, +1)
            indexed.append(event)
            self._temporal.add(event)
        db.on_rollback(
            self._vectors.upsert(
                [
                    IndexedVector(
                        e.event_id, v, NodeKind.EVENT, e.timestamp, e.timestamp, e.index_text()
                    )
                    for e, v in zip(new, vectors, strict=True)
                ]
            )
        )
        for event in new:
            db.on_rollback(
                self._lexical.add(
                    event.event_id,
                    event.index_text(),
                    NodeKind.EVENT,
                    (event.timestamp, event.timestamp),
                )
            )

    def has_node(self, node_id: str) -> bool:
        return node_id in self._events or node_id in self._fused

    def get_event(self, event_id: str) -> Event:
        event = self._events.get(event_id)
        if event is None:
            raise NodeNotFoundError(event_id, "event")
        return event

    def event_time(self, event_id: str) -> datetime:
        """`get_event(event_id).timestamp`, without decoding the event."""
        timestamp = self._events.timestamp(event_id)
        if timestamp is None:
            raise NodeNotFoundError(event_id, "event")
        return timestamp

    def get_events(self, event_ids: Iterable[str]) -> list[Event]:
        """The events in the order asked; NodeNotFoundError on the first unknown id."""
        return [self.get_event(event_id) for event_id in event_ids]

    def all_events(self) -> list[Event]:
        """Every event, ordered by (timestamp, event_id)."""
        with self._db.lock:
            ids = self._temporal.between(datetime.min, datetime.max)
            return [self._events.decode(i) for i in ids]
