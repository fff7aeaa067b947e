"""Paired conflicts about a person's own readings: sleep, steps, weight, pills, workouts."""

from __future__ import annotations

from eval.synth.conflict_ctx import Ctx, _draft, later
from eval.synth.personas import Person, usual_weight
from eval.synth.phrasing import duration
from eval.synth.tables import Words
from eval.synth.timewords import at, day_label, is_weekend, weekday
from eval.synth.world import QuestionDraft

W = Words("conflicts")


def sleep_apps(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("sleep_apps")
    hh, r, P = ctx.hh, ctx.r, p.name
    watch, phone, hall = hh.watch(P), hh.phone(P), hh.shared("motion_sensor")
    night = ctx.take_day("sleep", P, range(6), watch and phone and hall)
    if night is None:
        return None
    ctx.world.claim("night_motion", "household", night)
    wake = at(night + 1, 0, p.wake[1 if is_weekend(night + 1) else 0] + r.randint(-5, 10))
    true_min = r.randint(330, 380)
    app_min = true_min + r.randint(62, 95)
    up = at(night + 1, 2, r.randint(5, 25))
    gap = r.randint(34, 48)
    ws, ps = duration(true_min, r), duration(app_min, r)
    light_on, in_hall, light_minutes = later(up, 1), later(up, 2), gap - 2
    facts = {"topic": "sleep", "person": P, "day": night, "value": true_min, "conflict": True}
    a = ctx.conflict.emit(
        wake, watch, "health", **say("a", locals()), people=[P], place="bedroom", facts=facts
    )
    b = ctx.conflict.emit(
        later(wake, 2), phone, "app_usage", **say("b", locals()), people=[P], place="bedroom"
    )
    s1 = ctx.support.emit(in_hall, hall, "motion", **say("s1", locals()), people=[P])
    speaker = hh.shared("smart_speaker")
    s2 = ctx.support.emit(later(up, 9), speaker, "audio", **say("s2", locals()), people=[P])
    light = hh.shared("smart_light")
    s3 = ctx.support.emit(light_on, light, "device_status", **say("s3", locals()))
    talker = hh.first("smart_display", "smart_speaker")
    told = later(wake, r.randint(30, 60))
    s4 = ctx.support.emit(told, talker, "dialogue", **say("s4", locals()), people=[P])
    label = ctx.label(watch)
    words = say("question", locals(), refs=[[a], [b], [s1, s2, s3, s4]])
    return _draft(ctx, "sleep", P, **words, moments={"night": up})


def steps(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("steps")
    hh, r, P = ctx.hh, ctx.r, p.name
    watch, phone, door = hh.watch(P), hh.phone(P), hh.shared("doorbell_camera")
    day = ctx.take_day("steps", P, range(7), watch and phone)
    if day is None:
        return None
    true, app = r.randint(10800, 13900), r.randint(3900, 5600)
    walk = at(day, 18, r.randint(0, 30))
    wlen = r.randint(55, 75)
    walk_end = later(walk, wlen)
    facts = {"topic": "steps", "person": P, "day": day, "value": true, "conflict": True}
    watch_synced = at(day, 21, r.randint(30, 50))
    a = ctx.conflict.emit(
        watch_synced, watch, "motion", **say("a", locals()), people=[P], place="home", facts=facts
    )
    app_synced = at(day, 21, r.randint(51, 58))
    b = ctx.conflict.emit(
        app_synced, phone, "app_usage", **say("b", locals()), people=[P], place="home"
    )
    s1 = ctx.support.emit(walk, door, "vision", **say("s1", locals()), people=[P])
    s2 = ctx.support.emit(
        later(walk, wlen // 2), phone, "location", **say("s2", locals()), people=[P], place="home"
    )
    s3 = ctx.support.emit(walk_end, door, "vision", **say("s3", locals()), people=[P])
    label = ctx.label(watch)
    words = say("question", locals(), refs=[[a], [b], [s1, s2, s3]])
    return _draft(ctx, "steps", P, **words, moments={"day": walk})


def weight(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("weight")
    hh, r, P = ctx.hh, ctx.r, p.name
    scale = hh.shared("smart_scale")
    talker = hh.phone(P) or hh.shared("smart_speaker")
    if not (scale and talker) or p.kind not in ("adult", "elder"):
        return None
    days = sorted(r.sample([d for d in range(7) if not ctx.world.is_claimed("weight", P, d)], 3))
    base = usual_weight(P) + 0.5
    readings = [round(base + 0.1 * r.randint(-3, 3), 1) for _ in days]
    obs = []
    for d, kg in zip(days, readings):
        ctx.world.claim("weight", P, d)
        em = ctx.conflict if d == days[-1] else ctx.support
        weighed = at(d, 7, r.randint(0, 40))
        fat = r.randint(190, 300) / 10
        facts = {"topic": "weight", "person": P, "day": d, "value": kg}
        words = say("scale_health", locals())
        obs.append(em.emit(weighed, scale, "health", **words, people=[P], facts=facts))
    claimed = round(base - r.randint(30, 45) / 10, 0)
    said = at(days[-1], 19, r.randint(0, 50))
    b = ctx.conflict.emit(said, talker, "dialogue", **say("b", locals()), people=[P])
    last, latest = obs[-1], readings[-1]
    last_day = day_label(last.ts) if last else ""
    joined = ", ".join(f"{k:.1f}" for k in readings[:-1])
    words = say("question", locals(), refs=[[last], [b], obs[:-1]])
    return _draft(ctx, "weight", P, **words, moments={"day": last.ts if last else at(0, 0)})


def medication(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("medication")
    hh, r, P = ctx.hh, ctx.r, p.name
    cam = hh.shared("indoor_camera")
    talker = hh.first("smart_display", "smart_speaker")
    carer = next((q.name for q in hh.people if q.kind == "carer"), None)
    day = ctx.take_day("medication", P, range(5), cam and talker and carer and p.kind == "elder")
    if day is None:
        return None
    reminded = at(day, 8, r.randint(0, 10))
    s1 = ctx.support.emit(reminded, talker, "dialogue", **say("s1", locals()), people=[P])
    wd = weekday(at(day, 0))
    a = ctx.conflict.emit(at(day, 11, r.randint(20, 40)), cam, "vision", **say("a", locals()))
    speaker = hh.shared("smart_speaker") or talker
    said = at(day, 11, r.randint(45, 58))
    b = ctx.conflict.emit(said, speaker, "dialogue", **say("b", locals()), people=[P, carer])
    noted, carer_phone = at(day, 12, r.randint(20, 40)), hh.phone(carer) or talker
    s2 = ctx.support.emit(noted, carer_phone, "dialogue", **say("s2", locals()), people=[carer, P])
    words = say("question", locals(), refs=[[a], [b], [s1, s2]])
    return _draft(ctx, "medication", P, **words, moments={"day": at(day, 11)}, asker=carer)


def workout_length(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("workout_length")
    hh, r, P = ctx.hh, ctx.r, p.name
    watch, phone, door = hh.watch(P), hh.phone(P), hh.shared("doorbell_camera")
    ready = watch and phone and door and p.kind in ("adult", "teen")
    day = ctx.take_day("workout", P, range(7), ready)
    if day is None:
        return None
    start = at(day, 18 if day < 5 else 9, r.randint(0, 40))
    true = r.randint(28, 36)
    app = true + r.randint(13, 22)
    km = round(true / r.uniform(5.3, 6.2), 1)
    left, stopped, back = later(start, -1), later(start, true), later(start, true + 1)
    unlocked, apart = later(back, 2), true + 2
    s1 = ctx.support.emit(left, door, "vision", **say("s1", locals()), people=[P])
    s2 = ctx.support.emit(back, door, "vision", **say("s2", locals()), people=[P])
    facts, park = {"topic": "workout_conflict", "person": P, "day": day}, hh.places["park"]
    a = ctx.conflict.emit(
        stopped, watch, "motion", **say("a", locals()), people=[P], place=park, facts=facts
    )
    lock = hh.shared("smart_lock")
    s3 = ctx.support.emit(unlocked, lock, "location", **say("s3", locals()), people=[P])
    b = ctx.conflict.emit(
        later(start, app), phone, "app_usage", **say("b", locals()), people=[P], place="home"
    )
    label = ctx.label(watch)
    words = say("question", locals(), refs=[[a], [b], [s1, s2, s3]])
    return _draft(ctx, "workout", P, **words, moments={"day": start})
