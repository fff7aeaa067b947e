"""Stage 1: households, their people and routines, and the devices that observe them.

A `Household` (defined in `household`) is the persona-source graph every later stage
consults: who lives here, what each person's day looks like (structured, so routine events
can be simulated), and which device of which type exists where. `check_household` enforces
the paper's reviewer dimensions that can be checked mechanically (device consistency,
owners, capabilities, locations, interests, unique names, age-appropriate devices).
"""

from __future__ import annotations

import random
from typing import Any

from eval.synth.errors import SynthesisError
from eval.synth.household import Household, Person, usual_weight  # noqa: F401  (re-exported)
from eval.synth.tables import load_table
from memory.formats.memfusebench import DEVICE_CAPABILITIES, Device

TABLE = load_table("personas")

FEMALE = tuple(TABLE["FEMALE"])
MALE = tuple(TABLE["MALE"])
INTERESTS = TABLE["INTERESTS"]
PLACE_POOLS = TABLE["PLACE_POOLS"]
WORKPLACES = TABLE["WORKPLACES"]  # fixed places of work, besides the household's drawn ones
# Per household type: dinner and the people in the order build_household creates them.
HOUSEHOLDS: dict[str, dict] = TABLE["HOUSEHOLDS"]
HOUSEHOLD_TYPES: tuple[str, ...] = tuple(HOUSEHOLDS)
ADULT_DAY = TABLE["ADULT_DAY"]
SPORT_MINUTES: dict[str, int] = TABLE["SPORT_MINUTES"]  # the interests that are workouts
WORKOUT_STARTS = TABLE["WORKOUT_STARTS"]


# ---------------------------------------------------------------- building


def _minutes(hhmm: str) -> int:
    """Minutes from midnight of a layout time ("07:45")."""
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def _drawn(value: Any, rng: random.Random) -> Any:
    """A list in a layout is a set of alternatives, one drawn; anything else is fixed."""
    return rng.choice(value) if isinstance(value, list) else value


class _Names:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()

    def take(self, gender: str) -> str:
        pool = [n for n in (FEMALE if gender == "f" else MALE) if n not in self.used]
        name = self.rng.choice(pool)
        self.used.add(name)
        return name


def _person(
    rng: random.Random, names: _Names, spec: dict, places: dict[str, str], previous: Person | None
) -> Person:
    """One person of a household layout; `"gender": "opposite"` partners the person before."""
    kind = spec["kind"]
    age = rng.randint(*spec["age"])
    kw = {key: spec[key] for key in ("commute", "lives_in") if key in spec}
    if "health" in spec:
        kw["health"] = _drawn(spec["health"], rng)
    gender = rng.choice("fm")  # drawn even where the layout fixes it, as every person draws
    if spec.get("gender") == "opposite":
        assert previous is not None
        gender = "f" if previous.gender == "m" else "m"
    elif "gender" in spec:
        gender = spec["gender"]
    interests = rng.sample(INTERESTS["adult" if kind == "carer" else kind], rng.randint(2, 4))
    p = Person(
        name=names.take(gender),
        age=age,
        gender=gender,
        kind=kind,
        role=spec["role"],
        interests=sorted(interests),
        work={**WORKPLACES, **places}.get(spec.get("work")),
        **kw,
    )
    if kind == "adult":
        _adult_day(rng, p)
    return p


def _adult_day(rng: random.Random, p: Person) -> None:
    """An adult's drawn hours; on workdays they wake some minutes before leaving."""
    p.leave = _minutes(rng.choice(ADULT_DAY["leave"]))
    p.back = _minutes(rng.choice(ADULT_DAY["back"]))
    before = rng.choice(ADULT_DAY["wake_before_leave"])
    p.wake = (p.leave - before, _minutes(rng.choice(ADULT_DAY["weekend_wake"])))
    p.bed = (_minutes(rng.choice(ADULT_DAY["bed"])), _minutes(rng.choice(ADULT_DAY["weekend_bed"])))


def _own_hours(rng: random.Random, p: Person, spec: dict) -> None:
    """The hours a layout sets for `p`: leave and back a time or a list to draw from, wake and
    bed a (weekday, weekend) pair."""
    for key in ("leave", "back"):
        if key in spec:
            setattr(p, key, _minutes(_drawn(spec[key], rng)))
    for key in ("wake", "bed"):
        if key in spec:
            weekday, weekend = spec[key]
            setattr(p, key, (_minutes(weekday), _minutes(weekend)))
    if "work_days" in spec:
        p.work_days = tuple(spec["work_days"])


def _workouts(rng: random.Random, p: Person) -> None:
    sports = [i for i in p.interests if i in SPORT_MINUTES]
    if not sports and p.kind in ("adult", "teen", "elder") and rng.random() < 0.6:
        sports = ["walking" if p.kind == "elder" else "running"]
    for sport in sports[:2]:
        days = sorted(rng.sample(range(7), rng.randint(2, 3)))
        for day in days:
            start = rng.choice(WORKOUT_STARTS["workday" if day < 5 and p.work else "free"])
            if p.kind == "elder":
                start = rng.choice(WORKOUT_STARTS["elder"])
            minutes = SPORT_MINUTES[sport] + rng.randint(-8, 15)
            p.workouts.append((day, sport, _minutes(start), minutes))
    p.workouts.sort()


