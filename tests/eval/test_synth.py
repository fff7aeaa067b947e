"""The procedural Scene-to-Sensor generator: determinism, invariants, stage checks, sizes."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from eval.categories import CATEGORIES
from eval.synth import SynthesisError, generate, pipeline, stats
from eval.synth.adversarial import finalize_ids
from eval.synth.command import synth_command
from eval.synth.episodes import WorldState
from eval.synth.filtering import rejection
from eval.synth.personas import HOUSEHOLD_TYPES, build_household, check_household
from eval.synth.rng import substream
from eval.synth.scenario import build_scenario, check_scenario
from eval.synth.streams import check_stream
from eval.synth.timewords import at, when
from eval.synth.world import Obs, Question, StoryEvent, View
from memory.formats.memfusebench import DEVICE_CAPABILITIES
from memory.formats.memfusebench_io import load, to_json
from tests.support.synth_pairs import own_events, paired_questions


@pytest.fixture(scope="module")
def two():
    """Two scenarios (young family, family with teens) with the default seed and realism."""
    return generate(2, seed=7)


@pytest.fixture(scope="module")
def legacy_two():
    """The same two scenarios as the earlier generator wrote them (`--realism legacy`)."""
    return generate(2, seed=7, realism="legacy")


# ---------------------------------------------------------------- determinism and format


def test_same_seed_gives_identical_bytes_and_other_seed_differs(tmp_path):
    a = synth_command(1, 7, tmp_path / "a.json")
    b = synth_command(1, 7, tmp_path / "b.json")
    assert a.verification is not None and (tmp_path / "a.verify-report.json").is_file()
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert a.stats == b.stats
    synth_command(1, 8, tmp_path / "c.json", verify=False)
    assert (tmp_path / "c.json").read_bytes() != (tmp_path / "a.json").read_bytes()


def test_output_does_not_depend_on_hash_randomisation(tmp_path):
    """Set/dict ordering of strings changes with PYTHONHASHSEED; the file must not."""
    script = (
        "import sys; from eval.synth.command import synth_command; synth_command(1, 5, sys.argv[1])"
    )
    root = Path(__file__).resolve().parents[2]
    for seed in ("11", "23"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        subprocess.run(
            [sys.executable, "-c", script, str(tmp_path / f"h{seed}.json")],
            check=True,
            env=env,
            cwd=root,
        )
    assert (tmp_path / "h11.json").read_bytes() == (tmp_path / "h23.json").read_bytes()


def test_generated_file_loads_and_round_trips(two, tmp_path):
    path = tmp_path / "bench.json"
    path.write_text(to_json(two), encoding="utf-8")
    reread = load(path)
    assert to_json(reread) == to_json(two)
    assert [s.scenario_id for s in reread.scenario_data] == ["S1", "S2"]
    assert [s.persona.type for s in reread.scenario_data] == list(HOUSEHOLD_TYPES[:2])


def test_every_event_sits_in_an_episode_with_scenario_qualified_ids(two):
    for scenario in two.scenario_data:
        sid = scenario.scenario_id
        kinds = Counter(e.kind for e in scenario.episodes)
        assert kinds["background"] == 7 and 8 <= kinds["storyline"] <= 12
        for episode in scenario.episodes:
            for event in episode.events:
                assert (
                    event.event_id.startswith(f"{sid}_E") and event.episode_id == episode.episode_id
                )
                if episode.kind == "background":
                    assert episode.episode_id == f"{sid}_bg_{event.timestamp.date().isoformat()}"
                    assert event.storyline_event_id is None and event.source.value != "storyline"
                else:
                    assert event.source.value == "storyline"
                    assert event.storyline_event_id.startswith(f"{sid}_L")
        ids = [e.event_id for e in scenario.all_events()]
        assert ids == sorted(ids)  # ids follow time order


# ---------------------------------------------------------------- invariants on generated data


def test_adversarial_events_target_questions_and_are_never_evidence(two):
    for scenario in two.scenario_data:
        qids = {q.question_id for q in scenario.questions}
        decoys = {e.event_id for e in scenario.all_events() if e.source.value == "adversarial"}
        assert decoys
        for event in scenario.all_events():
            if event.event_id in decoys:
                assert event.target_question in qids
                target = scenario.question(event.target_question)
                assert event.timestamp < target.question_time
            else:
                assert event.target_question is None
        for q in scenario.questions:
            used = set(q.evidence_event_ids) | {
                i for c in q.checklist for i in c.evidence_event_ids
            }
            assert not used & decoys
        per_question = Counter(
            e.target_question for e in scenario.all_events() if e.event_id in decoys
        )
        assert max(per_question.values()) <= 3


def test_questions_are_asked_after_their_evidence(two):
    for scenario in two.scenario_data:
        index = scenario.event_index()
        for q in scenario.questions:
            latest = max(index[i].timestamp for i in q.evidence_event_ids)
            assert q.question_time >= latest
            assert q.question_time <= latest + timedelta(hours=48)


def test_devices_only_produce_their_modalities(two):
    for scenario in two.scenario_data:
        devices = {d.device_id: d for d in scenario.persona.all_devices}
        for d in devices.values():
            assert [m.value for m in d.modality] == DEVICE_CAPABILITIES[d.device_type]
        for event in scenario.all_events():
            assert event.modality in devices[event.device].modality


def test_no_two_events_share_device_and_minute(two):
    for scenario in two.scenario_data:
        slots = Counter((e.device, e.timestamp) for e in scenario.all_events())
        assert max(slots.values()) == 1


def test_questions_cover_all_categories_with_checklists_and_askers(two):
    for scenario in two.scenario_data:
        names = {c.name for c in scenario.persona.characters}
        index = scenario.event_index()
        assert {q.category for q in scenario.questions} == set(CATEGORIES)
        for q in scenario.questions:
            assert 2 <= len(q.checklist) <= 5
            assert q.question_user in names
            assert all(item.evidence_event_ids for item in q.checklist)
            if q.category in ("fusion", "perspective"):
                assert len({index[i].device for i in q.evidence_event_ids}) >= 3
            if q.category == "user_query":
                assert re.search(r"\b(my|me|i)\b", q.question.lower()), q.question


def test_questions_do_not_copy_their_answer(two):
    from eval.synth.filtering import content_words

    for scenario in two.scenario_data:
        names = {c.name.lower() for c in scenario.persona.characters}
        for q in scenario.questions:
            answer = content_words(q.answer) - names
            assert len(answer & content_words(q.question)) / len(answer) < 0.6


def test_remapping_keeps_gold_evidence_and_answers(monkeypatch):
    """Record each kept question's evidence (by content) just before injection and compare it
    with what the final file says after reordering and id reassignment."""
    seen: dict[str, tuple[list[tuple], str]] = {}
    real_inject = pipeline.inject

    def spy(hh, questions, obs, rng):
        for q in questions:
            seen[q.qid] = (
                sorted((obs[k].ts, obs[k].device, obs[k].description) for k in q.evidence),
                q.answer,
            )
        return real_inject(hh, questions, obs, rng)

    monkeypatch.setattr(pipeline, "inject", spy)
    scenario = generate(1, seed=3).scenario_data[0]
    index = scenario.event_index()
    assert set(seen) == {q.question_id for q in scenario.questions}
    for q in scenario.questions:
        after = sorted(
            (index[i].timestamp, index[i].device, index[i].description)
            for i in q.evidence_event_ids
        )
        assert after == seen[q.question_id][0]
        assert q.answer == seen[q.question_id][1]


def test_size_targets_for_one_scenario(two):
    st = stats(two)
    for events in st.events_per_scenario:
        assert 900 <= events <= 1800
    assert 50 <= st.questions_total / st.scenarios <= 70
    # the paper's questions cite 9.4 events; ours cite what their checklist uses, since passing
    # traces (a pulse sample, a Wi-Fi fix) stopped counting as gold evidence (issue 26)
    assert st.mean_evidence_per_question >= 5
    assert 60 <= sum(st.description_tokens_per_scenario) / st.scenarios / 1000 <= 140
    assert {"storyline", "routine", "periodic", "noise", "conflict", "adversarial"} <= set(
        st.events_by_source
    )
    assert set(st.events_by_modality) == {m for ms in DEVICE_CAPABILITIES.values() for m in ms}
    text = st.render()
    assert "cl100k_base" in text or "estimate" in text
    for category in CATEGORIES:
        assert category in text


def test_text_is_varied(two):
    scenario = two.scenario_data[0]
    descriptions = [e.description for e in scenario.all_events()]
    assert len(set(descriptions)) == len(descriptions)
    openings = Counter(" ".join(d.split()[:3]) for d in descriptions)
    assert openings.most_common(1)[0][1] < len(descriptions) * 0.05


# ---------------------------------------------------------------- stage checks


def test_every_household_type_builds_a_week_of_episodes():
    for i, kind in enumerate(HOUSEHOLD_TYPES):
        hh = build_household(f"S{i + 1}", kind, substream(5, i, "personas"))
        assert len({p.name for p in hh.people}) == len(hh.people)
        plans = build_scenario(hh, substream(5, i, "scenario"), WorldState())
        assert 8 <= len(plans) <= 12
        assert len({p.template for p in plans}) == len(plans)


def test_household_check_rejects_a_device_with_foreign_modality():
    hh = build_household("S1", "young_family", random.Random(1))
    speaker = next(d for d in hh.devices if d.device_type == "smart_speaker")
    speaker.modality = list(speaker.modality) + ["vision"]
    with pytest.raises(SynthesisError, match="personas.*speaker_kitchen.*capability"):
        check_household(hh)


def test_scenario_check_rejects_effect_before_cause():
    hh = build_household("S1", "shared_flat", random.Random(2))
    plans = build_scenario(hh, random.Random(2), WorldState())
    first, second = plans[0].events[0], plans[0].events[1]
    second.causes = [first.story_id]
    first.ts, second.ts = second.ts, first.ts - timedelta(minutes=1)
    with pytest.raises(SynthesisError, match="caused by later event"):
        check_scenario(hh, plans, set())


def test_stream_check_rejects_two_events_on_one_device_minute():
    hh = build_household("S1", "single_professional", random.Random(3))
    ts = at(1, 9, 0)
    obs = [
        Obs(f"k{i}", ts, "speaker_kitchen", "audio", "kitchen", f"sound {i}", [], "noise")
        for i in range(2)
    ]
    with pytest.raises(SynthesisError, match="two events on speaker_kitchen"):
        check_stream(hh, obs)


def _question(
    evidence: list[str],
    items: list[tuple[str, list[str]]],
    anchors: list[list[str]],
    question: str = "What happened to Ana?",
    answer: str = "Ana sprained an ankle.",
) -> Question:
    return Question(
        qid="C1",
        category="causal",
        question=question,
        answer=answer,
        evidence=evidence,
        checklist=items,
        anchors=anchors,
        asker="Ana",
        time=at(2, 9),
        device="phone_ana",
        topic="injury",
        subject="Ana",
        origin="test",
    )


def _obs(key: str, text: str, device: str = "watch_ana", minute: int = 0) -> Obs:
    return Obs(key, at(1, 8, minute), device, "health", "home", text, ["Ana"], "storyline")


def test_filter_rejects_untraceable_leaky_and_shortcut_questions():
    obs = {
        "a": _obs("a", "Ana's watch recorded 41 bpm."),
        "b": _obs("b", "A limp.", "cam", 1),
        "c": _obs("c", "Swelling.", "phone_ana", 2),
    }
    ok = _question(["a", "b", "c"], [("pulse", ["a"]), ("limp", ["b", "c"])], [["41 bpm"], []])
    assert rejection(ok, obs, {"Ana"}) is None
    missing = _question(["a", "b", "c"], [("pulse", ["a"]), ("limp", ["b", "c"])], [["43 bpm"], []])
    assert rejection(missing, obs, {"Ana"}).startswith("answer fact not in evidence")
    leak = _question(
        ["a", "b", "c"],
        [("pulse", ["a"]), ("limp", ["b", "c"])],
        [["41 bpm"], []],
        question="Why was Ana's pulse 41 bpm?",
    )
    assert rejection(leak, obs, {"Ana"}).startswith("question leaks")
    shortcut = _question(
        ["a", "b", "c"],
        [("pulse", ["a"]), ("limp", ["b", "c"])],
        [[], []],
        question="Did Ana sprain an ankle?",
    )
    assert rejection(shortcut, obs, {"Ana"}).startswith("shortcut")
    thin = _question(["a"], [("pulse", ["a"]), ("again", ["a"])], [[], []])
    assert rejection(thin, obs, {"Ana"}).startswith("too little evidence")


def test_filter_rejects_an_answer_that_states_what_its_evidence_does_not():
    """Stage 5 applies the same answer-support test as `memfuse check-dataset`."""
    obs = {
        "a": _obs("a", "Ana's watch recorded 41 bpm."),
        "b": _obs("b", "A limp at the door.", "cam", 1),
        "c": _obs("c", "Swelling, said Ana.", "phone_ana", 2),
    }
    items = [("pulse", ["a"]), ("limp", ["b", "c"])]
    fine = _question(["a", "b", "c"], items, [[], []], answer="A pulse of 41 bpm, then a limp.")
    assert rejection(fine, obs, {"Ana"}) is None
    for answer, fact in [
        ("A pulse of 41 bpm and a limp at 07:15.", "07:15"),
        ("A pulse of 58 bpm, then a limp.", "58"),
        ("Ana limped to Riverside Clinic.", "Riverside"),
    ]:
        reason = rejection(_question(["a", "b", "c"], items, [[], []], answer=answer), obs, {"Ana"})
        assert reason is not None and reason.startswith("answer states what its evidence does not")
        assert fact in reason


def test_finalize_ids_remaps_and_refuses_a_distractor_as_evidence():
    stream = [_obs("z", "late", minute=30), _obs("y", "early", minute=5)]
    q = _question(["z", "y"], [("x", ["z"]), ("w", ["y"])], [[], []])
    mapping = finalize_ids("S7", stream, [q])
    assert mapping == {"y": "S7_E0001", "z": "S7_E0002"}
    assert q.evidence == ["S7_E0001", "S7_E0002"] and q.checklist == [
        ("x", ["S7_E0002"]),
        ("w", ["S7_E0001"]),
    ]
    decoy = _obs("d", "decoy", minute=1)
    decoy.source, decoy.target_question = "adversarial", q.qid
    q2 = _question(["d"], [("x", ["d"]), ("w", ["d"])], [[], []])
    with pytest.raises(SynthesisError, match="distractor became evidence"):
        finalize_ids("S7", [decoy], [q2])


def test_relative_time_words():
    rng = random.Random(0)
    tue_evening, wed_morning = datetime(2026, 5, 12, 18, 30), datetime(2026, 5, 13, 9, 0)
    seen = {when(tue_evening, wed_morning, rng) for _ in range(60)}
    assert seen == {"yesterday evening", "on Tuesday 12 May", "on 12 May in the evening"}
    night = {when(datetime(2026, 5, 13, 1, 10), wed_morning, rng) for _ in range(60)}
    assert night == {"last night", "on the night of Tuesday 12 May", "on Tuesday night"}
    later = {
        when(datetime(2026, 5, 11, 15, 0), datetime(2026, 5, 14, 12, 0), rng) for _ in range(60)
    }
    assert later == {
        "on Monday afternoon",
        "Monday afternoon",
        "on Monday 11 May",
        "on 11 May in the afternoon",
    }


def test_views_must_come_from_distinct_devices():
    from eval.synth.episodes.base import Ep
    from eval.synth.world import EpisodePlan

    hh = build_household("S1", "single_professional", random.Random(4))
    ep = Ep(hh, random.Random(4), EpisodePlan("S1_EP01", "t", "t"), 0, WorldState(), [0])
    ev = ep.event(at(0, 9), [hh.people[0].name], "kitchen", "something")
    assert isinstance(ep.view(ev, "speaker_kitchen", "audio", ["a sound"]), View)
    assert ep.view(ev, "watch_nobody", "health", ["x"]) is None
    with pytest.raises(SynthesisError, match="observes .* twice"):
        ep.view(ev, "speaker_kitchen", "dialogue", ["a note"])
    with pytest.raises(SynthesisError, match="cannot produce vision"):
        ep.view(ev, "lock_front", "vision", ["a face"])
    assert isinstance(ev, StoryEvent)


# ---------------------------------------------------------------- person-blind devices


@pytest.mark.parametrize(
    ("device_type", "modality", "blind"),
    [
        ("motion_sensor", "motion", True),
        ("door_window_sensor", "device_status", True),
        ("Smart Thermostat", "environment", True),
        ("Washer/Dryer", "device_status", True),
        ("smart_fridge", "vision, device_status", True),  # its camera sees food, not faces
        ("Smart Plug", "device_status", True),
        ("Temperature & Humidity Sensor", "environment", True),
        ("robot_vacuum", "device_status", True),
        ("Smartwatch", "health, motion, location", False),
        ("Kids Smartwatch", "health, motion, location", False),
        ("smart_ring", "health", False),
        ("laptop", "app_usage", False),
        ("Smart Door Lock", "location", False),  # lock wins over door: per-user codes
        ("Doorbell Camera", "vision, audio, location", False),
        ("smart_speaker", "audio, dialogue", False),
        ("smart_scale", "health", False),
        ("car_system", "location, dialogue", False),
        ("gaming_console", "app_usage, device_status", False),
        ("", "environment", True),  # no known word: the modalities decide
        ("gizmo", "environment, device_status", True),
        ("gizmo", "vision", False),  # an unknown device is not guessed blind
    ],
)
def test_person_blind_table(device_type, modality, blind):
    from eval.person_blind import is_person_blind
    from memory.formats.memfusebench import Device

    device = Device(device_id="d", device_type=device_type, modality=modality)
    assert is_person_blind(device) is blind


def test_every_generator_device_type_is_named_in_the_table():
    """The generator's types are decided by a word, never by the modality fallback."""
    from eval.person_blind import PERSON_AWARE_WORDS, PERSON_BLIND_WORDS, type_words

    for device_type in DEVICE_CAPABILITIES:
        assert set(type_words(device_type)) & (PERSON_AWARE_WORDS | PERSON_BLIND_WORDS), device_type


