"""Turning one sensed fact into an `Obs`: device checks, wording, location and anchors."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NoReturn

from eval.synth.errors import SynthesisError
from eval.synth.personas import Household
from eval.synth.phrasing import render
from eval.synth.timewords import WEEK_END, at
from eval.synth.world import Obs
from memory.formats.memfusebench import DEVICE_CAPABILITIES

MOBILE = ("smartwatch", "kids_smartwatch", "smartphone")

# How much surrounding detail each source kind gets: ((min, max) sensor details, P(scene)).
RICHNESS: dict[str, tuple[tuple[int, int], float]] = {
    "storyline": ((2, 4), 1.5),
    "conflict": ((3, 4), 1.6),
    "adversarial": ((3, 4), 1.6),
    "routine": ((2, 4), 1.5),
    "noise": ((2, 4), 1.5),
    "periodic": ((2, 3), 1.2),
}


def location_for(hh: Household, device_id: str, place: str | None) -> str:
    """Fixed devices report where they are installed; wearables and phones follow the person."""
    device = hh.device(device_id)
    if device.device_type in MOBILE:
        return place or "home"
    if device.device_type in ("laptop", "tablet") and place:
        return place
    return device.location


def fact(topic: str, person: str, day: int, value: Any, **more: Any) -> dict[str, Any]:
    """An observation's `facts`: the topic stage 4 asks about, whose, which day, the value."""
    return {"topic": topic, "person": person, "day": day, "value": value, **more}


def has_anchors(text: str, anchors: Sequence[str]) -> bool:
    low = text.lower()
    return all(a.lower() in low for a in anchors if a)


class Emitter:
    """Collects observations of one source kind under provisional keys (`prefix` + number)."""

    def __init__(self, hh: Household, rng: random.Random, source: str, prefix: str):
        self.hh, self.rng, self.source, self.prefix = hh, rng, source, prefix
        self.items: list[Obs] = []

    def emit(
        self,
        ts: datetime,
        device: str | None,
        modality: str,
        clauses: Sequence[str],
        *,
        people: Sequence[str] = (),
        place: str | None = None,
        facts: dict[str, Any] | None = None,
        anchors: Sequence[str] = (),
        framed: bool = True,
        gist: str = "",
    ) -> Obs | None:
        if device is None or not self.hh.has(device) or not at(0, 0) <= ts <= WEEK_END:
            return None  # a device this household lacks, or a time outside the week
        if modality not in DEVICE_CAPABILITIES[self.hh.device(device).device_type]:
            self.fail(f"{self.source} event on {device} uses impossible modality {modality}")
        text = self.word(device, modality, clauses, ts, framed, anchors, f"rendered {self.source}")
        obs = Obs(
            key=f"{self.prefix}{len(self.items) + 1:04d}",
            ts=ts.replace(second=0, microsecond=0),
            device=device,
            modality=modality,
            location=location_for(self.hh, device, place),
            description=text,
            characters=list(dict.fromkeys(people)),
            source=self.source,
            facts=dict(facts or {}),
            anchors=tuple(anchors),
            gist=gist,
        )
        self.items.append(obs)
        return obs

    def word(
        self,
        device: str,
        modality: str,
        clauses: Sequence[str],
        ts: datetime,
        framed: bool,
        anchors: Sequence[str],
        what: str,
    ) -> str:
        """`device`'s wording of one of `clauses`, as much detail around it as this source kind
        gets; `what` names the reading should the text lose its anchors."""
        details, scene = RICHNESS[self.source]
        clause = self.rng.choice(list(clauses))
        sensor = self.hh.device(device)
        realistic = self.hh.realism != "legacy"  # one or two sensor details, not three or four
        text = render(
            sensor, modality, clause, ts, self.rng, framed, details, scene, few_details=realistic
        )
        if not has_anchors(text, anchors):
            self.fail(f"{what} text lost its anchors {list(anchors)}: {text}")
        return text

    def fail(self, problem: str) -> NoReturn:
        raise SynthesisError("streams", self.hh.scenario_id, problem)
