"""Who decides a retrieval step, and with what: the decision programs, the offline twins, the
tuned search config, and the rule for an LLM decision that cannot be used.

Decisions (plan, judgement) run as DSPy programs when the run has an LM (`graphs.resources`)
and as their offline twins otherwise. An LLM answer that cannot be used (a malformed reply,
an endpoint that failed within its retry budget) sends that one decision to the twin, noted,
so one bad reply never sinks a question (the rule of every graph: `graphs/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal, NamedTuple

import dspy
from langgraph.runtime import Runtime

from graphs.context import run_context
from graphs.resources import Resources
from graphs.retrieval.context import RetrievalContext
from graphs.retrieval.state import Decision
from memory.retrieval import resolve_recipe
from memory.search.config import SearchConfig
from signatures.evidence_offline import OfflineEvidenceJudge
from signatures.lm import DECIDED_BY_LLM, DECIDED_OFFLINE, describe_failure, offline_fallback
from signatures.planning_offline import OfflineRoundPlanner
from signatures.programs import PROGRAMS, PlannerPolicy, program_for

# Compiled (optimised) programs: see signatures.programs for where they are looked up.
_TARGETS = {"plan": "planner", "judge": "judge"}
PROGRAM_FILES = {kind: PROGRAMS[target].filename for kind, target in _TARGETS.items()}

OFFLINE_JUDGE = OfflineEvidenceJudge()


def context_of(runtime: Runtime[RetrievalContext] | None) -> RetrievalContext:
    """The run's context; a default one when the caller gave none."""
    return run_context(runtime, RetrievalContext)


def llm_module(kind: Literal["plan", "judge"], programs_dir: str | None = None) -> dspy.Module:
    """The DSPy program for a decision: an optimiser's override, a compiled program, or plain."""
    return program_for(_TARGETS[kind], programs_dir)


@lru_cache(maxsize=16)
def _offline_planner(policy_key: str) -> OfflineRoundPlanner:
    return OfflineRoundPlanner(PlannerPolicy.from_key(policy_key).planner_config())


def offline_planner(resources: Resources) -> OfflineRoundPlanner:
    """The offline twin under the tuned planner policy in force (often the defaults)."""
    return _offline_planner(resources.planner_policy().key())


@lru_cache(maxsize=64)
def search_config(recipe: str, k: int, use_constraints: bool, policy_key: str = "") -> SearchConfig:
    """The round's recipe with the tuned overrides (a `PlannerPolicy.key()`), k and the
    constraint switch applied."""
    config = PlannerPolicy.from_key(policy_key).apply(resolve_recipe(recipe))
    if config.top_k != k or config.context.entries != k:
        config = config.sized(k)
    return config if use_constraints else config.with_(use_constraints=False)


def run_search_config(context: RetrievalContext, resources: Resources, k: int) -> SearchConfig:
    return search_config(
        context.recipe, k, context.use_constraints, resources.planner_policy().key()
    )


class Decided(NamedTuple):
    """One decision's outcome and its provenance."""

    prediction: dspy.Prediction
    source: Literal["llm", "offline"]
    notes: list[str]
    decision: Decision


def decide(
    llm_program: Callable[[], dspy.Module],
    offline_module: dspy.Module,
    inputs: dict[str, Any],
    lm: Any | None,
    what: str,
) -> Decided:
    """Run one decision on the LM, or its twin; an unusable LLM answer falls back, noted."""
    if lm is None:
        return Decided(
            offline_module(**inputs), "offline", [], Decision(step=what, decided_by=DECIDED_OFFLINE)
        )
    try:
        with dspy.context(lm=lm):
            prediction = llm_program()(**inputs)
    except Exception as exc:  # noqa: BLE001 — malformed output, schema violation, endpoint down
        reason = describe_failure(exc)
        note = f"{what}: {reason}; used the offline twin"
        return Decided(
            offline_module(**inputs),
            "offline",
            [note],
            Decision(step=what, decided_by=offline_fallback(reason)),
        )
    return Decided(prediction, "llm", [], Decision(step=what, decided_by=DECIDED_BY_LLM))
