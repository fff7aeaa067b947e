"""`run_bench` end to end on tiny datasets: outputs, cache reuse, LoCoMo handling, LLM scores."""

from __future__ import annotations

import json
import re

import pytest

from eval import systems as systems_module
from eval.bench import run_bench
from eval.metrics import count_tokens
from eval.systems import IngestMode, plain_ingest
from graphs.llm import RetryPolicy
from memfuse.settings import MemFuseSettings
from memory.formats.loader import load_dataset
from tests.support.bench import LOCOMO, BagOfWordsEmbedder, write_tiny_bench
from tests.support.fake_openai import start_fake_openai

BASELINES = ["naive_rag", "bm25", "hybrid", "long_context"]
REQUIRED = {
    "n_questions",
    "evidence_recall",
    "full_evidence_rate",
    "checklist_coverage",
    "context_tokens",
    "search_p50_ms",
    "search_p95_ms",
    "ingest_seconds",
}


@pytest.fixture
def counting_plain(monkeypatch):
    """Replace the plain ingestor by a counting wrapper (registry entries are one line)."""
    calls: list[int] = []

    def ingest(store, events, progress):
        calls.append(len(events))
        return plain_ingest(store, events, progress)

    monkeypatch.setitem(systems_module.INGESTORS, "plain", IngestMode("plain", ingest, "plain-v1"))
    return calls


def _bench(dataset, tmp_path, **kwargs):
    defaults = {
        "systems": BASELINES,
        "k": 5,
        "out_dir": tmp_path / "out",
        "data_dir": tmp_path / "stores",
        "progress": False,
        "llm": False,
        "settings": MemFuseSettings(),
        "embedder": BagOfWordsEmbedder(),
    }
    return run_bench(dataset, **{**defaults, **kwargs})


