"""`memfuse bench-perf`: the household-week stream it ingests, and a small run end to end.

Only what the report must hold is asserted (counts, sizes, that every figure was measured);
its timings are for closing notes, never for tests."""

from __future__ import annotations

from datetime import timedelta
from itertools import pairwise
from pathlib import Path

from rich.console import Console

from eval.perf import _tenths, household_weeks, run_perf


def test_household_weeks_lay_distinct_households_end_to_end():
    batches = list(household_weeks(3_000, seed=5))
    events = [e for week in batches for e in week.events]
    assert len(events) == 3_000 and len(batches) == 3
    assert len({e.event_id for e in events}) == len(events)
    for earlier, later in pairwise(week.events for week in batches):
        assert max(e.timestamp for e in earlier) < min(e.timestamp for e in later)
        assert later[0].event_id.split("_")[0] != earlier[0].event_id.split("_")[0]
    assert all(week.questions for week in batches)
    assert not any(e.source.value != "user" or e.episode_id for e in events)  # labels stripped
    # not one template repeated: the stream has the vocabulary of the synthesis stages
    assert len({e.description for e in events}) > 0.95 * len(events)
    # the storyline episodes are kept apart, by the ids the stream's events carry
    ids = {e.event_id for e in events}
    for week in batches:
        assert week.episodes and set(week.episodes) <= {e.event_id for e in week.events}
    assert len({episode for week in batches for episode in week.episodes.values()}) > 3
    assert set().union(*(week.episodes for week in batches)) <= ids
    # the questions as asked: by a member of that household, in or just after its week
    for week in batches:
        people = {p for e in week.events for p in e.characters}
        assert week.asks and {a.question for a in week.asks} <= set(week.questions)
        assert {a.user for a in week.asks} <= people
        first = min(e.timestamp for e in week.events)
        assert all(first <= a.time <= first + timedelta(days=9) for a in week.asks)


def test_the_first_and_last_tenth_are_timed_apart():
    # 10 batches of 100 events: the first at 100 events/s, the last at 20, the rest at 50
    batches = [(100, 1.0)] + [(100, 2.0)] * 8 + [(100, 5.0)]
    assert _tenths(batches) == (100.0, 20.0)
    # a tenth spans whole batches: 30 events of 200 need two batches of 10 and 25
    assert _tenths([(10, 1.0), (25, 1.0), (165, 1.0)]) == (17.5, 165.0)
    assert _tenths([]) is None


def test_a_small_run_reports_every_figure(tmp_path: Path):
    report = run_perf(
        n_events=1_500, n_queries=12, mode="plain", data_dir=tmp_path / "new", embedder="hashing"
    )
    (run,) = (tmp_path / "new").iterdir()  # a folder of its own, kept for a look
    assert run.name.startswith("bench-perf-") and any(run.iterdir())
    assert report.events == 1_500 and report.households == 2
    assert report.embedder == "hashing (no model)"
    assert report.store_bytes > 1_000_000 and report.peak_rss_bytes > 50 * 2**20
    assert report.search_queries == 12 and report.controller_queries == 10
    assert 0 < report.search_p50_ms <= report.search_p95_ms
    assert report.controller_p50_ms is not None and report.controller_p95_ms is not None
    assert 0 < report.controller_p50_ms <= report.controller_p95_ms
    assert "1,500 events (2 household-weeks)" in str(report.render().title)
    assert report.first_tenth_events_per_s and report.last_tenth_events_per_s
    assert report.packs is None and report.stream_events == 0  # plain, nothing streamed
    # asked as the household's members, at their own times: a figure for each system
    assert report.asked_queries == 12
    assert set(report.asked_p50_ms) == set(report.asked_p95_ms) == {"hybrid", "memfuse"}
    for system, p50 in report.asked_p50_ms.items():
        assert 0 < p50 <= report.asked_p95_ms[system]
    out = Console(record=True, width=200)
    out.print(report.render())
    assert "memfuse as the asker, at the asking time, p50 / p95 ms (12 questions)" in (
        out.export_text()
    )


def test_a_small_fused_run_reports_packs_purity_and_streamed_latency(tmp_path: Path):
    report = run_perf(
        n_events=400, n_queries=10, mode="fused", data_dir=tmp_path, embedder="hashing", stream=15
    )
    assert report.events == 400 and report.mode == "fused"
    assert report.packs and report.packs > 0
    assert report.pack_purity is not None and 0.0 < report.pack_purity <= 1.0
    assert report.stream_events == 15
    assert report.stream_p50_ms is not None and report.stream_p95_ms is not None
    assert 0 < report.stream_p50_ms <= report.stream_p95_ms
    assert report.slowdown is not None and report.slowdown > 0
    out = Console(record=True, width=200)
    out.print(report.render())
    text = out.export_text()
    assert "streamed fused ingest p50 / p95 ms per event (15 events" in text
    assert "fused packs (purity by storyline episode)" in text and "first / last 10 %" in text


def test_hashing_embedder_is_a_deterministic_unit_vector_of_words():
    from memory.embeddings import EmbeddingConfig, HashingEmbedder, make_embedder

    embedder = make_embedder(EmbeddingConfig(provider="hashing"), Path("/nonexistent/cache"))
    assert isinstance(embedder, HashingEmbedder)  # never behind the cache: it is cheaper
    a, b, c = embedder.embed(["Ana's watch logged a run", "a run logged by Ana's watch", "rain"])
    assert embedder.dim == 384 and embedder.model_id == "hashing:384"
    assert abs(float(a @ a) - 1.0) < 1e-6
    assert float(a @ b) > 0.9
    assert abs(float(a @ c)) < 0.2
    assert (embedder.embed(["rain"])[0] == c).all()
