"""Storylines about bodies in action: an injury, a fall, training for a race."""

from __future__ import annotations

from eval.synth.episodes.base import Ep, template
from eval.synth.episodes.storyline import Storyline, minutes
from eval.synth.personas import Person
from eval.synth.tables import Words, load_table

TABLE = load_table("episodes/body")
W = Words("episodes/body")
SPORTS, CHILD_SPORTS = TABLE["SPORTS"], TABLE["CHILD_SPORTS"]  # (sport, body part, place)
DISTANCES = TABLE["DISTANCES"]  # km options for the three training runs


def _free_to_train(ep: Ep, q: Person) -> bool:
    """A watch logs q's workouts, and no other storyline has taken them over."""
    return bool(ep.hh.watch(q.name)) and not ep.world.any_claim("workout", q.name)


@template("injury", span=3)
def injury(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    kinds = ("child", "teen", "adult")
    p = ep.pick([q for q in hh.residents if q.kind in kinds and _free_to_train(ep, q)])
    if p is None:
        return False
    P, x = p.name, p.pron
    s = Storyline(ep, W.at("injury"), "injury", P)
    say = s.say
    helper = ep.other_adult(P)
    H = helper.name if helper else P
    sport, body, where = r.choice(SPORTS + (CHILD_SPORTS if p.kind == "child" else []))
    venue, clinic = hh.places[where], hh.places["clinic"]
    side = r.choice(["left", "right"])
    doing = say("running") if sport == "running" else say("playing", locals())
    b = W(f"BODY.{body}", locals())
    d = ep.day0
    t1 = ep.jitter(d, 10 if d >= 5 else 17, 5, 45)
    played, idle, cad = r.randint(22, 48), r.randint(9, 23), r.randint(148, 171)
    ep.plan.title = say("title", locals())
    ep.keep_home(P, d + 1)
    ep.keep_home(H, d + 1)
    for day in range(d, min(d + 5, 7)):
        ep.world.claim("workout", P, day)
    speaker = hh.first("smart_speaker", "smart_display")
    e1 = ep.event(t1, [P], venue, say("e1", locals()))
    w1 = s.view(e1, hh.watch(P), "motion", "w1", locals(), place=venue)
    phone_still = idle + 5
    s.view(e1, hh.phone(P), "location", "phone_location", locals(), offset=3, place=venue)
    t2 = t1.replace(second=0) + minutes(r.randint(38, 70))
    e2 = ep.event(t2, [P] + ([H] if H != P else []), "front_door", say("e2", locals()), causes=[e1])
    dv = s.view(e2, hh.shared("doorbell_camera"), "vision", "dv", locals())
    unlocked = t2 + minutes(1)
    lock_key = "lock_let_in" if H != P else "lock_own_key"
    lock = s.view(
        e2, hh.shared("smart_lock"), "location", lock_key, locals(), offset=1, people=[H, P]
    )
    t3 = t2 + minutes(r.randint(9, 18))
    e3 = ep.event(t3, [P, H], "living_room", say("e3", locals()), causes=[e2])
    sp = s.view(e3, speaker, "audio", "sp", locals())
    cam = s.view(
        e3, hh.first("indoor_camera", "smart_display"), "vision", "cam", locals(), offset=6
    )
    s.view(e3, hh.shared("smart_fridge"), "device_status", "fridge_device_status", offset=2)
    t4 = t3 + minutes(r.randint(140, 190))
    e4 = ep.event(t4, [H, P], "living_room", say("e4", locals()), causes=[e3])
    look = s.view(e4, hh.phone(H), "app_usage", "look", locals(), draw=r)
    skipped = "PE" if p.kind != "adult" else "the gym"
    plan = s.view(e4, speaker, "dialogue", "plan", locals(), offset=4, people=[H, P])
    rest_hr = r.randint(92, 104)
    hrv = s.view(e4, hh.watch(P), "health", "hrv", locals(), offset=-20)
    t5 = ep.jitter(d + 1, 8, 5, 25)
    e5 = ep.event(t5, [H, P], clinic, say("e5", locals()), causes=[e4])
    drive_place = "car" if hh.car(H) else clinic
    drive = s.view(
        e5, hh.car(H) or hh.phone(H), "location", "drive", locals(), draw=r, place=drive_place
    )
    arrived = t5 + minutes(12)
    wl = s.view(e5, hh.watch(P), "location", "wl", locals(), offset=12, place=clinic)
    t6 = t5 + minutes(r.randint(105, 130))
    e6 = ep.event(t6, [H, P], "home", say("e6", locals()), causes=[e5])
    diagnosis = b["diag"].split(",")[0]
    verdict = s.view(e6, speaker, "audio", "verdict", locals())
    back = s.view(e6, hh.shared("doorbell_camera"), "vision", "back", locals(), offset=-6)
    t7 = ep.jitter(d + 1, 21, 20, 45)
    steps = r.randint(1100, 2600)
    e7 = ep.event(t7, [P], "home", say("e7", locals()), causes=[e6])
    facts = {"topic": "steps", "person": P, "day": d + 1, "value": steps}
    st = s.view(e7, hh.watch(P), "motion", "st", locals(), facts=facts)
    ep.world.claim("steps", P, d + 1)
    rehab_screen = hh.tablet(P) or hh.laptop(P) or hh.phone(P)
    s.view(e7, rehab_screen, "app_usage", "tablet_app_usage", locals(), offset=-95)

    let_in = say("let_in", locals()) if H != P else ""
    label = ep.label(w1.device if w1 else None)
    asker = ep.asker(P, H) if len(hh.people) > 2 else H
    causal_refs = [[w1, e1], [dv, sp, cam], [look, plan], [drive, wl, verdict]]
    s.ask("causal", asker, locals(), refs=causal_refs, moments={"clinic": t5})
    fusion_refs = [[w1, e1], [dv, lock], [wl, verdict, back]]
    s.ask("fusion", ep.asker(P), locals(), refs=fusion_refs, moments={"hurt": t1})
    s.perspective([e2, e3], ep.asker(P), locals(), moments={"home": t2})
    if w1 is not None and st is not None:
        s.ask("user_query", P, locals(), refs=[[w1], [hrv], [st, wl]], moments={"hurt": t1})
    return True


@template("fall_alert", span=2)
def fall_alert(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    p = ep.pick([q for q in hh.residents if q.kind == "elder" and hh.watch(q.name)])
    if p is None:
        return False
    P, x = p.name, p.pron
    s = Storyline(ep, W.at("fall_alert"), "fall", P)
    say = s.say
    carer = next((q for q in hh.people if q.kind == "carer"), None) or ep.other_adult(P)
    C = carer.name if carer else P
    d = min(ep.day0, 4)
    ep.plan.title = say("title", locals())
    ep.keep_home(C, d, morning=False)
    t1 = ep.jitter(d, 7, 40, 58)
    e1 = ep.event(t1, [P], "garden", say("e1", locals()))
    fall = s.view(e1, hh.watch(P), "motion", "fall", locals(), place="garden")
    opened = t1 - minutes(2)
    door = s.view(e1, hh.shared("door_window_sensor"), "device_status", "door", locals(), offset=-2)
    t2 = t1 + minutes(r.randint(6, 12))
    e2 = ep.event(t2, [P], "kitchen", say("e2", locals()), causes=[e1])
    cam = s.view(e2, hh.shared("indoor_camera"), "vision", "cam", locals())
    sp = s.view(e2, hh.first("smart_speaker", "smart_display"), "audio", "sp", locals(), offset=2)
    t3 = ep.at(d, 9, r.randint(0, 20))
    e3 = ep.event(t3, [C, P], "front_door", say("e3", locals()), causes=[e2])
    lk = s.view(e3, hh.shared("smart_lock"), "location", "lk", locals(), people=[C])
    display = hh.first("smart_display", "smart_speaker")
    talk = s.view(e3, display, "dialogue", "talk", locals(), offset=25, people=[C, P])
    t4 = ep.at(d + 1, 10, r.randint(0, 30))
    e4 = ep.event(t4, [C], "garden", say("e4", locals()), causes=[e3])
    buy = s.view(e4, hh.phone(C), "app_usage", "buy", offset=-70)
    door2 = s.view(e4, hh.shared("door_window_sensor"), "device_status", "door2")
    t5 = ep.at(d, 15, r.randint(0, 40))
    e5 = ep.event(t5, [C, P], "home", say("e5", locals()), causes=[e3])
    s.view(e5, hh.phone(C), "dialogue", "phone_dialogue", locals(), place="home")
    s.view(e5, hh.shared("indoor_camera"), "vision", "indoor_camera_vision", locals(), offset=20)
    causal_refs = [[fall, door], [cam, sp], [talk, lk], [buy, door2]]
    s.ask("causal", ep.asker(P), locals(), refs=causal_refs, moments={"fix": t4})
    s.perspective([e1, e2], C if C != P else ep.asker(), locals(), moments={"fall": t1})
    fusion_refs = [[fall, door], [cam, sp], [lk, talk], [buy, door2]]
    s.ask("fusion", ep.asker(P), locals(), refs=fusion_refs, moments={"fall": t1})
    return True


@template("training", span=7)
def training(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    kinds = ("adult", "teen")
    p = ep.pick(
        [q for q in hh.residents if q.kind in kinds and _free_to_train(ep, q) and hh.phone(q.name)]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    s = Storyline(ep, W.at("training"), "run", P)
    say = s.say
    ep.plan.title = say("title", locals())
    days = [1, 3, 5]
    paces = sorted([r.randint(318, 352) for _ in range(3)], reverse=True)  # seconds per km
    dists = [r.choice(options) for options in DISTANCES]
    runs, vws, apps = [], [], []
    for day in range(7):
        ep.world.claim("workout", P, day)
    e0 = ep.event(ep.jitter(0, 20, 0, 40), [P], "living_room", say("e0", locals()))
    sign = s.view(e0, hh.phone(P), "app_usage", "sign", draw=r)
    park = hh.places["park"]
    prev = e0
    for n, (day, pace, dist) in enumerate(zip(days, paces, dists), 1):
        t = ep.jitter(day, 18 if day < 5 else 9, 30, 50)
        ev = ep.event(t, [P], park, say("ev", locals()), causes=[prev])
        minutes = int(dist * pace / 60)
        per_km = divmod(pace, 60)
        facts = {"topic": "run", "person": P, "day": day, "value": dist}
        v = s.view(
            ev, hh.watch(P), "motion", "v", locals(), offset=minutes, facts=facts, place=park
        )
        hr = s.view(ev, hh.phone(P), "app_usage", "hr", locals(), draw=r, offset=minutes + 4)
        runs.append(ev)
        vws.append(v)
        apps.append(hr)
        prev = ev
    course = say("course")
    race = ep.event(
        ep.at(6, 10, r.randint(5, 15)), [P], course, say("race", locals()), causes=[prev]
    )
    finish = r.randint(46, 56)
    rv = s.view(race, hh.watch(P), "motion", "rv", locals(), draw=r, place=course)
    bib = s.view(race, hh.shared("doorbell_camera"), "vision", "bib", locals(), offset=-95)
    cheer = s.view(race, hh.phone(P), "dialogue", "cheer", locals(), offset=20)
    joined = "; ".join(
        say("join", e=e, dist=dist, per_km=divmod(pace, 60))
        for e, dist, pace in zip(runs, dists, paces)
    )
    checklist = [
        (say("run_item", e=e, dist=dist), [v, a], say("run_anchors", dist=dist))
        for e, dist, v, a in zip(runs, dists, vws, apps)
    ]
    s.ask("user_aggregation", ep.asker(P), locals(), checklist=checklist)
    fastest = divmod(min(paces), 60)
    # the watch shows whole minutes and some seconds: seconds per km between these two bounds
    race_pace = (finish * 6, (finish * 60 + 59) / 10)
    verdict = say("verdict")[
        "quicker"
        if race_pace[1] < min(paces)
        else "slower"
        if race_pace[0] > min(paces)
        else "level"
    ]
    s.ask("user_query", P, locals(), refs=[[rv], vws, [sign]], delay=(2.0, 20.0))
    fusion_refs = [[sign], [vws[0], vws[1], apps[2]], [bib], [rv, cheer]]
    s.ask("fusion", ep.asker(P), locals(), refs=fusion_refs)
    return True
