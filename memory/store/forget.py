"""Forgetting: events removed from every table and index in one transaction (with the plan-log
records and edges that name them), then scrubbed from the vector store, the embedding cache
and the WAL.

Its own part because it is the one write that removes what the others only add.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.backends.base import BaseDatabase
from memory.embeddings import CachedEmbedder
from memory.models import Event
from memory.store.events import EventLog


class Forgetting(EventLog):
    """Forgets events and scrubs what they leave behind."""

    # --- forgetting ---------------------------------------------------------------------

    def forget_events(self, event_ids: Sequence[str]) -> dict[str, int]:
        """Remove events from every store: their rows, visibility, queue entries, the plan-log
        records that name them (a payload quotes its events' packs), every edge touching them,
        their lexical, temporal and dense entries. Fused nodes keep listing them until the
        caller re-fuses those packs, which it does inside the same `transaction()`, so a
        forget is one atomic change. Deleted rows are zeroed (secure_delete); the caller
        then calls `scrub_forgotten`, which truncates the WAL (its old page images) and
        scrubs the vectors and the embedding cache. Returns counts."""
        with self._db.lock:
            ids = list(dict.fromkeys(event_ids))
            events = [self.get_event(i) for i in ids]  # every id known before any write
            counts = {"events": len(ids), "edges": 0, "plans": 0}
            with self._db.transaction() as db:
                for start in range(0, len(ids), 500):
                    chunk = ids[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    for table in ("events", "event_visibility", "pending_fusion"):
                        db.execute(f"DELETE FROM {table} WHERE event_id IN ({marks})", chunk)
                    counts["plans"] += db.execute(
                        f"DELETE FROM plan_log WHERE event_id IN ({marks})", chunk
                    ).rowcount
                counts["plans"] += self._forget_plans(db, set(ids))
                for event in events:
                    counts["edges"] += self._edges.remove_node(event.event_id)
                self._unindex_events(db, events)
                self._queue_audit(db, "forget", counts, ids)  # redacted once delivered
            return counts

    def _forget_plans(self, db: BaseDatabase, ids: set[str]) -> int:
        """Delete plan-log records whose payload names a forgotten id (as a JSON string)."""
        doomed = [
            plan_id
            for plan_id, payload in db.execute("SELECT plan_id, payload FROM plan_log")
            if any(f'"{i}"' in payload for i in ids)
        ]
        db.executemany("DELETE FROM plan_log WHERE plan_id = ?", [(p,) for p in doomed])
        return len(doomed)

    def _unindex_events(self, db: BaseDatabase, events: Sequence[Event]) -> None:
        """Take events out of the in-memory indexes, undone on rollback."""
        saved = [(e, self._fingerprints[e.event_id], self._visibility[e.event_id]) for e in events]

        def restore() -> None:
            for event, fingerprint, visibility in saved:
                if event.event_id not in self._events:
                    self._events.add(event)
                    self._fingerprints[event.event_id] = fingerprint
                    self._visibility[event.event_id] = visibility
                    self._count_sources(event, +1)
                    self._temporal.add(event)

        db.on_rollback(restore)
        ids = [e.event_id for e in events]
        db.on_rollback(self._vectors.delete(ids))
        for event in events:
            db.on_rollback(self._lexical.remove(event.event_id))
            del self._events[event.event_id]
            del self._fingerprints[event.event_id]
            del self._visibility[event.event_id]
            self._count_sources(event, -1)
            self._temporal.remove(event)
        db.after_commit(self._vectors.maybe_flush)
        db.after_commit(lambda: self._forget_moments(ids))

    def _forget_moments(self, event_ids: Sequence[str]) -> None:
        """A forgotten turn's moments leave memory with the commit (`memory.moments`)."""
        self._moment_builder.forget(event_ids)
        self._moments = None

    def scrub_forgotten(self, texts: Sequence[str]) -> dict[str, int]:
        """After a committed forget: write the vector deletions out and scrub them from the
        vector store's files, and drop the cached embeddings of `texts` (the forgotten nodes'
        indexed texts) that no remaining node still indexes. Returns what it did."""
        with self._db.lock:
            still = {e.index_text() for e in self._events.scan()}
            still |= {n.index_text() for n in self._fused.values()}
        done: dict[str, int] = {}
        self._vectors.flush()
        done.update(self._vectors.scrub())
        if isinstance(self.embedder, CachedEmbedder):
            done["cache_entries"] = self.embedder.discard([t for t in texts if t not in still])
        done["wal_truncated"] = int(self._db.truncate_wal())
        return done
