"""`memfuse verify`: the offline verifiers on a real generated benchmark with one planted flaw of
each kind (a–g of issue 26), the correction loop, the LLM readers and corrector with a scripted
LM, and the command line."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.utils.dummies import DummyLM

from eval.synth import generate
from eval.verify.graph import VerificationContext, builder
from eval.verify.run import verify_file
from eval.verify.verifiers import verify_scenario
from eval.verify.view import load_bench
from memory.formats.memfusebench_io import to_json

MEMFUSE = Path(sys.executable).parent / "memfuse"


@pytest.fixture(autouse=True)
def _reset_dspy():
    dspy.settings.configure(lm=None, adapter=None)
    yield
    dspy.settings.configure(lm=None, adapter=None)


@pytest.fixture(scope="module")
def clean() -> dict[str, Any]:
    """S1 of the default benchmark (seed 7) as the generator writes it."""
    return json.loads(to_json(generate(1, seed=7)))


def questions(raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {q["question_id"]: q for q in raw["scenario_data"][0]["questions"]}


def events(raw: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["event_id"]: e for ep in raw["scenario_data"][0]["episodes"] for e in ep["events"]}


def replace(record: dict[str, Any], field: str, old: str, new: str) -> None:
    assert old in record[field], (old, record[field])
    record[field] = record[field].replace(old, new)


def unused_hallway(raw: dict[str, Any]) -> str:
    """A hallway motion reading on Sunday morning that no question cites."""
    qs = questions(raw)
    return next(
        e["event_id"]
        for e in events(raw).values()
        if e["device"] == "motion_hallway"
        and e["timestamp"].startswith("2026-05-17T0")
        and not any(e["event_id"] in q["evidence_event_ids"] for q in qs.values())
    )


def question_where(raw: dict[str, Any], field: str, text: str, category: str = "") -> str:
    """The id of the first question whose `field` holds `text` (of `category`, if given):
    the planted flaws find their questions by what they say, not by ids a generator change
    moves."""
    return next(
        q["question_id"]
        for q in questions(raw).values()
        if text in q[field] and (not category or q["category"] == category)
    )


def targets(raw: dict[str, Any]) -> dict[str, str]:
    """The questions the flaws are planted in, by role."""
    return {
        "figure": question_where(raw, "answer", "£96", "user_query"),
        "stranger": question_where(raw, "answer", "woke up unwell", "causal"),
        "self": question_where(raw, "answer", "You put them"),
        "steps": question_where(raw, "answer", "watch counted", "conflict"),
        "unused": question_where(raw, "question", "eggs left in the fridge"),
        "yes_no": question_where(raw, "question", "living room was freezing", "conflict"),
        "anchor": question_where(raw, "question", "Friday 15 May", "perspective"),
    }


def plant(raw: dict[str, Any]) -> dict[str, str]:
    """One flaw of each kind, in place; returns question id -> the kind planted there."""
    qs, evs, at = questions(raw), events(raw), targets(raw)
    # (a) a figure no cited event holds
    replace(qs[at["figure"]], "answer", "£96", "£143")
    # (b) someone who does not live here, said to be at home
    qs[at["stranger"]]["answer"] += " Gloria was at home with him all morning."
    # (c) a resident telling themselves
    replace(qs[at["self"]], "answer", "You put them", "Raj told Raj that he had put them")
    # (d) an earlier reading of Mei's watch that day above the day total the question cites
    total = re.search(r"watch counted ([\d,]+) steps", qs[at["steps"]]["answer"])
    assert total is not None
    cited = next(
        evs[i]
        for i in qs[at["steps"]]["evidence_event_ids"]
        if evs[i]["device"] == "watch_mei" and total.group(1) in evs[i]["description"]
    )
    higher = f"{int(total.group(1).replace(',', '')) + 832:,}"
    earlier = next(
        e
        for e in evs.values()
        if e["device"] == "watch_mei"
        and e["timestamp"][:10] == cited["timestamp"][:10]
        and e["timestamp"] < cited["timestamp"]
        and re.search(r"\d[\d,]* steps", e["description"])
        and not any(e["event_id"] in q["evidence_event_ids"] for q in qs.values())
    )
    earlier["description"] = re.sub(
        r"\d[\d,]* steps", f"{higher} steps", earlier["description"], count=1
    )
    # (e) a cited event the answer makes no use of (the hallway sensor at night)
    qs[at["unused"]]["evidence_event_ids"].append(unused_hallway(raw))
    # (f) a yes/no question whose answer neither says yes or no
    qs[at["yes_no"]]["answer"] = "The thermostat logged the living room that evening."
    # (g) a day the evidence does not lie on
    replace(qs[at["anchor"]], "question", "Friday 15 May", "Tuesday 12 May")
    return {
        at["figure"]: "answer_unsupported",
        at["stranger"]: "household_inconsistent",
        at["self"]: "role_error",
        at["steps"]: "record_conflict",
        at["unused"]: "unused_evidence",
        at["yes_no"]: "unanswered",
        at["anchor"]: "time_anchor_mismatch",
    }


def write(raw: Any, path: Path) -> Path:
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def flags(path: Path) -> set[tuple[str, str]]:
    bench = load_bench(path)
    return {(f.question_id, f.kind) for s in bench.scenarios for f in verify_scenario(s)}


@pytest.fixture(scope="module")
def planted(clean, tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    folder = tmp_path_factory.mktemp("verify")
    raw = copy.deepcopy(clean)
    kinds = plant(raw)
    return write(clean, folder / "clean.json"), write(raw, folder / "planted.json"), kinds


def test_every_planted_flaw_is_flagged_with_its_kind_and_nothing_else_is(planted, clean):
    clean_path, planted_path, kinds = planted
    before, after = flags(clean_path), flags(planted_path)
    for question_id, kind in kinds.items():
        assert (question_id, kind) in after, (question_id, kind)
        assert (question_id, kind) not in before, (question_id, kind)
    new = after - before
    # the planted step reading also contradicts the weekly step questions, which the
    # clean file no longer does on its own
    weekly = {
        q["question_id"]
        for q in questions(clean).values()
        if q["category"] == "user_aggregation" and "steps" in q["question"]
    }
    new -= {(question_id, "record_conflict") for question_id in weekly}
    assert {question_id for question_id, _ in new} <= set(kinds)


def test_each_verifier_names_what_it_found(planted, clean):
    _, planted_path, _ = planted
    bench = load_bench(planted_path)
    reasons = {(f.question_id, f.kind): f for s in bench.scenarios for f in verify_scenario(s)}
    at = targets(clean)
    assert "'143'" in reasons[at["figure"], "answer_unsupported"].reason
    assert "Gloria" in reasons[at["stranger"], "household_inconsistent"].reason
    assert "Raj told Raj" in reasons[at["self"], "role_error"].reason
    assert "steps" in reasons[at["steps"], "record_conflict"].reason
    assert reasons[at["unused"], "unused_evidence"].event_ids == [unused_hallway(clean)]
    assert "yes/no" in reasons[at["yes_no"], "unanswered"].reason
    assert "Tue 12 May" in reasons[at["anchor"], "time_anchor_mismatch"].reason
    assert "Raj loses the wallet" not in reasons[at["anchor"], "time_anchor_mismatch"].reason


def test_a_retired_member_tied_to_the_departure_window_is_flagged(clean, tmp_path):
    """(b) with the persona's age and role: the same storyline is fine for a working parent."""
    raw = copy.deepcopy(clean)
    mei = next(c for c in raw["scenario_data"][0]["persona"]["characters"] if c["name"] == "Mei")
    mei.update(age=72, role="retired teacher")
    base = flags(write(raw, tmp_path / "retired.json"))
    story = " Mei was absent during the school-and-work departure window."
    questions(raw)["S1_Q007"]["answer"] += story
    after = flags(write(raw, tmp_path / "retired_story.json"))
    assert after - base == {("S1_Q007", "household_inconsistent")}
    working = copy.deepcopy(clean)
    questions(working)["S1_Q007"]["answer"] += story
    assert ("S1_Q007", "household_inconsistent") not in flags(write(working, tmp_path / "w.json"))


