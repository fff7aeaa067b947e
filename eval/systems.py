"""What `bench` compares: systems (how a question gets its context) and ingest modes.

A system names the ingest mode it needs; the bench builds one store per scenario and
ingest mode (cached on disk) and hands it to every system that needs that mode, so
the plain baselines share one store. Both registries are plain dicts: registering
another system or ingest mode is one line, e.g.

    SYSTEMS["memfuse_no_ar"] = lambda: ControllerSystem(...)
    INGESTORS["fused"] = IngestMode("fused", fuse_events, config_key=..., extra_metrics=...)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from memory.errors import ConfigurationError
from memory.formats.models import BenchQuestion, BenchScenario
from memory.models import Event, NodeKind
from memory.records import ContextEntry
from memory.search.config import BM25_ONLY, HYBRID_RRF, MEMFUSE_DEFAULT, NAIVE_RAG, SearchConfig


class RetrievalOutcome(BaseModel):
    """One system's answer context for one question, and what it cost."""

    event_ids: list[str] = Field(description="Atomic events in the context, best first (≤ k).")
    context: list[ContextEntry] = Field(description="What the reader sees (entries, any order).")
    elapsed_ms: float = Field(description="Wall time of the retrieval, context assembly included.")
    rounds: int = Field(default=1, ge=1, description="Search rounds (multi-round controllers).")
    found_by: dict[str, str] = Field(
        default_factory=dict,
        description="Context events a later round added, with what found them (controllers).",
    )
    pooled: dict[str, int] = Field(
        default_factory=dict,
        description="Every event the system's rounds found, in the context or not, with the "
        "round that found it first (controllers; empty for one-list systems).",
    )
    extras: dict[str, float] = Field(
        default_factory=dict, description="Per-question numbers a system reports (averaged)."
    )


@runtime_checkable
class BenchSystem(Protocol):
    """A compared system. `full_context` (optional attribute, default False) makes the
    reader use the whole-stream system prompt instead of the retrieved-context one."""

    name: str
    ingest_mode: str

    def retrieve(self, store: Any, question: BenchQuestion, k: int) -> RetrievalOutcome: ...


class StoreBuild(BaseModel):
    """What an ingest run did (the bench times it itself)."""

    events: int = Field(description="Events handed to the ingestor.")
    added: int = Field(description="Events newly written.")
    details: dict[str, Any] = Field(default_factory=dict, description="Mode-specific counts.")


Ingestor = Callable[[Any, Sequence[Event], bool], StoreBuild]
ExtraMetrics = Callable[[Any, BenchScenario], Mapping[str, Any]]


@dataclass(frozen=True)
class IngestMode:
    """How a scenario's events get into a store; callable as `mode(store, events, progress)`.

    `config_key` must change whenever the ingest behaviour changes (model, prompts,
    thresholds): it is part of the on-disk cache key, so a stale store is never reused.
    `extra_metrics(store, scenario)` adds numbers (fused nodes, edges, purity…) to the
    Overall block of every system using this mode, averaged over scenarios.
    `needs_store=False` means no store is built; systems get the raw `EventStream`.
    """

    name: str
    ingest: Ingestor
    config_key: str = "v1"
    extra_metrics: ExtraMetrics | None = None
    needs_store: bool = True

    def __call__(self, store: Any, events: Sequence[Event], progress: bool) -> StoreBuild:
        return self.ingest(store, events, progress)


def plain_ingest(store: Any, events: Sequence[Event], progress: bool) -> StoreBuild:
    """Store and index every event; no fusion, no edges."""
    report = store.add_events(list(events), progress=progress)
    return StoreBuild(events=len(events), added=len(report.added))


def no_ingest(store: Any, events: Sequence[Event], progress: bool) -> StoreBuild:
    return StoreBuild(events=len(events), added=0)


@dataclass(frozen=True)
class EventStream:
    """The raw stream given to systems whose ingest mode needs no store."""

    events: tuple[Event, ...]

    def all_events(self) -> list[Event]:
        return sorted(self.events, key=lambda e: (e.timestamp, e.event_id))

    def close(self) -> None:
        pass


