"""`memfuse bench-perf`: the household-week stream it ingests, and a small run end to end.

Only what the report must hold is asserted (counts, sizes, that every figure was measured);
its timings are for closing notes, never for tests."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

from eval.perf import household_weeks, run_perf


def test_household_weeks_lay_distinct_households_end_to_end():
    batches = list(household_weeks(3_000, seed=5))
    events = [e for batch, _ in batches for e in batch]
    assert len(events) == 3_000 and len(batches) == 3
    assert len({e.event_id for e in events}) == len(events)
    for (earlier, _), (later, _) in pairwise(batches):
        assert max(e.timestamp for e in earlier) < min(e.timestamp for e in later)
        assert later[0].event_id.split("_")[0] != earlier[0].event_id.split("_")[0]
    assert all(questions for _, questions in batches)
    assert not any(e.source.value != "user" or e.episode_id for e in events)  # labels stripped
    # not one template repeated: the stream has the vocabulary of the synthesis stages
    assert len({e.description for e in events}) > 0.95 * len(events)


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