def test_a_one_person_home_has_no_one_to_tell(clean, tmp_path):
    """(c) telling 'her husband' something is a role error only where she lives alone."""
    raw = copy.deepcopy(clean)
    questions(raw)["S1_Q007"]["answer"] += " Mei told her husband about it."
    assert ("S1_Q007", "role_error") not in flags(write(raw, tmp_path / "family.json"))
    persona = raw["scenario_data"][0]["persona"]
    persona["characters"] = [c for c in persona["characters"] if c["name"] == "Mei"]
    assert ("S1_Q007", "role_error") in flags(write(raw, tmp_path / "alone.json"))


def test_the_corrected_file_verifies_clean_and_the_input_is_untouched(planted, clean, tmp_path):
    _, planted_path, kinds = planted
    before = planted_path.read_bytes()
    result = verify_file(planted_path, tmp_path / "out")
    assert planted_path.read_bytes() == before
    assert result.status == "done"
    report = json.loads(Path(result.report_json).read_text(encoding="utf-8"))
    outcomes = {e["question_id"]: e for e in report["flagged_questions"]}
    for question_id, kind in kinds.items():
        assert kind in outcomes[question_id]["kinds"]
    at = targets(clean)
    assert outcomes[at["unused"]]["outcome"] == "revised"  # unused evidence: repaired by a rule
    assert outcomes[at["figure"]]["outcome"] == "dropped"
    corrected = json.loads(Path(result.output_dataset).read_text(encoding="utf-8"))
    kept = questions(corrected)
    assert unused_hallway(clean) not in kept[at["unused"]]["evidence_event_ids"]
    assert at["figure"] not in kept
    assert len(kept) == report["questions"] - report["dropped"]
    assert report["by_kind"]["unused_evidence"]["revised"] >= 1
    assert "# Verification of" in Path(result.report_markdown).read_text(encoding="utf-8")
    assert flags(Path(result.output_dataset)) == set()


