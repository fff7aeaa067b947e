"""Procedural Scene-to-Sensor generator for MemFuseBench (no LLM, no network).

The paper's six stages, each a module with its own deterministic checks:

1. `personas`   households, people, routines, devices          -> check_household
2. `scenario`   a week of causally linked storyline episodes    -> check_scenario
3. `streams`    storyline projected onto devices, plus `routine`, periodic, noise and
                `conflicts`, merged and deduplicated            -> check_stream
4. `questions`  six categories with answers, evidence, checklists -> check_questions
5. `filtering`  unsupported / shortcut / duplicate questions dropped, categories balanced
6. `adversarial` topical distractors, final ids, remapping      -> finalize_ids' checks

Every scenario and stage draws from its own named random stream (`rng.substream`), so a
seed always gives a byte-identical file. The code decides what happens, when, which device
senses it and what the answers are; the words it is told in (names, places, device voices,
clauses, questions, decoys, noise) are data, `data/*.json`, read through `tables`.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from eval.person_blind import strip_person_blind_counted
from eval.synth.adversarial import finalize_ids, inject
from eval.synth.assemble import to_scenario
from eval.synth.conflicts import paired_conflicts
from eval.synth.episodes import WorldState
from eval.synth.errors import SynthesisError
from eval.synth.filtering import filter_questions
from eval.synth.pedometer import settle_step_counts
from eval.synth.personas import HOUSEHOLD_TYPES, build_household
from eval.synth.questions import aggregation_drafts, check_questions, first_person_drafts, resolve
from eval.synth.realism import DEFAULT_REALISM, check_realism, finish
from eval.synth.rng import substream
from eval.synth.routine import incidental_noise, periodic_readings, simulate_routines
from eval.synth.scenario import build_scenario
from eval.synth.stats import SynthStats, stats
from eval.synth.streams import check_stream, merge_streams, project_storyline
from memory.formats.memfusebench import VERSION, MemFuseBench, Scenario
from memory.formats.memfusebench_io import dump, load, to_json, validate

__all__ = [
    "SynthStats",
    "SynthesisError",
    "build_one",
    "generate",
    "generate_with_report",
    "stats",
    "synth_command",
]

QUESTIONS_PER_SCENARIO = 60


def build_one(
    index: int, seed: int, realism: str = DEFAULT_REALISM
) -> tuple[Scenario, Counter[str]]:
    """One household-week through all six stages; returns it with its filtering tally
    (`realism`: eval.synth.realism)."""
    sid = f"S{index + 1}"
    hh = build_household(
        sid, HOUSEHOLD_TYPES[index % len(HOUSEHOLD_TYPES)], substream(seed, sid, "personas")
    )
    hh.realism = check_realism(realism)
    world = WorldState()
    plans = build_scenario(hh, substream(seed, sid, "scenario"), world)
    story = project_storyline(hh, plans, substream(seed, sid, "projection"))
    conflict_obs, conflict_drafts = paired_conflicts(hh, world, substream(seed, sid, "conflicts"))
    routine = simulate_routines(hh, world, substream(seed, sid, "routine"))
    periodic = periodic_readings(hh, substream(seed, sid, "periodic"))
    noise = incidental_noise(hh, substream(seed, sid, "noise"))
    stream = merge_streams(hh, story, conflict_obs, routine, periodic, noise)
    settle_step_counts(hh, stream)
    check_stream(hh, stream)
    obs = {o.key: o for o in stream}
    q_rng = substream(seed, sid, "questions")
    drafts = [q for plan in plans for q in plan.questions] + conflict_drafts
    drafts += aggregation_drafts(hh, stream, world, q_rng) + first_person_drafts(
        hh, stream, world, q_rng
    )
    stories = {ev.story_id: ev for plan in plans for ev in plan.events}
    questions = resolve(hh, drafts, obs, q_rng, stories)
    check_questions(hh, questions, obs)
    report = filter_questions(
        questions,
        obs,
        {p.name for p in hh.people},
        substream(seed, sid, "filtering"),
        sid,
        QUESTIONS_PER_SCENARIO,
    )
    distractors = inject(hh, report.kept, obs, substream(seed, sid, "adversarial"))
    stream = settle_step_counts(hh, stream + distractors)
    check_stream(hh, stream)
    finalize_ids(sid, stream, report.kept)
    return finish(to_scenario(hh, plans, stream, report.kept), realism), report.reasons()


def generate_with_report(
    n_scenarios: int = 6, seed: int = 7, progress: bool = False, realism: str = DEFAULT_REALISM
) -> tuple[MemFuseBench, Counter[str]]:
    scenarios: list[Scenario] = []
    tally: Counter[str] = Counter()
    for index in range(n_scenarios):
        scenario, reasons = build_one(index, seed, realism)
        scenarios.append(scenario)
        tally.update(reasons)
        if progress:
            n_ev = sum(len(e.events) for e in scenario.episodes)
            print(
                f"[synth] {scenario.scenario_id} {scenario.persona.type}: {n_ev} events, "
                f"{len(scenario.questions)} questions",
                file=sys.stderr,
            )
    bench = MemFuseBench(version=VERSION, scenario_data=scenarios)
    return validate(bench), tally


def generate(
    n_scenarios: int = 6, seed: int = 7, progress: bool = False, realism: str = DEFAULT_REALISM
) -> MemFuseBench:
    """A validated benchmark of `n_scenarios` household-weeks; deterministic for `seed`."""
    return generate_with_report(n_scenarios, seed, progress, realism)[0]


def synth_command(
    scenarios: int = 6,
    seed: int = 7,
    out: Path = Path("data/memfusebench.json"),
    person_blind: bool = False,
    realism: str = DEFAULT_REALISM,
) -> SynthStats:
    """Generate, write, prove the file loads back unchanged through `load`, report sizes.

    `person_blind` empties `characters` on events of devices that cannot know who is there
    (eval.person_blind); off, the file is exactly what the generator produced. `realism`
    (eval.synth.realism) is `legacy` (the original generator) or `realistic`.
    """
    bench, tally = generate_with_report(scenarios, seed, realism=realism)
    stripped: int | None = None
    if person_blind:
        bench, stripped = strip_person_blind_counted(bench)
    text = to_json(bench)
    out = Path(out)
    dump(bench, out)
    reread = load(out)
    if to_json(reread) != text:
        raise SynthesisError("output", "*", f"{out} does not survive a load/dump round trip")
    result = stats(reread, dict(tally))
    if stripped is not None:
        result.person_blind_stripped = stripped
    return result