def test_strip_person_blind_only_touches_tags_of_blind_devices(legacy_two):
    from eval.person_blind import person_blind_devices, strip_person_blind_counted

    two = legacy_two  # the legacy generator tags people on person-blind devices
    before = to_json(two)
    stripped, count = strip_person_blind_counted(two)
    assert to_json(two) == before  # the input is left as it was
    expected = 0
    for old, new in zip(two.scenario_data, stripped.scenario_data, strict=True):
        blind = person_blind_devices(old.persona.all_devices)
        assert {"motion_hallway", "thermostat_living", "fridge_kitchen"} <= blind
        assert not blind & {"doorbell_front", "lock_front", "speaker_kitchen"}
        for a, b in zip(old.all_events(), new.all_events(), strict=True):
            if a.device in blind:
                assert b.characters == []
                expected += bool(a.characters)
            else:
                assert b.characters == a.characters
            assert a.model_dump(exclude={"characters"}) == b.model_dump(exclude={"characters"})
        assert new.questions == old.questions
    assert count == expected > 0


def test_synth_command_person_blind_writes_the_stripped_file_and_counts_it(legacy_two, tmp_path):
    from eval.person_blind import strip_person_blind

    st = synth_command(
        1, 7, tmp_path / "blind.json", person_blind=True, realism="legacy", verify=False
    ).stats
    one = legacy_two.model_copy(update={"scenario_data": legacy_two.scenario_data[:1]})
    assert (tmp_path / "blind.json").read_text() == to_json(strip_person_blind(one))
    assert st.person_blind_stripped and st.person_blind_stripped > 0
    assert "person-blind: events untagged" in st.render()
    assert stats(one).person_blind_stripped is None
    assert "person-blind" not in stats(one).render()  # the default statistics are unchanged