def test_a_locomo_file_is_verified_without_a_household(tmp_path):
    source = Path(__file__).parent / "fixtures" / "locomo_small.json"
    raw = json.loads(source.read_text(encoding="utf-8"))
    raw[0]["qa"][0]["answer"] = "Caroline told Caroline"  # a role error any file can have
    path = write(raw, tmp_path / "locomo.json")
    result = verify_file(path, tmp_path / "out")
    report = json.loads(Path(result.report_json).read_text(encoding="utf-8"))
    first = f"{raw[0]['sample_id']}_q1"
    entry = next(e for e in report["flagged_questions"] if e["question_id"] == first)
    assert "role_error" in entry["kinds"] and "household_inconsistent" not in report["by_kind"]
    corrected = json.loads(Path(result.output_dataset).read_text(encoding="utf-8"))
    sample = raw[0]["sample_id"]
    dropped = [
        e for e in report["flagged_questions"]
        if e["scenario_id"] == sample and e["outcome"] == "dropped"
    ]  # fmt: skip
    assert entry in dropped
    assert len(corrected[0]["qa"]) == len(raw[0]["qa"]) - len(dropped)
    assert raw[0]["qa"][0]["question"] not in [qa["question"] for qa in corrected[0]["qa"]]


# ------------------------------------------------------------------ the LLM readers


def small(clean: dict[str, Any], keep: list[str], tmp_path: Path) -> dict[str, Any]:
    """Only the `keep` questions, their evidence stripped of what the offline verifiers call
    unused (so that only the scripted readers can flag them)."""
    raw = copy.deepcopy(clean)
    scenario = raw["scenario_data"][0]
    scenario["questions"] = [q for q in scenario["questions"] if q["question_id"] in keep]
    bench = load_bench(write(raw, tmp_path / "unstripped.json"))
    unused = {
        f.question_id: set(f.event_ids)
        for f in verify_scenario(bench.scenarios[0])
        if f.kind == "unused_evidence"
    }
    for q in scenario["questions"]:
        drop = unused.get(q["question_id"], set())
        q["evidence_event_ids"] = [i for i in q["evidence_event_ids"] if i not in drop]
        for item in q["checklist"]:
            item["evidence_event_ids"] = [i for i in item["evidence_event_ids"] if i not in drop]
    return raw


