"""The controller's nodes: plan → search → judge → (plan again | assemble).

Nodes are plain functions `(state, runtime) -> partial state`. Decisions (plan,
judgement) run as DSPy programs when an LM is in play and as their offline twins
otherwise; an LLM answer that cannot be used (a malformed reply, an endpoint that
failed within its retry budget) sends that one decision to the twin, so one bad reply
never sinks a question. Every decision is recorded with who made it (`decisions`):
`llm`, `offline`, or `offline fallback: <why>`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, NamedTuple

import dspy
from langgraph.runtime import Runtime

from graphs.retrieval.context import Backfill, RetrievalContext
from graphs.retrieval.state import Decision, Judgement, State
from memory.embeddings import EmbeddingConfig
from memory.errors import ConfigurationError
from memory.models import NodeKind, is_fused_id, parse_timestamp
from memory.records import Candidate
from memory.retrieval import assemble_context, resolve_recipe, search
from memory.search.config import SearchConfig
from memory.search.guard import keep_reserved
from memory.search.plan import RoundPlan
from memory.store_api import MemoryStoreAPI
from signatures.evidence import EvidenceItem, judge_inputs
from signatures.evidence_offline import OfflineEvidenceJudge
from signatures.lm import (
    DECIDED_BY_LLM,
    DECIDED_OFFLINE,
    describe_failure,
    lm_from_settings,
    lm_settings_key,
    offline_fallback,
)
from signatures.planning import planner_inputs
from signatures.planning_offline import OfflineRoundPlanner, alternative_plans, first_unexecuted
from signatures.programs import PROGRAMS, PlannerPolicy, planner_policy, program_for

EVIDENCE_EVENTS = 60  # accumulated events shown to the judge, best score first
EVIDENCE_FUSED = 5  # fused summaries shown to the judge
_FACET_PREFIX = re.compile(r"^(entity|keyword|time):\s*")

_OFFLINE_JUDGE = OfflineEvidenceJudge()


# --- shared look-ups -------------------------------------------------------------


def context_of(runtime: Runtime[RetrievalContext] | None) -> RetrievalContext:
    context = getattr(runtime, "context", None)
    return context if context is not None else RetrievalContext()


_OPEN_STORES: dict[tuple[str, str, str | None, int], MemoryStoreAPI] = {}
_STORE_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _environment_settings() -> Any:
    """`MEMFUSE_*` settings, read once per process (callers may inject their own)."""
    from memory.settings import load_settings

    return load_settings()


def settings_of(context: RetrievalContext) -> Any:
    return context.settings if context.settings is not None else _environment_settings()


def store_of(context: RetrievalContext) -> MemoryStoreAPI:
    """The injected store, or the one the context (else the settings) names, opened once."""
    if context.store is not None:
        return context.store
    settings = settings_of(context)
    data_dir = Path(context.data_dir or settings.data_dir).expanduser()
    key = (
        str(data_dir.resolve()),
        context.namespace or settings.namespace,
        context.chroma_host or settings.chroma_host,
        context.chroma_port or settings.chroma_port,
    )
    with _STORE_LOCK:
        if key not in _OPEN_STORES:
            from memory.store import MemoryStore  # pulls in Chroma: load only when needed

            embedding = EmbeddingConfig(
                provider=settings.embedding_provider, model=settings.embedding_model,
                base_url=settings.embedding_base_url, api_key=settings.embedding_key(),
            )
            _OPEN_STORES[key] = MemoryStore.open(
                data_dir, namespace=key[1], chroma_host=key[2], chroma_port=key[3],
                embedding=embedding,
            )
        return _OPEN_STORES[key]


_LMS: dict[tuple[Any, ...], Any] = {}


def decision_lm(context: RetrievalContext) -> Any | None:
    """The LM for plans and judgements, or None for the offline twins."""
    if context.policy == "offline":
        return None
    if context.lm is not None:
        return context.lm
    settings = settings_of(context)
    if not getattr(settings, "llm_model", None):
        if context.policy == "llm":
            raise ConfigurationError(
                "policy 'llm' needs an LLM: set MEMFUSE_LLM_MODEL or inject an LM"
            )
        return None
    key = lm_settings_key(settings)
    if key not in _LMS:
        _LMS[key] = lm_from_settings(settings)
    return _LMS[key]


# Compiled (optimised) programs: see signatures.programs for where they are looked up.
_TARGETS = {"plan": "planner", "judge": "judge"}
PROGRAM_FILES = {kind: PROGRAMS[target].filename for kind, target in _TARGETS.items()}


def llm_module(kind: Literal["plan", "judge"], programs_dir: str | None = None) -> dspy.Module:
    """The DSPy program for a decision: an optimiser's override, a compiled program, or plain."""
    return program_for(_TARGETS[kind], programs_dir)


