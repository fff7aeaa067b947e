"""What a household governs about its memory: who may see what, forgetting, the audit log,
and the memory API users of other systems expect (list, show, history, export).

`Governance` is mixed into `memfuse.api.MemFuse`; it works on the memory's store and its
audit log (`memory.audit`). Every write here and every administrative read leaves exactly
one audit entry, with ids and counts, never event text.
"""

from __future__ import annotations

import getpass
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import BaseModel, Field

from memory.access import VisibleStore
from memory.audit import AuditEntry, AuditLog, VerifyReport
from memory.errors import InvalidQueryError, MemFuseError, NodeNotFoundError
from memory.models import EdgeType, Event, FusedNode, is_fused_id
from memory.selection import EventFilter, select_events
from memory.settings import MemFuseSettings
from memory.store_api import MemoryStoreAPI
from memory.visibility import VisibilityPolicy, canonical, derive_all

if TYPE_CHECKING:
    from graphs.fusion.forget import ForgetReport

NO_REQUESTER = (
    "say who asks: a user (who sees only what they may see; --user NAME, or MEMFUSE_USER), or "
    "an administrative read of everything (--admin; recorded in the audit log)"
)
POLICY_FILE = "visibility.json"  # in the data dir: the household's own rules, when present


class EventRecord(BaseModel):
    """One event as `memfuse events` lists it."""

    event: Event
    visibility: str
    fused: list[str] = Field(default_factory=list, description="Packs it belongs to.")


class NodeView(BaseModel):
    """`memfuse show`: an event with its packs, edges and provenance, or a pack with its
    members."""

    node_id: str
    kind: str
    event: Event | None = None
    visibility: str | None = None
    fused: FusedNode | None = None
    members: list[Event] = Field(default_factory=list)
    packs: list[str] = Field(default_factory=list)
    edges: list[dict[str, Any]] = Field(default_factory=list)
    provenance: dict[str, Any] = Field(default_factory=dict)


def _decided(report: ForgetReport) -> dict[str, Any]:
    """Who wrote the re-fused packs' summaries (none when no pack was re-fused)."""
    makers = sorted({p.decided_by for p in report.packs if p.decided_by})
    return {"decided_by": ",".join(makers)} if makers else {}


