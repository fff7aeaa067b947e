"""Stage 1: households, their people and routines, and the devices that observe them.

A `Household` is the persona-source graph every later stage consults: who lives here,
what each person's day looks like (structured, so routine events can be simulated), and
which device of which type exists where. `check_household` enforces the paper's
reviewer dimensions that can be checked mechanically (device consistency, owners,
capabilities, locations, interests, unique names, age-appropriate devices).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from eval.synth.errors import SynthesisError
from memory.formats.memfusebench import DEVICE_CAPABILITIES, Character, Device, Persona, Routine

HOUSEHOLD_TYPES: tuple[str, ...] = (
    "young_family",
    "family_with_teens",
    "elderly_couple_with_carer",
    "shared_flat",
    "single_professional",
    "three_generations",
)

FEMALE = (
    "Sarah",
    "Priya",
    "Amara",
    "Hannah",
    "Lucia",
    "Mei",
    "Fatima",
    "Chloe",
    "Ingrid",
    "Nadia",
    "Rosa",
    "Aisha",
    "Megan",
    "Yuki",
    "Elena",
    "Zara",
    "Olivia",
    "Grace",
    "Leila",
    "Sofia",
    "Anya",
    "Beatrice",
    "Camille",
    "Dorothy",
    "Eileen",
    "Freya",
    "Gloria",
    "Helen",
    "Imogen",
    "Joyce",
    "Kiran",
    "Lena",
    "Margaret",
    "Niamh",
    "Ruth",
    "Tamsin",
    "Uma",
    "Vera",
    "Wendy",
)
MALE = (
    "David",
    "Marcus",
    "Tomasz",
    "Raj",
    "Kwame",
    "Liam",
    "Oliver",
    "Hiroshi",
    "Mateo",
    "Samuel",
    "Ethan",
    "Noah",
    "Arjun",
    "Felix",
    "Jonah",
    "Omar",
    "Patrick",
    "Ravi",
    "Stefan",
    "Theo",
    "Ahmed",
    "Bernard",
    "Callum",
    "Dmitri",
    "Edward",
    "Frank",
    "George",
    "Harold",
    "Isaac",
    "Jamal",
    "Kenji",
    "Leon",
    "Malcolm",
    "Nikolai",
    "Owen",
    "Peter",
    "Reggie",
    "Vikram",
    "Walter",
)

INTERESTS = {
    "adult": [
        "running",
        "cycling",
        "cooking",
        "gardening",
        "reading",
        "podcasts",
        "yoga",
        "photography",
        "football",
        "board games",
        "baking",
        "swimming",
        "hiking",
        "jazz",
    ],
    "teen": [
        "gaming",
        "football",
        "drawing",
        "music production",
        "basketball",
        "anime",
        "skateboarding",
        "chess",
        "coding",
        "swimming",
    ],
    "child": [
        "drawing",
        "dinosaurs",
        "football",
        "lego",
        "swimming",
        "reading",
        "trampolining",
        "cartoons",
    ],
    "toddler": ["picture books", "building blocks", "songs", "playground"],
    "elder": [
        "gardening",
        "crosswords",
        "radio plays",
        "bird watching",
        "walking",
        "knitting",
        "bowls",
        "history documentaries",
    ],
}

PLACE_POOLS = {
    "park": ["Hollins Park", "Riverside Park", "Victoria Recreation Ground", "Ashdown Common"],
    "clinic": ["Riverside Walk-in Centre", "Elm Grove Surgery", "Northgate Medical Practice"],
    "hospital": ["St Mary's Hospital", "Queensway General Hospital"],
    "pharmacy": ["Parade Pharmacy", "Greenway Chemist"],
    "supermarket": ["FreshWay on Mill Road", "the Co-op on Station Street", "Harvest Market"],
    "garage": ["Kwik Tyres on Station Road", "Meadow Lane Motors", "Brightside Auto Centre"],
    "primary_school": ["St Anne's Primary", "Oakfield Primary School"],
    "secondary_school": ["Hillcrest Academy", "Westbrook High School"],
    "office": [
        "Harbour Point offices",
        "Northgate Business Park",
        "the Civic Centre",
        "Canal Street studio",
    ],
    "gym": ["PureFit Eastside", "Kingsway Leisure Centre"],
    "station": ["Central Station", "Eastfield Station"],
    "cafe": ["Bluebell Cafe", "the Corner Bakehouse"],
}


@dataclass
class Person:
    """A character's structured daily life, from which routine events are simulated."""

    name: str
    age: int
    gender: str  # "f" | "m", for pronouns only
    kind: str  # adult | teen | child | toddler | elder | carer
    role: str
    lives_in: bool = True
    work: str | None = None  # place of work or school; None at home
    work_days: tuple[int, ...] = (0, 1, 2, 3, 4)
    commute: str = "walk"  # car | bus | walk | bike | driven
    leave: int = 8 * 60  # minutes from midnight
    back: int = 17 * 60 + 30
    wake: tuple[int, int] = (7 * 60, 8 * 60)  # weekday, weekend
    bed: tuple[int, int] = (23 * 60, 23 * 60 + 30)
    workouts: list[tuple[int, str, int, int]] = field(default_factory=list)  # day, kind, start, min
    interests: list[str] = field(default_factory=list)
    health: str = "Healthy"

    @property
    def pron(self) -> dict[str, str]:
        if self.gender == "f":
            return {"he": "she", "him": "her", "his": "her", "He": "She", "His": "Her"}
        return {"he": "he", "him": "him", "his": "his", "He": "He", "His": "His"}


