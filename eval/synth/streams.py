"""Stage 3: render storylines into device observations and merge them with everyday life.

Each storyline event becomes one observation per observing device, worded in that
device's voice and carrying only that device's part of the fact. The merged stream is
ordered by time, periodic readings that would sit on top of a storyline or conflict
reading of the same device are dropped, and collisions on (device, minute) are resolved
by nudging the later observation (storyline and conflict events are never dropped).
"""

from __future__ import annotations

import random
from datetime import timedelta

from eval.synth.emit import Emitter, location_for
from eval.synth.errors import SynthesisError
from eval.synth.personas import Household
from eval.synth.timewords import WEEK_END, at
from eval.synth.world import EpisodePlan, Obs
from memory.formats.memfusebench import DEVICE_CAPABILITIES

KEEP_ALWAYS = ("storyline", "conflict")
PERIODIC_GUARD = timedelta(minutes=45)


def project_storyline(hh: Household, plans: list[EpisodePlan], rng: random.Random) -> list[Obs]:
    em = Emitter(hh, rng, "storyline", "")  # only words the views: keys name the story event
    out: list[Obs] = []
    for plan in plans:
        for ev in plan.events:
            for i, view in enumerate(ev.views, start=1):
                ts = min(ev.ts + timedelta(minutes=view.offset), WEEK_END).replace(second=0)
                what = f"{ev.story_id} view on {view.device}"
                text = em.word(
                    view.device, view.modality, view.clauses, ts, view.framed, view.anchors, what
                )
                people = view.people if view.people is not None else ev.people
                place = view.place or ev.place
                key = f"{ev.story_id}_v{i}"
                view.obs_key = key
                out.append(
                    Obs(
                        key=key,
                        ts=ts,
                        device=view.device,
                        modality=view.modality,
                        location=location_for(hh, view.device, place),
                        description=text,
                        characters=list(dict.fromkeys(people)),
                        source="storyline",
                        episode_id=plan.episode_id,
                        story_id=ev.story_id,
                        facts=dict(view.facts or {}),
                        anchors=view.anchors,
                        gist=view.gist,
                    )
                )
    return out


def merge_streams(hh: Household, *streams: list[Obs]) -> list[Obs]:
    """Time-order everything, drop periodic readings shadowed by a storyline/conflict reading of
    the same device, and give every (device, minute) a single observation."""
    items = [o for s in streams for o in s]
    anchored: dict[str, list] = {}
    for o in items:
        if o.source in KEEP_ALWAYS:
            anchored.setdefault(o.device, []).append(o.ts)
    kept = [
        o
        for o in items
        if not (
            o.source == "periodic"
            and any(abs(o.ts - t) <= PERIODIC_GUARD for t in anchored.get(o.device, ()))
        )
    ]
    priority = {"storyline": 0, "conflict": 1, "routine": 2, "periodic": 3, "noise": 4}
    kept.sort(key=lambda o: (o.ts, priority.get(o.source, 5), o.key))
    taken: set[tuple[str, object]] = set()
    result: list[Obs] = []
    for o in kept:
        slot = (o.device, o.ts)
        if slot in taken and o.source not in KEEP_ALWAYS and o.source != "routine":
            continue  # an incidental reading colliding with a real one is simply not recorded
        while (o.device, o.ts) in taken:
            o.ts += timedelta(minutes=1)
        taken.add((o.device, o.ts))
        result.append(o)
    result.sort(key=lambda o: (o.ts, o.key))
    return result


def check_stream(hh: Household, stream: list[Obs]) -> None:
    """Stage-3 invariants: known device, producible modality, inside the week, unique
    (device, timestamp), unique keys, and 1-4 distinct devices per storyline event."""

    def fail(problem: str) -> None:
        raise SynthesisError("streams", hh.scenario_id, problem)

    seen: set[tuple[str, object]] = set()
    keys: set[str] = set()
    per_story: dict[str, list[str]] = {}
    for o in stream:
        if not hh.has(o.device):
            fail(f"{o.key} on unknown device {o.device}")
        if o.modality not in DEVICE_CAPABILITIES[hh.device(o.device).device_type]:
            fail(f"{o.key}: {o.device} cannot produce {o.modality}")
        if not at(0, 0) <= o.ts <= WEEK_END + timedelta(minutes=30):
            fail(f"{o.key} at {o.ts} is outside the week")
        if (o.device, o.ts) in seen:
            fail(f"two events on {o.device} at {o.ts}")
        seen.add((o.device, o.ts))
        if o.key in keys:
            fail(f"duplicate key {o.key}")
        keys.add(o.key)
        if not o.description.strip():
            fail(f"{o.key} has an empty description")
        if o.story_id:
            per_story.setdefault(o.story_id, []).append(o.device)
    for story_id, devices in per_story.items():
        if not 1 <= len(devices) <= 4 or len(set(devices)) != len(devices):
            fail(f"{story_id} projected onto {devices} (need 1-4 distinct devices)")