class Governance:
    """The governance half of `MemFuse` (see the module docstring)."""

    store: MemoryStoreAPI
    settings: MemFuseSettings
    audit: AuditLog

    def _writing(self) -> None:  # pragma: no cover - MemFuse's
        raise NotImplementedError

    # --- who asks -----------------------------------------------------------------------

    def actor(self, user: str | None = None) -> str:
        """Who a write or an admin read is recorded as: the user, else the OS account."""
        named = (user or self.settings.user or "").strip()
        if named:
            return named
        try:
            return f"os:{getpass.getuser()}"
        except (KeyError, OSError):  # no passwd entry (containers)
            return "os:unknown"

    def reader_store(
        self, user: str | None, admin: bool, *, what: str = "search", record: bool = True
    ) -> tuple[MemoryStoreAPI, str | None]:
        """(the store as this read may see it, the requester). An admin read sees everything
        and is audited (unless the caller records the operation itself: `record`);
        otherwise the user (or MEMFUSE_USER) sees their view."""
        requester = (user or self.settings.user or "").strip() or None
        if admin:
            if record:
                self.audit_admin_read(what, user)
            return self.store, requester
        if requester is None:
            raise InvalidQueryError(NO_REQUESTER)
        return VisibleStore(self.store, requester), requester

    def audit_admin_read(self, what: str, user: str | None, ids: Sequence[str] = ()) -> None:
        if not self.audit.read_only:
            self.audit.append(
                "admin_read",
                actor=self.actor(user),
                counts={"ids": len(ids)},
                ids=ids,
                details={"what": what},
            )

    def visibility_policy(self) -> VisibilityPolicy:
        """The settings' policy file, else <data dir>/visibility.json when it exists."""
        path = self.settings.visibility_policy
        if path is None:
            local = Path(getattr(self.store, "data_dir", ".")) / POLICY_FILE
            path = local if local.is_file() else None
        return VisibilityPolicy.load(path)

    def visibilities_for(self, events: Sequence[Event]) -> dict[str, str]:
        """New events' visibilities under this memory's policy (checked before any write)."""
        return derive_all(events, self.visibility_policy())

    # --- listing and looking ------------------------------------------------------------

    def events(
        self,
        selector: EventFilter | None = None,
        *,
        user: str | None = None,
        admin: bool = False,
        limit: int | None = None,
    ) -> list[EventRecord]:
        """Events matching the filter that the reader may see, in time order."""
        store, _ = self.reader_store(user, admin, what="events")
        found = select_events(store, selector or EventFilter())
        if limit is not None:
            found = found[:limit]
        return [
            EventRecord(
                event=e,
                visibility=store.visibility_of(e.event_id),
                fused=store.fused_of(e.event_id),
            )
            for e in found
        ]

    def show(self, node_id: str, *, user: str | None = None, admin: bool = False) -> NodeView:
        """An event with its packs, edges and provenance, or a pack with its members."""
        store, _ = self.reader_store(user, admin, what="show")
        if not store.has_node(node_id):
            raise NodeNotFoundError(node_id)
        edges = [
            {"type": e.type.value, "src": e.src, "dst": e.dst, "weight": e.weight}
            for e in store.neighbors(node_id)
            if e.type != EdgeType.BELONG
        ]
        if is_fused_id(node_id):
            node = store.get_fused(node_id)
            return NodeView(
                node_id=node_id,
                kind="fused",
                fused=node,
                members=store.get_events(node.members),
                edges=edges,
            )
        event = store.get_event(node_id)
        return NodeView(
            node_id=node_id,
            kind="event",
            event=event,
            visibility=store.visibility_of(node_id),
            packs=store.fused_of(node_id),
            edges=edges,
            provenance={
                "device": event.device,
                "modality": event.modality.value,
                "location": event.location,
                "time": event.timestamp.isoformat(),
                "owner": event.owner,
                "people": list(event.characters),
            },
        )

    def history(self, node_id: str) -> list[AuditEntry]:
        """What happened to an event or pack, from the audit log (found by the id's digest,
        so a forgotten event's history is still there, without its id)."""
        return self.audit.find(node_id)

    def audit_entries(self, **filters: Any) -> list[AuditEntry]:
        return self.audit.entries(**filters)

    def verify_audit(self) -> VerifyReport:
        return self.audit.verify()

    # --- changing who may see -------------------------------------------------------------

    def set_visibility(
        self, event_ids: Sequence[str], visibility: str, *, user: str | None = None
    ) -> list[str]:
        """Give events a new visibility (audited); returns the ids that changed."""
        try:
            value = canonical(visibility)
        except ValueError as exc:
            raise MemFuseError(str(exc)) from None
        if not event_ids:
            raise MemFuseError("name the events whose visibility changes")
        self._writing()
        changed = self.store.set_visibility(dict.fromkeys(event_ids, value))
        self.audit.append(
            "visibility",
            actor=self.actor(user),
            counts={"events": len(changed)},
            ids=changed,
            details={"visibility": value},
        )
        return changed

    # --- forgetting -----------------------------------------------------------------------

    def forget(
        self,
        selector: EventFilter,
        *,
        dry_run: bool = False,
        user: str | None = None,
    ) -> ForgetReport:
        """Forget what the selector names, everywhere (see `graphs.fusion.forget`); a dry run
        shows what would go and changes nothing. No selector is an error."""
        from graphs.context import RunContext
        from graphs.fusion.forget import forget_events
        from graphs.resources import decision_lm

        selector.require_selector("forget")
        ids = [e.event_id for e in select_events(self.store, selector)]
        if dry_run:
            return forget_events(self.store, ids, dry_run=True)
        self._writing()
        lm = decision_lm(RunContext(), self.settings)
        report = forget_events(self.store, ids, lm=lm)
        self.audit.append(
            "forget",
            actor=self.actor(user),
            counts={
                "events": len(ids),
                "packs_refused": sum(p.action == "refused" for p in report.packs),
                "packs_removed": sum(p.action == "removed" for p in report.packs),
                "edges": report.edges_removed,
            },
            ids=[*ids, *(p.fused_id for p in report.packs)],
            details={
                "decided_by": ",".join(sorted({p.decided_by for p in report.packs if p.decided_by}))
            },
        )
        self.audit.redact(ids)  # the log keeps their digests (history), never the ids
        return report

    def import_export(self, path: Path, *, user: str | None = None) -> dict[str, int]:
        """Read a `memfuse export` file back: its events with their visibility, its packs and
        edges as they were (no fusion runs), all in one write; audited as one import."""
        from memory.formats.export import import_bundle, read_export

        bundle = read_export(path)  # the whole file is checked before anything is written
        self._writing()
        counts = import_bundle(self.store, bundle)  # type: ignore[arg-type]
        self.audit.append(
            "import",
            actor=self.actor(user),
            counts=counts,
            ids=[e.event_id for e in bundle.events],
        )
        return counts

    # --- export ---------------------------------------------------------------------------

    def export(
        self,
        target: Path | TextIO,
        selector: EventFilter | None = None,
        *,
        user: str | None = None,
        admin: bool = False,
    ) -> dict[str, int]:
        """Write events (what the reader may see), packs and edges as re-ingestable JSONL."""
        from memory.formats.export import write_export

        store, _ = self.reader_store(user, admin, what="export", record=False)
        ids = [e.event_id for e in select_events(store, selector or EventFilter())]
        counts = write_export(store, target, ids)
        if not self.audit.read_only:
            self.audit.append(
                "export", actor=self.actor(user), counts=counts, details={"admin": admin}
            )
        return counts