def _programs_dir(context: RetrievalContext) -> str | None:
    directory = getattr(settings_of(context), "programs_dir", None)
    return str(directory) if directory else None


def policy_of(context: RetrievalContext) -> PlannerPolicy:
    """The tuned planner policy in force (search and offline-planner overrides; often empty)."""
    return planner_policy(_programs_dir(context))


@lru_cache(maxsize=16)
def _offline_planner(policy_key: str) -> OfflineRoundPlanner:
    return OfflineRoundPlanner(PlannerPolicy.from_key(policy_key).planner_config())


def offline_planner(context: RetrievalContext) -> OfflineRoundPlanner:
    return _offline_planner(policy_of(context).key())


@lru_cache(maxsize=64)
def search_config(
    recipe: str, k: int, use_constraints: bool, policy_key: str = ""
) -> SearchConfig:
    """The round's recipe with the tuned overrides (a `PlannerPolicy.key()`), k and the
    constraint switch applied."""
    config = PlannerPolicy.from_key(policy_key).apply(resolve_recipe(recipe))
    changes: dict[str, Any] = {}
    if config.top_k != k:
        changes["top_k"] = k
    if config.context.entries != k:
        changes["context"] = config.context.model_copy(update={"entries": k})
    if not use_constraints:
        changes["use_constraints"] = False
    return config.with_(**changes) if changes else config


def question_time_of(state: State) -> datetime:
    """The frozen question time; the wall clock when a caller (e.g. Studio) gave none."""
    if state.question_time is None or state.question_time == "":
        return datetime.now().replace(microsecond=0)
    return parse_timestamp(state.question_time)


def top_k_of(state: State, context: RetrievalContext) -> int:
    return state.k or context.k


class Decided(NamedTuple):
    """One decision's outcome and its provenance."""

    prediction: dspy.Prediction
    source: Literal["llm", "offline"]
    notes: list[str]
    decision: Decision


def decide(
    llm_module: Callable[[], dspy.Module],
    offline_module: dspy.Module,
    inputs: dict[str, Any],
    lm: Any | None,
    what: str,
) -> Decided:
    """Run one decision on the LM, or its twin; an unusable LLM answer falls back, noted."""
    if lm is None:
        return Decided(offline_module(**inputs), "offline", [], Decision(
            step=what, decided_by=DECIDED_OFFLINE))
    try:
        with dspy.context(lm=lm):
            prediction = llm_module()(**inputs)
    except Exception as exc:  # noqa: BLE001 — malformed output, schema violation, endpoint down
        reason = describe_failure(exc)
        note = f"{what}: {reason}; used the offline twin"
        return Decided(offline_module(**inputs), "offline", [note], Decision(
            step=what, decided_by=offline_fallback(reason)))
    return Decided(prediction, "llm", [], Decision(step=what, decided_by=DECIDED_BY_LLM))


def queries_of(plan: RoundPlan) -> list[str]:
    return list(dict.fromkeys([plan.focus, *plan.semantic_queries, plan.lexical_query()]))


def facet_terms(missing_facets: list[str]) -> list[str]:
    """Search terms from missing-facet labels ("keyword: milk" → "milk"); time facets drop out."""
    terms = []
    for facet in missing_facets:
        if facet.startswith("time:"):
            continue
        term = _FACET_PREFIX.sub("", facet).strip()
        if term:
            terms.append(term)
    return terms


