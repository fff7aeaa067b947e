"""`retrieve()`: one question through the compiled controller graph, with an injected store.

The benchmark calls this thousands of times, so the graph is compiled once (at
import of `graphs.retrieval.graph`) and each call only builds a context object. The
ablations of the paper are named option sets, not code paths. The graph returns JSON data
(see `graphs.state`); `retrieve` hands back the typed output.

By default the graph's own nodes run in-process (`graphs.direct.DirectRunner`): a call has no
checkpointer, thread or stream, and LangGraph's per-step machinery is a large share of a
one-round run (seed 7's first household, 60 questions after a warm-up call: memfuse_no_ar 12.0
ms a question direct against 19.4 through Pregel, memfuse 26.1 against 30.3), with the same
output (`tests/graphs/test_retrieval_graph.py`). `langgraph dev` and Studio serve the same graph
through Pregel.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graphs.context import Policy
from graphs.direct import GraphRuntime, invoker
from graphs.retrieval.context import Backfill, RetrievalContext
from graphs.retrieval.graph import graph
from graphs.retrieval.state import RetrievalOutput
from memory.read_request import ReadRequest, read_request
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
    followup_redundancy: float = 0.5
    followup_evidence_events: int = 3
    followup_evidence_weight: float = 0.3
    copies_within_day: bool = True
    over_days_reach: float = 0.2
    runtime: GraphRuntime = "direct"
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
            followup_redundancy=self.followup_redundancy,
            followup_evidence_events=self.followup_evidence_events,
            followup_evidence_weight=self.followup_evidence_weight,
            copies_within_day=self.copies_within_day,
            over_days_reach=self.over_days_reach,
            store=store,
            lm=self.lm,
            settings=self.settings,
        )


MEMFUSE = ControllerOptions()  # the full method: judged rounds, constraints, memfuse recipe
MEMFUSE_NO_AR = ControllerOptions(name="memfuse_no_ar", use_controller=False)  # one round, no judge
MEMFUSE_NO_RC = ControllerOptions(name="memfuse_no_rc", use_constraints=False)  # queries only
MEMFUSE_NO_GRAPH = ControllerOptions(name="memfuse_no_graph", recipe="memfuse_no_graph")
MEMFUSE_NO_FUSION = ControllerOptions(name="memfuse_no_fusion", recipe="memfuse_no_fusion")
MEMFUSE_NO_MOMENTS = ControllerOptions(name="memfuse_no_moments", recipe="memfuse_no_moments")
# a variant, not an ablation: the guard's reserved slots from naive_rag's ranking (GuardConfig)
MEMFUSE_DENSE_GUARD = ControllerOptions(name="memfuse_dense_guard", recipe="memfuse_dense_guard")

ABLATIONS: dict[str, ControllerOptions] = {
    o.name: o
    for o in (
        MEMFUSE,
        MEMFUSE_NO_AR,
        MEMFUSE_NO_RC,
        MEMFUSE_NO_GRAPH,
        MEMFUSE_NO_FUSION,
        MEMFUSE_NO_MOMENTS,
        MEMFUSE_DENSE_GUARD,
    )
}


def retrieve(
    store: MemoryStoreAPI,
    question: str | ReadRequest,
    *,
    question_time: datetime | str | None = None,
    requester: str | None = None,
    admin: bool = False,
    k: int = 20,
    options: ControllerOptions = MEMFUSE,
) -> RetrievalOutput:
    """Run the retrieval controller for one question against an open store, as `requester`
    (only what they may see) or as an administrative read (`admin`: everything), and return
    the graph's output as it is. A `ReadRequest` its caller already checked (the API's edge)
    is run as given; a question is checked here, by the same rule (`memory.read_request`)."""
    request = (
        question
        if isinstance(question, ReadRequest)
        else read_request(
            question, question_time=question_time, requester=requester, admin=admin, k=k
        )
    )
    context = options.context(store, request.k).injecting(request=request)
    given = request.model_dump()  # the input as the JSON-shaped dict a server run gets
    return invoker(graph, options.runtime, RetrievalOutput)(given, context)