@dataclass
class Household:
    """The persona-source graph of one scenario plus helpers to find devices and people."""

    scenario_id: str
    type: str
    people: list[Person]
    devices: list[Device]
    places: dict[str, str]
    dinner: int  # shared dinner time, minutes from midnight

    def person(self, name: str) -> Person:
        for p in self.people:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def residents(self) -> list[Person]:
        return [p for p in self.people if p.lives_in]

    def device(self, device_id: str) -> Device:
        for d in self.devices:
            if d.device_id == device_id:
                return d
        raise KeyError(device_id)

    def has(self, device_id: str | None) -> bool:
        return device_id is not None and any(d.device_id == device_id for d in self.devices)

    def personal(self, name: str, device_type: str) -> str | None:
        for d in self.devices:
            if d.owner == name and d.device_type == device_type:
                return d.device_id
        return None

    def watch(self, name: str) -> str | None:
        return self.personal(name, "smartwatch") or self.personal(name, "kids_smartwatch")

    def phone(self, name: str) -> str | None:
        return self.personal(name, "smartphone")

    def laptop(self, name: str) -> str | None:
        return self.personal(name, "laptop")

    def tablet(self, name: str) -> str | None:
        return self.personal(name, "tablet")

    def car(self, name: str) -> str | None:
        return self.personal(name, "car_system")

    def shared(self, device_type: str) -> str | None:
        for d in self.devices:
            if d.owner == "shared" and d.device_type == device_type:
                return d.device_id
        return None

    def drivers(self) -> list[Person]:
        return [p for p in self.people if self.car(p.name)]

    def adults(self) -> list[Person]:
        return [p for p in self.people if p.kind in ("adult", "elder", "carer")]

    def to_persona(self) -> Persona:
        chars = [
            Character(
                name=p.name,
                age=p.age,
                role=p.role,
                interests=list(p.interests),
                health=p.health,
                routine=Routine(
                    weekday=routine_text(p, weekend=False), weekend=routine_text(p, True)
                ),
                devices=sorted(d.device_id for d in self.devices if d.owner == p.name),
            )
            for p in self.people
        ]
        return Persona(
            persona_id=f"{self.scenario_id}_{self.type}",
            type=self.type,
            characters=chars,
            shared_devices=sorted(d.device_id for d in self.devices if d.owner == "shared"),
            all_devices=list(self.devices),
        )


def usual_weight(name: str) -> float:
    """A person's body weight in kg, stable across every source that weighs them."""
    return 58.0 + sum(map(ord, name)) % 30


def hm(minutes: int) -> str:
    return f"{minutes // 60 % 24:02d}:{minutes % 60:02d}"


