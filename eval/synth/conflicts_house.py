"""Paired conflicts about the house: the fridge, the front and back doors, the TV, the heating."""

from __future__ import annotations

from eval.synth.conflict_ctx import Ctx, _draft, later
from eval.synth.personas import Person
from eval.synth.tables import Words, load_table
from eval.synth.timewords import at, clock
from eval.synth.world import QuestionDraft

W = Words("conflicts")
STOCK = load_table("conflicts")["STOCK"]  # (item, as the fridge photo shows it, how it is used up)


def fridge_stock(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("fridge_stock")
    hh, r, A = ctx.hh, ctx.r, p.name
    fridge, speaker = hh.shared("smart_fridge"), hh.shared("smart_speaker")
    cams = [c for c in (hh.shared("indoor_camera"), hh.shared("smart_display")) if c]
    cam = next((c for c in cams if hh.device(c).location in ("kitchen", "living_room")), None)
    if p.kind not in ("adult", "elder", "teen"):
        return None
    others = [q.name for q in hh.residents if q.name != A and q.kind in ("adult", "teen", "elder")]
    day = ctx.take_day("stock", "household", range(7), fridge and cam and speaker and others)
    if day is None:
        return None
    item, seen, used = r.choice(STOCK)
    K = r.choice(others)
    snap = at(day, 15, r.randint(0, 40))
    a = ctx.conflict.emit(snap, fridge, "vision", **say("a", locals()))
    used_up = later(snap, r.randint(70, 100))
    s1 = ctx.support.emit(used_up, cam, "vision", **say("s1", locals()), people=[K])
    opened = later(s1.ts, -2) if s1 else later(snap, 80)
    s2 = ctx.support.emit(opened, fridge, "device_status", **say("s2"))
    said = at(day, 19, r.randint(0, 40))
    b = ctx.conflict.emit(said, speaker, "dialogue", **say("b", locals()), people=[A])
    alt = "Were there any" if item.endswith("s") else "Was there any"
    label, use = ctx.label(cam), used.split(" and ")[0]
    words = say("question", locals(), refs=[[a], [b], [s1, s2]])
    return _draft(ctx, "food", A, **words, moments={"day": snap}, asker=ctx.asker(K))


def arrival(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("arrival")
    hh, r, P = ctx.hh, ctx.r, p.name
    lock, door = hh.shared("smart_lock"), hh.shared("doorbell_camera")
    talker = hh.first("smart_speaker", "smart_display")
    days = [d for d in p.work_days if d < 5] if p.work else []
    day = ctx.take_day("arrival", P, days, lock and door and talker and p.kind == "adult")
    if day is None:
        return None
    back = at(day, 18, r.randint(38, 58))
    parked, home_zone = later(back, -4), later(back, -3)
    claim = r.choice(say("claim"))
    s1 = ctx.support.emit(later(back, -1), door, "vision", **say("s1", locals()), people=[P])
    facts = {"topic": "arrival", "person": P, "day": day, "value": clock(back), "conflict": True}
    a = ctx.conflict.emit(back, lock, "location", **say("a", locals()), people=[P], facts=facts)
    s2 = ctx.support.emit(parked, hh.car(P), "location", **say("s2", locals()), people=[P])
    phone = hh.phone(P)
    s3 = ctx.support.emit(
        home_zone, phone, "location", **say("s3", locals()), people=[P], place="home"
    )
    said = at(day, 21, r.randint(10, 50))
    b = ctx.conflict.emit(said, talker, "dialogue", **say("b", locals()), people=[P])
    alt = say("result", locals()) if s2 else ""
    words = say("question", locals(), refs=[[a], [b], [s1, s2, s3]])
    return _draft(ctx, "arrival", P, **words, moments={"day": back})


def tv_time(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("tv_time")
    hh, r, P = ctx.hh, ctx.r, p.name
    tv, cam = hh.shared("smart_tv"), hh.shared("indoor_camera")
    talker = hh.first("smart_speaker", "smart_display")
    ready = tv and cam and talker and p.kind in ("adult", "teen")
    day = ctx.take_day("tv", "household", range(6), ready)
    if day is None:
        return None
    start = at(day, 20, r.randint(0, 20))
    minutes = r.randint(150, 185)
    show = r.choice(say("show"))
    end, episodes = later(start, minutes), minutes // 50
    standby, upstairs = later(end, 2), later(end, 5)
    facts = {"topic": "tv", "person": "household", "day": day, "value": minutes, "show": show}
    a = ctx.conflict.emit(end, tv, "app_usage", **say("a", locals()), people=[P], facts=facts)
    watching = later(start, minutes - 25)
    s1 = ctx.support.emit(watching, cam, "vision", **say("s1", locals()), people=[P])
    s2 = ctx.support.emit(standby, tv, "device_status", **say("s2", locals()))
    hall = hh.shared("motion_sensor")
    s3 = ctx.support.emit(upstairs, hall, "motion", **say("s3", locals()), people=[P])
    said = at(day + 1, 18, r.randint(0, 50))
    b = ctx.conflict.emit(said, talker, "dialogue", **say("b", locals()), people=[P])
    words = say("question", locals(), refs=[[a], [b], [s1, s2, s3]])
    return _draft(ctx, "tv", P, **words, moments={"night": start}, asker=ctx.asker(P))


def back_door(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("back_door")
    hh, r, P = ctx.hh, ctx.r, p.name
    sensor, talker = hh.shared("door_window_sensor"), hh.shared("smart_speaker")
    others = [q.name for q in hh.residents if q.name != P and q.kind in ("adult", "teen", "elder")]
    ready = sensor and talker and p.kind in ("adult", "teen")
    day = ctx.take_day("door", "household", range(6), ready)
    if day is None:
        return None
    B = r.choice(others) if others else P
    opened = at(day, 21, r.randint(30, 50))
    closed = later(opened, r.randint(38, 52))
    back_in = later(closed, 1)
    place = hh.device(sensor).location.replace("_", " ")
    a = ctx.conflict.emit(opened, sensor, "device_status", **say("a", locals()))
    b = ctx.conflict.emit(later(opened, 6), talker, "dialogue", **say("b", locals()), people=[P])
    display = hh.shared("smart_display") or talker
    s1 = ctx.support.emit(later(closed, -1), display, "audio", **say("s1", locals()), people=[B])
    s2 = ctx.support.emit(closed, sensor, "device_status", **say("s2", locals()))
    hall = hh.shared("motion_sensor")
    s3 = ctx.support.emit(back_in, hall, "motion", **say("s3", locals()), people=[B])
    words = say("question", locals(), refs=[[a], [b], [s1, s2, s3]])
    return _draft(ctx, "door", P, **words, moments={"night": opened})


def temperature(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("temperature")
    hh, r, P = ctx.hh, ctx.r, p.name
    thermo = hh.shared("smart_thermostat")
    talker = hh.first("smart_speaker", "smart_display")
    ready = thermo and talker and p.kind in ("adult", "elder", "teen")
    day = ctx.take_day("cold", "household", range(7), ready)
    if day is None:
        return None
    came_in = at(day, 19, r.randint(0, 20))
    reading = round(20.8 + r.randint(0, 9) / 10, 1)
    settled = round(reading - 0.1, 1)
    door = hh.shared("doorbell_camera")
    s1 = ctx.support.emit(came_in, door, "vision", **say("s1", locals()), people=[P])
    b = ctx.conflict.emit(later(came_in, 6), talker, "dialogue", **say("b", locals()), people=[P])
    a = ctx.conflict.emit(later(came_in, 8), thermo, "environment", **say("a", locals()))
    s2 = ctx.support.emit(later(came_in, 40), thermo, "environment", **say("s2", locals(), draw=r))
    s3 = ctx.support.emit(
        later(came_in, 3), hh.watch(P), "health", **say("s3", locals()), people=[P]
    )
    label = ctx.label(thermo)
    alt = say("result") if s3 else ""
    words = say("question", locals(), refs=[[a], [b], [s1, s2, s3]])
    return _draft(ctx, "temperature", P, **words, moments={"night": came_in})