def derive_plan(state: State, missing_facets: list[str]) -> RoundPlan | None:
    """A plan unlike every executed one: the missing facets first, then broader variants."""
    first, last = state.plans[0], state.plans[-1]
    keywords = " ".join(first.keywords)
    candidates = [
        *alternative_plans(first, facet_terms(missing_facets) or None),
        *alternative_plans(last),
        RoundPlan.from_query(state.question.strip() or first.focus),
        *([RoundPlan.from_query(keywords)] if keywords else []),
    ]
    return first_unexecuted(candidates, state.plans)


# --- nodes -----------------------------------------------------------------------


def plan_round(state: State, runtime: Runtime[RetrievalContext]) -> dict[str, Any]:
    """Round 1: the planner reads the question. Later rounds: the judge's proposal,
    unless it repeats an executed plan (then a different one is derived, or none)."""
    context = context_of(runtime)
    when = question_time_of(state)
    if state.round == 0:
        store = store_of(context)
        inputs = planner_inputs(
            state.question, when, state.requester, list(store.known_people()),
            list(store.known_devices()), [], [],
        )
        lm = decision_lm(context)
        prediction, _, notes, decision = decide(
            lambda: llm_module("plan", _programs_dir(context)), offline_planner(context), inputs,
            lm, "round 1 planner",
        )
        return {"plan": prediction.plan, "question_time": when, "notes": notes,
                "decisions": [decision]}

    judgement = state.judgements[-1] if state.judgements else None
    proposal = judgement.next_plan if judgement else None
    executed = {plan.signature() for plan in state.plans}
    if proposal is not None and proposal.signature() not in executed:
        return {"plan": proposal}
    derived = derive_plan(state, judgement.missing_facets if judgement else [])
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


def search_round(state: State, runtime: Runtime[RetrievalContext]) -> dict[str, Any]:
    """Execute the current plan once and merge its candidates into the pool."""
    context = context_of(runtime)
    if state.plan is None:
        raise ConfigurationError("search_round reached without a plan")
    config = search_config(
        context.recipe, top_k_of(state, context), context.use_constraints, policy_of(context).key()
    )
    result = search(
        store_of(context), state.plan, config,
        requester=state.requester, question_time=question_time_of(state),
        question=state.question.strip() or None,
    )
    first_round = {"guard_ids": result.guard_ids} if state.round == 0 else {}
    return {
        **first_round,
        "round": state.round + 1,
        "plans": [state.plan],
        "searched_queries": queries_of(state.plan),
        "candidates": {c.node_id: c for c in result.candidates},
        "found": {c.node_id: (state.round + 1, rank) for rank, c in enumerate(result.candidates)},
        "fused": {c.node_id: c for c in result.fused},
    }


def evidence_items(store: MemoryStoreAPI, state: State) -> list[EvidenceItem]:
    """The accumulated pool as judge evidence: the best events, then a few fused summaries."""
    ranked = sorted(state.candidates.values(), key=lambda c: (-c.score, c.node_id))
    ranked = ranked[:EVIDENCE_EVENTS]
    events = {e.event_id: e for e in store.get_events([c.node_id for c in ranked])}
    items = [
        EvidenceItem(
            node_id=c.node_id, timestamp=events[c.node_id].timestamp,
            device=events[c.node_id].device, location=events[c.node_id].location,
            text=events[c.node_id].description, characters=list(events[c.node_id].characters),
            score=c.score,
        )
        for c in ranked
        if c.node_id in events
    ]
    fused = sorted(state.fused.values(), key=lambda c: (-c.score, c.node_id))[:EVIDENCE_FUSED]
    for candidate in fused:
        node = store.get_fused(candidate.node_id)
        items.append(EvidenceItem(
            node_id=node.node_id, kind=NodeKind.FUSED, timestamp=node.start, end=node.end,
            device=",".join(node.devices), text=node.summary, characters=list(node.subjects),
            score=candidate.score,
        ))
    return items


