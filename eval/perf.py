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
from datetime import datetime, timedelta
from pathlib import Path
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, Field
from rich.table import Table

from memory import heap
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
    first_tenth_events_per_s: float | None = None
    last_tenth_events_per_s: float | None = None
    packs: int | None = None
    pack_purity: float | None = None
    stream_events: int = 0
    stream_p50_ms: float | None = None
    stream_p95_ms: float | None = None
    asked_queries: int = 0
    asked_p50_ms: dict[str, float] = Field(default_factory=dict)
    asked_p95_ms: dict[str, float] = Field(default_factory=dict)
    """By system: each question asked by its household's member, at its own time (`Ask`)."""
    moment_turns: int | None = None
    moments_seconds: float | None = None
    """Built once on the first search after a write (`memory.moments`): timed apart, before
    the searches, as a served store builds them on its first question."""

    @property
    def slowdown(self) -> float | None:
        """How much slower the last tenth of the events went in than the first (1.0: flat)."""
        first, last = self.first_tenth_events_per_s, self.last_tenth_events_per_s
        return first / last if first and last else None

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
        if self.first_tenth_events_per_s is not None and self.slowdown is not None:
            table.add_row(
                "ingest events/s, first / last 10 % of the events (slowdown)",
                f"{self.first_tenth_events_per_s:,.1f} / {self.last_tenth_events_per_s:,.1f} "
                f"({self.slowdown:.2f}×)",
            )
        if self.packs is not None:
            purity = "-" if self.pack_purity is None else f"{self.pack_purity:.3f}"
            table.add_row("fused packs (purity by storyline episode)", f"{self.packs:,} ({purity})")
        if self.moment_turns is not None and self.moments_seconds is not None:
            table.add_row(
                "dialogue turns read with their moments (built once, before the searches)",
                f"{self.moment_turns:,} in {self.moments_seconds:.1f} s",
            )
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
        for system in self.asked_p50_ms:
            table.add_row(
                f"{system} as the asker, at the asking time, p50 / p95 ms "
                f"({self.asked_queries} questions)",
                f"{self.asked_p50_ms[system]:.1f} / {self.asked_p95_ms[system]:.1f}",
            )
        if self.stream_p50_ms is not None:
            table.add_row(
                f"streamed fused ingest p50 / p95 ms per event ({self.stream_events} events, "
                "one `ingest` call each)",
                f"{self.stream_p50_ms:.1f} / {self.stream_p95_ms:.1f}",
            )
        return table


class Ask(NamedTuple):
    """A question as its household's member asked it: their words, who, and when."""

    question: str
    user: str
    time: datetime


class HouseholdWeek(NamedTuple):
    """One household-week of the stream: its unlabelled events, its questions (also as
    asked: by whom and when, moved with the week), and the storyline episode of each
    storyline event (by id; what pack purity is measured by)."""

    events: list[Event]
    questions: list[str]
    episodes: dict[str, str]
    asks: list[Ask]


