"""Issue 26: the generator's own flaws fixed at their source, and `memfuse synth` verified.

Regression tests per fix (one step count per watch and day; aggregation answers from the logs
they cite; comparison answers that compare), then the
pipeline: the published file re-verifies with no flag, is deterministic and passes
`check-dataset`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eval.cli import app
from eval.synth import generate
from eval.synth.pedometer import STEP_COUNTS, settle_step_counts
from eval.synth.world import Obs
from eval.verify.answers import unanswered
from eval.verify.records import conflicts
from eval.verify.view import load_bench
from memory.formats.memfusebench import MemFuseBench
from memory.formats.memfusebench_io import dump

STEPS = re.compile(r"(\d{1,3}(?:,\d{3})+|\d+)")


@pytest.fixture(scope="module")
def two() -> MemFuseBench:
    return generate(2, seed=7)


def counts(text: str) -> list[int]:
    found = [m for p in STEP_COUNTS for m in p.finditer(text)]
    return [int(m.group(1).replace(",", "")) for m in sorted(found, key=lambda m: m.start(1))]


def test_a_days_step_count_never_goes_backwards_and_one_event_states_one(two):
    days = 0
    for scenario in two.scenario_data:
        series = defaultdict(list)
        for event in sorted(scenario.all_events(), key=lambda e: e.timestamp):
            stated = counts(event.description)
            if stated:
                assert len(set(stated)) == 1, event.description
                series[event.device, event.timestamp.date()].append(stated[0])
        for (device, day), values in series.items():
            assert values == sorted(values), (device, day, values)
            days += len(values) > 1
    assert days >= 10  # days with several readings exist: the test is not vacuous


def test_the_verifier_finds_no_contradicted_day_count(two, tmp_path):
    path = tmp_path / "two.json"
    dump(two, path)
    for scenario in load_bench(path).scenarios:
        assert conflicts(scenario) == {}


def test_settling_keeps_the_recorded_total_and_rises_to_it():
    from eval.synth.personas import HOUSEHOLD_TYPES, build_household
    from eval.synth.rng import substream

    hh = build_household("S1", HOUSEHOLD_TYPES[0], substream(7, "S1", "personas"))
    watch = next(d.device_id for d in hh.devices if d.device_id.startswith("watch_"))

    def obs(key: str, hour: int, text: str, **facts: object) -> Obs:
        when = datetime(2026, 5, 12, hour, 5)
        return Obs(key, when, watch, "motion", "home", text, [], "routine", facts=dict(facts))

    stream = [
        obs("a", 9, "At that point Raj had logged 12,965 steps for the day."),
        obs("b", 13, "a midday check: 9,999 steps, 12 active minutes"),
        obs(
            "c", 21, "Raj's step count for the day: 8,130, about 5.9 km", topic="steps", value=8130
        ),
        obs("d", 22, "At that point Raj had logged 900 steps for the day. 120 steps per minute."),
    ]
    settle_step_counts(hh, stream)
    stated = [counts(o.description) for o in stream]
    assert stated[2] == [8130] and stated[3] == [8130]
    assert stated[0][0] < stated[1][0] < 8130
    assert "120 steps per minute" in stream[3].description  # a cadence is no day count
    before = [o.description for o in stream]
    settle_step_counts(hh, stream)
    assert [o.description for o in stream] == before  # settling twice changes nothing


def test_a_step_aggregation_answer_is_computed_from_the_logs_it_cites(two):
    checked = 0
    for scenario in two.scenario_data:
        index = scenario.event_index()
        for q in scenario.questions:
            shape = re.match(r"(\d+) of (\d+) days", q.answer)
            if q.category != "user_aggregation" or not shape or "steps" not in q.answer:
                continue
            totals = {}
            for event_id in q.evidence_event_ids:
                event = index[event_id]
                totals[event.timestamp.date()] = counts(event.description)[-1]
            over, days = map(int, shape.groups())
            assert days == len(totals)
            assert over == sum(v >= 10000 for v in totals.values())
            busiest = int(STEPS.findall(q.answer.split("most active day")[-1])[-1].replace(",", ""))
            assert busiest == max(totals.values())
            checked += 1
    assert checked >= 2


def test_comparison_answers_compare_and_say_which_way(tmp_path):
    race = 0
    dump(generate(6, seed=7), tmp_path / "six.json")  # the race storyline is in one of them
    for view in load_bench(tmp_path / "six.json").scenarios:
        for q in view.questions:
            assert unanswered(view, q) == [], q.question
            if "race" in q.question and "training" in q.question and "about" in q.answer:
                finish = int(re.search(r"about (\d+) minutes", q.answer).group(1))
                m, s = map(int, re.search(r"fastest at (\d+):(\d\d)/km", q.answer).groups())
                fastest = m * 60 + s
                if (finish * 60 + 59) / 10 < fastest:
                    assert "quicker" in q.answer
                elif finish * 6 > fastest:
                    assert "slower" in q.answer
                race += 1
    assert race >= 1


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("synth")
    paths = []
    for name in ("a", "b"):
        out = folder / name / "bench.json"
        result = CliRunner().invoke(app, ["synth", "--scenarios", "1", "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert "verified:" in result.output
        paths.append(out)
    return paths[0], paths[1]


def test_synth_publishes_a_file_that_verifies_clean(published, tmp_path):
    out, _ = published
    report = out.with_name("bench.verify-report.json")
    assert report.is_file() and out.with_name("bench.verify-report.md").is_file()
    again = CliRunner().invoke(app, ["verify", str(out), "--out", str(tmp_path / "v")])
    assert again.exit_code == 0, again.output
    assert "0 flagged" in again.output


def test_synth_verified_is_deterministic_and_passes_check_dataset(published):
    first, second = published
    assert first.read_bytes() == second.read_bytes()
    report = first.with_name("bench.verify-report.json").read_text().replace("/a/", "/b/")
    assert report == second.with_name("bench.verify-report.json").read_text()
    checked = CliRunner().invoke(app, ["check-dataset", str(first)])
    assert checked.exit_code == 0, checked.output


def test_no_verify_writes_the_generators_output(tmp_path):
    out = tmp_path / "raw.json"
    result = CliRunner().invoke(
        app, ["synth", "--scenarios", "1", "--no-verify", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert not out.with_name("raw.verify-report.json").exists()
    assert len(load_bench(out).scenarios[0].questions) == len(
        generate(1, seed=7).scenario_data[0].questions
    )