def build_household(scenario_id: str, household_type: str, rng: random.Random) -> Household:
    """Sample one household of the given type (people, routines, devices, places)."""
    names = _Names(rng)
    places = {kind: rng.choice(pool) for kind, pool in sorted(PLACE_POOLS.items())}
    layout = HOUSEHOLDS.get(household_type)
    if layout is None:
        raise SynthesisError("personas", scenario_id, f"unknown household type {household_type!r}")
    people: list[Person] = []
    for spec in layout["people"]:
        people.append(_person(rng, names, spec, places, people[-1] if people else None))
    # the layout's own hours only once everyone is drawn: the teens' return times draw last
    for p, spec in zip(people, layout["people"]):
        _own_hours(rng, p, spec)
    for p in people:
        if p.kind in ("adult", "teen", "elder", "child"):
            _workouts(rng, p)
    devices = _devices(household_type, people, rng)
    hh = Household(scenario_id, household_type, people, devices, places, _minutes(layout["dinner"]))
    check_household(hh)
    return hh


SHARED_BY_TYPE: dict[str, list[tuple[str, str, str]]] = TABLE["SHARED_BY_TYPE"]

PERSONAL_PREFIX = TABLE["PERSONAL_PREFIX"]
PERSONAL_LOCATION = TABLE["PERSONAL_LOCATION"]
LAPTOP_JOBS = ("engineer", "student", "architect")  # besides working from home


def _devices(household_type: str, people: list[Person], rng: random.Random) -> list[Device]:
    devices: list[Device] = []

    def add(device_type: str, device_id: str, owner: str, location: str) -> None:
        devices.append(
            Device(
                device_id=device_id,
                device_type=device_type,
                owner=owner,
                location=location,
                modality=list(DEVICE_CAPABILITIES[device_type]),
            )
        )

    for p in people:
        slug = p.name.lower()
        kinds: list[str] = []
        if p.kind in ("adult", "carer"):
            kinds = ["smartwatch", "smartphone"]
            if p.work is None or any(job in p.role for job in LAPTOP_JOBS):
                kinds.append("laptop")
            if household_type == "single_professional":
                kinds += ["laptop", "tablet"]
            if p.commute == "car":
                kinds.append("car_system")
        elif p.kind == "teen":
            kinds = ["smartphone", "laptop"] + (["smartwatch"] if p.age >= 15 else [])
        elif p.kind == "child":
            kinds = ["kids_smartwatch", "tablet"]
        elif p.kind == "elder":
            kinds = ["smartwatch", "smartphone"] + (["tablet"] if rng.random() < 0.5 else [])
        for kind in dict.fromkeys(kinds):
            location = PERSONAL_LOCATION.get(kind, "home_office" if kind == "laptop" else "carried")
            if kind == "laptop" and p.kind == "teen":
                location = "bedroom"
            add(kind, f"{PERSONAL_PREFIX[kind]}_{slug}", p.name, location)
    shared = SHARED_BY_TYPE["_core"] + SHARED_BY_TYPE[household_type]
    for device_type, device_id, location in shared:
        add(device_type, device_id, "shared", location)
    return sorted(devices, key=lambda d: d.device_id)


# ---------------------------------------------------------------- checks

FIXED_LOCATIONS = {
    "smartwatch": "wearable",
    "kids_smartwatch": "wearable",
    "smartphone": "carried",
    "car_system": "car",
}


def check_household(hh: Household) -> None:
    """Mechanical reviewer dimensions of the paper's stage 1; raise on the first violation."""

    def fail(problem: str) -> None:
        raise SynthesisError("personas", hh.scenario_id, problem)

    names = [p.name for p in hh.people]
    if len(set(names)) != len(names):
        fail(f"character names are not unique: {names}")
    ids = [d.device_id for d in hh.devices]
    if len(set(ids)) != len(ids):
        fail("duplicate device ids")
    persona = hh.to_persona()
    referenced = {i for c in persona.characters for i in c.devices} | set(persona.shared_devices)
    if referenced != set(ids):
        fail(f"device references differ from all_devices: {sorted(referenced ^ set(ids))}")
    for d in hh.devices:
        allowed = DEVICE_CAPABILITIES.get(d.device_type)
        if allowed is None:
            fail(f"device {d.device_id!r} has unknown type {d.device_type!r}")
        if [str(m) for m in d.modality] != allowed:
            fail(f"device {d.device_id!r} modalities differ from the capability table")
        if d.owner != "shared" and d.owner not in names:
            fail(f"device {d.device_id!r} owned by unknown {d.owner!r}")
        expected = FIXED_LOCATIONS.get(d.device_type)
        if expected and d.location != expected:
            fail(f"device {d.device_id!r} should be located {expected!r}, not {d.location!r}")
        if d.owner != "shared" and not d.device_id.endswith("_" + d.owner.lower()):
            fail(f"personal device id {d.device_id!r} does not follow type_owner naming")
    for p in hh.people:
        if not 2 <= len(p.interests) <= 4:
            fail(f"{p.name} has {len(p.interests)} interests (expected 2-4)")
        owned = {d.device_type for d in hh.devices if d.owner == p.name}
        if p.age < 6 and owned & {"smartphone", "laptop"}:
            fail(f"{p.name} ({p.age}) is too young for a phone or laptop")
        if p.age < 17 and "car_system" in owned:
            fail(f"{p.name} ({p.age}) cannot own a car")