# ---------------------------------------------------------------- --realism


@pytest.fixture(scope="module")
def realistic_one():
    return generate(1, seed=7, realism="realistic")


def test_legacy_realism_stays_what_it_was(legacy_two, realistic_one):
    """Legacy output is pinned, so old and new numbers stay comparable. The digest changed
    once, on purpose, when stage 5 began rejecting answers their evidence does not support and
    the generator's answer bugs were fixed (events and evidence were not touched), again when
    glimpses (eval.synth.glimpses) came to be worded from one pool in every mode, and when a
    watch's day step counts were made to agree (one curve per day, only figures changed) and
    comparison answers began with their verdict (issue 26), and when the fever storyline came
    to need a patient with school or work that day and a second adult, and an aggregation
    with a tied extreme ("which night was the longest", two nights alike) stopped being asked
    (issue 26's household and answer flaws), and when the background came to log what only
    storylines had (a routine run's pace, a sleep record's awakenings, an inside unlock)."""
    import hashlib

    one = generate(1, seed=7, realism="legacy")
    digest = hashlib.sha256(to_json(one).encode()).hexdigest()
    assert digest == "3f216f888487c1adfa94feebb19973bc056c703a41a0339cf575d956db6ee868"
    assert one.scenario_data[0] == legacy_two.scenario_data[0]
    assert generate(1, seed=7).scenario_data[0] == realistic_one.scenario_data[0]  # the default


