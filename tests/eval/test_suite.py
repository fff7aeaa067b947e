"""`bench --suite` on tiny data: sources, caching, gaps to hybrid, reports and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eval import suite as suite_module
from eval.report import suite_markdown
from eval.suite import (
    DEFAULT_SCENARIOS,
    SuiteRequest,
    ensure_seed_file,
    run_suite,
    seed_file,
    source_gaps,
    verdict,
    with_reference,
)
from memfuse.settings import MemFuseSettings
from memory.formats.memfusebench_io import load
from tests.support.bench import LOCOMO, BagOfWordsEmbedder, write_tiny_bench


def _run(tmp_path: Path, **kwargs) -> suite_module.SuiteResults:
    defaults = {
        "systems": ["bm25"],
        "seeds": [],
        "locomo": [LOCOMO],
        "datasets": [write_tiny_bench(tmp_path / "tiny.json")],
        "dev_file": tmp_path / "no-such-dev.json",
        "conversation_dev": None,
        "k": 5,
        "out_dir": tmp_path / "out",
        "bench_dir": tmp_path / "data",
    }
    request = SuiteRequest(**{**defaults, **kwargs})
    return run_suite(
        request,
        settings=MemFuseSettings(),
        embedder=BagOfWordsEmbedder(),
        llm=False,
        progress=False,
    )


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> suite_module.SuiteResults:
    return _run(tmp_path_factory.mktemp("suite"))


def test_hybrid_is_added_and_the_missing_dev_file_is_a_note(ran):
    summary = ran.summary
    assert summary["systems"] == ["bm25", "hybrid"]
    assert [s["name"] for s in summary["sources"]] == ["locomo-locomo_small", "tiny"]
    assert any("no-such-dev.json does not exist" in note for note in summary["notes"])
    assert any("hybrid added" in note for note in summary["notes"])
    assert list(summary["gaps"]) == ["bm25"]  # no gap of hybrid to itself


def test_gap_table_is_the_difference_of_the_per_source_results(ran):
    gaps = ran.summary["gaps"]["bm25"]
    for source in ran.summary["sources"]:
        results = json.loads((Path(source["out_dir"]) / "results.json").read_text())
        bm25, hybrid = results["systems"]["bm25"], results["systems"]["hybrid"]
        mine = gaps[source["name"]]
        assert mine["overall"] == pytest.approx(
            bm25["overall"]["evidence_recall"] - hybrid["overall"]["evidence_recall"]
        )
        apart = set(hybrid["overall"].get("excluded_categories", []))
        expected = {
            c: bm25["by_category"][c]["evidence_recall"] - block["evidence_recall"]
            for c, block in hybrid["by_category"].items()
            if c not in apart and block["evidence_recall"] is not None
        }
        assert mine["by_category"] == pytest.approx(expected)
        assert mine["worst"] == pytest.approx(min(expected.values()))
        assert expected[mine["worst_category"]] == pytest.approx(mine["worst"])
        # per-source table: the same numbers as the source's own results.json
        assert source["systems"]["bm25"]["overall"] == bm25["overall"]["evidence_recall"]
    locomo = gaps["locomo-locomo_small"]
    assert "adversarial" not in locomo["by_category"]  # reported apart, as in Overall
    locomo_source = next(s for s in ran.summary["sources"] if s["name"].startswith("locomo"))
    assert locomo_source["apart"] == ["adversarial"]


def test_reports_are_written_and_agree(ran):
    assert json.loads(ran.json_path.read_text()) == ran.summary
    text = ran.markdown_path.read_text()
    assert text == suite_markdown(ran.summary)
    assert "## Worst-case gap to hybrid" in text and "| bm25 |" in text
    assert f"- **bm25**: {ran.summary['verdicts']['bm25']}" in text
    assert "adversarial (apart)" in text and "### tiny" in text
    for source in ("locomo-locomo_small", "tiny"):
        assert (ran.out_dir / source / "report.md").is_file()
    assert (ran.out_dir / "stores").is_dir()  # one store cache shared by every source


def test_dev_file_and_seed_files_are_sources_and_seeds_are_generated_once(tmp_path, monkeypatch):
    tiny = write_tiny_bench(tmp_path / "tiny.json")
    calls: list[int] = []

    def fake_synth(scenarios: int, seed: int, out: Path, person_blind: bool = False) -> None:
        calls.append(seed)
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_tiny_bench(Path(out))

    monkeypatch.setattr("eval.synth.synth_command", fake_synth)
    data = tmp_path / "data"
    path = ensure_seed_file(data, 11, DEFAULT_SCENARIOS, suite_module.Console(quiet=True))
    assert path == seed_file(data, 11) == data / "memfusebench-seed11-realistic.json"
    assert seed_file(data, 11, 1) == data / "memfusebench-seed11-realistic-1sc.json"
    # seed 7 is cached already, with one person-blind event (a thermostat) tagged
    raw = json.loads(tiny.read_text())
    for event in raw["scenario_data"][0]["episodes"][0]["events"]:
        if event["device"] == "thermostat":
            event["characters"] = ["David"]
    seed_file(data, 7).write_text(json.dumps(raw))

    result = _run(tmp_path, seeds=[7, 11], person_blind=True, dev_file=tiny, locomo=[], datasets=[])
    assert calls == [11]  # seed 11 generated once, seed 7 taken from its file
    names = [s["name"] for s in result.summary["sources"]]
    assert names == ["seed7", "seed11", "seed7-person-blind", "dev"]
    assert not any("dev household skipped" in n for n in result.summary["notes"])
    assert "hybrid added" in result.summary["notes"][0]
    blind = load(data / "memfusebench-seed7-realistic-person-blind.json")
    tags = {e.event_id: e.characters for e in blind.scenario_data[0].all_events()}
    assert tags["e04"] == [] and tags["e10"] == []
    assert tags["e01"] == ["David"] and tags["e02"] == ["David"]  # a watch and a camera


def test_source_gaps_worst_category_ties_and_unmeasurable():
    table = {
        "categories": ["a", "b", "c", "d"],
        "apart": ["d"],
        "systems": {
            "hybrid": {"overall": 0.5, "by_category": {"a": 0.5, "b": 0.4, "c": None, "d": 0.9}},
            "x": {"overall": 0.6, "by_category": {"a": 0.3, "b": 0.2, "c": 0.1, "d": 0.0}},
        },
    }
    gaps = source_gaps(table, "x")
    assert gaps["by_category"] == pytest.approx({"a": -0.2, "b": -0.2})  # c unmeasurable, d apart
    assert gaps["worst_category"] == "a" and gaps["worst"] == pytest.approx(-0.2)
    assert gaps["overall"] == pytest.approx(0.1)
    line = verdict({"s1": gaps})
    assert line.startswith("below hybrid on s1/a by 0.200") and "s1/overall" not in line
    even = {"overall": 0.0, "by_category": {"a": 0.0}, "worst_category": "a", "worst": 0.0}
    assert verdict({"s1": even, "s2": even}) == "never below hybrid"


def test_with_reference_adds_hybrid_once():
    assert with_reference(["bm25", " memfuse", "bm25"]) == ["bm25", "memfuse", "hybrid"]
    assert with_reference(["hybrid", "bm25"]) == ["hybrid", "bm25"]


def test_cli_suite_parses_options_into_a_request(tmp_path, monkeypatch):
    from eval.cli import app

    seen: list[SuiteRequest] = []

    def fake_run_suite(request, **kwargs):
        seen.append(request)
        summary = {
            "k": request.k, "limit": None, "reference": "hybrid", "systems": ["bm25", "hybrid"],
            "held_out_seed": 11, "sources": [], "gaps": {}, "verdicts": {}, "notes": [],
        }  # fmt: skip
        return suite_module.SuiteResults(summary=summary, out_dir=Path(request.out_dir))

    monkeypatch.setattr(suite_module, "run_suite", fake_run_suite)
    args = [
        "bench", "--suite", "--systems", "bm25", "--seeds", "7, 23", "--locomo", "a.json",
        "--locomo", "b.json", "--limit", "3", "--out", str(tmp_path / "o"), "--person-blind",
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    (request,) = seen
    assert list(request.systems) == ["bm25"] and list(request.seeds) == [7, 23]
    assert [str(p) for p in request.locomo] == ["a.json", "b.json"]
    assert request.limit == 3 and request.person_blind and request.datasets == []
    assert request.dev_file == suite_module.DEV_FILE
    assert request.data_dir == tmp_path / "o" / "stores"

    plain = CliRunner().invoke(app, ["bench", "--systems", "bm25"])
    assert plain.exit_code != 0 and "--dataset is required" in str(plain.exception)