def judge_round(state: State, runtime: Runtime[RetrievalContext]) -> dict[str, Any]:
    """Judge the accumulated evidence; the round limits are enforced here, not trusted."""
    context = context_of(runtime)
    k = top_k_of(state, context)
    final = state.round >= context.max_rounds
    inputs = judge_inputs(
        state.question, question_time_of(state), state.plans[-1], state.searched_queries,
        state.plans, state.round, context.min_rounds, final, k,
        evidence_items(store_of(context), state),
    )
    lm = decision_lm(context)
    prediction, source, notes, decision = decide(
        lambda: llm_module("judge", _programs_dir(context)), _OFFLINE_JUDGE, inputs, lm,
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
        selected_ids=list(prediction.selected_ids)[:k],
        next_plan=None if (sufficient or final) else prediction.next_plan,
    )
    return {"judgements": [judgement], "notes": notes, "decisions": [decision]}


def final_selection(
    selected_ids: list[str],
    candidates: dict[str, Candidate],
    k: int,
    found: dict[str, tuple[int, int]] | None = None,
    order: Backfill = "history",
) -> list[str]:
    """The judged shortlist first, then the rest of the pool, cut to k event ids.

    `history` back-fills in the order the searches found them (round 1's ranking, then
    what each later round added); `score` by best score across rounds. Scores of
    different rounds answer different queries, so `history` keeps the first search's
    coverage/timeline spread intact (it measured better on the synthetic benchmark).
    """
    chosen = [i for i in dict.fromkeys(selected_ids) if i in candidates]
    taken = set(chosen)
    rest = [c for c in candidates.values() if c.node_id not in taken]
    if order == "history" and found:
        last = (len(found) + 1, 0)
        rest.sort(key=lambda c: (*found.get(c.node_id, last), -c.score, c.node_id))
    else:
        rest.sort(key=lambda c: (-c.score, c.node_id))
    return [*chosen, *(c.node_id for c in rest)][:k]


def stop_reason_of(state: State, context: RetrievalContext) -> str:
    if state.stop_reason:
        return state.stop_reason
    if not context.use_controller:
        return "one search round (controller off)"
    if state.judgements and state.judgements[-1].sufficient:
        return f"judged sufficient after round {state.round}"
    if state.round >= context.max_rounds:
        return f"reached the maximum of {context.max_rounds} rounds"
    if state.judgements and state.judgements[-1].next_plan is None:
        return f"no further plan after round {state.round}: missing facets already searched"
    return f"stopped after round {state.round}"


def assemble(state: State, runtime: Runtime[RetrievalContext]) -> dict[str, Any]:
    """Final top-k (judged ids pinned, back-filled from the pool) → the reader's context."""
    context = context_of(runtime)
    k = top_k_of(state, context)
    config = search_config(context.recipe, k, context.use_constraints, policy_of(context).key())
    selected = state.judgements[-1].selected_ids if state.judgements else []
    ranked = final_selection(selected, state.candidates, k, state.found, context.backfill)
    ranked = keep_reserved(ranked, state.guard_ids, k)  # round 1's guard, whatever was judged
    chosen = [state.candidates[i] for i in ranked]
    pinned_fused = [i for i in selected if is_fused_id(i) and i in state.fused]
    contributors = {c.via_fused for c in chosen if c.via_fused} | set(pinned_fused)
    fused = sorted(
        (state.fused[i] for i in contributors if i in state.fused),
        key=lambda c: (c.node_id not in pinned_fused, -c.score, c.node_id),
    )
    pinned = [*state.guard_ids, *(i for i in selected if i in set(ranked)), *pinned_fused]
    entries = assemble_context(
        store_of(context), chosen, fused, config.context, pinned_ids=pinned
    ) if chosen or pinned else []
    in_context = {e.node_id for e in entries}
    return {
        "event_ids": [i for i in ranked if i in in_context],
        "context": entries,
        "stop_reason": stop_reason_of(state, context),
    }


# --- routers -----------------------------------------------------------------------


def route_after_plan(
    state: State, runtime: Runtime[RetrievalContext]
) -> Literal["search", "assemble"]:
    return "search" if state.plan is not None else "assemble"


def route_after_search(
    state: State, runtime: Runtime[RetrievalContext]
) -> Literal["judge", "assemble"]:
    return "judge" if context_of(runtime).use_controller else "assemble"


def route_after_judge(
    state: State, runtime: Runtime[RetrievalContext]
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