def test_unknown_realism_is_refused():
    from memory.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="legacy, realistic"):
        generate(1, seed=7, realism="gritty")


def test_realistic_tags_people_only_where_the_device_can_know(legacy_two, realistic_one):
    from eval.person_blind import knows_who

    legacy, real = legacy_two.scenario_data[0], realistic_one.scenario_data[0]
    devices = {d.device_id: d for d in real.persona.all_devices}
    tagged: Counter[str] = Counter()
    for event in real.all_events():
        device = devices[event.device]
        if event.characters:
            assert knows_who(device, event.modality.value), (event.device, event.modality)
            tagged[device.device_type] += 1
    # person-blind sensors lose their tags ...
    legacy_tagged = Counter(
        devices[e.device].device_type for e in legacy.all_events() if e.characters
    )
    for blind in ("motion_sensor", "smart_thermostat", "smart_fridge", "smart_light"):
        if legacy_tagged[blind]:
            assert tagged[blind] == 0, blind
    assert sum(legacy_tagged[t] for t in ("motion_sensor", "smart_thermostat")) > 0
    # ... knowing devices keep theirs
    for knowing in ("smartwatch", "smartphone", "smart_lock", "doorbell_camera"):
        if legacy_tagged[knowing]:
            assert tagged[knowing] > 0, knowing
    assert tagged["smartwatch"] and tagged["smartphone"]


