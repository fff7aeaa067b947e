"""The audit outbox (see memory.audit_outbox): a change's audit entry queued in that change's
transaction, delivered to the log after it commits and acknowledged here.

Its own part because every writing part queues entries through it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memory import audit_outbox
from memory.audit_outbox import ANCHOR_KEY, QueuedEntry
from memory.backends.base import BaseDatabase
from memory.store.core import StoreCore
from memory.store_api import PlanStatus


def plan_op_count(payload: Any) -> int:
    """The operations a logged plan payload holds (its `ops` tally), 0 when it has none."""
    ops = payload.get("ops", {}) if isinstance(payload, dict) else {}
    return sum(int(n) for n in ops.values()) if isinstance(ops, dict) else 0


class AuditOutbox(StoreCore):
    """Queues, lists and acknowledges the audit entries of committed changes."""

    # --- the audit outbox (see memory.audit_outbox) ------------------------------------

    def _queue_audit(
        self,
        db: BaseDatabase,
        op: str,
        counts: Mapping[str, int],
        ids: Sequence[str],
        details: Mapping[str, Any] | None = None,
    ) -> None:
        """Queue the entry of a change inside that change's transaction."""
        args = audit_outbox.entry_args(op, counts, ids, details)
        row = db.execute("SELECT COALESCE(MAX(seq), 0) FROM audit_outbox").fetchone()
        delivered = (self.audit_anchor() or {}).get("outbox", 0)  # numbers never repeat
        db.execute(
            "INSERT INTO audit_outbox (seq, op, body) VALUES (?, ?, ?)",
            (max(int(row[0]), int(delivered)) + 1, op, audit_outbox.encode(args)),
        )

    def _queue_plan_audit(self, db: BaseDatabase, plan_id: str, status: PlanStatus) -> None:
        memo = self._logged_plans.pop(plan_id, None)
        if memo is None:  # logged by another process, or before a restart: read it back
            row = db.execute(
                "SELECT event_id, payload FROM plan_log WHERE plan_id = ?", (plan_id,)
            ).fetchone()
            memo = (row[0] if row else None, plan_op_count(json.loads(row[1]) if row else {}))
        event_id, count = memo
        decided = audit_outbox.current().details.get("decided_by", "")
        self._queue_audit(
            db,
            "fusion_plan",
            {"ops": count},
            [i for i in (event_id, plan_id) if i],
            {"status": "accepted" if status == "done" else "rejected", "decided_by": decided},
        )

    def queue_audit(
        self,
        op: str,
        counts: Mapping[str, int],
        ids: Sequence[str] = (),
        details: Mapping[str, Any] | None = None,
    ) -> None:
        """Queue an entry for a change the caller makes in the same `transaction()`."""
        with self._db.transaction() as db:
            self._queue_audit(db, op, counts, ids, details)

    def audit_outbox(self) -> list[QueuedEntry]:
        """Entries committed with their changes and not yet delivered to the log, in order."""
        rows = self._db.execute("SELECT seq, op, body FROM audit_outbox ORDER BY seq")
        return [audit_outbox.decode(*row) for row in rows.fetchall()]

    def ack_audit(
        self, through: int, head: Mapping[str, Any] | None, *, scrub: bool = False
    ) -> None:
        """Entries up to `through` are in the log, whose last entry is now `head` (the anchor
        `AuditLog.verify_anchored` checks the log against). `scrub`: a delivered entry named
        forgotten ids, so the WAL's old page images of its row are truncated away too."""
        anchor = {**(head or {}), "outbox": int(through)}
        with self._db.transaction() as db:
            db.execute("DELETE FROM audit_outbox WHERE seq <= ?", (int(through),))
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (ANCHOR_KEY, json.dumps(anchor, sort_keys=True)),
            )
        if scrub:
            self._db.truncate_wal()

    def audit_anchor(self) -> dict[str, Any] | None:
        """The last delivered entry's seq and hash and the outbox number it reached."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (ANCHOR_KEY,)).fetchone()
        return json.loads(row[0]) if row else None
