"""The audit log's outbox: each entry is written in the same store transaction as the change.

The audit log is a file (or a PostgreSQL table) beside the store, so an entry appended after
a change can be lost (a `kill -9` between the two) and an entry appended around a change
that then fails records what never happened. So every write that changes memory (stored
events, fusion plans finished, forgets, visibility changes) queues its entry in the store's
`audit_outbox` table inside its own transaction: the entry commits exactly when the change
does, rolls back with it, and carries the counts of what was really written. Delivery
(`AuditLog.deliver`) then moves queued entries into the log in order, after the change
commits or, after a crash, when the store is next opened for writing; each delivered entry
carries its outbox number in `details["outbox"]`, so a delivery cut short is never written
twice. The last delivered entry's seq and hash are kept in the store's `meta` table (the
anchor), so a log that is deleted, cut short or rewritten no longer matches its store.

Who made a change is not the store's knowledge: the caller says it once with `audited_as`
(a context variable, so the fusion graph's nodes and the store need no actor argument).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

OUTBOX_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS audit_outbox (seq INTEGER PRIMARY KEY, op TEXT NOT NULL, "
    "body TEXT NOT NULL)"
)
ANCHOR_KEY = "audit_head"  # meta: {"seq": ..., "hash": ...} of the last delivered entry
UNATTRIBUTED = "unattributed"  # a write made outside any `audited_as` (a library caller)


@dataclass(frozen=True)
class AuditContext:
    """Who the writes in this context are recorded as, and details every entry carries."""

    actor: str = UNATTRIBUTED
    details: Mapping[str, Any] = field(default_factory=dict)


_CONTEXT: ContextVar[AuditContext | None] = ContextVar("memfuse_audit_context", default=None)
_NOBODY = AuditContext()


@contextmanager
def audited_as(actor: str | None = None, **details: Any) -> Iterator[AuditContext]:
    """Record the writes made inside as `actor` (kept from the enclosing context when None),
    with `details` added to each entry (inner values win)."""
    outer = current()
    merged = AuditContext(actor or outer.actor, {**outer.details, **details})
    token = _CONTEXT.set(merged)
    try:
        yield merged
    finally:
        _CONTEXT.reset(token)


def current() -> AuditContext:
    return _CONTEXT.get() or _NOBODY


@dataclass(frozen=True)
class QueuedEntry:
    """One outbox row: its number and the entry as `AuditLog.append_many` takes it."""

    seq: int
    op: str
    args: dict[str, Any]


def entry_args(
    op: str,
    counts: Mapping[str, int],
    ids: Sequence[str],
    details: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The entry for a change made now, in the current context (checked by the log's own
    rules before it is queued, so a bad entry fails the change, not a later delivery)."""
    from memory.audit_chain import check_entry

    context = current()
    args = {
        "actor": context.actor,
        "counts": dict(counts),
        "ids": list(ids),
        "details": {**context.details, **(details or {})},
    }
    check_entry(op, args)
    return args


def encode(args: Mapping[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, separators=(",", ":"))


def decode(seq: int, op: str, body: str) -> QueuedEntry:
    return QueuedEntry(seq=int(seq), op=str(op), args=json.loads(body))
