"""Glimpses: the small observations any stretch of home life leaves behind, worded from one pool.

A watch samples a pulse, a phone reports where it is, the hallway sensor counts movement, the
speaker hears someone talking, a light is turned up, the fridge door opens, a camera sees
someone cross a room, a car is parked, someone unlocks the front door from inside. A
storyline's devices notice its happenings this way in passing (`episodes.ambient`), and the
household's background leaves the same glimpses all day (`everyday_glimpse`, drawn among the
incidental noise). Both word them through
`glimpse`, from `data/glimpses.json`, so a kind of observation reads the same whether or not
a question is about it: the words cannot tell a storyline's glimpse from an everyday one.
"""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from eval.synth.emit import Emitter
from eval.synth.household import Household, Person
from eval.synth.tables import Words, load_table

W = Words("glimpses")

KINDS = (
    "pulse",
    "phone_home",
    "phone_away",
    "hallway",
    "speech",
    "light",
    "fridge_door",
    "room_cam",
    "car_parked",
    "door_inside",
)
"""The kinds of glimpse, each a key of data/glimpses.json with `clauses` and a `gist`."""

# How often the background shows each kind, relative to one another: pulse samples and
# location fixes are logged all day long, the rest when something happens to trip them.
EVERYDAY_WEIGHT = {
    "pulse": 5.0,
    "phone_home": 4.0,
    "phone_away": 1.5,
    "hallway": 2.0,
    "speech": 2.0,
}

# The rooms a hallway sensor notices someone moving through or next to.
HALLWAY_PLACES = ("hallway", "front_door", "home", "kitchen", "living_room")
# The rooms a kitchen speaker or display hears.
HEARD_PLACES = ("kitchen", "living_room", "home", "hallway")


def glimpse(kind: str, **slots: object) -> dict[str, Any]:
    """The wording arguments (`clauses`, `gist`) of one glimpse of `kind`."""
    if kind not in KINDS:
        raise KeyError(f"unknown glimpse kind {kind!r}; expected one of {KINDS}")
    return W(kind, slots)


def where_said(place: str, r: random.Random) -> str:
    """Where talk was heard: somewhere in the house, or the named room."""
    if place == "home":
        return r.choice(load_table("glimpses")["where_said"]["house"])
    return W("where_said.room", room=place.replace("_", " "))[0]


def is_out(p: Person, ts: datetime, weekday: int) -> bool:
    """Whether `p` is at work or school at `ts` on their usual day."""
    minute = ts.hour * 60 + ts.minute
    return bool(p.work) and weekday in p.work_days and weekday < 5 and p.leave <= minute < p.back


def everyday_glimpse(em: Emitter, hh: Household, ts: datetime, day: int) -> None:
    """One glimpse of ordinary life at `ts`: someone's pulse or whereabouts, movement, talk,
    a light, the fridge door or a camera seeing someone, among what the household has."""
    r = em.rng
    home = [p.name for p in hh.residents if not is_out(p, ts, day)]
    options: list[tuple[str, str | None, str, list[str], str | None, dict[str, Any]]] = []
    for p in hh.residents:
        out = is_out(p, ts, day)
        place = p.work if out else "home"
        watch, phone, car = hh.watch(p.name), hh.phone(p.name), hh.car(p.name)
        if watch:
            slots = {"name": p.name, "hr": r.randint(62, 104)}
            options.append(("pulse", watch, "health", [p.name], place, slots))
        if phone:
            kind = "phone_away" if out else "phone_home"
            slots = {"name": p.name, "place": place}
            options.append((kind, phone, "location", [p.name], place, slots))
        if out and car and p.commute == "car":
            options.append(("car_parked", car, "location", [p.name], place, {"place": place}))
    if home:
        who = r.choice(home)
        motion = hh.shared("motion_sensor")
        options.append(("hallway", motion, "motion", [who], None, {"n": r.randint(2, 6)}))
        talker = hh.first("smart_speaker", "smart_display")
        room = r.choice(HEARD_PLACES)
        said = {"who": who, "where_said": where_said(room, r), "alt": ""}
        options.append(("speech", talker, "audio", [who], None, said))
        fridge = hh.shared("smart_fridge")
        options.append(
            ("fridge_door", fridge, "device_status", [who], None, {"secs": r.randint(6, 40)})
        )
        lock = hh.shared("smart_lock")
        opened = {"who": who, "opened": ts, "mins": r.randint(2, 45)}
        options.append(("door_inside", lock, "location", [who], None, opened))
        light = hh.shared("smart_light")
        if ts.hour >= 19 or ts.hour < 6:
            pct = r.choice([40, 60, 80, 100])
            options.append(("light", light, "device_status", [who], None, {"pct": pct}))
        for dtype in ("indoor_camera", "smart_display"):
            cam = hh.shared(dtype)
            if cam:
                seen = {"who": who, "room": hh.device(cam).location.replace("_", " ")}
                options.append(("room_cam", cam, "vision", [who], None, seen))
    options = [o for o in options if o[1] is not None]
    kinds = sorted({o[0] for o in options}, key=KINDS.index)
    if not kinds:
        return
    chosen = r.choices(kinds, [EVERYDAY_WEIGHT.get(k, 1.0) for k in kinds])[0]
    kind, device, modality, people, place, slots = r.choice([o for o in options if o[0] == chosen])
    words = glimpse(kind, **slots)
    em.emit(ts, device, modality, words["clauses"], people=people, place=place)
