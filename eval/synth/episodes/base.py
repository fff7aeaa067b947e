"""The small language episode templates are written in.

A template is a function `(ep: Ep) -> bool` registered with `@template(name, span)`; it
picks its people and parameters from `ep.r`, declares causally linked storyline events
with `ep.event`, says which device could sense what with `ep.view` (a missing device
simply yields no view), and proposes questions with `ep.ask` / `ep.perspective`. It returns
False when the household cannot host it (no driver for a car issue, nobody with a watch).
Views must come from distinct devices and use a modality the device can produce; those
are template bugs and raise at once.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from eval.synth.episodes.ambient import ambient_options
from eval.synth.errors import SynthesisError
from eval.synth.personas import Household, Person
from eval.synth.phrasing import LABELS, place_words
from eval.synth.timewords import WEEK_END, at
from eval.synth.world import CheckDraft, EpisodePlan, QuestionDraft, StoryEvent, View
from memory.formats.memfusebench import DEVICE_CAPABILITIES, Device

RefLike = View | StoryEvent | None

GIST_VERB = {
    "health": "recorded",
    "motion": "detected",
    "vision": "captured",
    "audio": "heard",
    "dialogue": "noted that",
    "environment": "measured",
    "location": "logged",
    "app_usage": "showed",
    "device_status": "reported",
}


@dataclass
class WorldState:
    """What storylines did to everyday life, so routine simulation stays consistent."""

    claimed: set[tuple[str, str, int]] = field(default_factory=set)  # (topic, person, day)
    protagonists: dict[str, int] = field(default_factory=dict)
    conflicted: set[tuple[str, str]] = field(default_factory=set)  # (topic, person) with a conflict

    def claim(self, topic: str, person: str, day: int) -> None:
        self.claimed.add((topic, person, day))

    def is_claimed(self, topic: str, person: str, day: int) -> bool:
        return (topic, person, day) in self.claimed

    def any_claim(self, topic: str, person: str) -> bool:
        return any(t == topic and p == person for t, p, _ in self.claimed)


@dataclass
class Template:
    name: str
    span: int  # days the episode covers
    build: Callable[[Ep], bool]


REGISTRY: dict[str, Template] = {}


def template(name: str, span: int) -> Callable[[Callable[[Ep], bool]], Callable[[Ep], bool]]:
    def register(fn: Callable[[Ep], bool]) -> Callable[[Ep], bool]:
        if name in REGISTRY:
            raise ValueError(f"episode template {name!r} registered twice")
        REGISTRY[name] = Template(name, span, fn)
        return fn

    return register


def canonical_label(device: Device) -> str:
    options = LABELS.get(device.device_type, ["{id}"])
    return options[0].format(O=device.owner, L=place_words(device.location), id=device.device_id)


class Ep:
    """Builder handed to a template: the household, a private RNG, and the plan it fills."""

    def __init__(
        self,
        hh: Household,
        rng: random.Random,
        plan: EpisodePlan,
        day0: int,
        world: WorldState,
        story_counter: list[int],
    ):
        self.hh, self.r, self.plan, self.day0, self.world = hh, rng, plan, day0, world
        self._counter = story_counter
        self.guests: set[str] = set()
        self._want: dict[str, int] = {}

    # -- people and time --------------------------------------------------------------

    def pick(self, people: Sequence[Person], protagonist: bool = True) -> Person | None:
        """Choose among candidates, preferring people who have had fewer storylines."""
        if not people:
            return None
        load = self.world.protagonists
        fewest = min(load.get(p.name, 0) for p in people)
        choice = self.r.choice([p for p in people if load.get(p.name, 0) == fewest])
        if protagonist:
            load[choice.name] = load.get(choice.name, 0) + 1
        return choice

    def other_adult(self, *exclude: str) -> Person | None:
        pool = [p for p in self.hh.adults() if p.name not in exclude and p.lives_in]
        return self.r.choice(pool) if pool else None

    def asker(self, *exclude: str, include: Iterable[str] = ()) -> str:
        pool = [
            p.name
            for p in self.hh.people
            if p.kind in ("adult", "elder", "carer", "teen") and p.name not in exclude
        ] + list(include)
        return self.r.choice(pool or [self.hh.people[0].name])

    def keep_home(self, name: str, day: int, morning: bool = True, evening: bool = True) -> None:
        """The storyline decides how `name` leaves or comes home that day, so the routine
        commute is not simulated (someone ill at home must not also be seen leaving)."""
        if morning:
            self.world.claim("departure", name, day)
        if evening:
            self.world.claim("arrival", name, day)

    def at(self, day: int, hour: int, minute: int = 0) -> datetime:
        ts = at(min(day, 6), hour, minute)
        return min(ts, WEEK_END)

    def jitter(self, day: int, hour: int, lo: int = 0, hi: int = 50) -> datetime:
        return self.at(day, hour, self.r.randint(lo, hi))

    # -- storyline --------------------------------------------------------------------

    def event(
        self,
        ts: datetime,
        people: list[str],
        place: str,
        fact: str,
        causes: Sequence[StoryEvent | None] = (),
    ) -> StoryEvent:
        self._counter[0] += 1
        story_id = f"{self.hh.scenario_id}_L{self._counter[0]:03d}"
        cause_ids = [c.story_id for c in causes if c is not None]
        for cause in causes:
            if cause is not None and cause.ts > ts:
                raise SynthesisError(
                    "scenario",
                    self.hh.scenario_id,
                    f"{self.plan.template}: cause {cause.story_id} after {story_id}",
                )
        ev = StoryEvent(story_id, self.plan.episode_id, ts, list(people), place, fact, cause_ids)
        self.plan.events.append(ev)
        return ev

    def view(
        self,
        ev: StoryEvent,
        device: str | None,
        modality: str,
        clauses: list[str],
        *,
        gist: str = "",
        anchors: Sequence[str] = (),
        offset: int = 0,
        people: list[str] | None = None,
        place: str | None = None,
        facts: dict | None = None,
        framed: bool = True,
        ambient: bool = False,
    ) -> View | None:
        """Declare what `device` senses of `ev`; None (and nothing added) if it does not exist."""
        if device is None or not self.hh.has(device):
            return None
        dtype = self.hh.device(device).device_type
        if modality not in DEVICE_CAPABILITIES[dtype]:
            raise SynthesisError(
                "scenario",
                self.hh.scenario_id,
                f"{self.plan.template}: {device} cannot produce {modality}",
            )
        if any(v.device == device for v in ev.views):
            raise SynthesisError(
                "scenario",
                self.hh.scenario_id,
                f"{self.plan.template}: {device} observes {ev.story_id} twice",
            )
        gist = gist or f"{GIST_VERB[modality]} {clauses[0]}"
        v = View(
            device,
            modality,
            list(clauses),
            offset,
            gist,
            tuple(anchors),
            people,
            place,
            facts,
            framed,
            story_id=ev.story_id,
            ambient=ambient,
        )
        ev.views.append(v)
        return v

    # -- ambient views ------------------------------------------------------------------

    def finish(self) -> None:
        """Give every story event 3-4 observing devices where the household has them.

        Besides the devices a template names, a happening at home is usually also noticed
        in passing: a wearable logs the pulse of whoever is involved, a phone knows where it
        is, the hallway sensor registers movement, a camera sees the room it watches. These
        partial views make each fact fragmentary across more sources.
        """
        self.fill(self.plan.events)

    def fill(self, events: Sequence[StoryEvent]) -> None:
        for ev in events:
            if ev.story_id not in self._want:
                self._want[ev.story_id] = 4 if self.r.random() < 0.55 else 3
            want = self._want[ev.story_id]
            if len(ev.views) >= want:
                continue
            options = ambient_options(self.hh, self.r, ev)
            self.r.shuffle(options)
            for device, modality, words, people in options:
                if len(ev.views) >= want:
                    break
                if any(v.device == device for v in ev.views):
                    continue
                self.view(
                    ev,
                    device,
                    modality,
                    **words,
                    people=people,
                    offset=self.r.randint(-3, 4),
                    ambient=True,
                )

    def label(self, device: str | None) -> str:
        return canonical_label(self.hh.device(device)) if device and self.hh.has(device) else ""

    # -- questions --------------------------------------------------------------------

    def ask(
        self,
        category: str,
        asker: str,
        texts: list[str],
        answer: str,
        checklist: list[tuple[str, Sequence[RefLike], Sequence[str]]],
        topic: str,
        *,
        subject: str | None = None,
        moments: dict[str, datetime] | None = None,
        delay: tuple[float, float] = (2.0, 30.0),
    ) -> None:
        items = [
            CheckDraft(item, [r for r in refs if r is not None], list(anchors))
            for item, refs, anchors in checklist
        ]
        self.plan.questions.append(
            QuestionDraft(
                category=category,
                asker=asker,
                texts=texts,
                answer=answer,
                checklist=[c for c in items if c.refs][:5],
                topic=topic,
                subject=subject,
                moments=dict(moments or {}),
                delay_hours=delay,
                origin=self.plan.template,
            )
        )

    def perspective(
        self,
        events: Sequence[StoryEvent],
        asker: str,
        texts: list[str],
        lead: str,
        topic: str,
        subject: str | None = None,
        moments: dict[str, datetime] | None = None,
    ) -> None:
        """What each device made of one happening: one checklist item per observing device.
        A pulse sample a wearable logged in passing is no account of the happening, so it is
        not one of them (a phone placing someone, a camera seeing them, still are)."""
        self.fill(events)
        passing = self.hh.realism != "legacy"  # legacy keeps what it wrote
        views = [
            v
            for ev in events
            for v in ev.views
            if not (passing and v.ambient and v.modality == "health")
        ]
        if len({v.device for v in views}) < 3:
            return
        by_device: dict[str, list[View]] = {}
        for v in views:
            by_device.setdefault(v.device, []).append(v)
        items, parts = [], []
        for device, vs in list(by_device.items())[:5]:
            text = f"{self.label(device)} " + " and ".join(dict.fromkeys(v.gist for v in vs))
            parts.append(text)
            items.append((text[:1].upper() + text[1:], vs, [a for v in vs for a in v.anchors]))
        answer = f"{lead} " + "; ".join(parts) + "."
        self.ask(
            "perspective", asker, texts, answer, items, topic, subject=subject, moments=moments
        )
