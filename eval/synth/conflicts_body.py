"""Paired conflicts about a person's own readings: sleep, steps, weight, pills, workouts."""

from __future__ import annotations

from datetime import timedelta

from eval.synth.conflict_ctx import Ctx, _draft
from eval.synth.personas import Person, usual_weight
from eval.synth.phrasing import duration
from eval.synth.tables import Words
from eval.synth.timewords import at, clock, day_label, is_weekend
from eval.synth.world import QuestionDraft

W = Words("conflicts")


def sleep_apps(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("sleep_apps")
    hh, r, P = ctx.hh, ctx.r, p.name
    watch, phone = hh.watch(P), hh.phone(P)
    night = ctx.free_day("sleep", P, [0, 1, 2, 3, 4, 5])
    if not (watch and phone and hh.shared("motion_sensor")) or night is None:
        return None
    ctx.world.claim("sleep", P, night)
    ctx.world.claim("night_motion", "household", night)
    wake = at(night + 1, 0, p.wake[1 if is_weekend(night + 1) else 0] + r.randint(-5, 10))
    true_min = r.randint(330, 380)
    app_min = true_min + r.randint(62, 95)
    up = at(night + 1, 2, r.randint(5, 25))
    gap = r.randint(34, 48)
    ws, ps = duration(true_min, r), duration(app_min, r)
    a = ctx.conflict.emit(
        wake,
        watch,
        "health",
        **say("a", locals()),
        people=[P],
        place="bedroom",
        facts={"topic": "sleep", "person": P, "day": night, "value": true_min, "conflict": True},
    )
    b = ctx.conflict.emit(
        wake + timedelta(minutes=2),
        phone,
        "app_usage",
        **say("b", locals()),
        people=[P],
        place="bedroom",
    )
    s1 = ctx.support.emit(
        up + timedelta(minutes=2),
        hh.shared("motion_sensor"),
        "motion",
        **say("s1", up_clock=clock(up + timedelta(minutes=2))),
        people=[P],
    )
    s2 = ctx.support.emit(
        up + timedelta(minutes=9),
        hh.shared("smart_speaker"),
        "audio",
        **say("s2", locals()),
        people=[P],
    )
    s3 = ctx.support.emit(
        up + timedelta(minutes=1),
        hh.shared("smart_light"),
        "device_status",
        **say("s3", up_clock=clock(up + timedelta(minutes=1)), gap_minus=gap - 2),
    )
    s4 = ctx.support.emit(
        wake + timedelta(minutes=r.randint(30, 60)),
        hh.first("smart_display", "smart_speaker"),
        "dialogue",
        **say("s4", locals()),
        people=[P],
    )
    when = "night"
    return _draft(
        ctx,
        "sleep",
        P,
        **say("question", locals(), label=ctx.label(watch), refs=[[a], [b], [s1, s2, s3, s4]]),
        moments={when: up},
    )


def steps(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("steps")
    hh, r, P = ctx.hh, ctx.r, p.name
    watch, phone = hh.watch(P), hh.phone(P)
    day = ctx.free_day("steps", P, [0, 1, 2, 3, 4, 5, 6])
    if not (watch and phone) or day is None:
        return None
    ctx.world.claim("steps", P, day)
    true, app = r.randint(10800, 13900), r.randint(3900, 5600)
    walk = at(day, 18, r.randint(0, 30))
    wlen = r.randint(55, 75)
    a = ctx.conflict.emit(
        at(day, 21, r.randint(30, 50)),
        watch,
        "motion",
        **say("a", locals()),
        people=[P],
        place="home",
        facts={"topic": "steps", "person": P, "day": day, "value": true, "conflict": True},
    )
    b = ctx.conflict.emit(
        at(day, 21, r.randint(51, 58)),
        phone,
        "app_usage",
        **say("b", locals()),
        people=[P],
        place="home",
    )
    s1 = ctx.support.emit(
        walk, hh.shared("doorbell_camera"), "vision", **say("s1", locals()), people=[P]
    )
    s2 = ctx.support.emit(
        walk + timedelta(minutes=wlen // 2),
        phone,
        "location",
        **say("s2", locals(), walk_clock=clock(walk + timedelta(minutes=wlen))),
        people=[P],
        place="home",
    )
    s3 = ctx.support.emit(
        walk + timedelta(minutes=wlen),
        hh.shared("doorbell_camera"),
        "vision",
        **say("s3", locals()),
        people=[P],
    )
    return _draft(
        ctx,
        "steps",
        P,
        **say("question", locals(), label=ctx.label(watch), refs=[[a], [b], [s1, s2, s3]]),
        moments={"day": walk},
    )


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
        obs.append(
            em.emit(
                at(d, 7, r.randint(0, 40)),
                scale,
                "health",
                **say("scale_health", locals(), v=r.randint(190, 300) / 10),
                people=[P],
                facts={"topic": "weight", "person": P, "day": d, "value": kg},
            )
        )
    claimed = round(base - r.randint(30, 45) / 10, 0)
    b = ctx.conflict.emit(
        at(days[-1], 19, r.randint(0, 50)), talker, "dialogue", **say("b", locals()), people=[P]
    )
    return _draft(
        ctx,
        "weight",
        P,
        **say(
            "question",
            locals(),
            readings_i=readings[-1],
            alt=day_label(obs[-1].ts) if obs[-1] else "",
            joined=", ".join(f"{k:.1f}" for k in readings[:-1]),
            refs=[[obs[-1]], [b], obs[:-1]],
        ),
        moments={"day": obs[-1].ts if obs[-1] else at(0, 0)},
    )


def medication(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("medication")
    hh, r, P = ctx.hh, ctx.r, p.name
    cam = hh.shared("indoor_camera")
    talker = hh.first("smart_display", "smart_speaker")
    carer = next((q.name for q in hh.people if q.kind == "carer"), None)
    day = ctx.free_day("medication", P, [0, 1, 2, 3, 4])
    if not (cam and talker and carer) or day is None or p.kind != "elder":
        return None
    ctx.world.claim("medication", P, day)
    s1 = ctx.support.emit(
        at(day, 8, r.randint(0, 10)), talker, "dialogue", **say("s1", locals()), people=[P]
    )
    wd = day_label(at(day, 0)).split()[0]
    a = ctx.conflict.emit(at(day, 11, r.randint(20, 40)), cam, "vision", **say("a", locals()))
    b = ctx.conflict.emit(
        at(day, 11, r.randint(45, 58)),
        hh.shared("smart_speaker") or talker,
        "dialogue",
        **say("b", locals()),
        people=[P, carer],
    )
    s2 = ctx.support.emit(
        at(day, 12, r.randint(20, 40)),
        hh.phone(carer) or talker,
        "dialogue",
        **say("s2", locals()),
        people=[carer, P],
    )
    return _draft(
        ctx,
        "medication",
        P,
        **say("question", locals(), refs=[[a], [b], [s1, s2]]),
        moments={"day": at(day, 11)},
        asker=carer,
    )


def workout_length(ctx: Ctx, p: Person) -> QuestionDraft | None:
    say = W.at("workout_length")
    hh, r, P = ctx.hh, ctx.r, p.name
    watch, phone, door = hh.watch(P), hh.phone(P), hh.shared("doorbell_camera")
    day = ctx.free_day("workout", P, [0, 1, 2, 3, 4, 5, 6])
    if not (watch and phone and door) or day is None or p.kind not in ("adult", "teen"):
        return None
    ctx.world.claim("workout", P, day)
    start = at(day, 18 if day < 5 else 9, r.randint(0, 40))
    true = r.randint(28, 36)
    app = true + r.randint(13, 22)
    km = round(true / r.uniform(5.3, 6.2), 1)
    s1 = ctx.support.emit(
        start - timedelta(minutes=1),
        door,
        "vision",
        **say("s1", locals(), start_clock=clock(start - timedelta(minutes=1))),
        people=[P],
    )
    back = start + timedelta(minutes=true + 1)
    s2 = ctx.support.emit(back, door, "vision", **say("s2", locals()), people=[P])
    a = ctx.conflict.emit(
        start + timedelta(minutes=true),
        watch,
        "motion",
        **say("a", locals(), start_clock=clock(start + timedelta(minutes=true))),
        people=[P],
        place=hh.places["park"],
        facts={"topic": "workout_conflict", "person": P, "day": day},
    )
    s3 = ctx.support.emit(
        back + timedelta(minutes=2),
        hh.shared("smart_lock"),
        "location",
        **say("s3", locals(), back_clock=clock(back + timedelta(minutes=2))),
        people=[P],
    )
    b = ctx.conflict.emit(
        start + timedelta(minutes=app),
        phone,
        "app_usage",
        **say("b", locals()),
        people=[P],
        place="home",
    )
    return _draft(
        ctx,
        "workout",
        P,
        **say(
            "question",
            locals(),
            label=ctx.label(watch),
            true_plus=true + 2,
            refs=[[a], [b], [s1, s2, s3]],
        ),
        moments={"day": start},
    )
