"""The MemFuseBench format: loading, validation failures, round trips, conversions."""

from __future__ import annotations

import copy
import json
from datetime import datetime
from pathlib import Path

import pytest

from eval.categories import CATEGORIES
from eval.synth.graph.checks import check_benchmark
from memory.errors import MemFuseError
from memory.formats.memfusebench import DEVICE_CAPABILITIES, DatasetError, MemFuseBench
from memory.formats.memfusebench_io import dump, load, parse, to_json
from memory.models import Modality, SourceKind


def _event(eid: str, ts: str, device: str, modality: str, text: str, **extra) -> dict:
    return {
        "event_id": eid,
        "timestamp": ts,
        "device": device,
        "modality": modality,
        "location": "kitchen",
        "description": text,
        "characters": ["Ana"],
        "source": "storyline",
        "storyline_event_id": None,
        **extra,
    }


def tiny() -> dict:
    """One scenario: two devices, one storyline episode, one background day, two questions."""
    return {
        "version": "memfusebench-1",
        "scenario_data": [
            {
                "scenario_id": "S9",
                "persona": {
                    "persona_id": "p9",
                    "type": "single_professional",
                    "characters": [
                        {
                            "name": "Ana",
                            "age": 33,
                            "role": "nurse",
                            "interests": ["yoga", "jazz"],
                            "health": "Healthy",
                            "routine": {"weekday": "07:00 wake", "weekend": "09:00 wake"},
                            "devices": ["watch_ana"],
                        }
                    ],
                    "shared_devices": ["speaker_kitchen"],
                    "all_devices": [
                        {
                            "device_id": "watch_ana",
                            "device_type": "smartwatch",
                            "owner": "Ana",
                            "location": "wearable",
                            "modality": ["health", "motion", "location"],
                        },
                        {
                            "device_id": "speaker_kitchen",
                            "device_type": "smart_speaker",
                            "owner": "shared",
                            "location": "kitchen",
                            "modality": ["audio", "dialogue"],
                        },
                    ],
                },
                "episodes": [
                    {
                        "episode_id": "S9_EP01",
                        "title": "A cold",
                        "kind": "storyline",
                        "events": [
                            _event(
                                "S9_E0002",
                                "2026-05-11T07:10:00",
                                "watch_ana",
                                "health",
                                "Ana's watch recorded a resting heart rate of 88 bpm.",
                                storyline_event_id="S9_L001",
                            ),
                            _event(
                                "S9_E0003",
                                "2026-05-11T07:30:00",
                                "speaker_kitchen",
                                "audio",
                                "The kitchen speaker heard Ana coughing.",
                                storyline_event_id="S9_L002",
                            ),
                        ],
                    },
                    {
                        "episode_id": "S9_bg_2026-05-11",
                        "title": "Everyday life",
                        "kind": "background",
                        "events": [
                            _event(
                                "S9_E0001",
                                "2026-05-11T06:50:00",
                                "speaker_kitchen",
                                "dialogue",
                                "Ana asked for the weather.",
                                source="routine",
                            ),
                            _event(
                                "S9_E0004",
                                "2026-05-11T09:00:00",
                                "watch_ana",
                                "health",
                                "Ana's watch recorded a heart rate of 71 bpm.",
                                source="adversarial",
                                target_question="S9_Q001",
                            ),
                        ],
                    },
                ],
                "questions": [
                    {
                        "question_id": "S9_Q001",
                        "category": "causal",
                        "question": "Why was Ana unwell?",
                        "answer": "She had a cold: a raised pulse and a cough.",
                        "evidence_event_ids": ["S9_E0002", "S9_E0003"],
                        "checklist": [
                            {"item": "raised pulse", "evidence_event_ids": ["S9_E0002"]},
                            {"item": "cough", "evidence_event_ids": ["S9_E0003"]},
                        ],
                        "question_user": "Ana",
                        "question_time": "2026-05-11T12:00:00",
                        "question_device": "speaker_kitchen",
                    },
                    {
                        "question_id": "S9_Q002",
                        "category": "user_query",
                        "question": "What did I ask?",
                        "answer": "The weather.",
                        "evidence_event_ids": ["S9_E0001"],
                        "checklist": [{"item": "weather", "evidence_event_ids": ["S9_E0001"]}],
                        "question_user": "Ana",
                        "question_time": "2026-05-11T08:00:00",
                        "question_device": "watch_ana",
                    },
                ],
            }
        ],
    }


