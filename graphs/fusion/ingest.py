"""Drive the fusion graph over a batch of events, in time order.

Events are stored and embedded a chunk at a time (one batched embedding call per chunk
instead of one per event); the graph's store node then finds each event already stored, and
candidate retrieval only ever sees events that sort before the current one, so the result
is the same as feeding the events one by one. One compiled graph and one run context serve
the whole batch, and the accumulation window is carried from event to event.

Each event runs the graph's own nodes and routes in-process (`graphs.direct`): Pregel's
per-step machinery cost more than the nodes themselves, and a bulk run uses none of it
(`runtime="langgraph"` runs the same events through LangGraph; the tests compare the two).

Single-text inference (each new or changed fused summary is embedded on its own) runs on the
torch thread count measured fastest at the time (`memory.embed_threads`: two threads on a
quiet machine, one where a busy one makes a two-thread pool spin); batch embedding of each
chunk keeps the configured threads. numpy's BLAS is held to one thread for the graph loop's
small products (`memory.blas`).

A batch is checked whole (ids, immutability, reserved prefixes) before its first chunk is
written, so a bad record at its end never leaves its beginning stored and fused.

The fusion queue: a chunk's events are stored and queued for fusion in one transaction, and
each leaves the queue once its fusion finished. An ingest interrupted anywhere (a crash, a
full disk, an LLM outage) leaves its unfused events queued, with the reason when one was
caught; the next ingest fuses them first (or in their place when the same batch is given
again), so every stored event is fused or queued, and a re-run ends with the graph an
uninterrupted run would have built. Events the store already held and fused are skipped.

Decided offline, the plans of `FusionContext.plans_per_commit` consecutive events share one
commit (`MemoryStore.grouped_writes`): each plan is still its own savepoint, rolled back alone
when it fails while the plans before it stay, and a crash loses only the group's fusion, whose
events are still queued: one commit a group instead of two an event (the plan logged, then
applied). An LLM's plans commit one by one, so no model call holds the write lock.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import BaseModel, Field

from graphs.direct import GraphRuntime, invoker
from graphs.fusion.context import FusionContext
from graphs.fusion.graph import graph
from graphs.fusion.state import FusionOutput
from graphs.resources import resources_for
from memory.blas import one_blas_thread
from memory.errors import ConfigurationError
from memory.fusion.candidates import prime_candidate_searches
from memory.fusion.commit import replay_pending
from memory.models import Event, as_events
from memory.store_api import MemoryStoreAPI


class IngestReport(BaseModel):
    """What one ingest did and how fast."""

    events: int = Field(description="Events processed by the fusion graph.")
    added: int = Field(description="Events new to the store (the rest were already stored).")
    seconds: float = Field(description="Wall time, embedding included.")
    embed_seconds: float = Field(description="Time spent storing and embedding the batch up front.")
    events_per_s: float = Field(description="events / seconds.")
    accepted: int = Field(default=0, description="Plans committed.")
    rejected: int = Field(default=0, description="Plans rejected by the validator.")
    ops: dict[str, int] = Field(default_factory=dict, description="Committed operations by type.")
    edges_added: dict[str, int] = Field(default_factory=dict, description="New edges by type.")
    fused_created: int = Field(default=0, description="Fused nodes created.")
    fused_updated: int = Field(default=0, description="Fused-node updates (incl. removals).")
    tool_calls: int = Field(default=0, description="Agent tool calls (system searches excluded).")
    replayed: int = Field(default=0, description="Unfinished plans re-applied before ingesting.")
    skipped: int = Field(default=0, description="Events already stored, not fused again.")
    drained: int = Field(
        default=0, description="Events found on the fusion queue (stored, never fused) and fused."
    )
    rejections: list[str] = Field(default_factory=list, description="First violations, for a look.")


@dataclass(frozen=True)
class PlanOutcome:
    """One fusion decision, as the audit log records it (ids and counts, no text)."""

    event_id: str
    plan_id: str
    status: str  # accepted | rejected
    decided_by: str
    ops: int


def _as_events(events: Iterable[Event | dict[str, Any]]) -> list[Event]:
    """The batch in time order: the agent fuses each event against what came before it."""
    return sorted(as_events(events), key=lambda e: (e.timestamp, e.event_id))


def ingest_events(
    store: MemoryStoreAPI,
    events: Iterable[Event | dict[str, Any]],
    *,
    config: FusionContext | None = None,
    progress: bool = True,
    skip_unchanged: bool = True,
    chunk_size: int = 256,
    keep_rejections: int = 20,
    visibility: Mapping[str, str] | None = None,
    on_plan: Callable[[PlanOutcome], None] | None = None,
    runtime: GraphRuntime = "direct",
) -> IngestReport:
    """Fuse `events` into `store` through the fusion graph; returns counts and throughput.

    `visibility`: canonical visibilities by event id for the new events (the caller's
    policy; see `MemoryStore.add_events`). `on_plan` hears every plan decided, accepted or
    rejected, with who decided it (the audit log's entries). `runtime`: "direct" runs the
    graph's nodes in-process (`graphs.direct`: the same nodes and routes without Pregel's
    per-step cost), "langgraph" through LangGraph itself."""
    ctx = (config or FusionContext()).injecting(store=store)
    batch = _as_events(events)
    store.check_events(batch)  # the whole batch, before its first chunk is written
    started = time.perf_counter()
    report = IngestReport(
        events=0,
        added=0,
        seconds=0.0,
        embed_seconds=0.0,
        events_per_s=0.0,
        replayed=len(replay_pending(store)),
    )
    window: deque[Event] = deque(maxlen=max(ctx.window_size, 1))
    tally = _Tally(report, _invoker(runtime), keep_rejections=keep_rejections, on_plan=on_plan)
    embed_seconds = 0.0
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(batch), desc="fusing", unit="event")
    queued = set(store.pending_fusion())
    earlier = _as_events(store.get_events(sorted(queued - {e.event_id for e in batch})))
    report.drained = len(queued)
    group = _plans_per_commit(ctx)

    def fuse(event: Event) -> None:
        session = list(window) if ctx.window_size > 0 else []
        _fuse_queued(event, session, ctx, tally)

    with one_blas_thread():  # small products (memory.blas)
        try:
            # events an interrupted ingest stored but never fused come first, oldest first
            for begin in range(0, len(earlier), group):
                _prime(store, earlier[begin : begin + group], group, ctx)
                with _one_commit(store, group):
                    for event in earlier[begin : begin + group]:
                        fuse(event)
                        window.append(event)
            for start in range(0, len(batch), max(chunk_size, 1)):
                part = batch[start : start + max(chunk_size, 1)]
                t0 = time.perf_counter()
                fresh = set(store.add_events(part, pending=True, visibility=visibility).added)
                embed_seconds += time.perf_counter() - t0
                report.added += len(fresh)
                for begin in range(0, len(part), group):
                    chunk = part[begin : begin + group]
                    fusing = {
                        e.event_id
                        for e in chunk
                        if not skip_unchanged or e.event_id in fresh or e.event_id in queued
                    }
                    _prime(store, [e for e in chunk if e.event_id in fusing], group, ctx)
                    with _one_commit(store, group):
                        for event in chunk:
                            if event.event_id not in fusing:
                                report.skipped += 1
                            else:
                                fuse(event)
                            window.append(event)
                            if bar is not None:
                                bar.update(1)
        finally:
            if bar is not None:
                bar.close()
    store.settle()
    seconds = time.perf_counter() - started
    report.seconds = round(seconds, 3)
    report.embed_seconds = round(embed_seconds, 3)
    report.events_per_s = round(len(batch) / seconds, 2) if seconds > 0 else 0.0
    report.ops = dict(tally.ops)
    report.edges_added = dict(tally.edges)
    return report


@dataclass
class _Tally:
    """What the fused events of one ingest add up to (counts go into `report` as they come)."""

    report: IngestReport
    invoke: Callable[[dict[str, Any], FusionContext], FusionOutput]
    """One fusion run (`_invoker`)."""
    ops: Counter[str] = field(default_factory=Counter)
    edges: Counter[str] = field(default_factory=Counter)
    keep_rejections: int = 20
    on_plan: Callable[[PlanOutcome], None] | None = None


def _plans_per_commit(ctx: FusionContext) -> int:
    """How many events' plans share a commit: `plans_per_commit` when the offline twins
    decide, one when an LLM does (a group holds the store's write lock until it commits,
    and must never hold it across model calls)."""
    try:
        offline = resources_for(ctx, write=True).lm is None
    except ConfigurationError:  # the first event's fusion reports it, as it always has
        return 1
    return ctx.plans_per_commit if offline else 1


def _prime(store: MemoryStoreAPI, events: list[Event], plans: int, ctx: FusionContext) -> None:
    """Before a group of offline plans (`_plans_per_commit` > 1), their events' dense
    candidate searches in one pass (`prime_candidate_searches`): the same answers, one
    matrix product for the group."""
    if plans > 1:
        prime_candidate_searches(store, events, ctx.candidate_config())


def _one_commit(store: MemoryStoreAPI, plans: int) -> contextlib.AbstractContextManager[Any]:
    """The plans of up to `plans` events under one commit (`MemoryStore.grouped_writes`),
    each plan still atomic; a store without grouped writes commits each on its own."""
    grouped = getattr(store, "grouped_writes", None)
    if plans > 1 and callable(grouped):
        return cast(contextlib.AbstractContextManager[Any], grouped())
    return contextlib.nullcontext()


def _invoker(runtime: GraphRuntime) -> Callable[[dict[str, Any], FusionContext], FusionOutput]:
    """One fusion run: the graph's nodes in-process, or through LangGraph's Pregel loop."""
    return invoker(graph, runtime, FusionOutput)


def _fuse_queued(event: Event, session: list[Event], ctx: FusionContext, tally: _Tally) -> None:
    """Fuse one event and take it off the fusion queue; on failure it stays queued, with
    the reason, and the error goes on (the next ingest or `memfuse fuse --pending` retries)."""
    store = ctx.injected.store
    try:
        _fuse_one(event, session, ctx, tally)
    except BaseException as exc:
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())
        with contextlib.suppress(Exception):  # the original failure is the one to report
            store.note_pending(event.event_id, reason)
        raise
    store.mark_fused(event.event_id)


def _fuse_one(event: Event, session: list[Event], ctx: FusionContext, tally: _Tally) -> None:
    report = tally.report
    out = tally.invoke({"event": event, "session": session}, ctx)
    report.events += 1
    report.tool_calls += out.turns
    if tally.on_plan is not None:
        tally.on_plan(
            PlanOutcome(
                event_id=event.event_id,
                plan_id=out.report.plan_id if out.report else "",
                status="accepted" if out.outcome == "committed" else "rejected",
                decided_by=out.decided_by,
                ops=len(out.plan.operations) if out.plan else 0,
            )
        )
    commit = out.report
    if out.outcome == "committed" and commit is not None:
        report.accepted += 1
        tally.ops.update(commit.ops)
        tally.edges.update(commit.edges_added)
        report.fused_created += len(commit.created)
        report.fused_updated += len(commit.updated)
    else:
        report.rejected += 1
        if len(report.rejections) < tally.keep_rejections:
            report.rejections.append(f"{event.event_id}: {'; '.join(out.violations)}")
