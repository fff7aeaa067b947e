"""The fusion graph's nodes: begin → store → candidates → agent ⇄ tools → validate → commit.

Nodes are `(state, runtime) -> partial state` functions wrapped by `graphs.state.node`
(JSON-plain updates). An unreadable plan is a rejection, an endpoint that fails raises (the
event stays queued): the write path's side of the LLM rule in `graphs/__init__.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import numpy as np
from dspy.utils.exceptions import AdapterParseError
from langgraph.runtime import Runtime

from graphs.context import run_context
from graphs.fusion.context import FusionContext
from graphs.fusion.state import PastEvent, State, ToolCall, Verdict
from graphs.fusion.tools import decision_program, lm_scope, run_tool
from graphs.resources import Resources, replay_once, resources_for
from graphs.state import fresh_run, node
from memory.audit_outbox import audited_as
from memory.errors import EventConflictError, InvalidEventError, InvalidPlanError
from memory.fusion.candidates import CandidateRecord, event_record, retrieve_candidates
from memory.fusion.commit import commit_plan, make_plan_id, record_rejection
from memory.fusion.ops import parse_plan
from memory.fusion.validator import validate_plan
from memory.models import Event, parse_event
from memory.store_api import MemoryStoreAPI
from signatures.fusion import FusionBudget, ToolStep
from signatures.lm import describe_failure


def _as_event(value: Event | dict[str, Any]) -> Event:
    return value if isinstance(value, Event) else parse_event(value)


def context_of(runtime: Runtime[FusionContext] | None) -> FusionContext:
    """The run's context; a default one when the caller gave none."""
    return run_context(runtime, FusionContext)


def _resources(runtime: Runtime[FusionContext]) -> Resources:
    return resources_for(context_of(runtime), write=True)


def _store(runtime: Runtime[FusionContext]) -> MemoryStoreAPI:
    return _resources(runtime).require_store()


def _current(state: State | Verdict) -> Event:
    if state.current is None:  # pragma: no cover - store_event always sets it
        raise RuntimeError("the fusion graph reached a node before the event was stored")
    return state.current


def _window(store: Any, event: Event, size: int) -> list[Event]:
    """The last `size` events before `event` in the store (when the caller gave no session)."""
    if size <= 0:
        return []
    ids = store.events_between(event.timestamp - timedelta(days=1), event.timestamp)
    earlier = [
        e
        for e in store.get_events(ids)
        if (e.timestamp, e.event_id) < (event.timestamp, event.event_id)
    ]
    return earlier[-size:]


@node
def begin(state: State, runtime: Runtime[FusionContext]) -> dict[str, Any]:
    """Start from this run's input alone (the previous run's budget and trajectory cleared,
    see `graphs.state`): read the event and the window, catch the store up with other
    writers, and finish plans a crash left pending."""
    if state.event is None:
        raise InvalidEventError(None, "event", "missing: the input needs an event record")
    event = _as_event(state.event)
    ctx = context_of(runtime)
    resources = _resources(runtime)
    resources.refresh()
    replay_once(resources.require_store())
    window = None
    if state.session:
        window = (
            [_as_event(e) for e in state.session][-ctx.window_size :] if ctx.window_size else []
        )
    return {
        **fresh_run(State),
        "event_id": event.event_id,
        "current": event,
        "given_window": window,
        "decided_by": resources.decided_by,
        "notes": list(resources.notes),
    }


