"""The public face of the search engine: one `search` call and `assemble_context`.

Callers (the retrieval graph, the baselines, the CLI) give a round plan or a plain
query string and a recipe (a SearchConfig or its name), and get a SearchHits; the
engine behind it lives in `memory.search`.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from memory.access import as_of
from memory.blas import one_blas_thread
from memory.errors import InvalidQueryError, UnknownRecipeError
from memory.models import parse_timestamp
from memory.records import Candidate, ContextEntry, ExpansionTrace, PathStep, SearchHits
from memory.search.config import (
    BM25_ONLY,
    HYBRID_RRF,
    MEMFUSE_DEFAULT,
    MEMFUSE_NO_FUSION,
    MEMFUSE_NO_GRAPH,
    MEMFUSE_NO_MOMENTS,
    NAIVE_RAG,
    RECIPES,
    ContextBudget,
    SearchConfig,
)
from memory.search.context import assemble_context, render_context
from memory.search.engine import run_search
from memory.search.pivot import active_pivot, pivot_search
from memory.search.plan import RoundPlan
from memory.store_api import MemoryStoreAPI

__all__ = [
    "BM25_ONLY",
    "HYBRID_RRF",
    "MEMFUSE_DEFAULT",
    "MEMFUSE_NO_FUSION",
    "MEMFUSE_NO_GRAPH",
    "MEMFUSE_NO_MOMENTS",
    "NAIVE_RAG",
    "RECIPES",
    "Candidate",
    "ContextBudget",
    "ContextEntry",
    "ExpansionTrace",
    "PathStep",
    "RoundPlan",
    "SearchConfig",
    "SearchHits",
    "assemble_context",
    "render_context",
    "resolve_recipe",
    "run_recipe",
    "search",
]


def resolve_recipe(recipe: SearchConfig | str) -> SearchConfig:
    """A SearchConfig as given, or the named recipe (memfuse, naive_rag, bm25, hybrid, …)."""
    if isinstance(recipe, SearchConfig):
        return recipe
    if recipe not in RECIPES:
        raise UnknownRecipeError(str(recipe), sorted(RECIPES))
    return RECIPES[recipe]


def as_plan(plan: RoundPlan | str) -> RoundPlan:
    """A plain query string becomes the simplest plan (focus = lexical query, no constraints)."""
    if isinstance(plan, RoundPlan):
        return plan
    if not isinstance(plan, str):
        raise InvalidQueryError(
            f"expected a RoundPlan or a query string, got {type(plan).__name__}"
        )
    if not plan.strip():
        raise InvalidQueryError("the query is empty")
    return RoundPlan.from_query(plan.strip())


def _question_time(value: datetime | str | None) -> datetime | None:
    """The asking time as a datetime (an ISO-8601 string parsed), a bad one a query error."""
    if value is None:
        return None
    try:
        return parse_timestamp(value)
    except ValueError as exc:
        raise InvalidQueryError(str(exc)) from None


def search(
    store: MemoryStoreAPI,
    plan: RoundPlan | str,
    config: SearchConfig | str = MEMFUSE_DEFAULT,
    *,
    requester: str | None = None,
    question_time: datetime | str | None = None,
    question: str | None = None,
    known: Collection[str] = (),
) -> SearchHits:
    """One search call: the top-k events for the plan under the recipe, with traces.

    `question_time` may be a datetime or an ISO-8601 string: the search then reads the
    memory as of that time (`memory.access.as_of`), so no event observed later is found,
    whatever the recipe. `question` is the asker's own words when the plan rewrote them
    (the guard searches those). A plan with an honoured evidence pivot runs a pivot search
    (`memory.search.pivot`): only events outside `known` (what the caller already holds).
    """
    when = _question_time(question_time)
    view, executed, recipe = as_of(store, when), as_plan(plan), resolve_recipe(config)
    with one_blas_thread():  # small products: see memory.blas
        if active_pivot(executed, recipe) is not None:
            return pivot_search(
                view,
                executed,
                recipe,
                known=known,
                requester=requester,
                question_time=when,
                question=question,
            )
        return run_search(
            view,
            executed,
            recipe,
            requester=requester,
            question_time=when,
            question=question,
        )


def run_recipe(
    store: MemoryStoreAPI,
    query: str,
    recipe: SearchConfig | str,
    *,
    requester: str | None = None,
    question_time: datetime | str | None = None,
) -> tuple[list[ContextEntry], SearchHits]:
    """One search of a query's plain plan under a recipe, and the context it assembles, read
    as of `question_time` (packs included): what `MemFuse.search` answers for a baseline
    system and what the benchmark scores for it, so the two cannot drift apart."""
    config, when = resolve_recipe(recipe), _question_time(question_time)
    view = as_of(store, when)  # one view: the search's, and the packs' members'
    found = search(view, query, config, requester=requester, question_time=when)
    context = assemble_context(
        view, found.candidates, found.fused, config.context, pinned_ids=found.guard_ids
    )
    return context, found