def write(tmp_path: Path, data: dict | str, name: str = "bench.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def scenario_of(data: dict) -> dict:
    return data["scenario_data"][0]


# ---------------------------------------------------------------- valid files


def test_load_valid_file_and_conveniences(tmp_path):
    bench = load(write(tmp_path, tiny()))
    scenario = bench.scenario("S9")
    assert [e.event_id for e in scenario.all_events()] == [
        "S9_E0001",
        "S9_E0002",
        "S9_E0003",
        "S9_E0004",
    ]
    assert scenario.question("S9_Q001").question_time == datetime(2026, 5, 11, 12, 0)
    assert scenario.persona.device("watch_ana").modality == [
        Modality.HEALTH,
        Modality.MOTION,
        Modality.LOCATION,
    ]
    with pytest.raises(DatasetError, match="no scenario 'S1'"):
        bench.scenario("S1")


def test_memory_events_carry_labels_or_strip_them(tmp_path):
    scenario = load(write(tmp_path, tiny())).scenario("S9")
    events = scenario.memory_events()
    assert [e.event_id for e in events] == ["S9_E0001", "S9_E0002", "S9_E0003", "S9_E0004"]
    story = events[1]
    assert story.episode_id == "S9_EP01" and story.source == SourceKind.STORYLINE
    assert story.metadata["storyline_event_id"] == "S9_L001" and story.owner == "Ana"
    decoy = events[3]
    assert decoy.source == SourceKind.ADVERSARIAL and decoy.metadata["target_question"] == "S9_Q001"
    blind = scenario.memory_events(labels=False)
    assert all(e.source == SourceKind.USER and e.episode_id is None for e in blind)
    assert all(
        "target_question" not in e.metadata and "storyline_event_id" not in e.metadata
        for e in blind
    )
    assert blind[2].owner == "shared" and blind[2].description == story_text(scenario, "S9_E0003")


def story_text(scenario, event_id: str) -> str:
    return scenario.event_index()[event_id].description


def test_dump_is_deterministic_and_round_trips(tmp_path):
    bench = load(write(tmp_path, tiny()))
    first = dump(bench, tmp_path / "a.json").read_bytes()
    second = dump(load(tmp_path / "a.json"), tmp_path / "b.json").read_bytes()
    assert first == second
    text = first.decode("utf-8")
    assert json.loads(text)["version"] == "memfusebench-1"
    assert text.index('"category"') < text.index('"question_id"')  # keys sorted


def test_foreign_file_keeps_unknown_fields(tmp_path):
    data = tiny()
    data["generator"] = {"name": "other-tool", "run": 3}
    sc = scenario_of(data)
    sc["notes"] = "hand-checked"
    sc["persona"]["shared_schedule"] = [
        {"time": "18:00", "what": "dinner", "participants": ["Ana"]}
    ]
    sc["persona"]["characters"][0]["pronouns"] = "she/her"
    sc["persona"]["all_devices"][1]["firmware"] = "2.1"
    sc["episodes"][0]["events"][0]["confidence"] = 0.8
    sc["episodes"][0]["summary"] = "latent summary"
    sc["questions"][0]["difficulty"] = "hard"
    sc["questions"][0]["checklist"][0]["weight"] = 2
    out = json.loads(to_json(load(write(tmp_path, data))))
    osc = out["scenario_data"][0]
    assert out["generator"] == {"name": "other-tool", "run": 3}
    assert osc["notes"] == "hand-checked"
    assert osc["persona"]["shared_schedule"][0]["participants"] == ["Ana"]
    assert osc["persona"]["characters"][0]["pronouns"] == "she/her"
    assert osc["persona"]["all_devices"][1]["firmware"] == "2.1"
    assert osc["episodes"][0]["events"][0]["confidence"] == 0.8
    assert osc["episodes"][0]["summary"] == "latent summary"
    assert osc["questions"][0]["difficulty"] == "hard"
    assert osc["questions"][0]["checklist"][0]["weight"] == 2


def test_lenient_on_optional_fields(tmp_path):
    """A minimal foreign file: no titles, kinds, routines, sources, times or checklists."""
    data = {
        "version": "memfusebench-1",
        "scenario_data": [
            {
                "scenario_id": "x1",
                "persona": {
                    "characters": [{"name": "Bo"}],
                    "all_devices": [
                        {
                            "device_id": "cam",
                            "device_type": "indoor_camera",
                            "modality": "vision, audio",
                        }
                    ],
                },
                "episodes": [
                    {
                        "episode_id": "d1",
                        "events": [
                            {
                                "event_id": "e1",
                                "timestamp": "2026-05-11 10:00",
                                "device": "cam",
                                "modality": "vision",
                                "description": "Bo waved.",
                            }
                        ],
                    }
                ],
                "questions": [
                    {
                        "question_id": "q1",
                        "category": "perspective",
                        "question": "What did the camera see?",
                        "answer": 42,
                        "evidence_event_ids": ["e1"],
                    }
                ],
            }
        ],
    }
    bench = load(write(tmp_path, data))
    scenario = bench.scenario("x1")
    assert scenario.questions[0].answer == "42" and scenario.questions[0].checklist == []
    assert scenario.memory_events()[0].episode_id == "d1"
    assert json.loads(to_json(bench))["scenario_data"][0]["episodes"][0].get("title") is None


def test_constants_follow_the_paper():
    assert CATEGORIES == (
        "causal",
        "fusion",
        "user_aggregation",
        "user_query",
        "conflict",
        "perspective",
    )
    assert DEVICE_CAPABILITIES["smartwatch"] == ["health", "motion", "location"]
    assert DEVICE_CAPABILITIES["smart_display"] == ["audio", "dialogue", "vision"]
    assert DEVICE_CAPABILITIES["doorbell_camera"] == ["vision", "audio", "location"]
    assert DEVICE_CAPABILITIES["car_system"] == ["location", "dialogue"]
    assert len(DEVICE_CAPABILITIES) == 24
    modalities = {m.value for m in Modality}
    assert all(set(ms) <= modalities for ms in DEVICE_CAPABILITIES.values())


# ---------------------------------------------------------------- failures


def broken(mutate) -> dict:
    data = copy.deepcopy(tiny())
    mutate(scenario_of(data))
    return data


def fails(tmp_path: Path, data: dict | str, *fragments: str) -> str:
    with pytest.raises(DatasetError) as info:
        load(write(tmp_path, data))
    message = str(info.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message
    assert isinstance(info.value, MemFuseError)
    return message


def test_rejects_unresolvable_evidence(tmp_path):
    data = broken(lambda s: s["questions"][0]["evidence_event_ids"].append("S9_E0999"))
    msg = fails(tmp_path, data, "scenario 'S9'", "question 'S9_Q001'", "'S9_E0999'")
    assert "does not resolve" in msg


def test_rejects_unresolvable_checklist_evidence(tmp_path):
    data = broken(lambda s: s["questions"][1]["checklist"][0]["evidence_event_ids"].append("nope"))
    fails(tmp_path, data, "scenario 'S9'", "question 'S9_Q002'", "checklist item 1", "'nope'")


def test_rejects_adversarial_event_as_evidence(tmp_path):
    data = broken(
        lambda s: s["questions"][0]["checklist"][1]["evidence_event_ids"].append("S9_E0004")
    )
    fails(tmp_path, data, "scenario 'S9'", "question 'S9_Q001'", "'S9_E0004'", "adversarial")


def test_rejects_duplicate_event_id(tmp_path):
    def dup(s):
        s["episodes"][1]["events"][0]["event_id"] = "S9_E0002"

    fails(tmp_path, broken(dup), "scenario 'S9'", "event 'S9_E0002'", "duplicate event id")


def test_rejects_duplicate_question_id(tmp_path):
    def dup(s):
        s["questions"][1]["question_id"] = "S9_Q001"

    fails(tmp_path, broken(dup), "scenario 'S9'", "question 'S9_Q001'", "duplicate question id")


def test_rejects_modality_the_device_cannot_produce(tmp_path):
    def wrong(s):
        s["episodes"][0]["events"][1]["modality"] = "vision"  # a speaker has no camera

    fails(
        tmp_path,
        broken(wrong),
        "scenario 'S9'",
        "event 'S9_E0003'",
        "'speaker_kitchen'",
        "cannot produce modality 'vision'",
    )


def test_rejects_unknown_device(tmp_path):
    def unknown(s):
        s["episodes"][0]["events"][0]["device"] = "watch_bob"

    fails(
        tmp_path, broken(unknown), "scenario 'S9'", "event 'S9_E0002'", "unknown device 'watch_bob'"
    )


def test_rejects_question_asked_before_its_evidence(tmp_path):
    def early(s):
        s["questions"][0]["question_time"] = "2026-05-11T07:20:00"

    fails(
        tmp_path,
        broken(early),
        "scenario 'S9'",
        "question 'S9_Q001'",
        "2026-05-11T07:30:00",
        "before its latest evidence",
    )


def test_reads_any_category_and_the_benchmark_checks_flag_an_unlisted_one(tmp_path):
    """The format reads a category by name (`memfuse ingest` reads only events); which
    categories a benchmark has is eval's list, so a new one is added in eval alone, and
    `memfuse check-dataset` names a question whose category is not on it."""

    def cat(s):
        s["questions"][1]["category"] = "temporal"

    bench = load(write(tmp_path, broken(cat)))
    assert bench.scenario_data[0].questions[1].category == "temporal"
    issues = check_benchmark(bench)["S9"]
    unknown = [i for i in issues if i.code == "unknown_category"]
    assert [i.ids for i in unknown] == [["S9_Q002"]]
    assert "'temporal', not one of the benchmark's (causal, fusion" in unknown[0].message
    fails(tmp_path, broken(lambda s: s["questions"][1].update(category="")), "category")


def test_rejects_unknown_modality_name(tmp_path):
    def mod(s):
        s["episodes"][1]["events"][0]["modality"] = "smell"

    fails(tmp_path, broken(mod), "scenario 'S9'", "event 'S9_E0001'", "modality")


def test_rejects_malformed_json_and_wrong_version(tmp_path):
    fails(
        tmp_path, '{"version": "memfusebench-1", "scenario_data": [', "bench.json", "invalid JSON"
    )
    data = tiny()
    data["version"] = "memfusebench-0"
    fails(tmp_path, data, "unsupported version 'memfusebench-0'")
    fails(tmp_path, json.dumps([1, 2]), "expected a JSON object")
    with pytest.raises(DatasetError, match="cannot read"):
        load(tmp_path / "missing.json")


def test_rejects_missing_required_question_field(tmp_path):
    def drop(s):
        del s["questions"][0]["evidence_event_ids"]

    fails(tmp_path, broken(drop), "scenario 'S9'", "question 'S9_Q001'", "evidence_event_ids")


def test_validate_applies_to_models_built_in_memory():
    bench = parse(tiny())
    bench.scenario_data[0].questions[0].evidence_event_ids.append("ghost")
    from memory.formats.memfusebench_io import validate

    with pytest.raises(DatasetError, match="'ghost'"):
        validate(bench)
    assert isinstance(MemFuseBench().scenario_data, list)