def routine_text(p: Person, weekend: bool) -> str:
    parts = [f"{hm(p.wake[1 if weekend else 0])} wake up"]
    if p.work and not weekend and p.lives_in:
        how = {
            "car": "drive",
            "bus": "bus",
            "walk": "walk",
            "bike": "cycle",
            "driven": "get a lift",
        }
        parts.append(f"{hm(p.leave)} {how[p.commute]} to {p.work}")
        parts.append(f"{hm(p.back)} back home")
    elif p.kind == "carer":
        parts.append(f"{hm(p.leave)} arrive to help at the house" if not weekend else "day off")
        if not weekend:
            parts.append(f"{hm(p.back)} leave for home")
    elif not weekend:
        parts.append("day at home")
    for day, kind, start, minutes in p.workouts:
        if (day >= 5) == weekend:
            parts.append(f"{DAY_ABBR[day]} {hm(start)} {kind} ({minutes} min)")
    if p.lives_in:
        parts.append(f"{hm(p.bed[1 if weekend else 0])} bed")
    return "; ".join(parts)


DAY_ABBR = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


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
    people: list[Person] = []
    if household_type == "young_family":
        a = _adult(rng, names, "parent, nurse", places["hospital"], "car", (31, 40), gender="f")
        b = _adult(
            rng,
            names,
            "parent, software engineer working from home",
            None,
            "walk",
            (32, 42),
            gender="m",
        )
        c = _person(
            rng,
            names,
            "child",
            rng.randint(6, 9),
            "child, primary school pupil",
            work=places["primary_school"],
            commute="driven",
        )
        d = _person(
            rng, names, "toddler", rng.randint(3, 4), "toddler, at nursery three days", work=None
        )
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
        a = _adult(rng, names, "parent, accountant", places["office"], "car", (42, 52))
        b = _adult(
            rng,
            names,
            "parent, secondary school teacher",
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
            "teenager, year 11 student",
            work=places["secondary_school"],
            commute="bus",
        )
        d = _person(
            rng,
            names,
            "teen",
            rng.randint(13, 14),
            "teenager, year 9 student",
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
            "retired railway engineer",
            gender="m",
            health=rng.choice(
                ["type 2 diabetes, on metformin", "atrial fibrillation, on apixaban"]
            ),
        )
        b = _person(
            rng,
            names,
            "elder",
            rng.randint(71, 80),
            "retired librarian",
            gender="f",
            health=rng.choice(["osteoarthritis in both knees", "mild hypertension"]),
        )
        c = _person(
            rng,
            names,
            "carer",
            rng.randint(34, 55),
            "home carer, visits weekday mornings",
            lives_in=False,
            commute="car",
        )
        c.leave, c.back = 9 * 60, 12 * 60 + 30
        for e in (a, b):
            e.wake, e.bed = (6 * 60 + 45, 7 * 60), (22 * 60, 22 * 60 + 15)
        people = [a, b, c]
        dinner = 17 * 60 + 30
    elif household_type == "shared_flat":
        jobs = [
            ("flatmate, junior architect", places["office"], "bike"),
            ("flatmate, PhD student", "the university campus", "bus"),
            ("flatmate, barista and part-time musician", places["cafe"], "walk"),
        ]
        for role, work, commute in jobs:
            people.append(_adult(rng, names, role, work, commute, (23, 31)))
        people[2].leave, people[2].back = 6 * 60 + 30, 14 * 60 + 45
        people[2].wake = (5 * 60 + 50, 9 * 60 + 30)
        dinner = 19 * 60 + 30
    elif household_type == "single_professional":
        people = [
            _adult(rng, names, "product manager, hybrid working", places["office"], "car", (29, 45))
        ]
        people[0].work_days = (1, 2, 3)
        dinner = 19 * 60 + 15
    elif household_type == "three_generations":
        g = _person(
            rng,
            names,
            "elder",
            rng.randint(68, 79),
            "grandparent, retired nurse",
            health="uses a walking stick after a hip replacement",
        )
        g.wake, g.bed = (6 * 60 + 30, 7 * 60), (21 * 60 + 45, 22 * 60)
        a = _adult(rng, names, "parent, pharmacist", places["pharmacy"], "car", (38, 48))
        b = _adult(
            rng,
            names,
            "parent, bus driver on early shifts",
            "the bus depot",
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
            "child, year 6 pupil",
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


SHARED_BY_TYPE: dict[str, list[tuple[str, str, str]]] = {
    # (device_type, id, location); every household gets the first block
    "_core": [
        ("smart_speaker", "speaker_kitchen", "kitchen"),
        ("doorbell_camera", "doorbell_front", "front_door"),
        ("smart_lock", "lock_front", "front_door"),
        ("motion_sensor", "motion_hallway", "hallway"),
        ("smart_thermostat", "thermostat_living", "living_room"),
        ("smart_fridge", "fridge_kitchen", "kitchen"),
        ("smart_tv", "tv_living", "living_room"),
    ],
    "young_family": [
        ("indoor_camera", "camera_playroom", "playroom"),
        ("smart_display", "display_living", "living_room"),
        ("air_quality_monitor", "airquality_nursery", "nursery"),
        ("smart_washer_dryer", "washer_utility", "utility_room"),
        ("robot_vacuum", "vacuum_living", "living_room"),
        ("door_window_sensor", "sensor_backdoor", "back_door"),
        ("smart_light", "light_living", "living_room"),
    ],
    "family_with_teens": [
        ("gaming_console", "console_living", "living_room"),
        ("indoor_camera", "camera_living", "living_room"),
        ("smart_washer_dryer", "washer_utility", "utility_room"),
        ("door_window_sensor", "sensor_backdoor", "back_door"),
        ("smart_light", "light_landing", "landing"),
        ("smart_scale", "scale_bathroom", "bathroom"),
        ("air_quality_monitor", "airquality_kitchen", "kitchen"),
    ],
    "elderly_couple_with_carer": [
        ("smart_display", "display_living", "living_room"),
        ("indoor_camera", "camera_living", "living_room"),
        ("air_purifier", "purifier_bedroom", "bedroom"),
        ("smart_light", "light_bedroom", "bedroom"),
        ("smart_curtain", "curtain_bedroom", "bedroom"),
        ("smart_scale", "scale_bathroom", "bathroom"),
        ("door_window_sensor", "sensor_backdoor", "back_door"),
    ],
    "shared_flat": [
        ("gaming_console", "console_living", "living_room"),
        ("smart_washer_dryer", "washer_utility", "utility_cupboard"),
        ("air_quality_monitor", "airquality_kitchen", "kitchen"),
        ("smart_light", "light_hallway", "hallway"),
        ("robot_vacuum", "vacuum_hallway", "hallway"),
    ],
    "single_professional": [
        ("smart_display", "display_living", "living_room"),
        ("indoor_camera", "camera_living", "living_room"),
        ("air_purifier", "purifier_bedroom", "bedroom"),
        ("air_quality_monitor", "airquality_office", "home_office"),
        ("smart_washer_dryer", "washer_utility", "utility_room"),
        ("robot_vacuum", "vacuum_living", "living_room"),
        ("smart_light", "light_living", "living_room"),
        ("smart_curtain", "curtain_bedroom", "bedroom"),
        ("smart_scale", "scale_bathroom", "bathroom"),
        ("gaming_console", "console_living", "living_room"),
        ("door_window_sensor", "sensor_balcony", "balcony_door"),
    ],
    "three_generations": [
        ("indoor_camera", "camera_living", "living_room"),
        ("smart_display", "display_kitchen", "kitchen"),
        ("smart_washer_dryer", "washer_utility", "utility_room"),
        ("robot_vacuum", "vacuum_living", "living_room"),
        ("air_purifier", "purifier_granny", "granny_flat"),
        ("smart_light", "light_granny", "granny_flat"),
        ("smart_scale", "scale_bathroom", "bathroom"),
        ("door_window_sensor", "sensor_backdoor", "back_door"),
    ],
}

PERSONAL_PREFIX = {
    "smartwatch": "watch",
    "kids_smartwatch": "watch",
    "smartphone": "phone",
    "laptop": "laptop",
    "tablet": "tablet",
    "car_system": "car",
}
PERSONAL_LOCATION = {
    "smartwatch": "wearable",
    "kids_smartwatch": "wearable",
    "smartphone": "carried",
    "car_system": "car",
    "tablet": "living_room",
}


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
