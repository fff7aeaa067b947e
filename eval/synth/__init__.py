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

from eval.synth.errors import SynthesisError
from eval.synth.pipeline import QUESTIONS_PER_SCENARIO, StagePipeline
from eval.synth.realism import DEFAULT_REALISM
from eval.synth.stats import SynthStats, stats
from memory.formats.memfusebench import VERSION, MemFuseBench, Scenario
from memory.formats.memfusebench_io import validate

__all__ = [
    "QUESTIONS_PER_SCENARIO",
    "SynthStats",
    "SynthesisError",
    "build_one",
    "generate",
    "generate_with_report",
    "stats",
]


def build_one(
    index: int, seed: int, realism: str = DEFAULT_REALISM
) -> tuple[Scenario, Counter[str]]:
    """One household-week through all six stages, unreviewed (`eval.synth.pipeline`); returns
    it with its filtering tally (`realism`: eval.synth.realism). `memfuse synth` runs the same
    stages through the synthesis graph, reviewed (`eval.synth.command`)."""
    pipeline = StagePipeline(index, seed, realism=realism)
    return pipeline.scenario(), pipeline.tally


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
