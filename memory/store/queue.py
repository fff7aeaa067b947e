"""The fusion queue: events a fused ingest stored but has not fused yet (queued in the
transaction that stores them, see `EventLog.add_events`), taken off once their fusion finished.

Its own part because it is the fusion pipeline's to-do list, apart from the events themselves.
"""

from __future__ import annotations

from memory.store.core import StoreCore


class FusionQueue(StoreCore):
    """Reads and updates the queue of events waiting for fusion."""

    # --- the fusion queue -----------------------------------------------------------------

    def pending_fusion(self) -> list[str]:
        """Ids of stored events still waiting for fusion, oldest first."""
        rows = self._db.execute("SELECT event_id FROM pending_fusion ORDER BY ts, event_id")
        return [row[0] for row in rows]

    def mark_fused(self, event_id: str) -> None:
        """The event's fusion finished (a plan committed, rejected, or nothing to do). A plan's
        commit already took its event off the queue (`PlanLog.mark_plan`): then only a read
        is paid, not a second write transaction for every fused event."""
        queued = self._db.execute(
            "SELECT 1 FROM pending_fusion WHERE event_id = ?", (event_id,)
        ).fetchone()
        if queued is None:
            return
        with self._db.transaction() as db:
            db.execute("DELETE FROM pending_fusion WHERE event_id = ?", (event_id,))

    def note_pending(self, event_id: str, reason: str) -> None:
        """Why the event's fusion did not finish (it stays queued)."""
        with self._db.transaction() as db:
            db.execute(
                "UPDATE pending_fusion SET reason = ? WHERE event_id = ?", (reason[:500], event_id)
            )

    def pending_reasons(self) -> dict[str, str]:
        """Event id → the last failure noted for a queued event (queued ones without one
        omitted)."""
        rows = self._db.execute(
            "SELECT event_id, reason FROM pending_fusion WHERE reason IS NOT NULL"
        )
        return {event_id: reason for event_id, reason in rows}
