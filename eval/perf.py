"""`memfuse bench-perf`: ingest throughput and search latency on synthetic events.

Not a timed test: it prints what this machine does, for the closing notes of issues.
The events are random but household-shaped (people, devices, rooms, readings) so
that BM25 and dense search see realistic vocabulary sizes; a fresh data directory
is used each run, so the embedding cache starts cold.
"""

from __future__ import annotations

import random
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
from pydantic import BaseModel
from rich.table import Table

from memory.models import Event, Modality

PEOPLE = ["Alice", "Ben", "Chloe", "David", "Emma", "Farid", "Grace", "Hugo"]
DEVICES = [
    (
        "watch_{p}",
        Modality.HEALTH,
        "wearable",
        "recorded a heart rate of {n} bpm while {p} was {act}",
    ),
    ("watch_{p}", Modality.MOTION, "wearable", "counted {n} steps as {p} was {act}"),
    ("phone_{p}", Modality.APP_USAGE, "carried", "{p} spent {n} minutes in the {app} app"),
    (
        "phone_{p}",
        Modality.DIALOGUE,
        "carried",
        "{p} told the assistant to remind them about {thing}",
    ),
    (
        "speaker_living",
        Modality.AUDIO,
        "living_room",
        "heard {p} talking about {thing} for {n} seconds",
    ),
    ("camera_kitchen", Modality.VISION, "kitchen", "captured {p} {act} near the {thing}"),
    ("thermostat_hall", Modality.ENVIRONMENT, "hallway", "read {n} degrees and {m}% humidity"),
    (
        "lock_front",
        Modality.LOCATION,
        "front_door",
        "unlocked for {p} with code entry at the front door",
    ),
    (
        "fridge_kitchen",
        Modality.DEVICE_STATUS,
        "kitchen",
        "door left open for {n} seconds; {thing} shelf low",
    ),
]
ACTS = [
    "cooking",
    "walking the dog",
    "reading",
    "cleaning",
    "working",
    "stretching",
    "limping",
    "resting",
]
THINGS = [
    "the dentist appointment",
    "milk",
    "the leaking tap",
    "eggs",
    "the school trip",
    "a parcel",
    "the car service",
    "grandma's visit",
    "the broken heater",
    "vitamins",
]
APPS = ["Calendar", "Maps", "Recipes", "Banking", "Messages", "Fitness", "News"]


def synthetic_events(n: int, seed: int = 13) -> list[Event]:
    """n household-shaped events over ~30 days, deterministic for the seed."""
    rng = random.Random(seed)
    start = datetime(2026, 4, 1, 6, 0)
    events: list[Event] = []
    for i in range(n):
        person = rng.choice(PEOPLE)
        device, modality, location, template = rng.choice(DEVICES)
        text = template.format(
            p=person,
            n=rng.randint(40, 9000),
            m=rng.randint(25, 70),
            act=rng.choice(ACTS),
            thing=rng.choice(THINGS),
            app=rng.choice(APPS),
        )
        events.append(
            Event(
                event_id=f"perf_{i:06d}",
                timestamp=start + timedelta(minutes=4 * i + rng.randint(0, 3)),
                device=device.format(p=person.lower()),
                modality=modality,
                location=location,
                description=text[0].upper() + text[1:] + ".",
                characters=(person,),
            )
        )
    return events


class PerfReport(BaseModel):
    events: int
    mode: str
    ingest_seconds: float
    ingest_events_per_s: float
    search_queries: int
    search_p50_ms: float
    search_p95_ms: float
    controller_p50_ms: float | None = None
    controller_p95_ms: float | None = None

    def render(self) -> Table:
        table = Table(
            title=f"memfuse bench-perf — {self.events:,} synthetic events, mode {self.mode}"
        )
        table.add_column("metric")
        table.add_column("value", justify="right")
        table.add_row(
            "ingest seconds (embedding included, cache cold)", f"{self.ingest_seconds:.1f}"
        )
        table.add_row("ingest events/s", f"{self.ingest_events_per_s:.1f}")
        table.add_row(
            f"single search p50 / p95 ms ({self.search_queries} queries)",
            f"{self.search_p50_ms:.1f} / {self.search_p95_ms:.1f}",
        )
        if self.controller_p50_ms is not None:
            table.add_row(
                "multi-round controller p50 / p95 ms",
                f"{self.controller_p50_ms:.1f} / {self.controller_p95_ms:.1f}",
            )
        return table


def _percentiles(samples: list[float]) -> tuple[float, float]:
    return float(np.percentile(samples, 50)), float(np.percentile(samples, 95))


def run_perf(
    n_events: int = 10_000,
    n_queries: int = 200,
    mode: str = "plain",
    data_dir: Path | None = None,
    seed: int = 13,
) -> PerfReport:
    from memfuse.api import MemFuse
    from memory.retrieval import search
    from memory.search.config import MEMFUSE_DEFAULT

    events = synthetic_events(n_events, seed)
    rng = random.Random(seed + 1)
    queries = [
        f"what did {rng.choice(PEOPLE)} say about {rng.choice(THINGS)}"
        if i % 2
        else f"when was {rng.choice(PEOPLE)} {rng.choice(ACTS)} in the kitchen"
        for i in range(n_queries)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        root = data_dir or Path(tmp)
        with MemFuse.open(root, namespace=f"perf-{mode}-{n_events}") as memory:
            started = time.perf_counter()
            memory.ingest(events, mode=mode, progress=True)  # type: ignore[arg-type]
            ingest_s = time.perf_counter() - started
            memory.store.embed_queries(queries)  # warm the query embeddings like a cache would
            latencies = []
            for query in queries:
                t0 = time.perf_counter()
                search(memory.store, query, MEMFUSE_DEFAULT)
                latencies.append((time.perf_counter() - t0) * 1000)
            p50, p95 = _percentiles(latencies)
            controller: list[float] = []
            try:
                from graphs.retrieval.run import MEMFUSE, retrieve
            except ImportError:  # the controller is optional for a store-only measurement
                retrieve = None  # type: ignore[assignment]
            if retrieve is not None:
                for query in queries[: max(10, n_queries // 4)]:
                    t0 = time.perf_counter()
                    retrieve(
                        memory.store,
                        query,
                        question_time=events[-1].timestamp,
                        requester=None,
                        admin=True,  # the whole store, as the store-only latencies above
                        k=20,
                        options=MEMFUSE,
                    )
                    controller.append((time.perf_counter() - t0) * 1000)
    c50, c95 = _percentiles(controller) if controller else (None, None)
    return PerfReport(
        events=n_events,
        mode=mode,
        ingest_seconds=ingest_s,
        ingest_events_per_s=n_events / ingest_s,
        search_queries=len(latencies),
        search_p50_ms=p50,
        search_p95_ms=p95,
        controller_p50_ms=c50,
        controller_p95_ms=c95,
    )
