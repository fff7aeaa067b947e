"""`bench --suite` on tiny data: sources, caching, gaps to the best baseline, ablation margins,
reports and the CLI."""

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
        "systems": ["memfuse", "memfuse_no_ar", "bm25"],
        "seeds": [],
        "locomo": [LOCOMO],
        "datasets": [write_tiny_bench(tmp_path / "tiny.json")],
        "dev_files": [tmp_path / "no-such-dev.json"],
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


def test_missing_baselines_are_added_and_the_missing_dev_file_is_a_note(ran):
    summary = ran.summary
    assert summary["systems"] == ["memfuse", "memfuse_no_ar", "bm25", "naive_rag", "hybrid"]
    assert [s["name"] for s in summary["sources"]] == ["locomo-locomo_small", "tiny"]
    assert any("no-such-dev.json does not exist" in note for note in summary["notes"])
    assert any("naive_rag, hybrid added" in note for note in summary["notes"])
    assert list(summary["gaps"]) == ["memfuse", "memfuse_no_ar"]  # no gap of a baseline


def _recall(block: dict, category: str | None = None) -> float | None:
    if category is None:
        return block["overall"]["evidence_recall"]
    return block["by_category"].get(category, {}).get("evidence_recall")


def test_gaps_are_to_the_best_baseline_overall_and_in_each_category(ran):
    baselines = ("naive_rag", "bm25", "hybrid")
    for source in ran.summary["sources"]:
        results = json.loads((Path(source["out_dir"]) / "results.json").read_text())
        systems = results["systems"]
        apart = set(systems["hybrid"]["overall"].get("excluded_categories", []))
        best_overall = max(_recall(systems[b]) for b in baselines)
        assert source["best_baseline"]["overall"]["recall"] == pytest.approx(best_overall)
        mine = ran.summary["gaps"]["memfuse"][source["name"]]
        assert mine["overall"] == pytest.approx(_recall(systems["memfuse"]) - best_overall)
        expected = {}
        for cat in systems["hybrid"]["by_category"]:
            refs = [_recall(systems[b], cat) for b in baselines]
            refs = [r for r in refs if r is not None]
            if cat in apart or not refs:
                continue
            expected[cat] = _recall(systems["memfuse"], cat) - max(refs)
            best = source["best_baseline"]["by_category"][cat]
            assert _recall(systems[best["system"]], cat) == pytest.approx(max(refs))
        assert mine["by_category"] == pytest.approx(expected)
        assert mine["worst"] == pytest.approx(min(expected.values()))
        assert expected[mine["worst_category"]] == pytest.approx(mine["worst"])
        # what the agent adds: memfuse minus its no-agent ablation, on the same questions
        margin = source["ablation_margins"]["memfuse_no_ar"]
        assert list(source["ablation_margins"]) == ["memfuse_no_ar"]
        assert margin["overall"] == pytest.approx(
            _recall(systems["memfuse"]) - _recall(systems["memfuse_no_ar"])
        )
        # per-source table: the same numbers as the source's own results.json
        assert source["systems"]["bm25"]["overall"] == _recall(systems["bm25"])
        # what the agent changes, question by question, on the questions in Overall
        change = source["context_changes"]["memfuse_no_ar"]
        assert change == results["context_changes"]["memfuse_no_ar"]
        assert change["questions"] == source["n_questions"]
        # and what found what its later rounds let in, as the source's results.json says
        assert source["later_finds"] == results["later_finds"]
    gaps = ran.summary["gaps"]["memfuse"]
    assert "adversarial" not in gaps["locomo-locomo_small"]["by_category"]  # apart, as Overall
    locomo_source = next(s for s in ran.summary["sources"] if s["name"].startswith("locomo"))
    assert locomo_source["apart"] == ["adversarial"]


def test_reports_are_written_and_agree(ran):
    assert json.loads(ran.json_path.read_text()) == ran.summary
    text = ran.markdown_path.read_text()
    assert text == suite_markdown(ran.summary)
    assert "## Worst-case gap to the best baseline" in text and "| memfuse |" in text
    assert f"- **memfuse**: {ran.summary['verdicts']['memfuse']}" in text
    assert "### Against the best baseline" in text and "memfuse − memfuse_no_ar" in text
    report = (ran.out_dir / "tiny" / "report.md").read_text()
    assert "## Against the best baseline" in report and "## What each part adds" in report
    assert "## What each part changes" in report and "### What each part changes" in text
    assert "adversarial (apart)" in text and "### tiny" in text
    # every system's latency per source, searched and from text, p95 against hybrid's
    assert "## Latency" in text and "### From text" in text
    tiny = next(s for s in ran.summary["sources"] if s["name"] == "tiny")
    hybrid, memfuse = tiny["latency"]["hybrid"], tiny["latency"]["memfuse"]
    assert set(memfuse) == set(suite_module.LATENCY_KEYS)
    assert memfuse["from_text_p95_ms"] >= memfuse["search_p95_ms"] > 0
    ratio = memfuse["search_p95_ms"] / hybrid["search_p95_ms"]
    assert f"({ratio:.1f}×)" in text.split("## Latency")[1]
    # the fused store's packs against the labels, one row for the systems sharing it
    results = json.loads((Path(tiny["out_dir"]) / "results.json").read_text())
    memfuse_overall = results["systems"]["memfuse"]["overall"]
    assert list(tiny["fusion"]) == ["memfuse, memfuse_no_ar"]
    figures = tiny["fusion"]["memfuse, memfuse_no_ar"]
    assert figures["fused_nodes"] == memfuse_overall["fused_nodes"] > 0
    assert figures["labelled_purity"] == memfuse_overall["labelled_purity"]
    assert "#### Fusion" not in text and "### Fusion" in text.split("### tiny")[1]
    for source in ("locomo-locomo_small", "tiny"):
        assert (ran.out_dir / source / "report.md").is_file()
    assert (ran.out_dir / "stores").is_dir()  # one store cache shared by every source


