"""What a household governs about its memory: who may see what, forgetting, the audit log,
and the memory API users of other systems expect (list, show, history, export).

`Governance` is mixed into `memfuse.api.MemFuse`; it works on the memory's store and its
audit log (`memory.audit`). Every write here and every administrative read leaves exactly
one audit entry, with ids and counts, never event text.
"""

from __future__ import annotations

import getpass
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import BaseModel, Field

from memory.access import VisibleStore, request_view
from memory.audit import AuditEntry, AuditLog, VerifyReport
from memory.errors import (
    InvalidQueryError,
    MemFuseError,
    NodeNotFoundError,
    PermissionDeniedError,
)
from memory.models import EdgeType, Event, FusedNode, is_fused_id
from memory.read_request import NO_REQUESTER, ReadRequest
from memory.selection import EventFilter, select_events
from memory.settings import MemFuseSettings
from memory.store_api import MemoryStoreAPI
from memory.visibility import VisibilityPolicy, canonical, derive_all, may_change

if TYPE_CHECKING:
    from graphs.fusion.forget import ForgetReport

NO_WRITER = (
    "say who does this: a user (--user NAME, or MEMFUSE_USER), who may change and look into "
    "only what they may see, or an admin (--admin; recorded in the audit log)"
)
POLICY_FILE = "visibility.json"  # in the data dir: the household's own rules, when present


class EventRecord(BaseModel):
    """One event as `memfuse events` lists it."""

    event: Event
    visibility: str
    fused: list[str] = Field(default_factory=list, description="Packs it belongs to.")

    @classmethod
    def read(cls, store: MemoryStoreAPI, event: Event) -> EventRecord:
        """The record of an event as this store (a reader's view) shows it."""
        return cls(
            event=event,
            visibility=store.visibility_of(event.event_id),
            fused=store.fused_of(event.event_id),
        )


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


