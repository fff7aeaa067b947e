"""Where the controller goes next: the loop's limits are enforced here, whatever was judged."""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime

from graphs.resources import resources_for
from graphs.retrieval.context import RetrievalContext
from graphs.retrieval.decisions import context_of
from graphs.retrieval.state import Progress


def route_after_begin(
    state: Progress, runtime: Runtime[RetrievalContext]
) -> Literal["plan", "assemble"]:
    """No store to search (a missing data dir): straight to an empty, noted result."""
    return "plan" if resources_for(context_of(runtime)).store is not None else "assemble"


def route_after_plan(
    state: Progress, runtime: Runtime[RetrievalContext]
) -> Literal["search", "assemble"]:
    return "search" if state.plan is not None else "assemble"


def route_after_search(
    state: Progress, runtime: Runtime[RetrievalContext]
) -> Literal["judge", "assemble"]:
    return "judge" if context_of(runtime).use_controller else "assemble"


def route_after_judge(
    state: Progress, runtime: Runtime[RetrievalContext]
) -> Literal["plan", "assemble"]:
    """Never stop before the minimum round, always stop at the maximum, else ask the judge."""
    context = context_of(runtime)
    if state.round >= context.max_rounds:
        return "assemble"
    if state.round < context.min_rounds:
        return "plan"
    if state.judgements and state.judgements[-1].sufficient:
        return "assemble"
    if state.judgements and state.judgements[-1].next_plan is None:
        return "assemble"  # the judge sees nothing more worth searching for
    return "plan"
