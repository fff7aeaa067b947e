"""The fused stores an optimisation reads, built once per scenario and fusion policy.

Stores come from `eval.bench_stores.BuiltStores`, so they are cached on disk under a key that
includes the dataset hash and the resolved fusion policy: a planner grid reuses one
fused store per scenario for all its points, a fusion grid builds one per point and
scenario (the embeddings of event texts are cached by text, so only the first build of
a scenario pays for embedding its events), and a re-run of either skips ingest.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

from eval.bench_stores import BuiltStores
from eval.systems import IngestMode, StoreBuild
from memfuse.settings import MemFuseSettings
from memory.formats.models import BenchDataset, BenchScenario
from memory.models import Event
from signatures.programs import FusionPolicy, using_policies

FUSED_MODE_VERSION = "optimize-fused-v1"


def fusion_context(policy: FusionPolicy) -> Any:
    """An offline fusion run context that reads nothing from the environment."""
    from graphs.fusion.context import FusionContext

    return FusionContext(
        policy="offline",
        data_dir="unused",
        namespace="optimize",
        llm_model="",
        llm_base_url="",
        llm_temperature=1.0,
        llm_max_tokens=4096,
        policy_config=dict(policy.policy) or None,
    )


def resolved_policy(policy: FusionPolicy) -> dict[str, Any]:
    """Every threshold the offline fusion policy will use (defaults filled in)."""
    from signatures.fusion_offline import FusionPolicyConfig

    return FusionPolicyConfig(**policy.policy).model_dump(mode="json")


def fused_mode(policy: FusionPolicy | None = None) -> IngestMode:
    """Ingest through the fusion graph with the offline policy and these threshold overrides.

    The cache key covers every resolved threshold and the candidate and run settings, so
    changing a shipped default rebuilds the stores instead of reusing ones fused under the
    old value.
    """
    from memory.fusion.candidates import CandidateConfig

    policy = policy or FusionPolicy()
    context = fusion_context(policy).describe()
    context.pop("policy_config")  # inside the resolved policy: equal behaviour, equal key
    parts = [resolved_policy(policy), CandidateConfig().model_dump(mode="json"), context]
    resolved = json.dumps(parts, sort_keys=True, default=str)
    key = f"{FUSED_MODE_VERSION}-{hashlib.sha256(resolved.encode()).hexdigest()[:12]}"

    def ingest(store: Any, events: Sequence[Event], progress: bool) -> StoreBuild:
        from graphs.fusion.ingest import ingest_events

        with using_policies(fusion=policy):
            report = ingest_events(store, events, config=fusion_context(policy), progress=progress)
        details = report.model_dump(include={"accepted", "rejected", "fused_created", "ops"})
        return StoreBuild(events=len(events), added=report.added, details=details)

    return IngestMode("fused", ingest, config_key=key)


def store_cache(
    dataset: BenchDataset,
    data_dir: Path,
    settings: MemFuseSettings,
    embedder: Any = None,
    progress: bool = True,
) -> BuiltStores:
    """A BuiltStores under `data_dir` with the configured (or injected) embedder."""
    data_dir.mkdir(parents=True, exist_ok=True)
    if embedder is None:
        from memory.embeddings import make_embedder
        from memory.opener import embedding_config

        embedder = make_embedder(embedding_config(settings, data_dir))
    return BuiltStores(data_dir, dataset.content_hash, settings, embedder, progress)


class ScenarioStores:
    """Open stores by scenario id for one ingest mode, opened on first use and kept open.

    Shared, never copied: DSPy deep-copies students during optimisation, and every copy
    must search the same stores.
    """

    def __init__(self, cache: BuiltStores, scenarios: Sequence[BenchScenario], mode: IngestMode):
        self.cache = cache
        self.mode = mode
        self.scenarios = {s.scenario_id: s for s in scenarios}
        self._open: dict[str, Any] = {}
        self.ingest_seconds: dict[str, float] = {}
        self._lock = threading.Lock()

    def get(self, scenario_id: str) -> Any:
        with self._lock:
            if scenario_id not in self._open:
                prepared = self.cache.prepare(self.scenarios[scenario_id], self.mode)
                self._open[scenario_id] = prepared.store
                self.ingest_seconds[scenario_id] = prepared.ingest_seconds
            return self._open[scenario_id]

    def close(self) -> None:
        with self._lock:
            for store in self._open.values():
                close = getattr(store, "close", None)
                if callable(close):
                    close()
            self._open.clear()

    def __deepcopy__(self, memo: dict[int, Any]) -> ScenarioStores:
        return self

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
