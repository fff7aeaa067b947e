"""Strip people tags from events of devices that cannot know who is there.

A motion sensor, a thermostat or a washer reports that *something* happened, never *who*
did it; a generator that tags their events with `characters` hands a system under test an
identity signal no real household would have. `strip_person_blind` removes those tags so a
benchmark can measure how a system copes without them (`memfuse synth --person-blind`, the
`seed7-person-blind` source of `memfuse bench --suite`).

Person-blindness is decided from what the scenario persona *declares* about a device
(`all_devices[].device_type`, then its modalities) and never from event texts, so the
transform is the same for any generator and cannot leak answers:

1. `device_type` is split into lower-case words (`"Washer/Dryer"` -> washer, dryer;
   `"door_window_sensor"` -> door, window, sensor).
2. A word in `PERSON_AWARE_WORDS` keeps the tags: that device can know who it is
   (wearables, a personal phone/laptop/tablet, a lock's user code, face recognition of a
   camera or doorbell, voice profiles of speakers and displays, scale/car/console/TV
   profiles). Aware words win, so a "door lock" or a "front door camera" keeps its tags.
3. Otherwise a word in `PERSON_BLIND_WORDS` strips them (motion, door/contact, climate,
   air, lights, curtains, vacuum, laundry, plugs, kitchen appliances, ...).
4. A type with neither (or no type at all) is blind only when every declared modality is
   in `PERSON_BLIND_MODALITIES` (environment readings and on/off states carry no identity);
   anything else keeps its tags — an unknown device is not guessed blind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memory.formats.memfusebench import Device, MemFuseBench, Scenario

# Words of a device type whose device can tell who is there, and how it knows.
PERSON_AWARE_WORDS: frozenset[str] = frozenset(
    {
        # worn by one person
        "watch", "smartwatch", "kidswatch", "ring", "band", "wristband", "wearable", "tracker",
        "earbuds", "headphones",
        # a personal device, signed in as its owner
        "phone", "smartphone", "mobile", "laptop", "tablet", "computer", "pc",
        # per-user codes / fingerprints
        "lock", "smartlock", "keypad",
        # face recognition
        "camera", "cam", "webcam", "doorbell",
        # voice profiles
        "speaker", "display", "assistant",
        # user profiles
        "scale", "car", "vehicle", "console", "tv", "television",
    }
)  # fmt: skip

# Words of a device type whose device senses a room or an appliance, not a person.
PERSON_BLIND_WORDS: frozenset[str] = frozenset(
    {
        # presence without identity
        "motion", "occupancy", "presence", "pir",
        # openings
        "door", "window", "contact", "garage",
        # climate and air
        "thermostat", "temperature", "humidity", "climate", "hvac", "heater", "radiator",
        "fan", "air", "quality", "purifier", "smoke", "co2",
        # lights and shading
        "light", "lights", "lamp", "bulb", "dimmer",
        "curtain", "curtains", "blind", "blinds", "shade", "shades",
        # cleaning and laundry
        "vacuum", "mop", "washer", "dryer", "washing", "dishwasher",
        # power
        "plug", "outlet", "socket", "energy", "meter",
        # kitchen
        "fridge", "refrigerator", "freezer", "oven", "stove", "cooktop", "microwave",
        "kettle", "coffee",
        # water
        "leak", "water", "sprinkler", "irrigation",
    }
)  # fmt: skip

# Modalities that carry no identity: the fallback for a type with no known word.
PERSON_BLIND_MODALITIES: frozenset[str] = frozenset({"environment", "device_status"})


def type_words(device_type: str) -> list[str]:
    """Lower-case words of a device type, whatever its spelling (snake_case, Title Case, a/b)."""
    return re.findall(r"[a-z0-9]+", device_type.lower())


def is_person_blind(device: Device) -> bool:
    """True when the device cannot know who is there (see the module docstring for the rule)."""
    words = set(type_words(device.device_type))
    if words & PERSON_AWARE_WORDS:
        return False
    if words & PERSON_BLIND_WORDS:
        return True
    modalities = {m.value for m in device.modality}
    return bool(modalities) and modalities <= PERSON_BLIND_MODALITIES


def person_blind_devices(devices: Iterable[Device]) -> set[str]:
    """Ids of the person-blind devices among `devices`."""
    return {d.device_id for d in devices if is_person_blind(d)}


def strip_person_blind_counted(bench: MemFuseBench) -> tuple[MemFuseBench, int]:
    """A copy of `bench` with `characters` emptied on every person-blind device's events,
    and how many events lost a non-empty tag list (the input is left untouched)."""
    result = bench.model_copy(deep=True)
    stripped = 0
    for scenario in result.scenario_data:
        blind = person_blind_devices(scenario.persona.all_devices)
        for episode in scenario.episodes:
            for event in episode.events:
                if event.device in blind and event.characters:
                    event.characters = []
                    stripped += 1
    return result, stripped


def strip_person_blind(bench: MemFuseBench) -> MemFuseBench:
    """A copy of `bench` whose person-blind devices' events carry no people tags."""
    return strip_person_blind_counted(bench)[0]


# `memfuse synth --realism realistic` goes further than `--person-blind`: a device keeps a
# people tag only for the modality through which it can know who is there. A speaker knows a
# voice only in dialogue (voice profile), a display a face (vision) or a voice (dialogue), a TV
# or console its signed-in profile only in what it plays (app_usage, not device_status), and a
# scale (a shared platform that guesses by weight) never. Other devices follow
# `is_person_blind`.
KNOWING_MODALITIES: dict[str, frozenset[str]] = {
    "speaker": frozenset({"dialogue"}),
    "display": frozenset({"dialogue", "vision"}),
    "tv": frozenset({"app_usage"}),
    "television": frozenset({"app_usage"}),
    "console": frozenset({"app_usage"}),
    "scale": frozenset(),
}


def knows_who(device: Device, modality: str) -> bool:
    """True when `device` can tell who is there from an event of `modality` (realistic rule)."""
    words = type_words(device.device_type)
    for word in words:
        if word in KNOWING_MODALITIES:
            return modality in KNOWING_MODALITIES[word]
    return not is_person_blind(device)


def strip_unknowing_counted(bench: MemFuseBench) -> tuple[MemFuseBench, int]:
    """A copy of `bench` with `characters` emptied on every event whose device cannot know who
    is there from that event (`knows_who`), and how many events lost a non-empty tag list."""
    result = bench.model_copy(deep=True)
    stripped = 0
    for scenario in result.scenario_data:
        stripped += strip_unknowing_scenario(scenario)
    return result, stripped


def strip_unknowing_scenario(scenario: Scenario) -> int:
    """Empty, in place, the tags `knows_who` refuses; returns how many events lost tags."""
    devices = {d.device_id: d for d in scenario.persona.all_devices}
    stripped = 0
    for episode in scenario.episodes:
        for event in episode.events:
            device = devices.get(event.device)
            modality = getattr(event.modality, "value", event.modality)
            if device is not None and event.characters and not knows_who(device, modality):
                event.characters = []
                stripped += 1
    return stripped