def test_knows_who_reads_the_modality_of_shared_devices():
    from eval.person_blind import knows_who
    from memory.formats.memfusebench import Device

    def dev(device_type: str, modality: str) -> Device:
        return Device(device_id="d", device_type=device_type, modality=modality)

    assert knows_who(dev("smart_speaker", "audio, dialogue"), "dialogue")
    assert not knows_who(dev("smart_speaker", "audio, dialogue"), "audio")
    assert knows_who(dev("smart_display", "audio, dialogue, vision"), "vision")
    assert not knows_who(dev("smart_tv", "app_usage, device_status"), "device_status")
    assert knows_who(dev("gaming_console", "app_usage, device_status"), "app_usage")
    assert not knows_who(dev("smart_scale", "health"), "health")
    assert not knows_who(dev("motion_sensor", "motion"), "motion")
    assert knows_who(dev("smart_lock", "location"), "location")
    assert knows_who(dev("smartwatch", "health, motion, location"), "health")


def test_realistic_drops_sensor_boilerplate_and_keeps_the_facts(legacy_two, realistic_one):
    legacy, real = legacy_two.scenario_data[0], realistic_one.scenario_data[0]
    boiler = re.compile(r"Firmware \d|internal log entry is number|averaged over the last")
    piled = sum(bool(boiler.search(e.description)) for e in legacy.all_events())
    kept = sum(bool(boiler.search(e.description)) for e in real.all_events())
    assert piled > 0 and kept < 0.7 * piled  # one or two of the two to four drawn are written
    # the household's own events, times and devices: only their wording and tags differ
    old, new = own_events(legacy), own_events(real)
    assert list(new) == list(old)
    shorter = 0
    for moment, text in new.items():
        assert old[moment].startswith(text)  # the first one or two details stay
        shorter += len(text) < len(old[moment])
    assert shorter > len(new) / 2