def ranked_event_ids(context: Sequence[ContextEntry], ranking: Sequence[str], k: int) -> list[str]:
    """Context events in rank order (unranked ones, e.g. fused members, after them), ≤ k."""
    position = {node_id: i for i, node_id in enumerate(ranking)}
    events = [e.node_id for e in context if e.kind == NodeKind.EVENT]
    unique = list(dict.fromkeys(events))
    ordered = sorted(unique, key=lambda i: (position.get(i, len(position)), unique.index(i)))
    return ordered[:k]


@dataclass
class RecipeSystem:
    """One search call with a named recipe on a plain plan built from the question text."""

    name: str
    recipe: SearchConfig
    ingest_mode: str = "plain"
    full_context: bool = False

    def retrieve(self, store: Any, question: BenchQuestion, k: int) -> RetrievalOutcome:
        from memory.retrieval import run_recipe

        start = time.perf_counter()
        context, result = run_recipe(
            store,
            question.question,
            self.recipe.sized(k),
            requester=question.user,
            question_time=question.time,
        )
        elapsed = (time.perf_counter() - start) * 1000
        ids = ranked_event_ids(context, result.event_ids(), k)
        return RetrievalOutcome(event_ids=ids, context=context, elapsed_ms=elapsed)


@dataclass
class LongContextSystem:
    """Every event up to the question time: recall is 1 by construction, the token count
    (and what a reader makes of that much text) is the point of the comparison."""

    name: str = "long_context"
    ingest_mode: str = "none"
    full_context: bool = True

    def retrieve(self, store: Any, question: BenchQuestion, k: int) -> RetrievalOutcome:
        start = time.perf_counter()
        events = [e for e in store.all_events() if e.timestamp <= question.time]
        context = [ContextEntry.for_event(e, 0.0, "full stream") for e in events]
        elapsed = (time.perf_counter() - start) * 1000
        return RetrievalOutcome(
            event_ids=[e.event_id for e in events], context=context, elapsed_ms=elapsed
        )


@dataclass
class ControllerSystem:
    """MemFuse's read path: the multi-round retrieval controller (or one of its ablations)
    over a store built by the fusion agent."""

    options: Any  # graphs.retrieval.run.ControllerOptions
    ingest_mode: str = "fused"

    @property
    def name(self) -> str:
        return str(self.options.name)

    def retrieve(self, store: Any, question: BenchQuestion, k: int) -> RetrievalOutcome:
        from graphs.retrieval.run import retrieve

        started = time.perf_counter()
        result = retrieve(
            store,
            question.question,
            question_time=question.time,
            requester=question.user,
            admin=True,  # the harness hands in the store this question may read (a view)
            k=k,
            options=self.options,
        )
        return RetrievalOutcome(
            event_ids=result.event_ids[:k],
            context=result.context,
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            rounds=max(1, result.round),
            found_by=result.found_by,
            pooled=result.pooled,
        )


def _controller(name: str) -> Callable[[], BenchSystem]:
    def build() -> BenchSystem:
        from graphs.retrieval.run import ABLATIONS

        return ControllerSystem(ABLATIONS[name])

    return build


SYSTEMS: dict[str, Callable[[], BenchSystem]] = {
    "naive_rag": lambda: RecipeSystem("naive_rag", NAIVE_RAG, "plain"),
    "bm25": lambda: RecipeSystem("bm25", BM25_ONLY, "plain"),
    "hybrid": lambda: RecipeSystem("hybrid", HYBRID_RRF, "plain"),
    "memfuse": _controller("memfuse"),
    "memfuse_no_ar": _controller("memfuse_no_ar"),
    "memfuse_no_rc": _controller("memfuse_no_rc"),
    "memfuse_no_graph": _controller("memfuse_no_graph"),
    "memfuse_no_fusion": _controller("memfuse_no_fusion"),
    "memfuse_no_moments": _controller("memfuse_no_moments"),
    "memfuse_dense_guard": _controller("memfuse_dense_guard"),
    "memfuse_single_search": lambda: RecipeSystem(
        "memfuse_single_search", MEMFUSE_DEFAULT, "fused"
    ),
    "long_context": LongContextSystem,
}