def household_weeks(n_events: int, seed: int = 13) -> Iterator[HouseholdWeek]:
    """One household-week at a time, `n_events` events in all.

    Week k is household kind k mod 6 drawn with seed `seed + k // 6`, its ids prefixed
    `w<k>_` and its times moved k weeks on; the generator's answer labels are stripped from
    the events (they are kept apart, in `episodes`)."""
    from eval.fusion_metrics import storyline_episode
    from eval.synth import build_one

    total, week = 0, 0
    while total < n_events:
        scenario, _ = build_one(week % HOUSEHOLD_KINDS, seed + week // HOUSEHOLD_KINDS)
        shift = timedelta(days=7 * week)
        kept = n_events - total
        events = [
            event.model_copy(
                update={
                    "event_id": f"w{week:05d}_{event.event_id}",
                    "timestamp": event.timestamp + shift,
                }
            )
            for event in scenario.memory_events(labels=False)[:kept]
        ]
        episodes = {
            f"w{week:05d}_{event.event_id}": episode
            for event in scenario.memory_events(labels=True)[:kept]
            if (episode := storyline_episode(event)) is not None
        }
        asks = [
            Ask(q.question, q.question_user, q.question_time + shift)
            for q in scenario.questions
            if q.question_user and q.question_time
        ]
        yield HouseholdWeek(events, [q.question for q in scenario.questions], episodes, asks)
        total += len(events)
        week += 1


def _tenths(batches: list[tuple[int, float]]) -> tuple[float, float] | None:
    """Events/s over the first and over the last tenth of the events ingested in `batches`
    ((events, seconds) in order; each tenth is whole batches, at least one)."""
    total = sum(n for n, _ in batches)

    def rate(ordered: list[tuple[int, float]]) -> float:
        events = seconds = 0.0
        for n, s in ordered:
            events, seconds = events + n, seconds + s
            if events >= total / 10:
                break
        return events / seconds if seconds else 0.0

    return (rate(batches), rate(batches[::-1])) if total else None


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
    stream: int = 0,
) -> PerfReport:
    """Ingest `n_events` in batches of about a fiftieth of them (so the first and the last
    tenth are timed apart), time searches and controller runs on the result, and with
    `stream` go on with that many more events, one `ingest` call each (a live household)."""
    from tqdm import tqdm

    from eval.fusion_metrics import pack_purity
    from graphs.retrieval.run import MEMFUSE, retrieve
    from memfuse.api import MemFuse
    from memory.retrieval import search
    from memory.search.config import MEMFUSE_DEFAULT
    from memory.settings import load_settings

    settings = load_settings(embedding_provider="hashing" if embedder == "hashing" else None)
    questions: list[str] = []
    asks: list[Ask] = []
    batches: list[tuple[int, float]] = []
    streamed: list[Event] = []
    episodes: dict[str, str] = {}
    weeks, last_time, seen = 0, None, 0
    batch = max(100, n_events // 50)
    if data_dir is not None:
        data_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        # a folder of its own, so the size on disk is this run's store and nothing else
        # (kept under `data_dir` for a look afterwards, removed with the temp dir otherwise)
        root = Path(tempfile.mkdtemp(prefix="bench-perf-", dir=data_dir)) if data_dir else Path(tmp)
        namespace = f"perf-{mode}-{embedder}-{n_events}"
        with MemFuse.open(root, namespace=namespace, settings=settings) as memory:
            with tqdm(total=n_events, unit="event", desc=f"{mode} ingest") as bar:
                for week in household_weeks(n_events + stream, seed):
                    bulk = week.events[: max(0, n_events - seen)]
                    streamed += week.events[len(bulk) :]
                    seen += len(week.events)
                    episodes.update(week.episodes)
                    for start in range(0, len(bulk), batch):
                        part = bulk[start : start + batch]
                        started = time.perf_counter()
                        memory.ingest(part, mode=mode)  # type: ignore[arg-type]
                        batches.append((len(part), time.perf_counter() - started))
                        bar.update(len(part))
                    if bulk:
                        questions += week.questions
                        asks += [a for a in week.asks if a.time <= bulk[-1].timestamp]
                        weeks += 1
                        last_time = bulk[-1].timestamp
            queries = random.Random(seed + 1).sample(questions, min(n_queries, len(questions)))
            memory.store.embed_queries(queries)  # warm the query embeddings like a cache would
            started = time.perf_counter()
            moment_turns = len(memory.store.moments())
            moments_seconds = time.perf_counter() - started
            heap.settle()  # as a served store is: no full collection scans what it loaded
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
            # as a household member asks, at the asking time: through their view of the memory
            # as it was then (the questions of early weeks read a short past of a long store)
            asked = random.Random(seed + 2).sample(asks, min(n_queries, len(asks)))
            memory.store.embed_queries([a.question for a in asked])
            as_asked: dict[str, list[float]] = {"hybrid": [], "memfuse": []}
            for ask in asked:
                for system, samples in as_asked.items():
                    t0 = time.perf_counter()
                    memory.search(ask.question, system=system, time=ask.time, user=ask.user)
                    samples.append((time.perf_counter() - t0) * 1000)
            packs = memory.store.all_fused() if mode == "fused" else []
            purity = pack_purity(packs, episodes) if mode == "fused" else None
            per_event: list[float] = []
            for event in tqdm(streamed, unit="event", desc=f"{mode} stream", disable=not streamed):
                t0 = time.perf_counter()
                memory.ingest([event], mode=mode)  # type: ignore[arg-type]
                per_event.append((time.perf_counter() - t0) * 1000)
        heap.thaw()
        store_bytes = _bytes_under(root)
    ingest_s = sum(seconds for _, seconds in batches)
    p50, p95 = _percentiles(latencies)
    c50, c95 = _percentiles(controller)
    s50, s95 = _percentiles(per_event) if per_event else (None, None)
    first, last = _tenths(batches) or (None, None)
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
        first_tenth_events_per_s=first,
        last_tenth_events_per_s=last,
        packs=len(packs) if mode == "fused" else None,
        pack_purity=purity,
        stream_events=len(per_event),
        stream_p50_ms=s50,
        stream_p95_ms=s95,
        asked_queries=len(asked),
        asked_p50_ms={s: _percentiles(v)[0] for s, v in as_asked.items() if v},
        asked_p95_ms={s: _percentiles(v)[1] for s, v in as_asked.items() if v},
        moment_turns=moment_turns,
        moments_seconds=moments_seconds,
    )
