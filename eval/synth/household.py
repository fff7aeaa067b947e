"""The persona-source graph: people with structured days, and the household's devices."""

from __future__ import annotations

from dataclasses import dataclass, field

from eval.synth.realism import DEFAULT_REALISM
from memory.formats.memfusebench import Character, Device, Persona, Routine


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
    realism: str = DEFAULT_REALISM  # eval.synth.realism: how much the generator may flatter

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

    def first(self, *device_types: str) -> str | None:
        """The first of these shared device types the household has (a fallback chain)."""
        return next(filter(None, map(self.shared, device_types)), None)

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
