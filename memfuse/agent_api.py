"""The memory calls agent builders expect (Mem0's names where the meaning is the same).

`add` takes free text as well as events; `get`, `get_all`, `delete` and `reset` are the
household memory's own reads and forgets under the names agent frameworks use. Nothing here
bypasses the rest of `MemFuse`: a note is ingested like any event (validation, fusion,
visibility, audit), every read goes through the reader's view (an admin read is audited), and
every delete is a `forget` with its permission check. Mixed into `memfuse.api.MemFuse`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from memfuse.governance import EventRecord, Governance
from memfuse.notes import Note, note_events
from memfuse.results import AddResult, IngestMode, IngestSummary
from memory.errors import MemFuseError, NodeNotFoundError
from memory.models import Event, as_events, is_fused_id, utc_now
from memory.selection import EventFilter

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from graphs.fusion.forget import ForgetReport
    from memfuse.langchain import MemFuseRetriever
    from memfuse.langgraph_store import MemFuseStore


Target = str | Sequence[str] | EventFilter


class AgentAPI(Governance):
    """The agent-facing half of `MemFuse` (see the module docstring)."""

    def ingest(
        self,
        events: Iterable[Event | dict[str, Any]],
        *,
        mode: IngestMode = "fused",
        progress: bool = False,
        user: str | None = None,
    ) -> IngestSummary:  # pragma: no cover - MemFuse's
        raise NotImplementedError

    # --- writing ----------------------------------------------------------------------

    def add(
        self,
        content: Note | Sequence[Note],
        *,
        user: str | None = None,
        agent: str | None = None,
        device: str | None = None,
        time: datetime | None = None,
        location: str | None = None,
        people: Sequence[str] | None = None,
        visibility: str | None = None,
        metadata: dict[str, Any] | None = None,
        mode: IngestMode = "fused",
    ) -> AddResult:
        """Remember text (a note from `user`, or an `agent`'s own), an event, or a list of
        them. A note's id, time ("now" by default), device (`user:NAME` / `agent:NAME`),
        owner and people are filled in; `visibility` overrides the policy (a note is private
        to its owner by default). The same note added twice is stored once."""
        writer = (user or self.settings.user or "").strip() or None
        when = time or utc_now()
        fields = {
            "device": device,
            "location": location,
            "people": people,
            "visibility": visibility,
            "metadata": metadata,
        }
        records = note_events(content, user=writer, agent=agent, time=when, fields=fields)
        events = as_events(records)
        ids = list(dict.fromkeys(e.event_id for e in events))
        self._writing()  # under the lock, "already there" cannot change before the write
        present = {i for i in ids if self.store.has_node(i)}
        summary = self.ingest(events, mode=mode, user=writer or agent)
        return AddResult(
            ids=ids,
            added=[i for i in ids if i not in present],
            unchanged=[i for i in ids if i in present],
            summary=summary,
        )

    # --- reading ----------------------------------------------------------------------

    def get(
        self, node_id: str, *, user: str | None = None, admin: bool = False
    ) -> EventRecord | None:
        """One event as the reader may see it; None when there is none or they may not see it
        (the two look the same on purpose). Packs are looked at with `show`."""
        store, _ = self.reader_store(user, admin, what="get")
        if is_fused_id(node_id) or not store.has_node(node_id):
            return None
        return EventRecord.read(store, store.get_event(node_id))

    def get_all(
        self,
        *,
        user: str | None = None,
        admin: bool = False,
        limit: int | None = None,
        device: str | None = None,
        person: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> list[EventRecord]:
        """Every event the reader may see (narrowed by the given selectors), in time order."""
        selector = EventFilter(device=device, person=person, since=since, until=until)
        return self.events(selector, user=user, admin=admin, limit=limit)

    # --- forgetting -------------------------------------------------------------------

    def delete(
        self, target: Target, *, user: str | None = None, admin: bool = False, dry_run: bool = False
    ) -> ForgetReport:
        """Forget an event, several, or what a selector names (`memfuse.EventFilter`), with
        every trace (see `forget`). Named ids must all be there for the reader, else nothing
        is forgotten: a typo must not half-apply a delete."""
        selector = _selector(target)
        if selector.event_ids:
            store, _ = self.reader_store(user, admin, what="delete", record=False)
            missing = [i for i in selector.event_ids if not store.has_node(i) or is_fused_id(i)]
            if missing:
                raise NodeNotFoundError(missing[0])
        return self.forget(selector, dry_run=dry_run, user=user, admin=admin)

    def reset(self, *, user: str | None = None, admin: bool = False) -> ForgetReport:
        """Forget everything in this namespace: every event, pack, edge and trace. Only an
        admin may (it forgets other people's private events too); audited as one forget."""
        from graphs.context import RunContext
        from graphs.fusion.forget import forget_events
        from graphs.resources import decision_lm

        if not admin:
            raise MemFuseError(
                "reset forgets everyone's memories: it needs --admin (admin=True); a user "
                "forgets their own with delete/forget"
            )
        self.identity(user, admin, what="reset")
        self._writing()
        ids = [e.event_id for e in self.store.all_events()]
        lm = decision_lm(RunContext(), self.settings)
        with self.audited(user, admin=True, via="reset"):
            return forget_events(self.store, ids, lm=lm)

    # --- as a LangGraph store, a LangChain retriever, a tool ---------------------------

    def as_store(self, **options: Any) -> MemFuseStore:
        """This memory as a LangGraph `BaseStore` (see `memfuse.langgraph_store`)."""
        from memfuse.langgraph_store import MemFuseStore

        return MemFuseStore(self, **options)  # type: ignore[arg-type]

    def as_retriever(self, **options: Any) -> MemFuseRetriever:
        """This memory as a LangChain retriever (see `memfuse.langchain`)."""
        from memfuse.langchain import MemFuseRetriever

        return MemFuseRetriever(memory=self, **options)

    def as_tool(self, action: Literal["search", "add"] = "search", **options: Any) -> BaseTool:
        """A tool for a tool-calling agent: `search` this memory, or `add` a note to it (see
        `memfuse.langchain`)."""
        from memfuse.langchain import memory_tool

        return memory_tool(self, action, **options)  # type: ignore[arg-type]


def _selector(target: Target) -> EventFilter:
    if isinstance(target, EventFilter):
        return target
    if isinstance(target, str):
        return EventFilter(event_ids=[target])
    ids = list(target)
    if not ids or not all(isinstance(i, str) for i in ids):
        raise MemFuseError("delete takes an id, a list of ids or an EventFilter")
    return EventFilter(event_ids=ids)
