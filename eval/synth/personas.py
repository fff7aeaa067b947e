"""Stage 1: households, their people and routines, and the devices that observe them.

A `Household` (defined in `household`) is the persona-source graph every later stage
consults: who lives here, what each person's day looks like (structured, so routine events
can be simulated), and which device of which type exists where. `check_household` enforces
the paper's reviewer dimensions that can be checked mechanically (device consistency,
owners, capabilities, locations, interests, unique names, age-appropriate devices).
"""

from __future__ import annotations

import random

from eval.synth.errors import SynthesisError
from eval.synth.household import Household, Person, usual_weight  # noqa: F401  (re-exported)
from eval.synth.tables import load_table
from memory.formats.memfusebench import DEVICE_CAPABILITIES, Device

TABLE = load_table("personas")

HOUSEHOLD_TYPES: tuple[str, ...] = (
    "young_family",
    "family_with_teens",
    "elderly_couple_with_carer",
    "shared_flat",
    "single_professional",
    "three_generations",
)

FEMALE = tuple(TABLE["FEMALE"])
MALE = tuple(TABLE["MALE"])

INTERESTS = TABLE["INTERESTS"]

PLACE_POOLS = TABLE["PLACE_POOLS"]
# roles by household type, in the order build_household creates the people
ROLES: dict[str, list[str]] = TABLE["ROLES"]
HEALTH = TABLE["HEALTH"]
WORKPLACES = TABLE["WORKPLACES"]


# ---------------------------------------------------------------- building


class _Names:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()

    def take(self, gender: str) -> str:
        pool = [n for n in (FEMALE if gender == "f" else MALE) if n not in self.used]
        name = self.rng.choice(pool)
        self.used.add(name)
        return name


def _person(rng: random.Random, names: _Names, kind: str, age: int, role: str, **kw) -> Person:
    gender = kw.pop("gender", rng.choice("fm"))
    interests = rng.sample(
        INTERESTS[
            "elder" if kind in ("elder",) else "adult" if kind in ("adult", "carer") else kind
        ],
        rng.randint(2, 4),
    )
    return Person(
        name=names.take(gender),
        age=age,
        gender=gender,
        kind=kind,
        role=role,
        interests=sorted(interests),
        **kw,
    )


def _workouts(rng: random.Random, p: Person) -> None:
    sports = [
        i
        for i in p.interests
        if i
        in ("running", "cycling", "yoga", "swimming", "football", "basketball", "walking", "hiking")
    ]
    if not sports and p.kind in ("adult", "teen", "elder") and rng.random() < 0.6:
        sports = ["walking" if p.kind == "elder" else "running"]
    for sport in sports[:2]:
        days = sorted(rng.sample(range(7), rng.randint(2, 3)))
        for day in days:
            if day < 5 and p.work:
                start = rng.choice([6 * 60 + 15, 18 * 60 + 45, 19 * 60 + 30])
            else:
                start = rng.choice([8 * 60 + 30, 10 * 60, 16 * 60 + 30])
            if p.kind == "elder":
                start = rng.choice([10 * 60, 10 * 60 + 30, 15 * 60])
            minutes = {"yoga": 45, "swimming": 40, "walking": 35, "hiking": 120}.get(sport, 40)
            p.workouts.append((day, sport, start, minutes + rng.randint(-8, 15)))
    p.workouts.sort()


def _adult(rng, names, role, work, commute, age_range=(31, 52), **kw) -> Person:
    p = _person(
        rng, names, "adult", rng.randint(*age_range), role, work=work, commute=commute, **kw
    )
    p.leave = rng.choice([7 * 60 + 20, 7 * 60 + 45, 8 * 60 + 10, 8 * 60 + 30])
    p.back = rng.choice([17 * 60 + 15, 17 * 60 + 50, 18 * 60 + 20])
    p.wake = (p.leave - rng.choice([55, 70, 85]), rng.choice([7 * 60 + 45, 8 * 60 + 20, 9 * 60]))
    p.bed = (
        rng.choice([22 * 60 + 30, 23 * 60, 23 * 60 + 20]),
        rng.choice([23 * 60 + 15, 23 * 60 + 45]),
    )
    return p