@node
def store_event(state: State, runtime: Runtime[FusionContext]) -> dict[str, Any]:
    """Store the event (a no-op when the identical event is already stored)."""
    ctx = context_of(runtime)
    store = _store(runtime)
    event = _current(state)
    if store.has_node(event.event_id):
        stored = store.get_event(event.event_id)
        # equal models first: an ingest stored this very event a moment ago (cheap), and
        # only a difference needs the fingerprints to tell a conflict from a formatting one
        if stored != event and stored.fingerprint() != event.fingerprint():
            raise EventConflictError(event.event_id, stored.differing_fields(event))
    else:
        with _audited(runtime):
            store.add_events([event])
    if state.given_window is not None:
        window = state.given_window
    else:
        window = _window(store, event, ctx.window_size)
    vector = store.vector(event.event_id)

    def similarity(other: Event) -> float:
        return (
            float(np.dot(vector, store.vector(other.event_id)))
            if store.has_node(other.event_id)
            else 0.0
        )

    return {
        "current_record": event_record(event, 1.0, ("current",), store.fused_of(event.event_id)),
        "accumulation": [event_record(e, similarity(e), ("window",)) for e in window],
    }


@node
def retrieve(state: State, runtime: Runtime[FusionContext]) -> dict[str, Any]:
    """The system's own first search_memory call, made with the event itself."""
    ctx = context_of(runtime)
    event = _current(state)
    records = retrieve_candidates(_store(runtime), event, ctx.candidate_config())
    step = ToolStep(
        tool="search_memory",
        argument=event.description,
        automatic=True,
        note=f"initial search with the current event: {len(records)} candidates (listed above)",
    )
    return {
        "candidates": records,
        "neighbors": [(r.node_id, r.similarity) for r in records],
        "tool_history": [step],
    }


def _budget(state: State, ctx: FusionContext) -> FusionBudget:
    return FusionBudget(
        turns_left=max(ctx.max_tool_turns - state.turns, 0),
        searches_left=max(ctx.max_searches - state.searches, 0),
        lookups_left=max(ctx.max_pack_lookups - state.lookups, 0),
        max_pack_size=ctx.max_pack_size,
        max_removals_per_op=ctx.max_removals_per_op,
        max_operations=ctx.max_operations,
    )


@node
def agent_step(state: State, runtime: Runtime[FusionContext]) -> dict[str, Any]:
    """One decision of the agent: a tool call, or the plan (an unreadable plan is kept as an
    error, which validation turns into a rejection that says what came back)."""
    ctx = context_of(runtime)
    resources = _resources(runtime)
    decided_by = resources.decided_by
    inputs = {
        "accumulation_zone": state.accumulation,
        "current_event": state.current_record,
        "candidates": state.candidates,
        "tool_history": state.tool_history,
        "budget": _budget(state, ctx),
    }
    try:
        with lm_scope(resources):
            prediction = decision_program(ctx, resources)(**inputs)
    except AdapterParseError as exc:
        return {
            "pending": None,
            "plan": None,
            "plan_error": f"malformed plan: {describe_failure(exc)}",
            "decided_by": decided_by,
        }
    if prediction.action in ("search_memory", "get_pack_members"):
        argument = prediction.query if prediction.action == "search_memory" else prediction.fused_id
        return {
            "pending": ToolCall(tool=prediction.action, argument=argument or ""),
            "decided_by": decided_by,
        }
    try:
        plan = parse_plan(prediction.plan if prediction.plan is not None else "")
    except InvalidPlanError as exc:
        return {"pending": None, "plan": None, "plan_error": str(exc), "decided_by": decided_by}
    return {"pending": None, "plan": plan, "plan_error": None, "decided_by": decided_by}


def _visible(state: State) -> set[str]:
    """Ids the agent was shown: candidates, the accumulation zone, every tool result."""
    ids: set[str] = {r.node_id for r in state.candidates} | {r.node_id for r in state.accumulation}
    for step in state.tool_history:
        ids.update(r.node_id for r in step.results)
    return ids | set(state.inspected)