def test_a_reader_that_disagrees_flags_and_the_llm_correction_is_applied(clean, tmp_path):
    keep = ["S1_Q010", "S1_Q012", "S1_Q013"]
    three = small(clean, keep, tmp_path)
    path = write(three, tmp_path / "three.json")
    assert flags(path) == set()
    target = questions(three)["S1_Q010"]
    revised = "Why did the house get cold on Sunday afternoon?"

    def read(answer: str) -> dict[str, str]:
        return {"answer": answer, "cited_event_ids": "[]"}

    def judge(agrees: bool) -> dict[str, str]:
        return {"agrees": str(agrees), "reason": "same facts" if agrees else "another cause"}

    lm = DummyLM(
        [read("the boiler broke"), judge(False), read("a misfire"), judge(True)]
        + [read("deadline"), judge(True)]
        + [
            {
                "action": "revise",
                "revised_question": revised,
                "revised_answer": target["answer"],
                "revised_evidence_ids": json.dumps(target["evidence_event_ids"]),
                "reason": "the question now names the afternoon the fumes happened",
            }
        ]
        + [read("paint fumes; windows opened"), judge(True)]
    )
    context = VerificationContext(policy="llm", lm=lm, reader_prompts=["direct"])
    result = builder.compile().invoke(
        {"dataset": str(path), "out_dir": str(tmp_path / "out")}, context=context
    )
    assert result["status"] == "done" and len(lm.history) == 9
    report = json.loads(Path(result["report_json"]).read_text(encoding="utf-8"))
    [entry] = report["flagged_questions"]
    assert entry["question_id"] == "S1_Q010" and entry["kinds"] == ["reader_disagrees"]
    assert entry["outcome"] == "revised" and entry["decided_by"] == "llm"
    assert "the boiler broke" in entry["findings"][0]["reason"]
    corrected = questions(json.loads(Path(result["output_dataset"]).read_text(encoding="utf-8")))
    assert corrected["S1_Q010"]["question"] == revised
    assert corrected["S1_Q013"] == questions(clean)["S1_Q013"]


def test_an_unusable_correction_falls_back_to_the_offline_corrector(clean, tmp_path):
    path = write(small(clean, ["S1_Q010"], tmp_path), tmp_path / "one.json")
    lm = DummyLM(
        [{"answer": "x", "cited_event_ids": "[]"}, {"agrees": "False", "reason": "differs"}]
        + [
            {
                "action": "revise",
                "revised_question": "q",
                "revised_answer": "a",
                "revised_evidence_ids": '["S1_E9999"]',
                "reason": "made up",
            }
        ]
    )
    context = VerificationContext(policy="llm", lm=lm, reader_prompts=["direct"])
    result = verify_file(path, tmp_path / "out", context)
    report = json.loads(Path(result.report_json).read_text(encoding="utf-8"))
    [entry] = report["flagged_questions"]
    assert entry["outcome"] == "dropped"
    assert (
        entry["decided_by"].startswith("offline fallback: ") and "S1_E9999" in entry["decided_by"]
    )


# ------------------------------------------------------------------ the command line


def test_memfuse_verify_prints_the_summary_and_where_the_report_is(planted, tmp_path):
    _, planted_path, _ = planted
    out = tmp_path / "cli"
    done = subprocess.run(
        [str(MEMFUSE), "verify", str(planted_path), "--out", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "flagged" in done.stdout and "time_anchor_mismatch: " in done.stdout
    assert str(out / "verify-report.md") in done.stdout.replace("\n", "")
    assert (out / "planted.verified.json").is_file()


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "no such file"), ("{", "invalid JSON"), ('{"a": 1}', "not a benchmark file")],
)
def test_memfuse_verify_refuses_a_bad_file_in_one_line(tmp_path, content, message):
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    done = subprocess.run(
        [str(MEMFUSE), "verify", str(path), "--out", str(tmp_path / "o")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], done.stderr


def test_langgraph_json_serves_the_verification_graph_and_it_runs_offline(planted, tmp_path):
    served = json.loads((Path(__file__).parents[2] / "langgraph.json").read_text())["graphs"]
    assert served["verification"] == "./eval/verify/graph/graph.py:graph"
    from eval.verify.graph.graph import graph

    _, planted_path, _ = planted
    result = graph.invoke(
        {"dataset": str(planted_path), "out_dir": str(tmp_path)},
        context=VerificationContext(policy="offline"),
    )
    assert result["status"] == "done" and result["summary"]["flagged"] >= 7
