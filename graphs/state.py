"""What every graph's state shares: run semantics on a thread and JSON-plain checkpoints.

**A run starts from the caller's input, never from the previous run.** On a LangGraph
thread (`langgraph dev`, a checkpointer) every channel keeps its value between runs, and a
reducer such as `operator.add` would keep adding to the previous run's plans, candidates or
tool budget. So in every graph:

- the input fields are `Input[...]` channels (LangGraph's `EphemeralValue`): they hold what
  this run's caller gave for one step and are gone after it, so a field the next caller
  leaves out is its default, not the last caller's value;
- the first node, `begin`, writes `fresh_run(State)`: every other field back to its default
  (through `Overwrite`, past the reducers), before it validates the input;
- what a thread keeps across runs is `history` only: one short record per finished run
  (`keep_recent`, the last `HISTORY_LIMIT`), for a person browsing the thread. No decision
  reads it: two questions on one thread are answered as on two fresh threads.

**Checkpoints are JSON-plain.** Nodes are wrapped by `node`, which turns their updates into
JSON values (`plain`), so a checkpoint holds dicts, lists, strings and numbers only and
deserializes without any project type being imported (LangGraph warns about, and will block,
unregistered types). Nodes still read typed objects: the State classes are pydantic models,
which LangGraph validates from those plain values before calling each node.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, get_type_hints

from langgraph.channels import EphemeralValue
from langgraph.types import Overwrite
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., dict[str, Any]])

Input = Annotated[T, EphemeralValue]
"""A state field filled by the caller's input for one step only (see the module docstring)."""

HISTORY_LIMIT = 50
KEPT = frozenset({"history"})


def plain(value: Any) -> Any:
    """`value` as JSON data (models to dicts, datetimes to ISO text); `Overwrite` kept."""
    if isinstance(value, Overwrite):
        return Overwrite(plain(value.value))
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return to_jsonable_python(value)


def node(function: F) -> F:
    """Mark a graph node: its update is made JSON-plain before LangGraph stores it."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> dict[str, Any]:
        update: dict[str, Any] = plain(function(*args, **kwargs))
        return update

    run.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]
    return run  # type: ignore[return-value]


def keep_recent(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    """Append, keeping the last `HISTORY_LIMIT` records (a thread's memory stays small)."""
    return [*(left or []), *(right or [])][-HISTORY_LIMIT:]


def _has_reducer(annotation: Any) -> bool:
    metadata: tuple[Any, ...] = getattr(annotation, "__metadata__", None) or ()
    return bool(metadata) and callable(metadata[-1]) and not isinstance(metadata[-1], type)


def _is_input(annotation: Any) -> bool:
    return EphemeralValue in getattr(annotation, "__metadata__", ())


@functools.cache
def _defaults(state: type[BaseModel], keep: frozenset[str]) -> tuple[tuple[str, Any, bool], ...]:
    """(field, JSON default, has a reducer) of every field a run starts afresh."""
    hints = get_type_hints(state, include_extras=True)
    return tuple(
        (name, plain(info.get_default(call_default_factory=True)), _has_reducer(hints[name]))
        for name, info in state.model_fields.items()
        if name not in keep and not _is_input(hints[name])
    )


def fresh_run(state: type[BaseModel], keep: frozenset[str] = KEPT) -> dict[str, Any]:
    """The update that clears what an earlier run on the thread left: every field that is
    neither an input nor kept goes back to its default (reducer fields via `Overwrite`)."""
    update: dict[str, Any] = {}
    for name, default, reduced in _defaults(state, keep):
        value = copy.deepcopy(default)
        update[name] = Overwrite(value) if reduced else value
    return update
