"""`retrieve()`: one question through the compiled controller graph, with an injected store.

The benchmark calls this thousands of times, so the graph is compiled once (at
import of `graphs.retrieval.graph`) and each call only builds a context object. The
ablations of the paper are named option sets, not code paths. The graph returns JSON data
(see `graphs.state`); `retrieve` hands back typed objects.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from graphs.context import Policy
from graphs.retrieval.context import Backfill, RetrievalContext
from graphs.retrieval.graph import graph
from graphs.retrieval.state import Decision, Judgement, RetrievalOutput
from memory.errors import InvalidQueryError
from memory.records import ContextEntry
from memory.search.plan import RoundPlan
from memory.store_api import MemoryStoreAPI


@dataclass(frozen=True, kw_only=True)
class ControllerOptions:
    """How the controller runs: recipe, loop, constraints and who decides (`lm` and
    `settings` are live objects handed to the run instead of the environment's)."""

    name: str = "memfuse"
    recipe: str = "memfuse"
    use_controller: bool = True
    use_constraints: bool = True
    min_rounds: int = 1
    max_rounds: int = 5
    policy: Policy = "auto"
    backfill: Backfill = "history"
    followup_share: float = 0.2
    lm: Any = None
    settings: Any = None

    def context(self, store: MemoryStoreAPI, k: int) -> RetrievalContext:
        return RetrievalContext(
            recipe=self.recipe,
            k=k,
            min_rounds=self.min_rounds,
            max_rounds=self.max_rounds,
            use_controller=self.use_controller,
            use_constraints=self.use_constraints,
            policy=self.policy,
            backfill=self.backfill,
            followup_share=self.followup_share,
            store=store,
            lm=self.lm,
            settings=self.settings,
        )


MEMFUSE = ControllerOptions()  # the full method: judged rounds, constraints, memfuse recipe
MEMFUSE_NO_AR = ControllerOptions(name="memfuse_no_ar", use_controller=False)  # one round, no judge
MEMFUSE_NO_RC = ControllerOptions(name="memfuse_no_rc", use_constraints=False)  # queries only
MEMFUSE_NO_GRAPH = ControllerOptions(name="memfuse_no_graph", recipe="memfuse_no_graph")
MEMFUSE_NO_FUSION = ControllerOptions(name="memfuse_no_fusion", recipe="memfuse_no_fusion")

ABLATIONS: dict[str, ControllerOptions] = {
    o.name: o for o in (MEMFUSE, MEMFUSE_NO_AR, MEMFUSE_NO_RC, MEMFUSE_NO_GRAPH, MEMFUSE_NO_FUSION)
}


class ControllerResult(BaseModel):
    """One question's retrieval: the context, the ids in it and how the loop got there."""

    event_ids: list[str] = Field(description="Event ids in the final context, best first.")
    context: list[ContextEntry] = Field(description="The reader's context, in time order.")
    rounds: int = Field(description="Search rounds run.")
    added: list[list[str]] = Field(
        default_factory=list, description="Per round, the context events it was first to find."
    )
    plans: list[RoundPlan] = Field(description="Executed plans, oldest first.")
    judgements: list[Judgement] = Field(description="One per judged round.")
    elapsed_ms: float
    notes: list[str] = Field(default_factory=list, description="Fallbacks and replaced plans.")
    decisions: list[Decision] = Field(
        default_factory=list, description="Who made each planner and judge decision."
    )
    stop_reason: str = ""

    def context_lines(self) -> list[str]:
        return [entry.text for entry in self.context]


def retrieve(
    store: MemoryStoreAPI,
    question: str,
    *,
    question_time: datetime | str,
    requester: str | None = None,
    admin: bool = False,
    k: int = 20,
    options: ControllerOptions = MEMFUSE,
) -> ControllerResult:
    """Run the retrieval controller for one question against an open store, as `requester`
    (only what they may see) or as an administrative read (`admin`: everything)."""
    if not isinstance(question, str) or not question.strip():
        raise InvalidQueryError("the question is empty")
    started = time.perf_counter()
    output = RetrievalOutput.model_validate(
        graph.invoke(  # type: ignore[call-overload]  # input given as the JSON dict a server run gets
            {
                "question": question,
                "question_time": question_time,
                "requester": requester,
                "admin": admin,
                "k": k,
            },
            context=options.context(store, k),
        )
    )
    return ControllerResult(
        event_ids=output.event_ids,
        context=output.context,
        rounds=output.round,
        added=output.added,
        plans=output.plans,
        judgements=output.judgements,
        notes=output.notes,
        decisions=output.decisions,
        stop_reason=output.stop_reason,
        elapsed_ms=(time.perf_counter() - started) * 1000.0,
    )