class Governance:
    """The governance half of `MemFuse` (see the module docstring)."""

    store: MemoryStoreAPI
    settings: MemFuseSettings
    audit: AuditLog

    def _writing(self) -> None:  # pragma: no cover - MemFuse's
        raise NotImplementedError

    def audited(self, user: str | None, **details: Any) -> AbstractContextManager[None]:
        raise NotImplementedError  # pragma: no cover - MemFuse's

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

    def identity(self, user: str | None, admin: bool, *, what: str) -> str | None:
        """Who does this, checked: the named user (or MEMFUSE_USER); with `admin`, only
        someone the policy file lets administer (anyone when it names no admins). Without
        either, the request is refused: nothing in memory is anyone's to change by default."""
        requester = (user or self.settings.user or "").strip() or None
        if admin:
            policy = self.visibility_policy()
            if not policy.may_administer(requester):
                raise PermissionDeniedError(
                    f"{what} --admin: the visibility policy limits admin to "
                    f"{', '.join(policy.admins)}; say which of them you are with --user"
                )
            return requester
        if requester is None:
            raise MemFuseError(NO_WRITER)
        return requester

    def reader_store(
        self, user: str | None, admin: bool, *, what: str = "search", record: bool = True
    ) -> tuple[MemoryStoreAPI, str | None]:
        """(the store as this read may see it, the requester). An admin read sees everything
        and is audited (unless the caller records the operation itself: `record`);
        otherwise the user (or MEMFUSE_USER) sees their view."""
        if admin:
            requester = self.identity(user, admin, what=what)
            if record:
                self.audit_admin_read(what, user)
            return self.store, requester
        requester = (user or self.settings.user or "").strip() or None
        if requester is None:
            raise InvalidQueryError(NO_REQUESTER)
        return VisibleStore(self.store, requester), requester

    def admit_read(self, request: ReadRequest, *, what: str) -> None:
        """A question's read let in: an admin read only for someone the policy lets
        administer, and on record before it reads anything; a user's read as it is."""
        if request.admin:
            self.identity(request.requester, True, what=what)
            self.audit_admin_read(what, request.requester)

    def view_for(self, request: ReadRequest) -> MemoryStoreAPI:
        """The store as an admitted read may see it, as of its time (`memory.access`)."""
        return request_view(self.store, request)

    def changeable(
        self, selector: EventFilter, user: str | None, admin: bool, *, what: str
    ) -> tuple[list[Event], str | None]:
        """(the events a write may touch, who writes). An admin may touch any event; a user
        selects among the events they may see (an id they may not see is as unknown as one
        that does not exist), and every one must pass `may_change`."""
        requester = self.identity(user, admin, what=what)
        if admin:
            return select_events(self.store, selector), requester
        assert requester is not None  # identity() refuses a non-admin without a name
        events = select_events(VisibleStore(self.store, requester), selector)
        for event in events:
            if not may_change(requester, self.store.visibility_of(event.event_id)):
                raise PermissionDeniedError(f"{requester} may not {what} {event.event_id}")
        return events, requester

    def audit_admin_read(
        self, what: str, user: str | None, ids: Sequence[str] = (), digest: str | None = None
    ) -> None:
        """Record an admin read before its result is shown; where the log cannot be written
        (a read-only data dir), the read is refused rather than left unrecorded."""
        self.require_recordable(what)
        self.audit.append(
            "admin_read",
            actor=self.actor(user),
            counts={"ids": len(ids)},
            ids=ids,
            details={"what": what, **({"digest": digest} if digest else {})},
        )

    def require_recordable(self, what: str) -> None:
        if self.audit.read_only:
            raise PermissionDeniedError(
                f"{what} --admin: admin reads are recorded in the audit log, which is read-only "
                "here; read as a user (--user NAME) or from a writable copy of the data dir"
            )

    def visibility_policy(self) -> VisibilityPolicy:
        """The settings' policy file, else <data dir>/visibility.json when it exists."""
        path = self.settings.visibility_policy
        if path is None:
            local = Path(self.store.data_dir) / POLICY_FILE
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
        return [EventRecord.read(store, e) for e in found]

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

    def history(
        self, node_id: str, *, user: str | None = None, admin: bool = False
    ) -> list[AuditEntry]:
        """What happened to an event or pack, from the audit log (found by the id's digest,
        so a forgotten event's history is still there, without its id). An admin sees every
        entry whole (an audited read); a user only the history of a node they may see now,
        each entry listing only the ids they may see (the counts stay: they name nobody)."""
        if admin:
            self.identity(user, admin, what="history")
            self.require_recordable("history")
            found = self.audit.find(node_id)
            # recorded by digest: a forgotten id must not come back into the log in plaintext
            try:
                digest = self.audit.digest(node_id)
            except LookupError:  # an empty log: nothing to find, nothing to hide
                digest = None
            self.audit_admin_read("history", user, digest=digest)
            return found
        view, _ = self.reader_store(user, False, what="history")
        if not view.has_node(node_id):
            raise NodeNotFoundError(node_id)
        return [
            replace(entry, ids=[i for i in entry.ids if i is not None and view.has_node(i)])
            for entry in self.audit.find(node_id)
        ]

    def audit_entries(
        self, *, user: str | None = None, admin: bool = False, **filters: Any
    ) -> list[AuditEntry]:
        """The whole log, for an admin only (it lists every person's ids); audited."""
        if not admin:
            raise PermissionDeniedError(
                "the audit log lists every person's ids: it is read with --admin "
                "(`memfuse history ID --user NAME` shows one node's entries)"
            )
        self.identity(user, admin, what="audit")
        entries = self.audit.entries(**filters)
        self.audit_admin_read("audit", user)
        return entries

    def verify_audit(self) -> VerifyReport:
        """Anyone may verify: the report holds counts and problems, never ids. The log is
        checked against the store's anchor too, so a deleted or rewritten log is seen."""
        return self.audit.verify_anchored(self.store.audit_anchor())  # type: ignore[attr-defined]

    # --- changing who may see -------------------------------------------------------------

    def set_visibility(
        self,
        event_ids: Sequence[str],
        visibility: str,
        *,
        user: str | None = None,
        admin: bool = False,
    ) -> list[str]:
        """Give events a new visibility (audited); returns the ids that changed. A user may
        change only events they may see (see `memory.visibility.may_change`)."""
        try:
            value = canonical(visibility)
        except ValueError as exc:
            raise MemFuseError(str(exc)) from None
        if not event_ids:
            raise MemFuseError("name the events whose visibility changes")
        selector = EventFilter(event_ids=list(event_ids))
        events, _ = self.changeable(selector, user, admin, what="change the visibility of")
        self._writing()
        with self.audited(user, admin=admin):  # the entry commits with the change
            return self.store.set_visibility(dict.fromkeys((e.event_id for e in events), value))

    # --- forgetting -----------------------------------------------------------------------

    def forget(
        self,
        selector: EventFilter,
        *,
        dry_run: bool = False,
        user: str | None = None,
        admin: bool = False,
    ) -> ForgetReport:
        """Forget what the selector names, everywhere (see `graphs.fusion.forget`); a dry run
        shows what would go and changes nothing. No selector is an error. A user forgets
        only among the events they may see; an admin anything."""
        from graphs.context import RunContext
        from graphs.fusion.forget import forget_events
        from graphs.resources import decision_lm

        selector.require_selector("forget")
        events, _ = self.changeable(selector, user, admin, what="forget")
        ids = [e.event_id for e in events]
        if dry_run:
            return forget_events(self.store, ids, dry_run=True)
        self._writing()
        lm = decision_lm(RunContext(), self.settings)
        with self.audited(user, admin=admin):  # the entry commits with the forget; delivered,
            return forget_events(self.store, ids, lm=lm)  # then its ids are redacted

    def import_export(self, path: Path, *, user: str | None = None) -> dict[str, int]:
        """Read a `memfuse export` file back: its events with their visibility, its packs and
        edges as they were (no fusion runs), all in one write; audited as one import."""
        from memory.formats.export import import_bundle, read_export

        bundle = read_export(path)  # the whole file is checked before anything is written
        self._writing()
        with self.audited(user, via="import"):  # its events' entry commits with them
            return import_bundle(self.store, bundle)

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
        if admin:
            self.require_recordable("export")
        ids = [e.event_id for e in select_events(store, selector or EventFilter())]
        counts = write_export(store, target, ids)
        if not self.audit.read_only:
            self.audit.append(
                "export", actor=self.actor(user), counts=counts, details={"admin": admin}
            )
        return counts