def build_household(scenario_id: str, household_type: str, rng: random.Random) -> Household:
    """Sample one household of the given type (people, routines, devices, places)."""
    names = _Names(rng)
    places = {kind: rng.choice(pool) for kind, pool in sorted(PLACE_POOLS.items())}
    roles = ROLES.get(household_type, [])
    people: list[Person] = []
    if household_type == "young_family":
        a = _adult(rng, names, roles[0], places["hospital"], "car", (31, 40), gender="f")
        b = _adult(rng, names, roles[1], None, "walk", (32, 42), gender="m")
        c = _person(
            rng,
            names,
            "child",
            rng.randint(6, 9),
            roles[2],
            work=places["primary_school"],
            commute="driven",
        )
        d = _person(rng, names, "toddler", rng.randint(3, 4), roles[3], work=None)
        c.leave, c.back, c.wake, c.bed = (
            8 * 60 + 20,
            15 * 60 + 40,
            (7 * 60, 7 * 60 + 30),
            (19 * 60 + 45, 20 * 60 + 15),
        )
        d.wake, d.bed = (6 * 60 + 30, 6 * 60 + 45), (19 * 60, 19 * 60 + 15)
        people = [a, b, c, d]
        dinner = 17 * 60 + 45
    elif household_type == "family_with_teens":
        a = _adult(rng, names, roles[0], places["office"], "car", (42, 52))
        b = _adult(
            rng,
            names,
            roles[1],
            places["secondary_school"],
            "bike",
            (41, 50),
            gender="f" if a.gender == "m" else "m",
        )
        c = _person(
            rng,
            names,
            "teen",
            rng.randint(15, 17),
            roles[2],
            work=places["secondary_school"],
            commute="bus",
        )
        d = _person(
            rng,
            names,
            "teen",
            rng.randint(13, 14),
            roles[3],
            work=places["secondary_school"],
            commute="bus",
        )
        for t in (c, d):
            t.leave, t.back = 7 * 60 + 55, 16 * 60 + rng.choice([0, 20, 45])
            t.wake, t.bed = (7 * 60 + 5, 10 * 60), (22 * 60 + 30, 23 * 60 + 45)
        people = [a, b, c, d]
        dinner = 18 * 60 + 45
    elif household_type == "elderly_couple_with_carer":
        a = _person(
            rng,
            names,
            "elder",
            rng.randint(74, 84),
            roles[0],
            gender="m",
            health=rng.choice(HEALTH["his"]),
        )
        b = _person(
            rng,
            names,
            "elder",
            rng.randint(71, 80),
            roles[1],
            gender="f",
            health=rng.choice(HEALTH["hers"]),
        )
        c = _person(
            rng, names, "carer", rng.randint(34, 55), roles[2], lives_in=False, commute="car"
        )
        c.leave, c.back = 9 * 60, 12 * 60 + 30
        for e in (a, b):
            e.wake, e.bed = (6 * 60 + 45, 7 * 60), (22 * 60, 22 * 60 + 15)
        people = [a, b, c]
        dinner = 17 * 60 + 30
    elif household_type == "shared_flat":
        jobs = [
            (roles[0], places["office"], "bike"),
            (roles[1], WORKPLACES["campus"], "bus"),
            (roles[2], places["cafe"], "walk"),
        ]
        for role, work, commute in jobs:
            people.append(_adult(rng, names, role, work, commute, (23, 31)))
        people[2].leave, people[2].back = 6 * 60 + 30, 14 * 60 + 45
        people[2].wake = (5 * 60 + 50, 9 * 60 + 30)
        dinner = 19 * 60 + 30
    elif household_type == "single_professional":
        people = [_adult(rng, names, roles[0], places["office"], "car", (29, 45))]
        people[0].work_days = (1, 2, 3)
        dinner = 19 * 60 + 15
    elif household_type == "three_generations":
        g = _person(rng, names, "elder", rng.randint(68, 79), roles[0], health=HEALTH["hip"])
        g.wake, g.bed = (6 * 60 + 30, 7 * 60), (21 * 60 + 45, 22 * 60)
        a = _adult(rng, names, roles[1], places["pharmacy"], "car", (38, 48))
        b = _adult(
            rng,
            names,
            roles[2],
            WORKPLACES["depot"],
            "bike",
            (38, 49),
            gender="f" if a.gender == "m" else "m",
        )
        b.leave, b.back, b.wake = 5 * 60 + 40, 14 * 60 + 30, (5 * 60, 8 * 60)
        c = _person(
            rng,
            names,
            "child",
            rng.randint(9, 12),
            roles[3],
            work=places["primary_school"],
            commute="walk",
        )
        c.leave, c.back, c.wake, c.bed = (
            8 * 60 + 25,
            15 * 60 + 35,
            (7 * 60 + 10, 8 * 60),
            (20 * 60 + 45, 21 * 60 + 30),
        )
        people = [g, a, b, c]
        dinner = 18 * 60
    else:
        raise SynthesisError("personas", scenario_id, f"unknown household type {household_type!r}")
    for p in people:
        if p.kind in ("adult", "teen", "elder", "child"):
            _workouts(rng, p)
    devices = _devices(household_type, people, rng)
    hh = Household(scenario_id, household_type, people, devices, places, dinner)
    check_household(hh)
    return hh


SHARED_BY_TYPE: dict[str, list[tuple[str, str, str]]] = TABLE["SHARED_BY_TYPE"]

PERSONAL_PREFIX = TABLE["PERSONAL_PREFIX"]
PERSONAL_LOCATION = TABLE["PERSONAL_LOCATION"]


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
            if (
                p.work is None
                or "engineer" in p.role
                or "student" in p.role
                or "architect" in p.role
            ):
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
    for device_type, device_id, location in (
        SHARED_BY_TYPE["_core"] + SHARED_BY_TYPE[household_type]
    ):
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