def test_dev_file_and_seed_files_are_sources_and_seeds_are_generated_once(tmp_path, monkeypatch):
    tiny = write_tiny_bench(tmp_path / "tiny.json")
    calls: list[int] = []

    def fake_synth(scenarios: int, seed: int, out: Path, **_: object) -> None:
        calls.append(seed)
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_tiny_bench(Path(out))

    monkeypatch.setattr("eval.synth.command.synth_command", fake_synth)
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

    result = _run(
        tmp_path, systems=["bm25"], seeds=[7, 11], person_blind=True, dev_files=[tiny],
        locomo=[], datasets=[],
    )  # fmt: skip
    assert calls == [11]  # seed 11 generated once, seed 7 taken from its file
    names = [s["name"] for s in result.summary["sources"]]
    assert names == ["seed7", "seed11", "seed7-person-blind", "tiny"]
    assert not any("dev household skipped" in n for n in result.summary["notes"])
    assert "naive_rag, hybrid added" in result.summary["notes"][0]
    blind = load(data / "memfusebench-seed7-realistic-person-blind.json")
    tags = {e.event_id: e.characters for e in blind.scenario_data[0].all_events()}
    assert tags["e04"] == [] and tags["e10"] == []
    assert tags["e01"] == ["David"] and tags["e02"] == ["David"]  # a watch and a camera


def test_source_gaps_take_the_best_baseline_per_category_and_skip_unmeasurable():
    table = {
        "categories": ["a", "b", "c", "d"],
        "apart": ["d"],
        "systems": {
            "hybrid": {"overall": 0.5, "by_category": {"a": 0.5, "b": 0.4, "c": None, "d": 0.9}},
            "naive_rag": {"overall": 0.4, "by_category": {"a": 0.2, "b": 0.6, "c": None, "d": 0.1}},
            "x": {"overall": 0.6, "by_category": {"a": 0.3, "b": 0.2, "c": 0.1, "d": 0.0}},
        },
    }
    gaps = source_gaps(table, "x")
    # a against hybrid, b against naive_rag; c unmeasurable, d apart
    assert gaps["by_category"] == pytest.approx({"a": -0.2, "b": -0.4})
    assert gaps["worst_category"] == "b" and gaps["worst"] == pytest.approx(-0.4)
    assert gaps["overall"] == pytest.approx(0.1)  # against hybrid, the best overall
    line = verdict({"s1": gaps})
    assert line.startswith("below the best baseline on s1/b by 0.400") and "s1/overall" not in line
    even = {"overall": 0.0, "by_category": {"a": 0.0}, "worst_category": "a", "worst": 0.0}
    assert verdict({"s1": even, "s2": even}) == "never below the best baseline"


def test_with_reference_adds_every_missing_baseline_once():
    assert with_reference(["bm25", " memfuse", "bm25"]) == [
        "bm25",
        "memfuse",
        "naive_rag",
        "hybrid",
    ]
    assert with_reference(["hybrid", "naive_rag", "bm25"]) == ["hybrid", "naive_rag", "bm25"]


def test_cli_suite_parses_options_into_a_request(tmp_path, monkeypatch):
    from eval.cli import app

    seen: list[SuiteRequest] = []

    def fake_run_suite(request, **kwargs):
        seen.append(request)
        summary = {
            "k": request.k, "limit": None, "reference": "best baseline", "systems": ["bm25"],
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
    assert list(request.dev_files) == list(suite_module.DEV_FILES)
    assert [str(p) for p in request.locomo] == ["a.json", "b.json"]
    assert request.limit == 3 and request.person_blind and request.datasets == []
    assert request.data_dir == tmp_path / "o" / "stores"

    args = ["bench", "--suite", "--dev-file", "h1.json", "--dev-file", "h2.json", "--seeds", ""]
    assert CliRunner().invoke(app, args).exit_code == 0
    request = seen[-1]
    assert list(request.systems) == list(suite_module.DEFAULT_SYSTEMS)  # ablations included
    assert "memfuse_no_ar" in request.systems and "memfuse_no_fusion" in request.systems
    assert [str(p) for p in request.dev_files] == ["h1.json", "h2.json"]

    plain = CliRunner().invoke(app, ["bench", "--systems", "bm25"])
    assert plain.exit_code == 2 and "--dataset is required" in plain.output  # a usage error
