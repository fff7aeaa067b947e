"""`memfuse optimize` end to end on a tiny generated benchmark (two scenarios, three questions
each), with a hashed bag-of-words embedder and a scripted OpenAI-compatible server."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import dspy
import pytest

from eval.optimize import DSPyOptions, OptimizeRequest, optimize
from eval.optimize.examples import QUESTION_INPUTS, question_examples
from eval.optimize.grid import PLANNER_AXES, combined_point, sweep_points
from eval.optimize.metrics import fusion_metric, purity, recall_metric
from eval.optimize.report import markdown_table
from eval.optimize.splits import Split, default_split, split_scenarios
from eval.synth import generate
from graphs.retrieval.run import ControllerOptions, retrieve
from memfuse.settings import MemFuseSettings
from memory.errors import ConfigurationError
from memory.formats.loader import load_dataset
from memory.formats.memfusebench_io import dump, validate
from memory.store import MemoryStore
from signatures import programs
from signatures.programs import load_policy, load_program, target_version
from tests.support.embedders import tiny_embedder
from tests.support.fake_openai import start_fake_openai


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`generate(2, seed=3)` cut to 3 questions per scenario (those needing the fewest events),
    their evidence and checklist events, and up to 25 other events within an hour of them."""
    bench = generate(2, seed=3)
    for scenario in bench.scenario_data:

        def needed(q: Any) -> set[str]:
            return set(q.evidence_event_ids).union(*(c.evidence_event_ids for c in q.checklist))

        chosen = sorted(scenario.questions, key=lambda q: (len(needed(q)), q.question_id))[:3]
        keep = set().union(*(needed(q) for q in chosen))
        events = [e for e in scenario.all_events() if e.source != "adversarial"]
        gold = [e for e in events if e.event_id in keep]
        lo = min(e.timestamp for e in gold) - timedelta(hours=1)
        hi = max(e.timestamp for e in gold) + timedelta(hours=1)
        others = [e for e in events if e.event_id not in keep and lo <= e.timestamp <= hi]
        keep |= {e.event_id for e in others[:25]}
        for episode in scenario.episodes:
            episode.events = [e for e in episode.events if e.event_id in keep]
        scenario.episodes = [ep for ep in scenario.episodes if ep.events]
        scenario.questions = chosen
    validate(bench)
    return dump(bench, tmp_path_factory.mktemp("bench") / "tiny.json")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in (
        "PROGRAMS_DIR",
        "PLANNER_PROGRAM",
        "JUDGE_PROGRAM",
        "PLANNER_POLICY",
        "FUSION_POLICY",
        "FUSION_PROGRAM",
        "LLM_MODEL",
    ):
        monkeypatch.delenv(f"MEMFUSE_{name}", raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    programs.environment_paths.cache_clear()
    with dspy.context(lm=None, adapter=None, trace=None):
        yield


def request(tiny: Path, tmp_path: Path, **kw: Any) -> OptimizeRequest:
    settings = kw.pop("settings", None) or MemFuseSettings(data_dir=tmp_path / "data")
    return OptimizeRequest(
        dataset=tiny,
        data_dir=tmp_path / "stores",
        settings=settings,
        embedder=tiny_embedder(),
        progress=False,
        **kw,
    )


# --- a scripted model for DSPy's chat prompts ---------------------------------------------------

_OUTPUTS = re.compile(
    r"Your output fields are:\n(.*?)\n(?:All interactions|In adhering)", re.DOTALL
)
_FIELD = re.compile(r"^\d+\. `(\w+)`", re.MULTILINE)
_INPUT = re.compile(r"\[\[ ## (\w+) ## \]\]\n(.*?)(?=\n\n\[\[ ## |\Z)", re.DOTALL)
INSTRUCTION = "Name every person, device and time of the question in the queries."


def scripted_reply(body: dict[str, Any]) -> str:
    """Answer any DSPy ChatAdapter prompt: a plan echoing the question for the planner, a
    sufficient judgement for the judge, a fixed sentence for anything an optimiser asks."""
    system = body["messages"][0]["content"]
    found = _OUTPUTS.search(system)
    names = _FIELD.findall(found.group(1)) if found else []
    asked = dict(_INPUT.findall(body["messages"][-1]["content"]))
    values: dict[str, str] = {}
    for name in names:
        if name == "plan" and "question" in asked:
            question = asked["question"].strip()
            values[name] = json.dumps({"focus": question, "bm25_query": question})
        elif name == "next_plan":
            values[name] = "null"
        elif name == "sufficient":
            values[name] = "True"
        elif name in ("coverage", "missing_facets", "selected_ids"):
            values[name] = "[]"
        elif name == "action":
            values[name] = "submit"
        elif name in ("query", "fused_id"):
            values[name] = ""
        elif name == "plan" and "current_event" in asked:
            values[name] = json.dumps(fusion_plan(asked))
        else:
            values[name] = INSTRUCTION
    return "\n\n".join(f"[[ ## {k} ## ]]\n{v}" for k, v in values.items()) + (
        "\n\n[[ ## completed ## ]]"
    )


def fusion_plan(asked: dict[str, str]) -> dict[str, Any]:
    """Fuse the new event with the latest event of the sliding window, or keep it atomic."""
    window = json.loads(asked.get("accumulation_zone") or "[]")
    if not window:
        return {"operations": [{"op": "no_op", "reason": "nothing before it"}]}
    return {
        "operations": [
            {
                "op": "create_fusion_node",
                "member_ids": [window[-1]["node_id"]],
                "summary": "Two consecutive observations of the household.",
                "reason": "adjacent",
            }
        ]
    }


def is_planner_request(body: dict[str, Any]) -> bool:
    return "`plan` (RoundPlan)" in body["messages"][0]["content"]


# --- splits, examples, metrics ---------------------------------------------------------------


def test_default_split_is_first_four_train_last_two_dev() -> None:
    ids = [f"S{i}" for i in range(1, 7)]
    assert default_split(ids) == Split(("S1", "S2", "S3", "S4"), ("S5", "S6"))
    assert default_split(["S1", "S2"]) == Split(("S1",), ("S2",))
    assert split_scenarios(ids, train="S1,S2", dev=None) == Split(("S1", "S2"), ("S5", "S6"))
    assert split_scenarios(ids, train=None, dev="S1") == Split(("S2", "S3", "S4", "S5"), ("S1",))


def test_overlapping_or_unknown_scenarios_are_refused() -> None:
    ids = [f"S{i}" for i in range(1, 7)]
    with pytest.raises(ConfigurationError, match=r"overlap \(S2\)"):
        split_scenarios(ids, train="S1,S2", dev="S2,S6")
    with pytest.raises(ConfigurationError, match="unknown scenario.*S9"):
        split_scenarios(ids, dev="S9")
    with pytest.raises(ConfigurationError, match="at least 2 scenarios"):
        default_split(["S1"])


def test_question_examples_keep_the_labels_out_of_the_inputs(tiny: Path) -> None:
    examples = question_examples(load_dataset(tiny), ["S1"], limit=2)
    assert len(examples) == 2
    assert set(examples[0].inputs().keys()) == set(QUESTION_INPUTS)
    assert examples[0].gold_ids and "gold_ids" not in examples[0].inputs()


def test_recall_metric_is_the_share_of_gold_in_the_context() -> None:
    example = dspy.Example(gold_ids=["a", "b", "c", "d"], category="causal")
    prediction = dspy.Prediction(event_ids=["a", "x", "c"], queries=["q1"])
    assert recall_metric(example, prediction) == 0.5
    graded = recall_metric(example, prediction, None, "planner.plan_round", None)
    assert graded.score == 0.5
    assert "2 of 4 gold evidence events found" in graded.feedback and "b | d" in graded.feedback


def test_fusion_metric_averages_purity_and_downstream_recall() -> None:
    labels = {"a": ("ep1", "s1"), "b": ("ep1", "s1"), "c": ("ep2", "s2"), "n": (None, None)}
    assert purity([["a", "b", "c"], ["c", "n"]], labels) == pytest.approx((2 / 3 + 1 / 2) / 2)
    example = dspy.Example(event_labels=labels, gold={"q1": ["a", "c"]})
    prediction = dspy.Prediction(fused_members=[["a", "b"]], retrieved={"q1": ["a"]})
    assert fusion_metric(example, prediction) == pytest.approx((1.0 + 0.5) / 2)
    assert (
        fusion_metric(
            dspy.Example(event_labels=labels, gold={}),
            dspy.Prediction(fused_members=[], retrieved={}),
        )
        == 0.0
    )


def test_the_sweep_varies_one_axis_at_a_time_and_combines_the_winners() -> None:
    points = sweep_points("planner", PLANNER_AXES)
    assert points[0] == {} and all(len(p) == 1 for p in points[1:])
    assert len(points) + 1 <= 12
    scored = [
        ({}, 0.5),
        ({"search.seed_pool": 20}, 0.6),
        ({"search.seed_pool": 45}, 0.7),
        ({"search.date_boost": 1.0}, 0.55),
        ({"planner.quota_default": 10}, 0.4),
    ]
    assert combined_point(PLANNER_AXES, scored, 0.5) == {
        "search.seed_pool": 45,
        "search.date_boost": 1.0,
    }
    assert combined_point(PLANNER_AXES, scored[:3], 0.5) is None  # one axis improved only


def test_report_renders_categories_parts_and_overall() -> None:
    card = {"score": 0.5, "by_category": {"causal": 0.25}, "parts": {"purity": 0.75}}
    manifest = {
        "target": "fusion",
        "optimizer": "grid",
        "k": 20,
        "scores": {
            "train": {"before": card, "after": card},
            "dev": {"before": card, "after": {**card, "score": 0.625}},
        },
    }
    assert markdown_table(manifest, ("dev",)).splitlines() == [
        "| category | dev before | dev after |",
        "|---|---|---|",
        "| causal | 0.250 | 0.250 |",
        "| part: purity | 0.750 | 0.750 |",
        "| **overall** | 0.500 | 0.625 |",
    ]


# --- grid (offline) ----------------------------------------------------------------------------


def test_planner_grid_finds_a_point_at_least_as_good_as_the_defaults(
    tiny: Path, tmp_path: Path
) -> None:
    out = tmp_path / "programs" / "planner_policy.json"
    result = optimize(request(tiny, tmp_path, target="planner", optimizer="grid", out=out))
    manifest = result.manifest
    assert manifest["train_scenarios"] == ["S1"] and manifest["dev_scenarios"] == ["S2"]
    assert 1 < len(manifest["grid"]) <= 12
    assert manifest["grid"][0]["point"] == {}
    train = manifest["scores"]["train"]
    assert train["after"]["score"] >= train["before"]["score"]
    assert train["before"]["score"] == manifest["grid"][0]["train"]
    assert train["after"]["score"] == max(g["train"] for g in manifest["grid"])
    assert manifest["dataset_sha256"] == hashlib.sha256(tiny.read_bytes()).hexdigest()
    assert manifest["library_versions"]["dspy"] == dspy.__version__
    assert set(manifest["scores"]["dev"]["before"]["by_category"]) <= {
        "causal",
        "fusion",
        "user_aggregation",
        "user_query",
        "conflict",
        "perspective",
    }
    update = manifest["defaults_update"]
    assert update["after"] == manifest["best"]
    assert update["before"] == {k: manifest["defaults"][k] for k in manifest["best"]}
    assert update["recommended"] == (manifest["beats_defaults"] and bool(manifest["best"]))
    policy = load_policy("planner", out)  # the saved best point loads as a policy
    assert policy.model_dump() == manifest["policy"]
    assert json.loads(result.manifest_path.read_text())["best"] == manifest["best"]


def test_fusion_grid_scores_purity_and_recall(tiny: Path, tmp_path: Path) -> None:
    axes = (PLANNER_AXES[0].__class__("policy.segment_gap_minutes", (60.0,)),)
    out = tmp_path / "fusion_policy.json"
    result = optimize(
        request(tiny, tmp_path, target="fusion", optimizer="grid", out=out, axes=axes)
    )
    grid = result.manifest["grid"]
    assert [g["point"] for g in grid] == [{}, {"policy.segment_gap_minutes": 60.0}]
    for entry in grid:
        parts = entry["parts"]
        assert entry["train"] == pytest.approx((parts["purity"] + parts["recall"]) / 2)
    assert result.manifest["scores"]["train"]["after"]["score"] >= grid[0]["train"]
    assert load_policy("fusion", out).model_dump() == result.manifest["policy"]


def test_grid_refuses_the_judge(tiny: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no thresholds to search"):
        optimize(request(tiny, tmp_path, target="judge", optimizer="grid"))


def test_dspy_optimizers_need_an_llm(tiny: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="--optimizer bootstrap needs an LLM"):
        optimize(request(tiny, tmp_path, target="planner", optimizer="bootstrap"))


# --- DSPy optimisers with a scripted model ------------------------------------------------


def llm_settings(
    tmp_path: Path, base_url: str, programs_dir: Path | None = None
) -> MemFuseSettings:
    return MemFuseSettings(
        data_dir=tmp_path / "data",
        llm_model="fake",
        llm_base_url=base_url,
        programs_dir=programs_dir,
    )


def run_loaded_planner(tiny: Path, tmp_path: Path, settings: MemFuseSettings) -> None:
    """One question through the controller (LLM policy) on a fresh store of scenario S2."""
    scenario = load_dataset(tiny).scenarios[1]
    store = MemoryStore.open(tmp_path / "check-store", embedder=tiny_embedder())
    try:
        store.add_events(scenario.events)
        question = scenario.questions[0]
        retrieve(
            store,
            question.question,
            question_time=question.time,
            requester=question.user,
            options=ControllerOptions(policy="llm", settings=settings),
        )
    finally:
        store.close()


def test_bootstrap_saves_a_program_whose_demos_reach_the_model(tiny: Path, tmp_path: Path) -> None:
    programs_dir = tmp_path / "programs"
    out = programs_dir / "plan_retrieval_round.json"
    with start_fake_openai(scripted_reply) as fake:
        settings = llm_settings(tmp_path, fake.base_url)
        result = optimize(
            request(
                tiny,
                tmp_path,
                target="planner",
                optimizer="bootstrap",
                out=out,
                settings=settings,
                dspy=DSPyOptions(max_demos=2, metric_threshold=0.3),
            )
        )
        manifest = result.manifest
        assert manifest["signature_version"] == target_version("planner")
        assert manifest["lm"] == "openai/fake" and manifest["demos"] == {"plan_round": 2}
        saved = load_program("planner", out)
        demo_questions = [d["question"] for d in saved.plan_round.demos]
        assert len(demo_questions) == 2

        fake.chat_requests.clear()
        run_loaded_planner(tiny, tmp_path, llm_settings(tmp_path, fake.base_url, programs_dir))
        planner_calls = [b for b in fake.chat_requests if is_planner_request(b)]
        assert len(planner_calls) == 1
        shown = "\n".join(m["content"] for m in planner_calls[0]["messages"][1:-1])
        assert all(q in shown for q in demo_questions)  # the demos are in the prompt

        fake.chat_requests.clear()
        run_loaded_planner(tiny, tmp_path, settings)  # no programs dir: the plain planner
        plain = [b for b in fake.chat_requests if is_planner_request(b)]
        assert len(plain[0]["messages"]) == 2


def test_mipro_saves_a_program_that_the_graph_uses(tiny: Path, tmp_path: Path) -> None:
    programs_dir = tmp_path / "programs"
    out = programs_dir / "judge_evidence.json"
    with start_fake_openai(scripted_reply) as fake:
        settings = llm_settings(tmp_path, fake.base_url)
        result = optimize(
            request(
                tiny,
                tmp_path,
                target="judge",
                optimizer="mipro",
                out=out,
                settings=settings,
                dspy=DSPyOptions(max_demos=1, num_candidates=2, num_trials=2, metric_threshold=0.3),
            )
        )
        assert result.manifest["signature_version"] == target_version("judge")
        assert set(result.manifest["scores"]) == {"train", "dev"}
        saved = load_program("judge", out)
        with dspy.context(trace=[]):
            run_loaded_planner(tiny, tmp_path, llm_settings(tmp_path, fake.base_url, programs_dir))
            used = {id(predictor) for predictor, _, _ in dspy.settings.trace}
    loaded = programs.program_for("judge", programs_dir)  # the cached instance the graph used
    assert id(loaded.judge) in used
    assert loaded.judge.signature.instructions == saved.judge.signature.instructions
    assert loaded.dump_state() == saved.dump_state()


def test_bootstrap_compiles_the_fusion_agent_and_ingest_uses_it(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "programs" / "fusion_agent.json"
    with start_fake_openai(scripted_reply) as fake:
        settings = llm_settings(tmp_path, fake.base_url)
        result = optimize(
            request(
                tiny,
                tmp_path,
                target="fusion",
                optimizer="bootstrap",
                out=out,
                settings=settings,
                limit=1,
                dspy=DSPyOptions(max_demos=1, metric_threshold=0.1),
            )
        )
        manifest = result.manifest
        assert manifest["signature_version"] == target_version("fusion")
        assert set(manifest["signature_versions"]) == {"choose", "propose"}
        assert manifest["scores"]["train"]["before"]["n"] == 1  # one episode slice of S1
        assert set(manifest["scores"]["train"]["before"]["parts"]) == {"purity", "recall"}
        saved = load_program("fusion", out)
        assert manifest["demos"] == {"choose": 1, "propose": 1}
        demo = saved.propose.demos[0]

        monkeypatch.setenv("MEMFUSE_FUSION_PROGRAM", str(out))
        programs.environment_paths.cache_clear()
        fake.chat_requests.clear()
        from graphs.fusion.context import FusionContext
        from graphs.fusion.ingest import ingest_events

        store = MemoryStore.open(tmp_path / "check", embedder=tiny_embedder())
        try:
            context = FusionContext(
                policy="llm",
                data_dir=str(tmp_path),
                namespace="default",
                llm_model="fake",
                llm_base_url=fake.base_url,
                llm_temperature=1.0,
                llm_max_tokens=512,
            )
            events = load_dataset(tiny).scenarios[1].events[:2]
            report = ingest_events(store, events, config=context, progress=False)
        finally:
            store.close()
    assert report.events == 2
    proposals = [
        b for b in fake.chat_requests if "`plan` (FusionPlan)" in b["messages"][0]["content"]
    ]
    assert proposals
    shown = "\n".join(m["content"] for m in proposals[0]["messages"][1:-1])
    assert demo["current_event"]["node_id"] in shown  # the compiled demo is in the prompt


def test_cli_reports_a_bad_request_in_one_line(
    tiny: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memfuse import cli

    monkeypatch.setattr(
        "sys.argv",
        [
            "memfuse",
            "optimize",
            "--target",
            "planner",
            "--optimizer",
            "grid",
            "--dataset",
            str(tiny),
            "--train-scenarios",
            "S1",
            "--dev-scenarios",
            "S1",
        ],
    )
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        "memfuse: error: train and dev scenarios overlap (S1); a scenario may be in one only"
    )


def test_a_limit_spreads_the_questions_over_the_categories() -> None:
    from datetime import datetime

    from eval.optimize.examples import spread_questions
    from memory.formats.models import BenchQuestion

    def q(qid: str, category: str, gold: list[str] | None = None) -> BenchQuestion:
        return BenchQuestion(
            question_id=qid,
            category=category,
            question="?",
            answer="a",
            evidence_ids=["e"] if gold is None else gold,
            time=datetime(2026, 5, 1),
        )

    questions = [
        q("c1", "causal"),
        q("c2", "causal"),
        q("c3", "causal"),
        q("f1", "fusion"),
        q("f2", "fusion", gold=[]),
        q("u1", "user_query"),
    ]
    assert [x.question_id for x in spread_questions(questions, 4)] == ["c1", "c2", "f1", "u1"]
    assert [x.question_id for x in spread_questions(questions, None)] == [
        "c1",
        "c2",
        "c3",
        "f1",
        "u1",
    ]
