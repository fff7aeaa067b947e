"""`memfuse synth`: every household-week through the synthesis graph, then the verification.

One pipeline: without an LLM the graph's drafts are the procedural stages
(`eval.synth.stages.ProceduralStages`, which run `eval.synth.pipeline`) and its review is the
deterministic checks, with the offline repairs of `eval.synth.graph.repair`; with `llm` the LLM
drafts, reviews and corrects every stage. The written file is then verified by the offline
`memfuse verify` pass (`eval.verify.publish`) unless `verify` is off. The output path only ever
receives a finished file: the generator's draft is written and read back in a scratch folder,
and what is published there is the verified, corrected dataset (or, with `verify` off, the
draft itself), replaced in one step.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.person_blind import strip_person_blind_counted
from eval.synth.errors import SynthesisError
from eval.synth.graph import SynthesisContext, SynthesisInput, SynthesisRun, synthesize
from eval.synth.realism import DEFAULT_REALISM, check_realism, finish
from eval.synth.stages import ProceduralStages, request_for
from eval.synth.stats import SynthStats, stats
from memory.errors import ConfigurationError
from memory.formats.memfusebench import VERSION, MemFuseBench, Scenario
from memory.formats.memfusebench_io import dump, load, to_json, validate
from memory.settings import load_settings

Progress = Callable[[str], None]


@dataclass
class Synthesized:
    """What `synth_command` made: the published file's statistics and its verification."""

    stats: SynthStats
    verification: dict[str, Any] | None  # eval.verify.publish's report; None: not verified


def synth_command(
    scenarios: int = 6,
    seed: int = 7,
    out: Path = Path("data/memfusebench.json"),
    *,
    llm: bool = False,
    checkpoint: Path | None = None,
    person_blind: bool = False,
    realism: str = DEFAULT_REALISM,
    verify: bool = True,
    progress: Progress | None = None,
) -> Synthesized:
    """Synthesize `scenarios` household-weeks through the graph, verify, publish to `out`.

    `person_blind` empties `characters` on events of devices that cannot know who is there
    (eval.person_blind). With a `checkpoint` file an interrupted call continues where it
    stopped (`eval.synth.graph.run`). Offline the published file is deterministic for a seed.
    """
    settings = load_settings()
    if llm and not settings.llm_model:
        raise ConfigurationError(
            "memfuse synth --llm needs an LLM: set MEMFUSE_LLM_MODEL (and MEMFUSE_LLM_BASE_URL "
            "for a self-hosted endpoint), or drop --llm for the procedural generator"
        )
    check_realism(realism)
    twins = None if llm else ProceduralStages(realism)
    stage_lines = progress if (llm or checkpoint is not None) else None
    tally: Counter[str] = Counter()
    made: list[Scenario] = []
    for index in range(scenarios):
        request = SynthesisInput(scenario_index=index, seed=seed)
        context = SynthesisContext(
            policy="llm" if llm else "offline", settings=settings, generators=twins
        )
        run = synthesize(request, context, checkpoint=checkpoint, progress=stage_lines)
        made.append(run.scenario)
        if twins is not None:
            tally.update(twins.tally(request_for(index, seed)))
        if progress is not None:
            progress(_household_line(run, index, scenarios))
    if llm:  # the LLM's drafts: only the tags can be made realistic after the fact
        made = [finish(s.model_copy(deep=True), realism) for s in made]
    bench = validate(MemFuseBench(version=VERSION, scenario_data=made))
    stripped: int | None = None
    if person_blind:
        bench, stripped = strip_person_blind_counted(bench)
    report = _publish(bench, Path(out), verify)
    result = stats(load(out), dict(tally))
    if stripped is not None:
        result.person_blind_stripped = stripped
    return Synthesized(result, report)


def _publish(bench: MemFuseBench, out: Path, verify: bool) -> dict[str, Any] | None:
    """Write the draft in a scratch folder, prove it loads back unchanged, then publish it to
    `out`: verified and corrected, or as it is."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memfuse-synth-", dir=out.parent) as scratch:
        draft = Path(scratch) / out.name
        dump(bench, draft)
        if to_json(load(draft)) != to_json(bench):
            raise SynthesisError("output", "*", f"{out} does not survive a load/dump round trip")
        if not verify:
            draft.replace(out)
            return None
        from eval.verify.publish import publish_verified  # the verifier's graph, only when used

        return publish_verified(out, source=draft)


def _household_line(run: SynthesisRun, index: int, scenarios: int) -> str:
    scenario = run.scenario
    events = sum(len(e.events) for e in scenario.episodes)
    reviews = len(run.review_log)
    issues = sum(r.issues for r in run.review_log)
    return (
        f"[synth] {index + 1}/{scenarios} {scenario.scenario_id} {scenario.persona.type}: "
        f"{events:,} events, {len(scenario.questions)} questions; {reviews} review(s), "
        f"{issues} issue(s) found"
    )