def fused_ingest(store: Any, events: Sequence[Event], progress: bool) -> StoreBuild:
    """Every event through the fusion graph (offline twin unless an LLM is configured)."""
    from graphs.fusion.ingest import ingest_events

    report = ingest_events(store, list(events), progress=progress)
    return StoreBuild(
        events=len(events),
        added=report.added,
        details={
            "accepted": report.accepted,
            "rejected": report.rejected,
            "ops": report.ops,
            "events_per_s": report.events_per_s,
        },
    )


def fusion_metrics(store: Any, scenario: BenchScenario) -> Mapping[str, Any]:
    """Fusion quality against the generator's labels (diagnostics, never an input); a figure
    the labels cannot give (segment purity without storyline event ids) is left out."""
    from eval.fusion_metrics import fusion_stats

    stats = fusion_stats(store, scenario.labelled_events)
    keys = (
        "fused_nodes",
        "mean_members",
        "edges",
        "plan_rejections",
        "fusion_purity",
        "segment_purity",
        "unlabelled_share",
        "labelled_purity",
    )
    return {key: stats[key] for key in keys if stats[key] is not None}


def _fusion_config_key() -> str:
    """Changes whenever the fusion behaviour can change (thresholds, limits, tuned policy or
    compiled program, LLM model), so a cached store is never reused across configurations."""
    import dataclasses
    import hashlib
    import json

    from graphs.fusion.context import FusionContext
    from memory.fusion.candidates import CandidateConfig
    from signatures.fusion_offline import FusionPolicyConfig

    where = {"data_dir", "namespace", "chroma_host", "chroma_port", "store", "lm", "program"}
    context = {
        f.name: getattr(FusionContext(), f.name)
        for f in dataclasses.fields(FusionContext)
        if f.name not in where
    }
    from memory.settings import load_settings
    from signatures.programs import fusion_policy, program_path

    program = program_path("fusion")  # a compiled LLM program changes ingest too
    settings = load_settings()  # the context leaves the LLM to the settings (policy auto)
    llm = (
        [
            settings.llm_model,
            settings.llm_base_url,
            settings.llm_temperature,
            settings.llm_max_tokens,
        ]
        if settings.llm_model
        else None
    )
    parts = [
        context,
        llm,
        FusionPolicyConfig().model_dump(),
        CandidateConfig().model_dump(),
        fusion_policy().policy,
        hashlib.sha256(program.read_bytes()).hexdigest() if program else None,
    ]
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    return "fused-" + digest[:12]


INGESTORS: dict[str, IngestMode] = {
    "plain": IngestMode("plain", plain_ingest, config_key="plain-v1"),
    "fused": IngestMode(
        "fused", fused_ingest, config_key=_fusion_config_key(), extra_metrics=fusion_metrics
    ),
    "none": IngestMode("none", no_ingest, config_key="none", needs_store=False),
}


def full_context(system: BenchSystem) -> bool:
    return bool(getattr(system, "full_context", False))


def resolve_systems(names: Sequence[str] | None) -> list[BenchSystem]:
    """Build the named systems; None = every registered system whose ingest mode exists.

    An unknown name, or a system whose ingest mode is not registered (yet), is a
    one-line ConfigurationError rather than a silently different comparison.
    """
    if names is None:
        built = [factory() for factory in SYSTEMS.values()]
        return [system for system in built if system.ingest_mode in INGESTORS]
    systems: list[BenchSystem] = []
    for name in dict.fromkeys(n.strip() for n in names if n.strip()):
        factory = SYSTEMS.get(name)
        if factory is None:
            raise ConfigurationError(f"unknown system {name!r} (known: {', '.join(SYSTEMS)})")
        system = factory()
        if system.ingest_mode not in INGESTORS:
            raise ConfigurationError(
                f"system {name!r} needs ingest mode {system.ingest_mode!r}, which is not "
                f"registered (registered: {', '.join(INGESTORS)})"
            )
        systems.append(system)
    if not systems:
        raise ConfigurationError("no systems to benchmark")
    return systems
