"""Storylines about illness: a fever, a worrying trend, bad sleep."""

from __future__ import annotations

from eval.synth.episodes.base import Ep, template
from eval.synth.episodes.storyline import Storyline, minutes
from eval.synth.tables import Words
from eval.synth.timewords import is_weekend, weekday

W = Words("episodes/health")


@template("fever", span=3)
def fever(ep: Ep) -> bool:
    """Someone is kept home from school or work by a fever and another adult at home looks
    after them: the story reports an absence, a morning without the usual departure and a
    carer reading a thermometer, so it needs a patient who leaves for school or work that
    weekday and a second adult (not a retiree "absent", not someone nursing themselves)."""
    hh, r = ep.hh, ep.r
    d = max(1, min(ep.day0, 4))  # the evening before falls inside the week
    kinds = ("child", "teen", "adult")
    p = ep.pick(
        [q for q in hh.residents if q.kind in kinds and q.work is not None and d in q.work_days]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    helper = ep.other_adult(P)
    if helper is None:
        return False
    H = helper.name
    s = Storyline(ep, W.at("fever"), "illness", P)
    say = s.say
    ep.plan.title = say("title", locals())
    absent = say("absent", locals())
    ep.keep_home(P, d)
    ep.keep_home(H, d)
    temp1, temp2 = r.choice([38.4, 38.6, 38.9, 39.1]), r.choice([37.6, 37.8, 37.9])
    t1 = ep.jitter(d, 6, 35, 55)
    t0 = ep.at(d - 1, 18, r.randint(0, 50))
    speaker = hh.first("smart_speaker", "smart_display")
    e0 = ep.event(t0, [P], "kitchen", say("e0", locals()))
    s.view(e0, speaker, "audio", "speaker_audio", locals())
    idle_screen = say("idle_tablet") if hh.tablet(P) else say("idle_phone")
    s.view(e0, hh.tablet(P) or hh.phone(P), "app_usage", "tablet_app_usage", locals(), offset=40)
    e1 = ep.event(t1, [P, H], "bedroom", say("e1", locals()), causes=[e0])
    wv = s.view(e1, hh.watch(P), "health", "wv", locals(), draw=r)
    sp = s.view(e1, speaker, "audio", "sp", locals(), offset=14, people=[H, P])
    ep.world.claim("workout", P, d)
    ep.world.claim("workout", P, d + 1)
    t2 = t1 + minutes(r.randint(40, 70))
    missed = "school" if p.kind != "adult" else "work"
    e2 = ep.event(t2, [H, P], "kitchen", say("e2", locals()), causes=[e1])
    reported_to = "the school office" if p.kind != "adult" else f"{P}'s manager"
    msg = s.view(e2, hh.phone(H), "dialogue", "msg", locals(), people=[H, P])
    if helper.kind == "adult":  # the carer's own working day moved home (not a retiree's)
        s.view(e2, hh.laptop(H), "app_usage", "laptop_app_usage", offset=9)
    day_name = weekday(t2)
    lock = s.view(e2, hh.shared("smart_lock"), "location", "lock", locals(), offset=60)
    t3 = ep.jitter(d, 14, 0, 40)
    pharmacy = hh.places["pharmacy"]
    e3 = ep.event(t3, [H, P], pharmacy, say("e3", locals()), causes=[e2])
    if p.kind in ("child", "toddler"):
        receipt = say("receipt_children", locals(), draw=r)
    else:
        receipt = say("receipt_adult", locals())
    buy = s.view(e3, hh.phone(H), "app_usage", "buy", locals(), place=pharmacy)
    warmed = "nursery" if p.kind == "toddler" else "house"
    thermostat = hh.shared("smart_thermostat")
    thermo = s.view(e3, thermostat, "environment", "thermo", locals(), offset=-50)
    t4 = ep.jitter(d + 1, 7, 0, 30)
    e4 = ep.event(t4, [P], "bedroom", say("e4", locals()), causes=[e3])
    sp2 = s.view(e4, speaker, "audio", "sp2", locals(), people=[H, P])
    wv2 = s.view(e4, hh.watch(P), "health", "wv2", draw=r, offset=-25)
    t5 = ep.jitter(min(d + 2, 6), 8, 0, 30)
    e5 = ep.event(t5, [P], "front_door", say("e5", locals()), causes=[e4])
    s.view(e5, hh.shared("doorbell_camera"), "vision", "doorbell_camera_vision", locals())
    s.view(e5, speaker, "dialogue", "speaker_dialogue", locals(), offset=-6, people=[H, P])
    sick = {"sick": t1}
    s.ask("causal", ep.asker(P, H), locals(), refs=[[wv], [sp], [msg, e2], [lock]], moments=sick)
    fusion_refs = [[sp, wv], [buy], [thermo], [sp2, wv2]]
    s.ask("fusion", ep.asker(P), locals(), refs=fusion_refs, moments=sick)
    s.perspective([e1, e2], ep.asker(P), locals(), moments=sick)
    return True


@template("health_trend", span=5)
def health_trend(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    kinds = ("elder", "adult")
    p = ep.pick([q for q in hh.residents if q.kind in kinds and hh.watch(q.name) and q.age >= 40])
    if p is None:
        return False
    P, x = p.name, p.pron
    s = Storyline(ep, W.at("health_trend"), "health", P)
    say = s.say
    d = min(ep.day0, 2)
    ep.plan.title = say("title", locals())
    rates = sorted(r.sample(range(66, 95), 4))
    events, views = [], []
    for i, rate in enumerate(rates):
        day = d + i
        t = ep.jitter(day, 7, 2, 25)
        ev = ep.event(t, [P], "bedroom", say("ev", locals()), causes=events[-1:])
        facts = {"topic": "resting_hr", "person": P, "day": day, "value": rate}
        v = s.view(ev, hh.watch(P), "health", "v", locals(), draw=r, facts=facts)
        ep.world.claim("resting_hr", P, day)
        events.append(ev)
        views.append(v)
    t5 = ep.jitter(d + 2, 19, 0, 40)
    e5 = ep.event(t5, [P], "living_room", say("e5", locals()), causes=[events[2]])
    dizzy = s.view(e5, hh.first("smart_speaker", "smart_display"), "audio", "dizzy", locals())
    mot = s.view(e5, hh.shared("motion_sensor"), "motion", "mot", offset=-3, people=[P])
    t6 = ep.jitter(d + 3, 9, 10, 40)
    e6 = ep.event(t6, [P], "home", say("e6", locals()), causes=[e5, events[3]])
    appointment = ep.at(d + 4, 9)
    book = s.view(e6, hh.phone(P) or hh.tablet(P), "app_usage", "book", locals())
    display = hh.first("smart_display", "smart_speaker")
    remind = s.view(e6, display, "dialogue", "remind", locals(), offset=5)
    t7 = ep.at(d + 4, 11, r.randint(30, 50))
    clinic = hh.places["clinic"]
    e7 = ep.event(t7, [P], clinic, say("e7", locals()), causes=[e6])
    gp_place = clinic if hh.phone(P) else None
    gp = s.view(
        e7, hh.phone(P) or hh.shared("smart_speaker"), "dialogue", "gp", locals(), place=gp_place
    )
    readings = [say("reading", rate=rate, e=e) for rate, e in zip(rates, events)]
    joined = ", ".join(readings)
    checklist = [(text, [v], [str(rate)]) for text, v, rate in zip(readings, views, rates)]
    s.ask("user_aggregation", ep.asker(P), locals(), checklist=checklist, topic="resting_hr")
    causal_refs = [[views[0], views[-1]], [dizzy, mot], [book, remind], [gp]]
    s.ask("causal", ep.asker(P), locals(), refs=causal_refs, moments={"gp": t7})
    fusion_refs = [[dizzy, e5], [mot], [book, remind], [gp]]
    s.ask("fusion", ep.asker(P), locals(), refs=fusion_refs, moments={"dizzy": t5})
    s.perspective([e5], ep.asker(P), locals(), moments={"dizzy": t5})
    return True


@template("sleep_problem", span=4)
def sleep_problem(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    kinds = ("adult", "teen", "elder")
    p = ep.pick([q for q in hh.residents if q.kind in kinds and hh.watch(q.name)])
    if p is None:
        return False
    P, x = p.name, p.pron
    s = Storyline(ep, W.at("sleep_problem"), "sleep", P)
    say = s.say
    d = min(ep.day0, 3)
    cause = r.choice(["heat", "screens", "noise"])
    ep.plan.title = say("title", locals())
    thermostat = hh.shared("smart_thermostat")
    climate = hh.first("air_quality_monitor", "air_purifier", "smart_thermostat")
    sleeps, evs, vws = [], [], []
    for i in range(3):
        night = d + i
        wake = p.wake[1 if is_weekend(night + 1) else 0]
        t = ep.at(night + 1, wake // 60, wake % 60 + r.randint(0, 8))
        minutes = r.randint(290, 345) if i < 2 else r.randint(420, 470)
        sleeps.append(minutes)
        wakes = r.randint(4, 7) if i < 2 else r.randint(0, 2)
        ev = ep.event(t, [P], "bedroom", say("ev", locals()), causes=evs[-1:])
        facts = {"topic": "sleep", "person": P, "day": night, "value": minutes}
        v = s.view(ev, hh.watch(P), "health", "v", locals(), draw=r, facts=facts)
        ep.world.claim("sleep", P, night)
        evs.append(ev)
        vws.append(v)
    # the cause, observed on the first bad night by two devices; then who fixes it how
    if cause == "heat":
        other = thermostat if climate != thermostat else None
        seen = [(climate, "environment"), (other, "environment")]
        fixed_on = (thermostat, "environment")
    elif cause == "screens":
        seen = [(hh.phone(P), "app_usage"), (hh.shared("smart_light"), "device_status")]
        fixed_on = (hh.phone(P), "app_usage")
    else:
        seen = [(hh.shared("doorbell_camera"), "audio"), (hh.shared("smart_speaker"), "audio")]
        fixed_on = (hh.phone(P), "app_usage")
    tc = ep.at(d, 23, r.randint(20, 50))
    why = say(cause, locals(), draw=r)
    ec = ep.event(tc, [P], "bedroom", why["fact"])
    cv = ep.view(ec, *seen[0], **why["seen"][0])
    cv2 = ep.view(ec, *seen[1], **why["seen"][1])
    tf = ep.at(d + 2, 20, r.randint(0, 40))
    ef = ep.event(tf, [P], "home", say("ef", locals()), causes=[evs[1], ec])
    fx = ep.view(ef, *fixed_on, **why["fixed"])
    talker = hh.shared("smart_speaker") if cause != "noise" else hh.shared("smart_display")
    tired = s.view(evs[1], talker, "dialogue", "tired", locals(), offset=40)
    causal_refs = [vws[:2], [cv, cv2], [fx, tired], [vws[2]]]
    s.ask(
        "causal", ep.asker(P, include=[P]), locals(), refs=causal_refs, moments={"good": evs[2].ts}
    )
    query_refs = [[vws[0]], [vws[1]], [vws[2]], [fx]]
    s.ask("user_query", P, locals(), refs=query_refs, delay=(3.0, 12.0))
    fusion_refs = [[cv, cv2, ec], [tired] + vws[:2], [fx]]
    s.ask("fusion", ep.asker(P), locals(), refs=fusion_refs, moments={"bad": tc})
    return True
