"""Run a compiled graph's own nodes and routers in-process, for bulk work that needs none of
LangGraph's per-step machinery.

Why: bulk ingest runs the fusion graph once per event, about seven steps each. Pregel's loop
(channels, checkpoint bookkeeping, callbacks, turning every JSON-plain update back into the
node's pydantic input) cost more than the nodes themselves: 10.3 s of 19.0 s for one
generated household (1,236 events, nodes 7.9 s, timed when this runner was written). A bulk run
has no checkpointer, no stream, no interrupt and no thread to keep, so it needs none of it.

`DirectRunner` walks the builder's spec — nodes, edges, conditional edges, channel reducers,
input and output schemas — so the graph keeps one definition, the one `langgraph dev` and
Studio serve. It passes typed values between nodes (a node's update as it returned it,
before `graphs.state.node` makes it JSON-plain) and builds each node's input model without
re-validating values that nodes already produced typed. It supports what this project's
graphs use and refuses anything else when it is built: one next node per step (no fan-out,
`Send` or `Command`), `LastValue`, `EphemeralValue` and `BinaryOperatorAggregate` channels,
`Overwrite`. The tests run both runtimes on the same events and compare every output and
the stores they leave.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from langgraph.channels import BinaryOperatorAggregate, EphemeralValue, LastValue
from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Overwrite
from pydantic import BaseModel

from memory.trusted import TrustedBuilder

GraphRuntime = Literal["direct", "langgraph"]
"""How a graph runs in-process: `direct` (its nodes through `DirectRunner`) or `langgraph`
(through LangGraph's Pregel loop, as `langgraph dev` serves it)."""

Output = TypeVar("Output", bound=BaseModel)

MAX_STEPS = 1000
"""A run longer than this is a routing bug (the fusion graph's longest is about 20 steps)."""


@dataclass(frozen=True)
class _Step:
    """One node: the function to call (the typed one under `graphs.state.node`), the model its
    state argument is, whether it takes the runtime, and where it goes next."""

    name: str
    call: Callable[..., Any]
    schema: TrustedBuilder[BaseModel]
    wants_runtime: bool
    then: str | None  # a fixed edge, or None when a router decides
    router: _Router | None


@dataclass(frozen=True)
class _Router:
    call: Callable[..., Any]
    schema: TrustedBuilder[BaseModel]
    wants_runtime: bool
    ends: Mapping[Hashable, str] | None


def _fresh(default: Any) -> Any:
    """A default for one run: containers copied (a node may build on them), the rest shared.
    An empty list, dict or set is made new rather than deep-copied (most defaults are; the
    copy machinery cost 1 % of a fused ingest)."""
    if isinstance(default, (list, dict, set)) and not default:
        return type(default)()
    return copy.deepcopy(default) if isinstance(default, (list, dict, set, BaseModel)) else default


def _function_of(runnable: Any) -> Callable[..., Any]:
    """The plain function behind a node or router: the one a `graphs.state.node` wrapper
    wraps (its update typed, not JSON-plain), or the function itself."""
    function = getattr(runnable, "func", None)
    if function is None:
        raise NotImplementedError(f"{runnable!r} is not a plain function")
    return cast(Callable[..., Any], getattr(function, "__wrapped__", function))


def _wants_runtime(function: Callable[..., Any]) -> bool:
    return "runtime" in inspect.signature(function).parameters


class DirectRunner:
    """The nodes of `graph` run one after the other on typed values (see the module docstring)."""

    def __init__(self, graph: CompiledStateGraph[Any, Any, Any, Any]) -> None:
        builder = graph.builder
        self._state: type[BaseModel] = builder.state_schema
        self._input: type[BaseModel] = builder.input_schema
        self._output = TrustedBuilder[BaseModel](builder.output_schema)
        builders: dict[type[BaseModel], TrustedBuilder[BaseModel]] = {}

        def built(schema: type[BaseModel]) -> TrustedBuilder[BaseModel]:
            return builders.setdefault(schema, TrustedBuilder(schema))

        self._reducers: dict[str, Callable[[Any, Any], Any]] = {}
        # every field present from the start: a node's input model is then built from values
        # alone (pydantic's model_construct inspects a default factory for each missing one)
        self._defaults = {
            name: info.get_default(call_default_factory=True)
            for name, info in self._state.model_fields.items()
        }
        self._ephemeral: set[str] = set()
        for name, channel in builder.channels.items():
            if isinstance(channel, BinaryOperatorAggregate):
                self._reducers[name] = channel.operator
            elif isinstance(channel, EphemeralValue):
                self._ephemeral.add(name)
            elif not isinstance(channel, LastValue):
                raise NotImplementedError(f"channel {name!r}: {type(channel).__name__}")
        if builder.managed or builder.waiting_edges:
            raise NotImplementedError("managed values and waiting edges are not supported")
        fixed: dict[str, str] = {}
        for start, end in builder.edges:
            if start in fixed:
                raise NotImplementedError(f"{start!r} fans out to {fixed[start]!r} and {end!r}")
            fixed[start] = end
        self._first = fixed.pop(START)
        self._steps: dict[str, _Step] = {}
        for name, spec in builder.nodes.items():
            if spec.ends or spec.defer:
                raise NotImplementedError(f"node {name!r} returns Command or is deferred")
            branches = builder.branches.get(name, {})
            if len(branches) > 1 or (branches and name in fixed):
                raise NotImplementedError(f"node {name!r} has more than one way out")
            router = None
            for branch in branches.values():
                route = _function_of(branch.path)
                router = _Router(
                    route,
                    built(branch.input_schema or self._state),
                    _wants_runtime(route),
                    branch.ends,
                )
            call = _function_of(spec.runnable)
            self._steps[name] = _Step(
                name,
                call,
                built(spec.input_schema or self._state),
                _wants_runtime(call),
                fixed.get(name),
                router,
            )

    def invoke(self, given: Mapping[str, Any], context: Any = None) -> BaseModel:
        """Run from `given` (the input schema's fields) to END; the output model, typed."""
        values = {name: _fresh(value) for name, value in self._defaults.items()}
        values.update(self._input.model_validate(given))
        runtime = Runtime(context=context)
        at = self._first
        for taken in range(MAX_STEPS):
            step = self._steps[at]
            update = step.call(*self._arguments(step, values, runtime))
            if taken == 0:
                for name in self._ephemeral:  # an input lasts one step (`graphs.state.Input`)
                    values[name] = _fresh(self._defaults[name])
            self._apply(values, update or {})
            nxt = step.then if step.router is None else self._route(step.router, values, runtime)
            if nxt is None or nxt == END:  # a node without a way out ends the run, as in Pregel
                return self._output(**values)
            at = nxt
        raise RuntimeError(f"the graph ran {MAX_STEPS} steps without reaching its end")

    @staticmethod
    def _arguments(
        callee: _Step | _Router, values: Mapping[str, Any], runtime: Runtime[Any]
    ) -> tuple[Any, ...]:
        # built as model_construct builds (memory.trusted): every value here is one a node
        # returned typed, the validated input, or the field's default (a field not written
        # yet, as in LangGraph); the schema picks its own fields from the run's values
        state = callee.schema(**values)
        return (state, runtime) if callee.wants_runtime else (state,)

    def _route(self, router: _Router, values: Mapping[str, Any], runtime: Runtime[Any]) -> str:
        chosen = router.call(*self._arguments(router, values, runtime))
        target = str(router.ends[chosen] if router.ends else chosen)
        if target != END and target not in self._steps:
            raise ValueError(f"router chose unknown node {target!r}")
        return target

    def _apply(self, values: dict[str, Any], update: Mapping[str, Any]) -> None:
        for name, value in update.items():
            reducer = self._reducers.get(name)
            if isinstance(value, Overwrite):
                values[name] = value.value
            elif reducer is not None:
                values[name] = reducer(values[name], value)
            else:
                values[name] = value


_RUNNERS: dict[int, DirectRunner] = {}
"""One runner per compiled graph (the graphs are module-level singletons)."""


def invoker(
    graph: CompiledStateGraph[Any, Any, Any, Any], runtime: GraphRuntime, output: type[Output]
) -> Callable[[dict[str, Any], Any], Output]:
    """One run of `graph` from its input dict and context to its typed `output`: the graph's
    nodes in-process (`DirectRunner`, built once per graph), or through LangGraph's Pregel
    loop. Resolved once, so a bulk caller pays the choice once."""
    if runtime == "direct":
        runner = _RUNNERS.get(id(graph))
        if runner is None:
            runner = _RUNNERS[id(graph)] = DirectRunner(graph)
        return lambda given, context: cast(Output, runner.invoke(given, context))
    if runtime == "langgraph":
        return lambda given, context: output.model_validate(graph.invoke(given, context=context))
    raise ValueError(f"runtime must be 'direct' or 'langgraph', got {runtime!r}")
