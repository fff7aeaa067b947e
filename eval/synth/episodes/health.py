"""Storylines about illness: a fever, a worrying trend, bad sleep."""

from __future__ import annotations

from eval.synth.episodes.base import Ep, template
from eval.synth.tables import Words
from eval.synth.timewords import day_label

W = Words("episodes/health")


def _mins(n: int):
    from datetime import timedelta

    return timedelta(minutes=n)


@template("fever", span=3)
def fever(ep: Ep) -> bool:
    say = W.at("fever")
    hh, r = ep.hh, ep.r
    p = ep.pick(
        [q for q in hh.residents if q.kind in ("child", "teen", "toddler", "adult", "elder")]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    helper = ep.other_adult(P)
    H = helper.name if helper else P
    d = max(1, min(ep.day0, 4))  # the evening before falls inside the week
    ep.plan.title = say("title", locals())
    absent = say("absent", locals()) if H != P else say("absent_2", locals())
    ep.keep_home(P, d)
    ep.keep_home(H, d)
    temp1, temp2 = r.choice([38.4, 38.6, 38.9, 39.1]), r.choice([37.6, 37.8, 37.9])
    t1 = ep.jitter(d, 6, 35, 55)
    t0 = ep.at(d - 1, 18, r.randint(0, 50)) if d > 0 else ep.at(0, 0, 30)
    e0 = ep.event(t0, [P], "kitchen", say("e0", locals()))
    ep.view(
        e0, hh.first("smart_speaker", "smart_display"), "audio", **say("speaker_audio", locals())
    )
    ep.view(
        e0,
        hh.tablet(P) or hh.phone(P),
        "app_usage",
        **say("tablet_app_usage", alt=say("view") if hh.tablet(P) else say("view_2")),
        offset=40,
    )
    e1 = ep.event(t1, [P, H], "bedroom", say("e1", locals()), causes=[e0])
    wv = ep.view(e1, hh.watch(P), "health", **say("wv", locals(), draw=r))
    sp = ep.view(
        e1,
        hh.first("smart_speaker", "smart_display"),
        "audio",
        **say("sp", locals()),
        offset=14,
        people=[H, P],
    )
    ep.world.claim("workout", P, d)
    ep.world.claim("workout", P, d + 1)
    t2 = t1 + _mins(r.randint(40, 70))
    e2 = ep.event(
        t2,
        [H, P],
        "kitchen",
        say("e2", locals(), alt="school" if p.kind != "adult" else "work"),
        causes=[e1],
    )
    msg = ep.view(
        e2,
        hh.phone(H),
        "dialogue",
        **say(
            "msg",
            locals(),
            alt="the school office" if p.kind != "adult" else P + chr(39) + "s manager",
        ),
        people=[H, P],
    )
    ep.view(e2, hh.laptop(H) or hh.laptop(P), "app_usage", **say("laptop_app_usage"), offset=9)
    lock = ep.view(
        e2,
        hh.shared("smart_lock"),
        "location",
        **say("lock", locals(), v=day_label(t2).split()[0]),
        offset=60,
    )
    t3 = ep.jitter(d, 14, 0, 40)
    e3 = ep.event(t3, [H, P], hh.places["pharmacy"], say("e3", locals()), causes=[e2])
    buy = ep.view(
        e3,
        hh.phone(H),
        "app_usage",
        **say(
            "buy",
            locals(),
            alt=say("buy_2", locals(), draw=r)
            if p.kind in ("child", "toddler")
            else say("buy_3", locals()),
        ),
        place=hh.places["pharmacy"],
    )
    thermo = ep.view(
        e3,
        hh.shared("smart_thermostat"),
        "environment",
        **say("thermo", alt="nursery" if p.kind == "toddler" else "house"),
        offset=-50,
    )
    t4 = ep.jitter(d + 1, 7, 0, 30)
    e4 = ep.event(t4, [P], "bedroom", say("e4", locals()), causes=[e3])
    sp2 = ep.view(
        e4,
        hh.first("smart_speaker", "smart_display"),
        "audio",
        **say("sp2", locals()),
        people=[H, P],
    )
    wv2 = ep.view(e4, hh.watch(P), "health", **say("wv2", draw=r), offset=-25)
    t5 = ep.jitter(min(d + 2, 6), 8, 0, 30)
    e5 = ep.event(t5, [P], "front_door", say("e5", locals()), causes=[e4])
    ep.view(e5, hh.shared("doorbell_camera"), "vision", **say("doorbell_camera_vision", locals()))
    ep.view(
        e5,
        hh.first("smart_speaker", "smart_display"),
        "dialogue",
        **say("speaker_dialogue", locals()),
        offset=-6,
        people=[H, P],
    )
    ep.ask(
        "causal",
        ep.asker(P, H),
        **say("ask_causal", locals(), refs=[[wv], [sp], [msg, e2], [lock]]),
        topic="illness",
        subject=P,
        moments={"sick": t1},
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        **say("ask_fusion", locals(), refs=[[sp, wv], [buy], [thermo], [sp2, wv2]]),
        topic="illness",
        subject=P,
        moments={"sick": t1},
    )
    ep.perspective(
        [e1, e2],
        ep.asker(P),
        **say("perspective", locals()),
        topic="illness",
        subject=P,
        moments={"sick": t1},
    )
    return True


@template("health_trend", span=5)
def health_trend(ep: Ep) -> bool:
    say = W.at("health_trend")
    hh, r = ep.hh, ep.r
    p = ep.pick(
        [
            q
            for q in hh.residents
            if q.kind in ("elder", "adult") and hh.watch(q.name) and q.age >= 40
        ]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    d = min(ep.day0, 2)
    ep.plan.title = say("title", locals())
    rates = sorted(r.sample(range(66, 95), 4))
    events, views = [], []
    prev = None
    for i, rate in enumerate(rates):
        day = d + i
        t = ep.jitter(day, 7, 2, 25)
        ev = ep.event(t, [P], "bedroom", say("ev", locals()), causes=[prev] if prev else [])
        v = ep.view(
            ev,
            hh.watch(P),
            "health",
            **say("v", locals(), draw=r),
            facts={"topic": "resting_hr", "person": P, "day": day, "value": rate},
        )
        ep.world.claim("resting_hr", P, day)
        events.append(ev)
        views.append(v)
        prev = ev
    t5 = ep.jitter(d + 2, 19, 0, 40)
    e5 = ep.event(t5, [P], "living_room", say("e5", locals()), causes=[events[2]])
    dizzy = ep.view(
        e5, hh.first("smart_speaker", "smart_display"), "audio", **say("dizzy", locals())
    )
    mot = ep.view(e5, hh.shared("motion_sensor"), "motion", **say("mot"), offset=-3, people=[P])
    t6 = ep.jitter(d + 3, 9, 10, 40)
    e6 = ep.event(t6, [P], "home", say("e6", locals()), causes=[e5, events[3]])
    book = ep.view(
        e6,
        hh.phone(P) or hh.tablet(P),
        "app_usage",
        **say("book", locals(), day2=day_label(ep.at(d + 4, 9))),
    )
    ask_ = ep.view(
        e6, hh.first("smart_display", "smart_speaker"), "dialogue", **say("ask", locals()), offset=5
    )
    t7 = ep.at(d + 4, 11, r.randint(30, 50))
    e7 = ep.event(t7, [P], hh.places["clinic"], say("e7", locals()), causes=[e6])
    gp = ep.view(
        e7,
        hh.phone(P) or hh.shared("smart_speaker"),
        "dialogue",
        **say("gp", locals()),
        place=hh.places["clinic"] if hh.phone(P) else None,
    )
    ep.ask(
        "user_aggregation",
        ep.asker(P),
        **say(
            "ask_user_aggregation",
            locals(),
            joined=", ".join((f"{v} bpm on {day_label(e.ts)}" for v, e in zip(rates, events))),
        ),
        checklist=[
            (say("ask_2", rate=rate, e=e), [v], [f"{rate}"])
            for rate, e, v in zip(rates, events, views)
        ],
        topic="resting_hr",
        subject=P,
    )
    ep.ask(
        "causal",
        ep.asker(P),
        **say(
            "ask_causal",
            locals(),
            rates_i=rates[-1],
            refs=[[views[0], views[-1]], [dizzy, mot], [book, ask_], [gp]],
        ),
        topic="health",
        subject=P,
        moments={"gp": t7},
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        **say(
            "ask_fusion",
            locals(),
            day2=day_label(ep.at(d + 4, 9)),
            refs=[[dizzy, e5], [mot], [book, ask_], [gp]],
        ),
        topic="health",
        subject=P,
        moments={"dizzy": t5},
    )
    ep.perspective(
        [e5],
        ep.asker(P),
        **say("perspective", locals()),
        topic="health",
        subject=P,
        moments={"dizzy": t5},
    )
    return True


@template("sleep_problem", span=4)
def sleep_problem(ep: Ep) -> bool:
    say = W.at("sleep_problem")
    hh, r = ep.hh, ep.r
    p = ep.pick(
        [q for q in hh.residents if q.kind in ("adult", "teen", "elder") and hh.watch(q.name)]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    d = min(ep.day0, 3)
    cause = r.choice(["heat", "screens", "noise"])
    ep.plan.title = say("title", locals())
    climate = (
        hh.shared("air_quality_monitor")
        or hh.shared("air_purifier")
        or hh.shared("smart_thermostat")
    )
    sleeps, evs, vws = [], [], []
    prev = None
    for i in range(3):
        night = d + i
        t = ep.at(
            night + 1,
            p.wake[0 if (night + 1) % 7 < 5 else 1] // 60,
            p.wake[0 if (night + 1) % 7 < 5 else 1] % 60 + r.randint(0, 8),
        )
        minutes = r.randint(290, 345) if i < 2 else r.randint(420, 470)
        sleeps.append(minutes)
        wakes = r.randint(4, 7) if i < 2 else r.randint(0, 2)
        ev = ep.event(t, [P], "bedroom", say("ev", locals()), causes=[prev] if prev else [])
        v = ep.view(
            ev,
            hh.watch(P),
            "health",
            **say("v", locals(), draw=r),
            facts={"topic": "sleep", "person": P, "day": night, "value": minutes},
        )
        ep.world.claim("sleep", P, night)
        evs.append(ev)
        vws.append(v)
        prev = ev
    # the cause, observed on the first bad night
    tc = ep.at(d, 23, r.randint(20, 50))
    if cause == "heat":
        ec = ep.event(tc, [P], "bedroom", say("ec", locals()))
        cv = ep.view(ec, climate, "environment", **say("cv"))
        cv2 = ep.view(
            ec,
            hh.shared("smart_thermostat") if climate != hh.shared("smart_thermostat") else None,
            "environment",
            **say("cv2"),
        )
        fix_text = (say("fix_text"), say("fix_text_2"))
        fix_dev, fix_mod = hh.shared("smart_thermostat"), "environment"
        qcause = say("qcause")
    elif cause == "screens":
        ec = ep.event(tc, [P], "bedroom", say("ec_2", locals()))
        cv = ep.view(ec, hh.phone(P), "app_usage", **say("cv_2", locals(), draw=r))
        cv2 = ep.view(ec, hh.shared("smart_light"), "device_status", **say("cv2_2"))
        fix_text = (say("fix_text_3"), say("fix_text_4", locals()))
        fix_dev, fix_mod = hh.phone(P), "app_usage"
        qcause = say("qcause_2")
    else:
        ec = ep.event(tc, [P], "bedroom", say("ec_3"))
        cv = ep.view(ec, hh.shared("doorbell_camera"), "audio", **say("cv_3"))
        cv2 = ep.view(ec, hh.shared("smart_speaker"), "audio", **say("cv2_3", locals()))
        fix_text = (say("fix_text_5"), say("fix_text_6"))
        fix_dev, fix_mod = hh.phone(P), "app_usage"
        qcause = say("qcause_3")
    tf = ep.at(d + 2, 20, r.randint(0, 40))
    ef = ep.event(tf, [P], "home", say("ef", locals()), causes=[evs[1], ec])
    fx = ep.view(ef, fix_dev, fix_mod, fix_text[1], **say("fx", locals()))
    tired = ep.view(
        evs[1],
        hh.shared("smart_speaker") if cause != "noise" else hh.shared("smart_display"),
        "dialogue",
        **say("tired", locals()),
        offset=40,
    )
    ep.ask(
        "causal",
        ep.asker(P, include=[P]),
        **say("ask_causal", locals(), refs=[vws[:2], [cv, cv2], [fx, tired], [vws[2]]]),
        topic="sleep",
        subject=P,
        moments={"good": evs[2].ts},
    )
    ep.ask(
        "user_query",
        P,
        **say("ask_user_query", locals(), refs=[[vws[0]], [vws[1]], [vws[2]], [fx]]),
        topic="sleep",
        subject=P,
        delay=(3.0, 12.0),
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        **say("ask_fusion", locals(), refs=[[cv, cv2, ec], [tired] + vws[:2], [fx]]),
        topic="sleep",
        subject=P,
        moments={"bad": tc},
    )
    return True
