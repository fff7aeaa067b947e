"""Stage 2: a week of causally linked storyline episodes for one household.

Templates are tried in a seeded order until 8-12 fit the household; each gets a start day
chosen to spread episodes over the week. The result is the latent ground truth: story
events with times, people, places, causes and the devices able to observe them.
"""

from __future__ import annotations

import random

from eval.synth.episodes import REGISTRY, Ep, WorldState
from eval.synth.errors import SynthesisError
from eval.synth.personas import Household
from eval.synth.timewords import DAYS, WEEK_END, at
from eval.synth.world import EpisodePlan, StoryEvent

MIN_EPISODES, MAX_EPISODES = 8, 12


def build_scenario(hh: Household, rng: random.Random, world: WorldState) -> list[EpisodePlan]:
    """Fill the week with episodes; `world` records what they claim of everyday life."""
    target = rng.randint(MAX_EPISODES - 1, MAX_EPISODES)
    names = sorted(REGISTRY)
    rng.shuffle(names)
    plans: list[EpisodePlan] = []
    counter = [0]
    day_load = [0] * 7
    guests: set[str] = set()
    for name in names:
        if len(plans) >= target:
            break
        tpl = REGISTRY[name]
        starts = list(range(max(1, 7 - tpl.span + 1)))
        fewest = min(day_load[s] for s in starts)
        day0 = rng.choice([s for s in starts if day_load[s] == fewest])
        plan = EpisodePlan(f"{hh.scenario_id}_EP{len(plans) + 1:02d}", name, name)
        saved = counter[0]
        ep = Ep(hh, random.Random(rng.getrandbits(64)), plan, day0, world, counter)
        if not tpl.build(ep):
            counter[0] = saved
            continue
        ep.finish()
        _prune_unobserved(plan)
        if not plan.events:
            continue
        guests |= ep.guests
        for d in range(day0, min(7, day0 + tpl.span)):
            day_load[d] += 1
        plans.append(plan)
    check_scenario(hh, plans, guests)
    return plans


def _prune_unobserved(plan: EpisodePlan) -> None:
    """Drop story events no device can see, re-linking their effects to their causes."""
    by_id = {e.story_id: e for e in plan.events}
    dropped = {e.story_id for e in plan.events if not e.views}

    def resolve(ids: list[str]) -> list[str]:
        out: list[str] = []
        for i in ids:
            out += resolve(by_id[i].causes) if i in dropped else [i]
        return list(dict.fromkeys(out))

    kept = [e for e in plan.events if e.story_id not in dropped]
    for e in kept:
        e.causes = resolve(e.causes)
    plan.events = kept


def check_scenario(hh: Household, plans: list[EpisodePlan], guests: set[str]) -> None:
    """Stage-2 invariants: episode count, dates inside the week, resolvable and earlier
    causes, known people, existing devices, 1-4 distinct observing devices per event."""

    def fail(problem: str) -> None:
        raise SynthesisError("scenario", hh.scenario_id, problem)

    if not MIN_EPISODES <= len(plans) <= MAX_EPISODES:
        fail(f"{len(plans)} episodes (expected {MIN_EPISODES}-{MAX_EPISODES})")
    start = at(0, 0)
    known = {p.name for p in hh.people} | guests
    events: dict[str, StoryEvent] = {}
    for plan in plans:
        for ev in plan.events:
            if ev.story_id in events:
                fail(f"duplicate story id {ev.story_id}")
            events[ev.story_id] = ev
    for ev in events.values():
        if not start <= ev.ts <= WEEK_END:
            fail(f"{ev.story_id} at {ev.ts} is outside {DAYS[0]}..{DAYS[-1]}")
        for cause in ev.causes:
            if cause not in events:
                fail(f"{ev.story_id} has unresolvable cause {cause}")
            if events[cause].ts > ev.ts:
                fail(f"{ev.story_id} is caused by later event {cause}")
        if unknown := set(ev.people) - known:
            fail(f"{ev.story_id} involves unknown people {sorted(unknown)}")
        devices = [v.device for v in ev.views]
        if not 1 <= len(devices) <= 4 or len(set(devices)) != len(devices):
            fail(f"{ev.story_id} needs 1-4 distinct observing devices, has {devices}")
        for device in devices:
            if not hh.has(device):
                fail(f"{ev.story_id} observed by unknown device {device}")
