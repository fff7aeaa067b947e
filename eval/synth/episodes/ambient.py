"""Views a happening gets in passing, besides the devices a template names.

A wearable logs the pulse of whoever is involved, a phone knows where it is, the hallway
sensor registers movement, a camera sees the room it watches; `Ep.fill` picks a few of these
options so each story fact is spread over three or four sources. They are worded as the
household's everyday glimpses are (`eval.synth.glimpses`), from the same pool.
"""

from __future__ import annotations

import random

from eval.synth.glimpses import HALLWAY_PLACES, HEARD_PLACES, glimpse, where_said
from eval.synth.personas import Household
from eval.synth.tables import load_table
from eval.synth.world import StoryEvent

# Where a happening counts as at home: the rooms of a household.
HOME_PLACES = frozenset(load_table("personas")["HOME_PLACES"])


def ambient_options(
    hh: Household, r: random.Random, ev: StoryEvent
) -> list[tuple[str, str, dict, list[str]]]:
    """What the household devices could notice of `ev` in passing: (device, modality,
    wording, people) options for `Ep.fill` to choose from."""
    at_home = ev.place in HOME_PLACES
    residents = [p for p in ev.people if any(q.name == p for q in hh.people)]
    out: list[tuple[str, str, dict, list[str]]] = []
    for name in residents:
        watch = hh.watch(name)
        if watch:
            out.append(
                (watch, "health", glimpse("pulse", name=name, hr=r.randint(66, 104)), [name])
            )
        phone = hh.phone(name)
        if phone and ev.place != "car":
            words = (
                glimpse("phone_home", name=name)
                if at_home
                else glimpse("phone_away", name=name, place=ev.place)
            )
            out.append((phone, "location", words, [name]))
    if at_home:
        who = " and ".join(residents[:2])
        room = ev.place.replace("_", " ")
        motion = hh.shared("motion_sensor")
        if motion and ev.place in HALLWAY_PLACES:
            out.append((motion, "motion", glimpse("hallway", n=r.randint(2, 6)), residents))
        talker = hh.first("smart_speaker", "smart_display")
        if talker and residents and ev.place in HEARD_PLACES:
            alt = "s" if len(residents) > 1 else ""
            said = where_said(ev.place, r)
            words = glimpse("speech", who=who, where_said=said, alt=alt)
            out.append((talker, "audio", words, residents))
        light = hh.shared("smart_light")
        dark = ev.ts.hour >= 19 or ev.ts.hour < 6
        lit = (ev.place, "living_room" if ev.place == "home" else "")  # "home": the living room
        if light and dark and hh.device(light).location in lit:
            pct = r.choice([40, 60, 80, 100])
            out.append((light, "device_status", glimpse("light", pct=pct), residents))
        fridge = hh.shared("smart_fridge")
        if fridge and ev.place == "kitchen":
            words = glimpse("fridge_door", secs=r.randint(6, 40))
            out.append((fridge, "device_status", words, residents))
        for dtype in ("indoor_camera", "smart_display"):
            cam = hh.shared(dtype)
            if cam and hh.device(cam).location == ev.place and residents:
                out.append((cam, "vision", glimpse("room_cam", who=who, room=room), residents))
    elif len(residents) == 1 and hh.car(residents[0]) and ev.place != "car":
        # someone out on their own, with a car of their own, most likely drove there
        car = hh.car(residents[0])
        assert car is not None
        out.append((car, "location", glimpse("car_parked", place=ev.place), residents))
    return out
