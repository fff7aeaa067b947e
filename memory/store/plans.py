"""The plan log, the fusion commit's write-ahead log: a plan recorded as pending before it is
applied, then marked done or rejected (which takes its event off the fusion queue).

Its own part because only the fusion commit writes it, and a replay reads it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from memory.errors import NodeNotFoundError
from memory.models import format_timestamp
from memory.store.audit import AuditOutbox, plan_op_count
from memory.store_api import PlanStatus

_PLAN_STATUSES: tuple[PlanStatus, ...] = ("pending", "done", "rejected")


class PlanLog(AuditOutbox):
    """Logs, marks and reads fusion plans."""

    # --- plan log (the fusion commit's write-ahead log) --------------------------------

    def log_plan(
        self, plan_id: str, event_id: str | None, payload: Mapping[str, Any] | BaseModel
    ) -> bool:
        """Record a plan as `pending` before applying it. False if plan_id is already logged
        (the first record is kept, so a replay re-applies exactly what was logged)."""
        body = payload.model_dump(mode="json") if isinstance(payload, BaseModel) else payload
        created = format_timestamp(datetime.now(UTC).replace(tzinfo=None))
        with self._db.transaction() as db:
            cursor = db.execute(
                "INSERT INTO plan_log (plan_id, event_id, payload, status, reason, created_at) "
                "VALUES (?, ?, ?, 'pending', NULL, ?) ON CONFLICT DO NOTHING",
                (plan_id, event_id, json.dumps(body, sort_keys=True), created),
            )
            logged = cursor.rowcount == 1
        if logged:
            self._logged_plans[plan_id] = (event_id, plan_op_count(body))
        return logged

    def mark_plan(self, plan_id: str, status: PlanStatus, reason: str | None = None) -> None:
        if status not in _PLAN_STATUSES:
            raise ValueError(f"expected a plan status in {_PLAN_STATUSES}, got {status!r}")
        with self._db.transaction() as db:
            cursor = db.execute(
                "UPDATE plan_log SET status = ?, reason = ? WHERE plan_id = ?",
                (status, reason, plan_id),
            )
            if cursor.rowcount == 0:
                raise NodeNotFoundError(plan_id, "plan")
            if status != "pending":  # the plan's event is fused, in the same transaction
                db.execute(
                    "DELETE FROM pending_fusion WHERE event_id = "
                    "(SELECT event_id FROM plan_log WHERE plan_id = ?)",
                    (plan_id,),
                )
                self._queue_plan_audit(db, plan_id, status)

    def pending_plans(self) -> list[tuple[str, dict[str, Any]]]:
        """(plan_id, payload) of every plan still pending, in the order they were logged."""
        rows = self._db.execute(
            "SELECT plan_id, payload FROM plan_log WHERE status = 'pending' ORDER BY rowid"
        ).fetchall()
        return [(plan_id, json.loads(payload)) for plan_id, payload in rows]

    def plan_status(self, plan_id: str) -> tuple[PlanStatus, str | None]:
        row = self._db.execute(
            "SELECT status, reason FROM plan_log WHERE plan_id = ?", (plan_id,)
        ).fetchone()
        if row is None:
            raise NodeNotFoundError(plan_id, "plan")
        return row[0], row[1]

    def plan_attempts(self, event_id: str) -> int:
        """How many plans the log holds for `event_id` (an index lookup: fusion asks this for
        every event, and counting the whole log made each event cost O(log size))."""
        row = self._db.execute("SELECT COUNT(*) FROM plan_log WHERE event_id = ?", (event_id,))
        return int(row.fetchone()[0])

    def plan_counts(self) -> dict[str, int]:
        counts: dict[str, int] = dict.fromkeys(_PLAN_STATUSES, 0)
        counts.update(self._db.execute("SELECT status, COUNT(*) FROM plan_log GROUP BY status"))
        return counts
