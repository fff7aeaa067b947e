"""`memfuse bench-perf`: ingest throughput, store size, memory and search latency at scale.

Not a timed test: it prints what this machine does, for the closing notes of issues.

The events are the synthesis stages' own household-weeks (`eval.synth.build_one`, the
realistic default): household after household, each moved one week later than the last,
until the requested number of events, so that BM25, the temporal index, the vectors and
the graphs see the vocabulary, timing and density of real household logs rather than
templated noise. The queries are those households' own benchmark questions. Weeks are
generated and ingested one at a time, so the events never sit in memory all at once.

`--embedder hashing` replaces the model with hashed words (memory.embeddings.HashingEmbedder):
at a million events the bundled model needs hours of CPU, which would hide what the store
costs; the model's own throughput is the `embed texts/s` row of a run with the model.
"""

from __future__ import annotations

import random
import resource
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import numpy as np
from pydantic import BaseModel
from rich.table import Table

from memory.models import Event

HOUSEHOLD_KINDS = 6  # scenario indexes the synthesis stages know (eval.synth.HOUSEHOLD_TYPES)


class PerfReport(BaseModel):
    events: int
    households: int
    mode: str
    embedder: str
    ingest_seconds: float
    ingest_events_per_s: float
    store_bytes: int
    peak_rss_bytes: int
    search_queries: int
    search_p50_ms: float
    search_p95_ms: float
    controller_queries: int = 0
    controller_p50_ms: float | None = None
    controller_p95_ms: float | None = None

    def render(self) -> Table:
        table = Table(
            title=f"memfuse bench-perf — {self.events:,} events ({self.households} household-"
            f"weeks), mode {self.mode}, embedder {self.embedder}"
        )
        table.add_column("metric")
        table.add_column("value", justify="right")
        table.add_row(
            "ingest seconds (embedding included, cache cold)", f"{self.ingest_seconds:.1f}"
        )
        table.add_row("ingest events/s", f"{self.ingest_events_per_s:,.1f}")
        table.add_row("store on disk", f"{self.store_bytes / 2**20:,.1f} MiB")
        table.add_row("peak RSS of the process", f"{self.peak_rss_bytes / 2**20:,.0f} MiB")
        table.add_row(
            f"single search p50 / p95 ms ({self.search_queries} queries)",
            f"{self.search_p50_ms:.1f} / {self.search_p95_ms:.1f}",
        )
        if self.controller_p50_ms is not None:
            table.add_row(
                f"multi-round controller p50 / p95 ms ({self.controller_queries} queries)",
                f"{self.controller_p50_ms:.1f} / {self.controller_p95_ms:.1f}",
            )
        return table


def household_weeks(n_events: int, seed: int = 13) -> Iterator[tuple[list[Event], list[str]]]:
    """(events, question texts) of one household-week at a time, `n_events` in all.

    Week k is household kind k mod 6 drawn with seed `seed + k // 6`, its ids prefixed
    `w<k>_` and its times moved k weeks on; the generator's answer labels are stripped."""
    from eval.synth import build_one

    total, week = 0, 0
    while total < n_events:
        scenario, _ = build_one(week % HOUSEHOLD_KINDS, seed + week // HOUSEHOLD_KINDS)
        shift = timedelta(days=7 * week)
        events = [
            event.model_copy(
                update={
                    "event_id": f"w{week:05d}_{event.event_id}",
                    "timestamp": event.timestamp + shift,
                }
            )
            for event in scenario.memory_events(labels=False)[: n_events - total]
        ]
        yield events, [q.question for q in scenario.questions]
        total += len(events)
        week += 1


def _percentiles(samples: list[float]) -> tuple[float, float]:
    return float(np.percentile(samples, 50)), float(np.percentile(samples, 95))


def _bytes_under(root: Path) -> int:
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file())


def _peak_rss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # Linux reports KiB


def run_perf(
    n_events: int = 10_000,
    n_queries: int = 200,
    mode: str = "plain",
    data_dir: Path | None = None,
    seed: int = 13,
    embedder: str = "model",
) -> PerfReport:
    from tqdm import tqdm

    from graphs.retrieval.run import MEMFUSE, retrieve
    from memfuse.api import MemFuse
    from memory.retrieval import search
    from memory.search.config import MEMFUSE_DEFAULT
    from memory.settings import load_settings

    settings = load_settings(embedding_provider="hashing" if embedder == "hashing" else None)
    questions: list[str] = []
    ingest_s, weeks, last_time = 0.0, 0, None
    if data_dir is not None:
        data_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        # a folder of its own, so the size on disk is this run's store and nothing else
        # (kept under `data_dir` for a look afterwards, removed with the temp dir otherwise)
        root = Path(tempfile.mkdtemp(prefix="bench-perf-", dir=data_dir)) if data_dir else Path(tmp)
        namespace = f"perf-{mode}-{embedder}-{n_events}"
        with MemFuse.open(root, namespace=namespace, settings=settings) as memory:
            with tqdm(total=n_events, unit="event", desc=f"{mode} ingest") as bar:
                for events, texts in household_weeks(n_events, seed):
                    started = time.perf_counter()
                    memory.ingest(events, mode=mode)  # type: ignore[arg-type]
                    ingest_s += time.perf_counter() - started
                    questions += texts
                    weeks += 1
                    last_time = events[-1].timestamp
                    bar.update(len(events))
            queries = random.Random(seed + 1).sample(questions, min(n_queries, len(questions)))
            memory.store.embed_queries(queries)  # warm the query embeddings like a cache would
            latencies = []
            for query in queries:
                t0 = time.perf_counter()
                search(memory.store, query, MEMFUSE_DEFAULT)
                latencies.append((time.perf_counter() - t0) * 1000)
            controller: list[float] = []
            for query in queries[: max(10, len(queries) // 4)]:
                t0 = time.perf_counter()
                retrieve(
                    memory.store,
                    query,
                    question_time=last_time,
                    requester=None,
                    admin=True,  # the whole store, as the store-only latencies above
                    k=20,
                    options=MEMFUSE,
                )
                controller.append((time.perf_counter() - t0) * 1000)
        store_bytes = _bytes_under(root)
    p50, p95 = _percentiles(latencies)
    c50, c95 = _percentiles(controller)
    return PerfReport(
        events=n_events,
        households=weeks,
        mode=mode,
        embedder="hashing (no model)" if embedder == "hashing" else settings.embedding_model,
        ingest_seconds=ingest_s,
        ingest_events_per_s=n_events / ingest_s,
        store_bytes=store_bytes,
        peak_rss_bytes=_peak_rss_bytes(),
        search_queries=len(latencies),
        search_p50_ms=p50,
        search_p95_ms=p95,
        controller_queries=len(controller),
        controller_p50_ms=c50,
        controller_p95_ms=c95,
    )
