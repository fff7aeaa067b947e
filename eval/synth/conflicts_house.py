"""Paired conflicts about the house: the fridge, the front and back doors, the TV, the heating."""

from __future__ import annotations

from datetime import timedelta

from eval.synth.conflict_ctx import Ctx, _draft
from eval.synth.personas import Person
from eval.synth.tables import Words, load_table
from eval.synth.timewords import at, clock
from eval.synth.world import QuestionDraft

TABLE = load_table("conflicts")
W = Words("conflicts")


STOCK = TABLE["STOCK"]


def fridge_stock(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("fridge_stock")
    hh, r, A = ctx.hh, ctx.r, p.name
    fridge, speaker = hh.shared("smart_fridge"), hh.shared("smart_speaker")
    cam = next(
        (
            c
            for c in (hh.shared("indoor_camera"), hh.shared("smart_display"))
            if c and hh.device(c).location in ("kitchen", "living_room")
        ),
        None,
    )
    if p.kind not in ("adult", "elder", "teen"):
        return None
    others = [q.name for q in hh.residents if q.name != A and q.kind in ("adult", "teen", "elder")]
    day = ctx.free_day("stock", "household", [0, 1, 2, 3, 4, 5, 6])
    if not (fridge and cam and speaker and others) or day is None:
        return None
    ctx.world.claim("stock", "household", day)
    item, seen, used = r.choice(STOCK)
    K = r.choice(others)
    snap = at(day, 15, r.randint(0, 40))
    a = ctx.conflict.emit(snap, fridge, "vision", **say("a", locals()))
    s1 = ctx.support.emit(
        snap + timedelta(minutes=r.randint(70, 100)),
        cam,
        "vision",
        **say("s1", locals()),
        people=[K],
    )
    s2 = ctx.support.emit(
        s1.ts - timedelta(minutes=2) if s1 else snap + timedelta(minutes=80),
        fridge,
        "device_status",
        **say("s2"),
    )
    b = ctx.conflict.emit(
        at(day, 19, r.randint(0, 40)), speaker, "dialogue", **say("b", locals()), people=[A]
    )
    return _draft(
        ctx,
        "food",
        A,
        **say(
            "question",
            locals(),
            alt="Were there any" if item.endswith("s") else "Was there any",
            label=ctx.label(cam),
            v=used.split(" and ")[0],
            refs=[[a], [b], [s1, s2]],
        ),
        moments={"day": snap},
        asker=ctx.asker(K),
    )


def arrival(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("arrival")
    hh, r, P = ctx.hh, ctx.r, p.name
    lock, door = hh.shared("smart_lock"), hh.shared("doorbell_camera")
    talker = hh.first("smart_speaker", "smart_display")
    days = [d for d in p.work_days if d < 5] if p.work else []
    day = ctx.free_day("arrival", P, days)
    if not (lock and door and talker and p.kind == "adult") or day is None:
        return None
    ctx.world.claim("arrival", P, day)
    back = at(day, 18, r.randint(38, 58))
    claim = r.choice(say("claim"))
    s1 = ctx.support.emit(
        back - timedelta(minutes=1), door, "vision", **say("s1", locals()), people=[P]
    )
    a = ctx.conflict.emit(
        back,
        lock,
        "location",
        **say("a", locals()),
        people=[P],
        facts={"topic": "arrival", "person": P, "day": day, "value": clock(back), "conflict": True},
    )
    s2 = ctx.support.emit(
        back - timedelta(minutes=4),
        hh.car(P),
        "location",
        **say("s2", back_clock=clock(back - timedelta(minutes=4))),
        people=[P],
    )
    s3 = ctx.support.emit(
        back - timedelta(minutes=3),
        hh.phone(P),
        "location",
        **say("s3", locals(), back_clock=clock(back - timedelta(minutes=3))),
        people=[P],
        place="home",
    )
    b = ctx.conflict.emit(
        at(day, 21, r.randint(10, 50)), talker, "dialogue", **say("b", locals()), people=[P]
    )
    return _draft(
        ctx,
        "arrival",
        P,
        **say(
            "question",
            locals(),
            alt=say("result", back_clock=clock(back - timedelta(minutes=4))) if s2 else "",
            refs=[[a], [b], [s1, s2, s3]],
        ),
        moments={"day": back},
    )


def tv_time(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("tv_time")
    hh, r, P = ctx.hh, ctx.r, p.name
    tv, cam = hh.shared("smart_tv"), hh.shared("indoor_camera")
    talker = hh.first("smart_speaker", "smart_display")
    day = ctx.free_day("tv", "household", [0, 1, 2, 3, 4, 5])
    if not (tv and cam and talker) or day is None or p.kind not in ("adult", "teen"):
        return None
    ctx.world.claim("tv", "household", day)
    start = at(day, 20, r.randint(0, 20))
    minutes = r.randint(150, 185)
    show = r.choice(say("show"))
    a = ctx.conflict.emit(
        start + timedelta(minutes=minutes),
        tv,
        "app_usage",
        **say("a", locals(), minutes_div=minutes // 50),
        people=[P],
        facts={"topic": "tv", "person": "household", "day": day, "value": minutes, "show": show},
    )
    s1 = ctx.support.emit(
        start + timedelta(minutes=minutes - 25), cam, "vision", **say("s1", locals()), people=[P]
    )
    end = start + timedelta(minutes=minutes)
    s2 = ctx.support.emit(
        end + timedelta(minutes=2),
        tv,
        "device_status",
        **say("s2", end_clock=clock(end + timedelta(minutes=2))),
    )
    s3 = ctx.support.emit(
        end + timedelta(minutes=5),
        hh.shared("motion_sensor"),
        "motion",
        **say("s3", end_clock=clock(end + timedelta(minutes=5))),
        people=[P],
    )
    b = ctx.conflict.emit(
        at(day + 1, 18, r.randint(0, 50)), talker, "dialogue", **say("b", locals()), people=[P]
    )
    return _draft(
        ctx,
        "tv",
        P,
        **say("question", locals(), refs=[[a], [b], [s1, s2, s3]]),
        moments={"night": start},
        asker=ctx.asker(P),
    )


def back_door(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("back_door")
    hh, r, P = ctx.hh, ctx.r, p.name
    sensor, talker = hh.shared("door_window_sensor"), hh.shared("smart_speaker")
    others = [q.name for q in hh.residents if q.name != P and q.kind in ("adult", "teen", "elder")]
    day = ctx.free_day("door", "household", [0, 1, 2, 3, 4, 5])
    if not (sensor and talker) or day is None or p.kind not in ("adult", "teen"):
        return None
    ctx.world.claim("door", "household", day)
    B = r.choice(others) if others else P
    opened = at(day, 21, r.randint(30, 50))
    closed = opened + timedelta(minutes=r.randint(38, 52))
    place = hh.device(sensor).location.replace("_", " ")
    a = ctx.conflict.emit(opened, sensor, "device_status", **say("a", locals()))
    b = ctx.conflict.emit(
        opened + timedelta(minutes=6),
        talker,
        "dialogue",
        **say("b", locals(), alt="her" if p.gender == "f" else "him"),
        people=[P],
    )
    s1 = ctx.support.emit(
        closed - timedelta(minutes=1),
        hh.shared("smart_display") or talker,
        "audio",
        **say("s1", locals()),
        people=[B],
    )
    s2 = ctx.support.emit(closed, sensor, "device_status", **say("s2", locals()))
    s3 = ctx.support.emit(
        closed + timedelta(minutes=1),
        hh.shared("motion_sensor"),
        "motion",
        **say("s3", closed_clock=clock(closed + timedelta(minutes=1))),
        people=[B],
    )
    return _draft(
        ctx,
        "door",
        P,
        **say("question", locals(), refs=[[a], [b], [s1, s2, s3]]),
        moments={"night": opened},
    )


def temperature(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("temperature")
    hh, r, P = ctx.hh, ctx.r, p.name
    thermo = hh.shared("smart_thermostat")
    talker = hh.first("smart_speaker", "smart_display")
    day = ctx.free_day("cold", "household", [0, 1, 2, 3, 4, 5, 6])
    if not (thermo and talker) or day is None or p.kind not in ("adult", "elder", "teen"):
        return None
    ctx.world.claim("cold", "household", day)
    came_in = at(day, 19, r.randint(0, 20))
    reading = round(20.8 + r.randint(0, 9) / 10, 1)
    s1 = ctx.support.emit(
        came_in, hh.shared("doorbell_camera"), "vision", **say("s1", locals()), people=[P]
    )
    b = ctx.conflict.emit(
        came_in + timedelta(minutes=6), talker, "dialogue", **say("b", locals()), people=[P]
    )
    a = ctx.conflict.emit(
        came_in + timedelta(minutes=8), thermo, "environment", **say("a", locals())
    )
    s2 = ctx.support.emit(
        came_in + timedelta(minutes=40),
        thermo,
        "environment",
        **say("s2", round2=round(reading - 0.1, 1), draw=r),
    )
    s3 = ctx.support.emit(
        came_in + timedelta(minutes=3), hh.watch(P), "health", **say("s3", locals()), people=[P]
    )
    return _draft(
        ctx,
        "temperature",
        P,
        **say(
            "question",
            locals(),
            label=ctx.label(thermo),
            alt=say("result") if s3 else "",
            refs=[[a], [b], [s1, s2, s3]],
        ),
        moments={"night": came_in},
    )
