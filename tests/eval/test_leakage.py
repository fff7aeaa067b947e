"""The wording measures `memfuse check-dataset` reports (`eval.leakage`): a storyline told by
its words scores an AUC near 1, the same words for storyline and background near 0.5, and
questions that differ only in names and numbers count as repeats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eval.cli import app
from eval.leakage import AUC_TARGET, _auc, masked, measure_leakage
from memory.formats.memfusebench import MemFuseBench


def _event(sid: str, n: int, text: str, source: str) -> dict[str, Any]:
    return {
        "event_id": f"{sid}_E{n:03d}",
        "timestamp": f"2024-03-04T{8 + n // 60:02d}:{n % 60:02d}:00",
        "device": "speaker_kitchen",
        "modality": "dialogue",
        "location": "kitchen",
        "description": text,
        "source": source,
    }


def _household(sid: str, name: str, story: list[str], rest: list[str]) -> dict[str, Any]:
    events = [_event(sid, i, text, "storyline") for i, text in enumerate(story)]
    events += [_event(sid, len(story) + i, text, "routine") for i, text in enumerate(rest)]
    return {
        "scenario_id": sid,
        "persona": {
            "characters": [{"name": name}],
            "all_devices": [
                {"device_id": "speaker_kitchen", "owner": "shared", "modality": ["dialogue"]}
            ],
        },
        "episodes": [{"episode_id": f"{sid}_EP1", "events": events}],
        "questions": [
            {
                "question_id": f"{sid}_Q1",
                "category": "causal",
                "question": f"Why did {name} call the plumber at 9 am?",
                "answer": "a leak",
                "evidence_event_ids": [events[0]["event_id"]],
            },
            {
                "question_id": f"{sid}_Q2",
                "category": "fusion",
                "question": f"What did {name} cook on day {len(sid)}?",
                "answer": "soup",
                "evidence_event_ids": [events[0]["event_id"]],
            },
        ],
    }


NAMES = ("Ruth", "Omar", "Lena", "Tom")
STORY = ["{} reported a leak on the household Wi-Fi", "burst of {} hallway detections"]
ROUTINE = ["the kettle boiled {} times", "the lights dimmed at {} pm"]


def _bench(story: list[str], rest: list[str]) -> MemFuseBench:
    scenarios = [
        _household(f"S{i}", name, [t.format(i) for t in story], [t.format(i) for t in rest])
        for i, name in enumerate(NAMES, start=1)
    ]
    return MemFuseBench.model_validate({"version": "memfusebench-1", "scenario_data": scenarios})


def test_the_auc_is_the_chance_a_storyline_event_outscores_another() -> None:
    assert _auc([(0.1, False), (0.9, True)]) == 1.0
    assert _auc([(0.9, False), (0.1, True)]) == 0.0
    assert _auc([(0.5, False), (0.5, True), (0.5, False)]) == 0.5
    # storyline {1, 2} against the rest {1, 0}: 0.5 + 1 + 1 + 1 of four pairs
    assert _auc([(1.0, True), (1.0, False), (2.0, True), (0.0, False)]) == 0.875


def test_storyline_wording_of_its_own_is_found_and_shared_wording_is_not() -> None:
    giveaway = measure_leakage(_bench(STORY * 3, ROUTINE * 3))
    assert giveaway.storyline_auc == 1.0
    assert set(giveaway.auc_by_household) == {"S1", "S2", "S3", "S4"}
    shared = measure_leakage(_bench(ROUTINE * 3, ROUTINE * 3))
    assert shared.storyline_auc == 0.5
    assert giveaway.storyline_auc > AUC_TARGET >= shared.storyline_auc  # type: ignore[operator]


def test_questions_differing_only_in_names_and_numbers_are_repeats() -> None:
    assert masked("Why did Ruth's kettle boil 3 times?", ["Ruth"]) == (
        "why did <name> kettle boil <n> times"
    )
    report = measure_leakage(_bench(STORY, ROUTINE))
    # Q1 reads the same in every household once names are masked; Q2 only differs by a number
    assert (report.repeated_questions, report.questions) == (8, 8)
    assert report.most_repeated[0] == ("why did <name> call the plumber at <n> am", 4)
    assert "above the target" in report.verdicts()[1]


def test_one_household_has_no_leave_one_out_auc() -> None:
    one = MemFuseBench.model_validate(
        {"version": "memfusebench-1", "scenario_data": [_household("S1", "Ruth", STORY, ROUTINE)]}
    )
    report = measure_leakage(one)
    assert report.storyline_auc is None and report.auc_by_household == {}
    assert report.repeated_questions == 0
    assert "not measurable" in report.verdicts()[0]


@pytest.mark.parametrize("as_json", [False, True])
def test_check_dataset_reports_the_measures_without_failing_on_them(
    tmp_path: Path, as_json: bool
) -> None:
    path = tmp_path / "bench.json"
    path.write_text(_bench(STORY * 3, ROUTINE * 3).model_dump_json())
    args = ["check-dataset", str(path)] + (["--json"] if as_json else [])
    result = CliRunner().invoke(app, args)
    # the file lacks four of the six categories (its only issues): the leakage adds none
    assert result.exit_code == 1, result.output
    if as_json:
        report = json.loads(result.stdout)
        assert report["total"] == 4
        assert {i["code"] for found in report["issues"].values() for i in found} == {
            "missing_category"
        }
        leakage = report["leakage"]
        assert leakage["storyline_auc"] == 1.0 and leakage["repeated_share"] == 1.0
    else:
        assert "storyline wording AUC 1.00" in result.stdout
        assert "repeated question texts 8 of 8" in result.stdout
