"""The controller's nodes: begin → plan → search → judge → (plan again | assemble).

Nodes are `(state, runtime) -> partial state` functions wrapped by `graphs.state.node`
(JSON-plain updates). Every decision is recorded with who made it (`decisions`): `llm`,
`offline`, or `offline fallback: <why>` (see `graphs.retrieval.decisions`).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import numpy as np
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from graphs.resources import resources_for
from graphs.retrieval.admission import QuestionRelevance
from graphs.retrieval.context import RetrievalContext
from graphs.retrieval.decisions import (
    OFFLINE_JUDGE,
    PROGRAM_FILES,  # noqa: F401 — the programs' file names, where callers look for them
    context_of,
    decide,
    llm_module,  # noqa: F401 — re-exported: a decision's DSPy program by its kind
    offline_planner,
    run_search_config,
    search_config,  # noqa: F401 — re-exported: the tuned search config of a round
)
from graphs.retrieval.planning import (
    added_by_round,
    derive_plan,
    evidence_items,
    final_selection,
    finder_of,
    found_by,
    queries_of,
    spare_order,
    stop_reason_of,
)
from graphs.retrieval.state import Judgement, PastQuestion, State
from graphs.state import fresh_run, node
from memory.errors import ConfigurationError, NodeNotFoundError
from memory.models import is_fused_id
from memory.read_request import ReadRequest, read_request
from memory.retrieval import assemble_context, search
from memory.search.guard import keep_reserved
from memory.search.hubs import hub_corrected
from memory.search.pivot import SERIES
from memory.store_api import MemoryStoreAPI
from signatures.evidence import judge_inputs
from signatures.planning import planner_inputs


def request_of(state: State) -> ReadRequest:
    if state.request is None:  # pragma: no cover - begin always sets it
        raise RuntimeError("the retrieval graph reached a node before `begin`")
    return state.request


@node
def begin(state: State, runtime: Runtime[RetrievalContext]) -> dict[str, Any]:
    """Start from this run's input alone (the previous run's work cleared, see
    `graphs.state`), read the question, and catch the store up with other writers."""
    context = context_of(runtime)
    request = context.injected.request or read_request(
        state.question,
        question_time=state.question_time,
        requester=state.requester,
        admin=state.admin,
        k=context.k if state.k is None else state.k,
    )
    resources = resources_for(context)
    resources.refresh()
    if request.admin:  # a served admin read is on record before it reads anything
        resources.record_admin_read("graph:retrieval", request.requester)
    return {**fresh_run(State), "request": request, "notes": Overwrite(list(resources.notes))}


@node
def plan_round(state: State, runtime: Runtime[RetrievalContext]) -> dict[str, Any]:
    """Round 1: the planner reads the question. Later rounds: the judge's proposal,
    unless it repeats an executed plan (then a different one is derived, or none)."""
    context = context_of(runtime)
    request = request_of(state)
    if state.round == 0:
        resources = resources_for(context)
        store = resources.view(request)
        inputs = planner_inputs(
            request.question,
            request.question_time,
            request.requester,
            list(store.known_people()),
            list(store.known_devices()),
            [],
            [],
        )
        prediction, _, notes, decision = decide(
            lambda: resources.program("planner"),
            offline_planner(resources),
            inputs,
            resources.lm,
            "round 1 planner",
        )
        return {"plan": prediction.plan, "notes": notes, "decisions": [decision]}

    judgement = state.judgements[-1] if state.judgements else None
    proposal = judgement.next_plan if judgement else None
    if proposal is not None and nothing_left(state, resources_for(context).view(request)):
        return {
            "plan": None,
            "stop_reason": f"after round {state.round}: every event is already in the pool",
            "notes": [f"round {state.round + 1} not run: no event is left for it to find"],
        }
    executed = {plan.signature() for plan in state.plans}
    if proposal is not None and proposal.signature() not in executed:
        return {"plan": proposal}
    derived = derive_plan(state, request.question, judgement.missing_facets if judgement else [])
    why = "proposed no plan" if proposal is None else "proposed an executed plan"
    if derived is None:
        return {
            "plan": None,
            "stop_reason": f"after round {state.round}: no plan left that differs from the "
            "executed ones",
            "notes": [f"round {state.round + 1}: the judge {why} and no new plan could be derived"],
        }
    return {
        "plan": derived,
        "notes": [f"round {state.round + 1}: the judge {why}; a different plan was derived"],
    }


def nothing_left(state: State, store: MemoryStoreAPI) -> bool:
    """True when the pool already holds every event the request may read: a further round
    could add nothing, so it is not paid for."""
    pooled = sum(1 for i in state.found if not is_fused_id(i))
    return store.count_events_between(datetime.min, datetime.max) <= pooled


@node
def search_round(state: State, runtime: Runtime[RetrievalContext]) -> dict[str, Any]:
    """Execute the current plan once and merge its candidates into the pool."""
    context = context_of(runtime)
    request = request_of(state)
    if state.plan is None:
        raise ConfigurationError("search_round reached without a plan")
    resources = resources_for(context)
    result = search(
        resources.view(request),
        state.plan,
        run_search_config(context, resources, request.k),
        requester=request.requester,
        question_time=request.question_time,
        question=request.question.strip() or None,
        known=state.found.keys(),
    )
    first_round = {"guard_ids": result.guard_ids} if state.round == 0 else {}
    return {
        **first_round,
        "round": state.round + 1,
        "plans": [state.plan],
        "searched_queries": queries_of(state.plan),
        "candidates": {c.node_id: c for c in result.candidates},
        "found": {c.node_id: (state.round + 1, rank) for rank, c in enumerate(result.candidates)},
        "finders": {c.node_id: finder_of(c) for c in result.candidates},
        "fused": {c.node_id: c for c in result.fused},
    }


@node
def judge_round(state: State, runtime: Runtime[RetrievalContext]) -> dict[str, Any]:
    """Judge the accumulated evidence; the round limits are enforced here, not trusted."""
    context = context_of(runtime)
    request = request_of(state)
    resources = resources_for(context)
    final = state.round >= context.max_rounds
    inputs = judge_inputs(
        request.question,
        request.question_time,
        state.plans[-1],
        state.searched_queries,
        state.plans,
        state.round,
        context.min_rounds,
        final,
        request.k,
        evidence_items(resources.view(request), state),
    )
    prediction, source, notes, decision = decide(
        lambda: resources.program("judge"),
        OFFLINE_JUDGE,
        inputs,
        resources.lm,
        f"round {state.round} judge",
    )
    sufficient = bool(prediction.sufficient)
    if sufficient and state.round < context.min_rounds:
        sufficient = False
        notes.append(
            f"round {state.round}: judged sufficient before the minimum of "
            f"{context.min_rounds} rounds; continuing"
        )
    judgement = Judgement(
        round=state.round,
        source=source,
        coverage=list(prediction.coverage),
        sufficient=sufficient,
        missing_facets=list(prediction.missing_facets),
        selected_ids=list(prediction.selected_ids)[: request.k],
        next_plan=None if (sufficient or final) else prediction.next_plan,
    )
    return {"judgements": [judgement], "notes": notes, "decisions": [decision]}


def question_relevance(
    store: MemoryStoreAPI,
    question: str,
    context: RetrievalContext,
    over_days: bool = False,
    hub_penalty: float = 0.0,
) -> QuestionRelevance | None:
    """The scale later finds and round-1 events are compared on (`graphs.retrieval.admission`);
    None for a blank question (nothing to compare with: the finds then go uncontested).
    `over_days`: the question is over several days, so copies count within a day (with
    `copies_within_day`). `hub_penalty`: the search's (`SearchConfig.hub_penalty`), so a
    find is weighed on the scale that ranked it (without it, 0.005 less recall on the
    conversations and 0.007 on household_dev2, `memfuse bench --suite`)."""
    if not question.strip():
        return None

    def vector_of(node_id: str) -> np.ndarray | None:
        try:
            return store.vector(node_id)
        except NodeNotFoundError:
            return None

    def day_of(node_id: str) -> date | None:
        try:
            return store.get_events([node_id])[0].timestamp.date()
        except NodeNotFoundError:
            return None

    return QuestionRelevance(
        hub_corrected(store, store.embed_query(question), hub_penalty),
        vector_of,
        redundancy=context.followup_redundancy,
        day_of=day_of if context.copies_within_day and over_days else None,
    )


@node
def assemble(state: State, runtime: Runtime[RetrievalContext]) -> dict[str, Any]:
    """Final top-k (judged ids pinned, back-filled from the pool) → the reader's context;
    the run is added to the thread's history."""
    context = context_of(runtime)
    request = request_of(state)
    resources = resources_for(context)
    k = request.k
    selected = state.judgements[-1].selected_ids if state.judgements else []
    config = run_search_config(context, resources, k)
    # over several days: by the question's window, or by a record the evidence showed recurring
    # and a pivot round found on other days (seed list `pivot:series`)
    over_days = bool(state.plans) and (
        state.plans[0].time_window.over_days(config.constraint_confidence)
        or any(SERIES in c.trace.seed_lists for c in state.candidates.values())
    )
    ranked = final_selection(
        selected,
        state.candidates,
        k,
        state.found,
        context.backfill,
        context.followup_slots(),
        question_relevance(
            resources.view(request), request.question, context, over_days, config.hub_penalty
        )
        if state.round > 1
        else None,
        context.over_days_places() if over_days else 0,
        (context.followup_evidence_events, context.followup_evidence_weight),
    )
    ranked = keep_reserved(ranked, state.guard_ids, k)  # round 1's guard, whatever was judged
    kept = set(ranked)
    chosen = [state.candidates[i] for i in ranked]
    pinned_fused = [i for i in selected if is_fused_id(i) and i in state.fused]
    contributors = {c.via_fused for c in chosen if c.via_fused} | set(pinned_fused)
    # places the pack budget leaves empty (a fourth pack's members) go to the pool's next events
    spare = spare_order(state.candidates, state.found, kept)
    chosen += [state.candidates[i] for i in spare]
    fused = sorted(
        (state.fused[i] for i in contributors if i in state.fused),
        key=lambda c: (c.node_id not in pinned_fused, -c.score, c.node_id),
    )
    pinned = [*state.guard_ids, *(i for i in selected if i in kept), *pinned_fused]
    entries = (
        assemble_context(resources.view(request), chosen, fused, config.context, pinned_ids=pinned)
        if chosen or pinned
        else []
    )
    in_context = {e.node_id for e in entries}
    event_ids = [i for i in [*ranked, *spare] if i in in_context]
    stop_reason = (
        stop_reason_of(state, context)
        if resources.store is not None
        else "no memory store to search"
    )
    past = PastQuestion(
        question=request.question,
        question_time=request.question_time,
        requester=request.requester,
        event_ids=event_ids,
    )
    return {
        "event_ids": event_ids,
        "added": added_by_round(event_ids, state.found),
        "found_by": found_by(event_ids, state.found, state.finders),
        "pooled": {i: found for i, (found, _) in state.found.items() if not is_fused_id(i)},
        "context": entries,
        "stop_reason": stop_reason,
        "history": [past],
    }