def test_realistic_evidence_is_what_the_checklist_uses(legacy_two, realistic_one):
    legacy, real = legacy_two.scenario_data[0], realistic_one.scenario_data[0]
    pairs = paired_questions(legacy, real)
    assert len(pairs) >= 0.7 * len(real.questions)
    was = {e.event_id: (e.device, e.timestamp) for e in legacy.all_events()}
    now = {e.event_id: (e.device, e.timestamp) for e in real.all_events()}
    shrunk = 0
    for old, new in pairs:
        cited = {now[i] for i in new.evidence_event_ids}
        assert cited <= {was[i] for i in old.evidence_event_ids}
        used = {k for item in new.checklist for k in item.evidence_event_ids}
        assert used <= set(new.evidence_event_ids)
        if new.category == "fusion":
            assert set(new.evidence_event_ids) == used
        shrunk += len(new.evidence_event_ids) < len(old.evidence_event_ids)
    assert shrunk > 0


def test_realistic_output_validates_and_round_trips(realistic_one, tmp_path):
    from memory.formats.memfusebench_io import validate

    assert validate(realistic_one) is not None
    synth_command(1, 7, tmp_path / "real.json", realism="realistic", verify=False)
    assert (tmp_path / "real.json").read_text() == to_json(realistic_one)


def test_realistic_offline_twins_build_exactly_build_ones_scenario(realistic_one):
    from eval.synth.artifacts import STAGES, Artifacts
    from eval.synth.stages import ProceduralStages, request_for

    twins = ProceduralStages("realistic")
    request = request_for(0, 7)
    made = {stage: twins.generate(stage, request, Artifacts()) for stage in STAGES}
    direct = realistic_one.scenario_data[0]
    assert made["adversarial"].model_dump(mode="json") == direct.model_dump(mode="json")
