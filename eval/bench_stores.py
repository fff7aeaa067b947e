"""The benchmark's stores: one per scenario and ingest mode, built once and cached on disk.

`BuiltStores` opens a finished build again, or ingests the scenario into a fresh one and marks
it finished; the cache key (`store_key`) changes with anything that would change a store's
content, so `bench`, the showcase and the optimiser's grids all reuse a store only when it is
the one they would build.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from eval.systems import EventStream, IngestMode
from memfuse.settings import MemFuseSettings
from memory.formats.models import BenchScenario

INGEST_MARKER = "bench-ingest.json"


def store_key(content_hash: str, scenario_id: str, mode: IngestMode, embedding_id: str) -> str:
    """Cache key of one scenario's store: equal keys ⇒ identical ingest input and method."""
    parts = [content_hash, scenario_id, mode.name, mode.config_key, embedding_id]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


@dataclass
class PreparedStore:
    store: Any
    ingest_seconds: float
    built_now: bool
    mode: IngestMode
    cache: str | None = None
    """'cold' (the build embedded most of its texts) or 'warm' (it found them in the embedding
    cache); None for a store built before this was recorded."""


def embedding_misses(embedder: Any) -> int | None:
    """Texts the embedder has had to embed so far (None: it keeps no cache, so every text)."""
    misses = getattr(embedder, "misses", None)
    return misses if isinstance(misses, int) else None


def cache_state(misses: int | None, events: int) -> str:
    """A build is cold when it embedded at least half of its events' texts."""
    return "cold" if misses is None or misses * 2 >= max(events, 1) else "warm"


class BuiltStores:
    """Opens (or builds) the store of one scenario and ingest mode under `data_dir`.

    Layout: `<data_dir>/bench_<mode>_<key>/bench-ingest.json` names the finished build
    folder next to it. The marker is written (atomically) only after a successful
    ingest, so a build without one was interrupted: it is discarded and the store is
    rebuilt in a fresh folder and namespace (never reusing half-ingested data, and never
    reopening a path a Chroma client of this process may still hold).
    """

    def __init__(
        self,
        data_dir: Path,
        content_hash: str,
        settings: MemFuseSettings,
        embedder: Any,
        progress: bool,
    ):
        self.data_dir = data_dir
        self.content_hash = content_hash
        self.settings = settings
        self.embedder = embedder
        self.progress = progress

    def prepare(self, scenario: BenchScenario, mode: IngestMode) -> PreparedStore:
        if not mode.needs_store:
            return PreparedStore(EventStream(tuple(scenario.events)), 0.0, False, mode)
        key = store_key(self.content_hash, scenario.scenario_id, mode, self.embedder.model_id)
        root = self.data_dir / f"bench_{mode.name}_{key}"
        marker = root / INGEST_MARKER
        if marker.is_file():
            record = json.loads(marker.read_text())
            store = self._open(root / record["build"], record["namespace"])
            seconds = float(record["ingest_seconds"])
            return PreparedStore(store, seconds, False, mode, record.get("embedding_cache"))
        for stale in root.glob("build-*"):
            shutil.rmtree(stale, ignore_errors=True)
        build = f"build-{secrets.token_hex(4)}"
        namespace = f"{mode.name}_{key}_{build[6:]}"  # unique on a shared Chroma server too
        store = self._open(root / build, namespace)
        try:
            _ = self.embedder.dim  # load the model before the clock starts: not ingest time
            misses_before = embedding_misses(self.embedder)
            start = time.perf_counter()
            report = mode(store, scenario.events, self.progress)
            seconds = time.perf_counter() - start
            misses_after = embedding_misses(self.embedder)
            misses = (
                None
                if misses_before is None or misses_after is None
                else misses_after - misses_before
            )
            cache = cache_state(misses, len(scenario.events))
        except BaseException:
            store.close()
            raise
        record = {
            "build": build,
            "namespace": namespace,
            "scenario_id": scenario.scenario_id,
            "dataset_sha256": self.content_hash,
            "ingest_mode": mode.name,
            "config_key": mode.config_key,
            "embedding_model": self.embedder.model_id,
            "events": len(scenario.events),
            "ingest_seconds": seconds,
            "embedding_cache": cache,
            "report": report.model_dump(mode="json"),
            "built_at": datetime.now().isoformat(timespec="seconds"),
        }
        tmp = marker.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1))
        tmp.replace(marker)
        return PreparedStore(store, seconds, True, mode, cache)

    def _open(self, folder: Path, namespace: str) -> Any:
        """A build's store, in its folder's SQLite file whatever the database URL says (a
        stale build is discarded by removing its folder), on the settings' Chroma."""
        from memory.opener import open_store

        local = self.settings.model_copy(update={"database_url": None})
        return open_store(local, data_dir=folder, namespace=namespace, embedder=self.embedder)