@node
def tools(state: State, runtime: Runtime[FusionContext]) -> dict[str, Any]:
    """Execute the pending tool call; search results join the candidates (the temporary zone)."""
    ctx = context_of(runtime)
    call = state.pending
    if call is None:  # pragma: no cover - the router only comes here with a pending call
        raise RuntimeError("tools node reached without a pending tool call")
    spent = (call.tool == "search_memory" and state.searches >= ctx.max_searches) or (
        call.tool == "get_pack_members" and state.lookups >= ctx.max_pack_lookups
    )
    if spent:
        step = ToolStep(tool=call.tool, argument=call.argument, note=f"{call.tool} budget spent")
    else:
        step = run_tool(
            _store(runtime),
            call,
            _current(state),
            _visible(state),
            state.inspected,
            ctx.candidate_config(),
        )
    update: dict[str, Any] = {"pending": None, "turns": state.turns + 1, "tool_history": [step]}
    if call.tool == "search_memory":
        known = {r.node_id for r in state.candidates}
        fresh: list[CandidateRecord] = [r for r in step.results if r.node_id not in known]
        update["candidates"] = [*state.candidates, *fresh]
        update["searches"] = state.searches + 1
    else:
        update["lookups"] = state.lookups + 1
        if step.results:
            update["inspected"] = {
                **state.inspected,
                call.argument: [r.node_id for r in step.results],
            }
    return update


@node
def validate(state: State, runtime: Runtime[FusionContext]) -> dict[str, Any]:
    """Check the whole plan; one violation rejects it."""
    ctx = context_of(runtime)
    store = _store(runtime)
    event = _current(state)
    if state.plan is None:
        why = (
            "the agent kept calling tools after its turn budget was spent" if state.pending else ""
        )
        violations = [state.plan_error or why or "no plan was submitted"]
    else:
        violations = validate_plan(
            store, state.plan, event.event_id, _visible(state), state.inspected, ctx.limits()
        )
    # salted with the event's earlier attempts: unique per attempt, reproducible for the same
    # ingest sequence (an index lookup; counting the whole plan log grew with every event)
    salt = str(store.plan_attempts(event.event_id))
    plan_id = make_plan_id(
        event.event_id, state.plan, salt=salt if state.plan else salt + violations[0]
    )
    return {"violations": violations, "plan_id": plan_id}


def _past(state: Verdict, outcome: str) -> list[PastEvent]:
    return [
        PastEvent(
            event_id=state.event_id,
            outcome=outcome,  # type: ignore[arg-type]
            decided_by=state.decided_by,
            plan_id=state.plan_id,
        )
    ]


@contextmanager
def _audited(runtime: Runtime[FusionContext], decided_by: str | None = None) -> Iterator[None]:
    """A write: audit entries the store queues inside say who decided (a plan's); a served
    run, which no MemFuse holds, writes under the writer lock, names itself and delivers its
    entries at once."""
    resources = _resources(runtime)
    served = resources.served
    details = {} if decided_by is None else {"decided_by": decided_by}
    with resources.writing(), audited_as("server:fusion" if served else None, **details):
        yield
    if served:
        resources.deliver_audit()


@node
def commit(state: Verdict, runtime: Runtime[FusionContext]) -> dict[str, Any]:
    """Apply the accepted plan (logged first, replayable after a crash)."""
    ctx = context_of(runtime)
    if state.plan is None:  # pragma: no cover - validate rejects a missing plan
        raise RuntimeError("commit reached without a plan")
    with _audited(runtime, state.decided_by):  # the plan's audit entry says who decided
        report = commit_plan(
            _store(runtime),
            state.plan,
            _current(state),
            state.plan_id,
            neighbors=state.neighbors,
            config=ctx.commit_config(),
        )
    return {"outcome": "committed", "report": report, "history": _past(state, "committed")}


@node
def reject(state: Verdict, runtime: Runtime[FusionContext]) -> dict[str, Any]:
    """Record the rejected plan and its violations; the graph is left untouched."""
    with _audited(runtime, state.decided_by):
        report = record_rejection(
            _store(runtime),
            state.plan_id,
            _current(state).event_id,
            state.violations,
            state.plan,
        )
    return {"outcome": "rejected", "report": report, "history": _past(state, "rejected")}
