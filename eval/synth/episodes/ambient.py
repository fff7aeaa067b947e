"""Views a happening gets in passing, besides the devices a template names.

A wearable logs the pulse of whoever is involved, a phone knows where it is, the hallway
sensor registers movement, a camera sees the room it watches; `Ep.fill` picks a few of these
options so each story fact is spread over three or four sources.
"""

from __future__ import annotations

import random

from eval.synth.personas import Household
from eval.synth.tables import Words, load_table
from eval.synth.world import StoryEvent

W = Words("episodes/ambient")

# Where a happening counts as at home: the rooms of a household.
HOME_PLACES = frozenset(load_table("personas")["HOME_PLACES"])


def ambient_options(
    hh: Household, r: random.Random, ev: StoryEvent
) -> list[tuple[str, str, dict, list[str]]]:
    """What the household devices could notice of `ev` in passing: (device, modality,
    wording, people) options for `Ep.fill` to choose from."""
    say = W.at("ambient_options")
    at_home = ev.place in HOME_PLACES
    residents = [p for p in ev.people if any(q.name == p for q in hh.people)]
    out: list[tuple[str, str, dict, list[str]]] = []
    for name in residents:
        watch = hh.watch(name)
        if watch:
            hr = r.randint(66, 104)
            out.append((watch, "health", say("watch", locals()), [name]))
        phone = hh.phone(name)
        if phone and ev.place != "car":
            where = say("where") if at_home else say("where_2", locals())
            out.append((phone, "location", say("phone", locals()), [name]))
    if at_home:
        who = " and ".join(residents[:2])
        room = ev.place.replace("_", " ")
        motion = hh.shared("motion_sensor")
        if motion and ev.place in ("hallway", "front_door", "home", "kitchen", "living_room"):
            n = r.randint(2, 6)
            out.append((motion, "motion", say("motion", locals()), residents))
        talker = hh.first("smart_speaker", "smart_display")
        if talker and residents and ev.place in ("kitchen", "living_room", "home", "hallway"):
            where_said = say("where_said") if ev.place == "home" else say("where_said_2", locals())
            alt = "s" if len(residents) > 1 else ""
            out.append((talker, "audio", say("talker", locals()), residents))
        light = hh.shared("smart_light")
        dark = ev.ts.hour >= 19 or ev.ts.hour < 6
        lit = (ev.place, "living_room" if ev.place == "home" else "")  # "home": the living room
        if light and dark and hh.device(light).location in lit:
            pct = r.choice([40, 60, 80, 100])
            out.append((light, "device_status", say("light", locals()), residents))
        fridge = hh.shared("smart_fridge")
        if fridge and ev.place == "kitchen":
            secs = r.randint(6, 40)
            out.append((fridge, "device_status", say("fridge", locals()), residents))
        for dtype in ("indoor_camera", "smart_display"):
            cam = hh.shared(dtype)
            if cam and hh.device(cam).location == ev.place and residents:
                out.append((cam, "vision", say("cam", locals(), place_replace=room), residents))
    elif len(residents) == 1 and hh.car(residents[0]) and ev.place != "car":
        # someone out on their own, with a car of their own, most likely drove there
        out.append((hh.car(residents[0]), "location", say("append", locals()), residents))
    return out
