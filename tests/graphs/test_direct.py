"""`graphs.direct.DirectRunner` against LangGraph itself: the same nodes on the same input
must give the same output and leave the same store, on scripted LLM trajectories (tools,
budgets, rejections) and on a generated household's offline fusion."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any

import pytest
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field

from eval.perf import household_weeks
from graphs.direct import DirectRunner
from graphs.fusion.context import FusionContext
from graphs.fusion.graph import builder, graph
from graphs.fusion.ingest import ingest_events
from graphs.fusion.state import FusionOutput
from graphs.state import Input, fresh_run, node
from memory.store import MemoryStore
from tests.graphs.test_fusion_graph import (
    E4,
    OVER_BUDGET,
    REJECTIONS,
    SEARCH_LOOKUP_COMMIT,
    TIGHT_BUDGET,
    llm_context,
    open_store,
    seed,
)
from tests.graphs.test_store_state_machine import snapshot
from tests.support.embedders import tiny_embedder

TRAJECTORIES = [
    pytest.param(SEARCH_LOOKUP_COMMIT, {}, id="search-lookup-commit"),
    pytest.param(OVER_BUDGET, TIGHT_BUDGET, id="budget-spent"),
    *[pytest.param(p.values[0], {}, id=p.id) for p in REJECTIONS],
]


def _seeded(path: Path) -> MemoryStore:
    store = open_store(path)
    seed(store)
    return store


@pytest.mark.parametrize(("answers", "limits"), TRAJECTORIES)
def test_a_scripted_llm_run_is_the_same_on_both_runtimes(
    tmp_path: Path, answers: list[dict[str, Any]], limits: dict[str, int]
) -> None:
    through_langgraph, direct = _seeded(tmp_path / "lg"), _seeded(tmp_path / "direct")
    expected = FusionOutput.model_validate(
        builder.compile().invoke(
            {"event": E4}, context=llm_context(through_langgraph, answers, **limits)
        )
    )
    got = DirectRunner(graph).invoke({"event": E4}, llm_context(direct, answers, **limits))
    assert isinstance(got, FusionOutput)
    assert got.model_dump(mode="json") == expected.model_dump(mode="json")
    assert got.turns == expected.turns and got.outcome in ("committed", "rejected")
    assert snapshot(direct) == snapshot(through_langgraph)
    through_langgraph.close()
    direct.close()


def test_an_offline_ingest_of_a_generated_household_is_the_same_on_both_runtimes(
    tmp_path: Path,
) -> None:
    events = next(household_weeks(400, seed=13)).events
    events = events[:400]
    reports = {}
    stores = {}
    for runtime in ("langgraph", "direct"):
        store = MemoryStore.open(tmp_path / runtime, embedder=tiny_embedder())
        reports[runtime] = ingest_events(
            store, events, config=FusionContext(policy="offline"), progress=False, runtime=runtime
        )
        stores[runtime] = store
    lg, direct = reports["langgraph"], reports["direct"]
    assert lg.accepted == len(events) and lg.ops.get("create_fusion_node", 0) > 0
    assert (direct.accepted, direct.rejected, direct.ops, direct.edges_added) == (
        lg.accepted,
        lg.rejected,
        lg.ops,
        lg.edges_added,
    )
    assert snapshot(stores["direct"]) == snapshot(stores["langgraph"])
    for store in stores.values():
        store.close()


# --- what the runner supports, on a toy graph of its own --------------------------------


class Toy(BaseModel):
    given: Input[Any] = None
    steps: Annotated[list[str], operator.add] = Field(default_factory=list)
    count: int = 0
    note: str = ""


class ToyOut(BaseModel):
    steps: list[str] = Field(default_factory=list)
    count: int = 0
    note: str = ""


@node
def _start(state: Toy) -> dict[str, Any]:
    return {**fresh_run(Toy), "note": f"given {state.given}", "steps": ["start"]}


@node
def _tick(state: Toy) -> dict[str, Any]:
    return {"count": state.count + 1, "steps": [f"tick{state.count}"]}


def _again(state: Toy) -> str:
    return "tick" if state.count < 3 else END


def _toy() -> Any:
    toy = StateGraph(Toy, output_schema=ToyOut)
    toy.add_node("start", _start)
    toy.add_node("tick", _tick)
    toy.add_edge(START, "start")
    toy.add_edge("start", "tick")
    toy.add_conditional_edges("tick", _again)
    return toy.compile()


def test_reducers_resets_inputs_and_loops_match_langgraph() -> None:
    toy = _toy()
    expected = ToyOut.model_validate(toy.invoke({"given": 7}))
    got = DirectRunner(toy).invoke({"given": 7})
    assert got.model_dump() == expected.model_dump()
    assert got.model_dump() == {
        "steps": ["start", "tick0", "tick1", "tick2"],
        "count": 3,
        "note": "given 7",
    }


def test_a_graph_that_fans_out_is_refused_when_the_runner_is_built() -> None:
    fan = StateGraph(Toy)
    fan.add_node("start", _start)
    fan.add_node("tick", _tick)
    fan.add_node("other", _tick)
    fan.add_edge(START, "start")
    fan.add_edge("start", "tick")
    fan.add_edge("start", "other")
    with pytest.raises(NotImplementedError, match="fans out"):
        DirectRunner(fan.compile())


def test_a_router_that_never_ends_is_stopped() -> None:
    loop = StateGraph(Toy)
    loop.add_node("tick", _tick)
    loop.add_edge(START, "tick")
    loop.add_conditional_edges("tick", lambda state: "tick")
    with pytest.raises(RuntimeError, match="without reaching its end"):
        DirectRunner(loop.compile()).invoke({})