def test_memfusebench_end_to_end_then_cached(tmp_path, counting_plain):
    dataset = write_tiny_bench(tmp_path / "tiny.json")
    first = _bench(dataset, tmp_path)
    assert counting_plain == [12] and first.ingests_run == 1  # one shared plain store

    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert set(results) == {
        "dataset",
        "k",
        "systems",
        "context_changes",
        "later_finds",
        "missing_evidence",
    }
    assert results["context_changes"] == {}  # memfuse did not run: nothing to compare with
    assert results["later_finds"] == {}
    assert results["missing_evidence"] == {}  # no system with rounds: no pool to split by
    assert results["dataset"] == str(dataset) and results["k"] == 5
    assert list(results["systems"]) == BASELINES
    for block in results["systems"].values():
        assert set(block) == {"overall", "by_category"}
        assert REQUIRED <= set(block["overall"])
        assert list(block["by_category"]) == ["causal", "fusion", "user_query", "conflict"]
        for category in block["by_category"].values():
            assert REQUIRED <= set(category) and category["n_questions"] == 1
        assert block["overall"]["n_questions"] == 4
        assert "checklist_score" not in block["overall"]  # no LLM configured

    long_context = results["systems"]["long_context"]["overall"]
    assert long_context["evidence_recall"] == 1.0
    assert long_context["full_evidence_rate"] == 1.0
    # q4's third checklist item has no evidence, so it can never be covered: (1+1+1+2/3)/4
    assert long_context["checklist_coverage"] == pytest.approx((3 + 2 / 3) / 4)
    assert long_context["ingest_seconds"] == 0.0
    all_lines = [e.serialize() for e in load_dataset(dataset).scenarios[0].events]
    assert long_context["context_tokens"] == count_tokens("\n".join(all_lines))

    bm25_q3 = results["systems"]["bm25"]["by_category"]["user_query"]
    assert bm25_q3["evidence_recall"] == 1.0  # both "heart rate … asleep" events match lexically
    plain_seconds = results["systems"]["bm25"]["overall"]["ingest_seconds"]
    assert plain_seconds > 0
    assert results["systems"]["naive_rag"]["overall"]["ingest_seconds"] == plain_seconds

    records = [json.loads(line) for line in (tmp_path / "out" / "questions.jsonl").open()]
    assert len(records) == 4 * 4
    hybrid_q1 = next(r for r in records if r["system"] == "hybrid" and r["question_id"] == "q1")
    assert hybrid_q1["gold_ids"] == ["e05", "e08"] and len(hybrid_q1["retrieved_ids"]) <= 5
    assert hybrid_q1["recall"] == len({"e05", "e08"} & set(hybrid_q1["retrieved_ids"])) / 2

    assert (tmp_path / "out" / "recall_by_category.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = (tmp_path / "out" / "report.md").read_text()
    assert "only retrieval metrics are reported" in report
    assert "| long_context |" in report and "causal" in report

    # e12 was written to mislead q1: long_context holds it, so q1 is counted as fooled
    assert long_context["distractor_questions"] == 1
    assert long_context["fooled_rate"] == 1.0 and long_context["distractor_recall"] == 1.0
    lc_q1 = next(r for r in records if r["system"] == "long_context" and r["question_id"] == "q1")
    assert lc_q1["distractors_retrieved"] == ["e12"]
    for name, block in results["systems"].items():
        fooled = next(r for r in records if r["system"] == name and r["question_id"] == "q1")
        held = "e12" in fooled["retrieved_ids"]
        assert block["overall"]["fooled_rate"] == float(held)
        assert block["by_category"]["causal"]["distractors_retrieved"] == float(held)
        assert "distractor_questions" not in block["by_category"]["fusion"]
    assert "## Distractors in the context" in report
    assert re.search(r"\| long_context \| 1 \| 1\.000 \| 1\.000 \| 1\.000 \|", report)

    second = _bench(dataset, tmp_path, out_dir=tmp_path / "out2")
    assert counting_plain == [12] and second.ingests_run == 0  # the cached store was reused
    again = second.results["systems"]["bm25"]["overall"]
    assert again["ingest_seconds"] == plain_seconds  # from the run that built it
    assert again["evidence_recall"] == results["systems"]["bm25"]["overall"]["evidence_recall"]


def test_locomo_keeps_adversarial_apart(tmp_path):
    bench = _bench(LOCOMO, tmp_path, systems=["bm25", "long_context"])
    for block in bench.results["systems"].values():
        overall, by_category = block["overall"], block["by_category"]
        assert overall["n_questions"] == 9  # 11 questions minus 2 adversarial
        assert overall["excluded_categories"] == ["adversarial"]
        assert by_category["adversarial"]["n_questions"] == 2
        assert by_category["single_hop"]["n_questions"] == 3
        assert overall["checklist_coverage"] is None  # LoCoMo has no checklists
    assert bench.results["systems"]["long_context"]["overall"]["evidence_recall"] == 1.0
    assert any("dropped 1 evidence" in note for note in bench.notes)


def test_limit_with_fake_llm_produces_checklist_scores(tmp_path):
    def script(request):
        system = request["messages"][0]["content"]
        if "grader" not in system:
            return "Rex cut his paw; Lucy called the vet."
        user = request["messages"][1]["content"]
        items = re.findall(r"^(\d+)\. ", user.split("Key points:")[1], flags=re.MULTILINE)
        # only the first key point is covered
        return json.dumps(
            [{"index": int(i), "point": "p", "covered": i == "1", "reason": "r"} for i in items]
        )

    dataset = write_tiny_bench(tmp_path / "tiny.json")
    with start_fake_openai(script) as fake:
        settings = MemFuseSettings(llm_model="fake-model", llm_base_url=fake.base_url)
        bench = _bench(
            dataset,
            tmp_path,
            systems=["bm25"],
            limit=3,
            llm=settings,
            retry=RetryPolicy(base_delay=0.0),
        )
    overall = bench.results["systems"]["bm25"]["overall"]
    assert overall["n_questions"] == 3
    # first three questions have 2, 2 and 1 checklist items: (1/2 + 1/2 + 1) / 3
    assert overall["checklist_score"] == pytest.approx(2 / 3)
    assert overall["unscorable"] == 0
    assert bench.results["systems"]["bm25"]["by_category"]["user_query"]["checklist_score"] == 1.0
    assert len(fake.chat_requests) == 6  # one reader + one judge call per question
    assert "only retrieval metrics" not in bench.report_path.read_text()
    assert "Checklist score by category" in bench.report_path.read_text()


def test_unscorable_question_withholds_the_aggregate(tmp_path):
    def script(request):
        if "grader" not in request["messages"][0]["content"]:
            return "An answer."
        return "I refuse to answer in JSON."

    dataset = write_tiny_bench(tmp_path / "tiny.json")
    with start_fake_openai(script) as fake:
        settings = MemFuseSettings(llm_model="fake-model", llm_base_url=fake.base_url)
        bench = _bench(dataset, tmp_path, systems=["bm25"], limit=1, llm=settings)
    overall = bench.results["systems"]["bm25"]["overall"]
    assert overall["checklist_score"] is None
    assert overall["checklist_score_note"] == "withheld: 1 question(s) unscorable"
    record = json.loads(bench.questions_path.read_text().splitlines()[0])
    assert record["unscorable"] is True and "malformed verdict" in record["error"]


def test_system_registry_and_helpers(monkeypatch):
    from datetime import datetime

    from eval.systems import SYSTEMS, ranked_event_ids, resolve_systems
    from memory.errors import ConfigurationError
    from memory.models import Event
    from memory.records import ContextEntry
    from memory.search.config import HYBRID_RRF

    assert set(SYSTEMS) >= {"naive_rag", "bm25", "hybrid", "memfuse", "long_context"}
    with pytest.raises(ConfigurationError, match="unknown system 'nope'"):
        resolve_systems(["bm25", "nope"])
    assert "memfuse" in [s.name for s in resolve_systems(None)]
    monkeypatch.delitem(systems_module.INGESTORS, "fused")  # as if the mode were not registered
    with pytest.raises(ConfigurationError, match="needs ingest mode 'fused'"):
        resolve_systems(["memfuse"])
    assert "memfuse" not in [s.name for s in resolve_systems(None)]
    monkeypatch.undo()

    recipe = HYBRID_RRF.sized(7)
    assert recipe.top_k == 7 and recipe.context.entries == 7 and recipe.name == "hybrid"

    def entry(eid, hour):
        event = Event(
            event_id=eid,
            timestamp=datetime(2024, 1, 1, hour),
            device="d",
            modality="motion",
            description=f"event {eid}",
        )
        return ContextEntry.for_event(event, 0.0, "seed")

    context = [entry("a", 1), entry("b", 2), entry("c", 3), entry("b", 2)]
    # rank order first, unranked (e.g. fused members) after, deduplicated, cut at k
    assert ranked_event_ids(context, ["c", "a"], k=10) == ["c", "a", "b"]
    assert ranked_event_ids(context, ["c", "a"], k=2) == ["c", "a"]


def test_registered_ingest_mode_adds_its_metrics_and_interrupted_stores_are_rebuilt(
    tmp_path, monkeypatch
):
    def stored_events(store, scenario):
        return {"events_stored": float(store.stats().events), "scenario_events": 12.0}

    fused = IngestMode("fused", plain_ingest, "test-v1", extra_metrics=stored_events)
    monkeypatch.setitem(systems_module.INGESTORS, "fused", fused)  # the one-line registration
    dataset = write_tiny_bench(tmp_path / "tiny.json")
    first = _bench(dataset, tmp_path, systems=["memfuse", "bm25"])
    memfuse = first.results["systems"]["memfuse"]["overall"]
    assert memfuse["events_stored"] == 12.0 and memfuse["scenario_events"] == 12.0
    assert "events_stored" not in first.results["systems"]["bm25"]["overall"]
    assert first.ingests_run == 2  # one store per ingest mode
    # memfuse's rounds report their pool: its missing gold is split by where it ended up
    (row,) = first.results["missing_evidence"].values()
    assert list(first.results["missing_evidence"]) == ["memfuse"]  # bm25 has no rounds
    records = [json.loads(line) for line in (tmp_path / "out" / "questions.jsonl").open()]
    mine = [r for r in records if r["system"] == "memfuse"]
    assert all("missing_pooled" in r for r in mine)
    assert not any("missing_pooled" in r for r in records if r["system"] == "bm25")
    assert row["gold"] == sum(len(r["gold_ids"]) for r in mine)
    assert row["in_context"] == row["gold"] - sum(len(r["missing_gold"]) for r in mine)

    markers = sorted((tmp_path / "stores").glob("bench_fused_*/bench-ingest.json"))
    assert len(markers) == 1
    markers[0].unlink()  # as if the fused ingest had been interrupted
    second = _bench(dataset, tmp_path, systems=["memfuse", "bm25"], out_dir=tmp_path / "out2")
    assert second.ingests_run == 1  # only the unfinished store is rebuilt
    assert second.results["systems"]["memfuse"]["overall"]["events_stored"] == 12.0


def test_the_fused_store_cache_key_follows_the_llm_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A store fused by an LLM is not reused for an offline run (or another model's)."""
    monkeypatch.delenv("MEMFUSE_LLM_MODEL", raising=False)
    offline = systems_module._fusion_config_key()
    monkeypatch.setenv("MEMFUSE_LLM_MODEL", "model-a")
    with_a = systems_module._fusion_config_key()
    monkeypatch.setenv("MEMFUSE_LLM_MODEL", "model-b")
    assert len({offline, with_a, systems_module._fusion_config_key()}) == 3


def test_limit_samples_every_category_round_robin() -> None:
    from datetime import datetime

    from eval.bench import sample_questions
    from memory.formats.models import BenchQuestion

    def q(i: int, category: str) -> BenchQuestion:
        return BenchQuestion(
            question_id=f"q{i}",
            category=category,
            question=f"question {i}",
            answer="a",
            time=datetime(2026, 1, 1),
        )

    # ordered by category, as benchmark files are
    questions = [q(i, c) for i, c in enumerate(["causal"] * 5 + ["fusion"] * 5 + ["conflict"] * 2)]
    picked = sample_questions(questions, 6)
    assert [p.question_id for p in picked] == ["q0", "q1", "q5", "q6", "q10", "q11"]
    assert {p.category for p in sample_questions(questions, 3)} == {"causal", "fusion", "conflict"}
    assert sample_questions(questions, None) == questions
    assert sample_questions(questions, 50) == questions


def test_a_build_is_cold_when_it_embedded_most_texts() -> None:
    from eval.bench_stores import cache_state

    assert cache_state(None, 10) == "cold"  # no cache: everything is embedded
    assert cache_state(10, 10) == "cold"
    assert cache_state(5, 10) == "cold"
    assert cache_state(4, 10) == "warm"
    assert cache_state(0, 0) == "warm"


def test_questions_are_asked_of_a_settled_heap_and_it_is_thawed_after(tmp_path, monkeypatch):
    """Each store's questions run with what loading left frozen out of the collector's full
    passes, as in a served process (`memory.heap`), and the bench hands it all back after."""
    from memory import heap

    seen: list[int] = []
    plain = systems_module.SYSTEMS["hybrid"]

    class Watched:
        def __init__(self) -> None:
            self.inner = plain()
            self.name, self.ingest_mode = self.inner.name, self.inner.ingest_mode

        def retrieve(self, store, question, k):
            seen.append(heap.frozen())
            return self.inner.retrieve(store, question, k)

    monkeypatch.setitem(systems_module.SYSTEMS, "hybrid", Watched)
    heap.thaw()
    _bench(write_tiny_bench(tmp_path / "tiny.json"), tmp_path, systems=["hybrid"])
    assert seen and all(count > 0 for count in seen)
    assert heap.frozen() == 0
