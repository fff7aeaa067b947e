"""The run context every graph shares: where the memory is, who decides, which LLM.

A context holds plain, described, JSON-serializable fields only: LangGraph Studio renders
them as the run's form, the server builds the object from that form's JSON, and every field
left at None means "what the `MEMFUSE_*` settings say" (resolved by `graphs.resources`).

Python callers (the API, the benchmark, tests) also hand in live objects (an open store,
settings, a DSPy LM, a decision program, a reader). They are constructor arguments that are
not fields (`InitVar`s, left out of the JSON schema), kept on the object as `injected` and
used by `graphs.resources.resources_for` instead of what it would open itself. So they reach
the nodes through `runtime.context` without ever appearing in the form.

Validation is one rule for every graph: `check()` runs on construction (Studio's form, a
server run or Python) and raises `ConfigurationError` naming the field; subclasses extend it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping
from dataclasses import InitVar, dataclass, field, fields, replace
from typing import Any, Literal, Self, TypeVar, get_args

from pydantic.json_schema import SkipJsonSchema

from memory.errors import ConfigurationError

Policy = Literal["auto", "offline", "llm"]
"""Who makes a graph's decisions: `llm` (the DSPy programs; an error when no LLM is
configured), `offline` (the deterministic twins) or `auto` (llm when an LLM is configured or
injected, else offline). The same three words in every graph."""

POLICIES: tuple[str, ...] = get_args(Policy)
Hidden = SkipJsonSchema[Any]  # a constructor argument the JSON schema (the Studio form) omits


def about(text: str) -> dict[str, str]:
    """Field metadata whose description reaches the JSON schema (Studio shows it)."""
    return {"description": text}


@dataclass(frozen=True)
class Injected:
    """Live objects a Python caller handed in; None = open or build what the settings name."""

    store: Any = None
    settings: Any = None
    lm: Any = None
    program: Any = None
    reader: Any = None
    request: Any = None
    """A read request its Python caller already checked (`memory.read_request`): the graph
    takes it as it is instead of checking its raw input a second time."""


@dataclass(kw_only=True)
class RunContext:
    """The knobs every graph has: the memory's location, the policy and the LLM."""

    data_dir: str | None = field(
        default=None,
        metadata=about(
            "Directory of the memory store (default: MEMFUSE_DATA_DIR, else ./.memfuse relative "
            "to the server's working directory). A read (retrieval, answer) of a missing "
            "directory says so in the output notes and creates nothing; fusion creates it."
        ),
    )
    namespace: str | None = field(
        default=None,
        metadata=about(
            "Store namespace inside the data directory (default: MEMFUSE_NAMESPACE, else "
            "'default')."
        ),
    )
    policy: Policy = field(
        default="auto",
        metadata=about(
            "Who decides: llm (DSPy programs; an error without an LLM), offline (deterministic "
            "twins) or auto (llm when an LLM is configured, else offline)."
        ),
    )
    llm_model: str | None = field(
        default=None,
        metadata=about("Chat model of the decisions (default: MEMFUSE_LLM_MODEL; empty = no LLM)."),
    )
    llm_base_url: str | None = field(
        default=None,
        metadata=about("OpenAI-compatible endpoint of that model (default: MEMFUSE_LLM_BASE_URL)."),
    )
    llm_temperature: float | None = field(
        default=None,
        metadata=about(
            "Temperature of the decisions (default: MEMFUSE_LLM_TEMPERATURE; paper: 1)."
        ),
    )
    llm_max_tokens: int | None = field(
        default=None,
        metadata=about(
            "Token limit of one decision (default: MEMFUSE_LLM_MAX_TOKENS; paper: 4096)."
        ),
    )
    store: InitVar[Hidden] = None
    settings: InitVar[Hidden] = None
    lm: InitVar[Hidden] = None

    def __post_init__(self, store: Any, settings: Any, lm: Any) -> None:
        self._injected = Injected(store=store, settings=settings, lm=lm)
        self.check()

    def check(self) -> None:
        """Refuse values no run could use, naming the field (subclasses add their own)."""
        if self.policy not in POLICIES:
            raise ConfigurationError(
                f"policy must be one of {', '.join(POLICIES)}, got {self.policy!r}"
            )
        if self.llm_max_tokens is not None and self.llm_max_tokens < 1:
            raise ConfigurationError(
                f"llm_max_tokens must be at least 1, got {self.llm_max_tokens}"
            )
        if self.llm_temperature is not None and self.llm_temperature < 0:
            raise ConfigurationError(f"llm_temperature must be >= 0, got {self.llm_temperature}")

    @property
    def injected(self) -> Injected:
        injected: Injected = self.__dict__.get("_injected", Injected())
        return injected

    def injecting(self, **objects: Any) -> Self:
        """A copy with these live objects added (store=, settings=, lm=, program=, reader=,
        request=)."""
        clone = copy.copy(self)
        clone.__dict__.pop("_resources", None)  # resolved for the old objects
        clone._injected = replace(self.injected, **objects)
        return clone

    def llm_overrides(self) -> dict[str, Any]:
        """The llm_* fields this context sets (None fields leave the settings' values)."""
        names = ("llm_model", "llm_base_url", "llm_temperature", "llm_max_tokens")
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


C = TypeVar("C", bound=RunContext)
_CONVERTED = "__memfuse_run_context__"  # where a mapping context keeps its converted copy


def run_context(runtime: Any, cls: type[C]) -> C:
    """The run's context as this graph's context class. Run on its own it is one already, or
    absent (the defaults). Run as a subgraph it is the parent's: another class, or a plain
    mapping (what a served parent without a context schema passes down); the fields this
    graph knows are taken from it and the rest ignored. A mapping keeps its converted copy,
    so every node of the run shares one context and the resources resolved for it."""
    context = getattr(runtime, "context", None)
    if isinstance(context, cls):
        return context
    if context is None:
        return cls()
    if isinstance(context, MutableMapping) and isinstance(context.get(_CONVERTED), cls):
        return context[_CONVERTED]  # type: ignore[no-any-return]
    values = context if isinstance(context, Mapping) else getattr(context, "__dict__", {})
    known = {f.name for f in fields(cls) if f.init}
    converted = cls(**{k: v for k, v in values.items() if k in known})
    if isinstance(context, MutableMapping):
        context[_CONVERTED] = converted
    return converted
