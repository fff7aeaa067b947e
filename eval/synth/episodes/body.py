"""Storylines about bodies in action: an injury, a fall, training for a race."""

from __future__ import annotations

from eval.synth.episodes.base import Ep, template
from eval.synth.tables import Words, load_table
from eval.synth.timewords import clock

TABLE = load_table("episodes/body")
W = Words("episodes/body")


BODY = TABLE["BODY"]


@template("injury", span=3)
def injury(ep: Ep) -> bool:
    say = W.at("injury")
    hh, r = ep.hh, ep.r
    p = ep.pick(
        [
            q
            for q in hh.residents
            if q.kind in ("child", "teen", "adult")
            and hh.watch(q.name)
            and not ep.world.any_claim("workout", q.name)
        ]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    helper = ep.other_adult(P)
    H = helper.name if helper else P
    choices = [
        ("football", "ankle", hh.places["park"]),
        ("running", "knee", hh.places["park"]),
        ("basketball", "wrist", hh.places["gym"]),
        ("five-a-side", "ankle", hh.places["gym"]),
    ]
    if p.kind == "child":
        choices.append(("trampolining", "ankle", hh.places["park"]))
    sport, body, venue = r.choice(choices)
    side = r.choice(["left", "right"])
    doing = say("doing") if sport == "running" else say("doing_2", locals())
    b = {k: v.format(side=side, P=P) for k, v in BODY[body].items()}
    d = ep.day0
    t1 = ep.jitter(d, 10 if d >= 5 else 17, 5, 45)
    played, idle, cad = r.randint(22, 48), r.randint(9, 23), r.randint(148, 171)
    ep.plan.title = say("title", locals())
    ep.keep_home(P, d + 1)
    ep.keep_home(H, d + 1)
    for day in range(d, min(d + 5, 7)):
        ep.world.claim("workout", P, day)
    e1 = ep.event(t1, [P], venue, say("e1", locals()))
    w1 = ep.view(e1, hh.watch(P), "motion", **say("w1", locals()), place=venue)
    ep.view(
        e1,
        hh.phone(P),
        "location",
        **say("phone_location", locals(), idle_plus=idle + 5),
        offset=3,
        place=venue,
    )
    t2 = t1.replace(second=0) + _mins(r.randint(38, 70))
    e2 = ep.event(t2, [P] + ([H] if H != P else []), "front_door", say("e2", locals()), causes=[e1])
    dv = ep.view(e2, hh.shared("doorbell_camera"), "vision", **say("dv", locals()))
    lock = ep.view(
        e2,
        hh.shared("smart_lock"),
        "location",
        say("lock_2", locals(), t2_clock=clock(t2 + _mins(1)))
        if H != P
        else say("lock_3", locals(), t2_clock=clock(t2 + _mins(1))),
        offset=1,
        gist=say("lock_gist", locals()) if H != P else say("lock_gist_2", locals()),
        **say("lock"),
        people=[H, P],
    )
    t3 = t2 + _mins(r.randint(9, 18))
    e3 = ep.event(t3, [P, H], "living_room", say("e3", locals()), causes=[e2])
    sp = ep.view(e3, hh.first("smart_speaker", "smart_display"), "audio", **say("sp", locals()))
    cam_id = hh.first("indoor_camera", "smart_display")
    cam = ep.view(e3, cam_id, "vision", [b["home"], b["home2"]], offset=6, **say("cam", locals()))
    ep.view(e3, hh.shared("smart_fridge"), "device_status", **say("fridge_device_status"), offset=2)
    t4 = t3 + _mins(r.randint(140, 190))
    e4 = ep.event(t4, [H, P], "living_room", say("e4", locals()), causes=[e3])
    look = ep.view(e4, hh.phone(H), "app_usage", **say("look", locals(), draw=r))
    plan = ep.view(
        e4,
        hh.first("smart_speaker", "smart_display"),
        "dialogue",
        **say("plan", locals(), alt="PE" if p.kind != "adult" else "the gym"),
        offset=4,
        people=[H, P],
    )
    rest_hr = r.randint(92, 104)
    hrv = ep.view(e4, hh.watch(P), "health", **say("hrv", locals()), offset=-20)
    t5 = ep.jitter(d + 1, 8, 5, 25)
    e5 = ep.event(t5, [H, P], hh.places["clinic"], say("e5", locals()), causes=[e4])
    drive = ep.view(
        e5,
        hh.car(H) or hh.phone(H),
        "location",
        **say("drive", locals(), draw=r),
        place="car" if hh.car(H) else hh.places["clinic"],
    )
    wl = ep.view(
        e5,
        hh.watch(P),
        "location",
        **say("wl", locals(), t5_clock=clock(t5 + _mins(12))),
        offset=12,
        place=hh.places["clinic"],
    )
    t6 = t5 + _mins(r.randint(105, 130))
    e6 = ep.event(t6, [H, P], "home", say("e6", locals()), causes=[e5])
    verdict = ep.view(
        e6,
        hh.first("smart_speaker", "smart_display"),
        "audio",
        **say("verdict", locals(), v2=b["diag"].split(",")[0]),
    )
    back = ep.view(e6, hh.shared("doorbell_camera"), "vision", **say("back", locals()), offset=-6)
    t7 = ep.jitter(d + 1, 21, 20, 45)
    steps = r.randint(1100, 2600)
    e7 = ep.event(t7, [P], "home", say("e7", locals()), causes=[e6])
    st = ep.view(
        e7,
        hh.watch(P),
        "motion",
        **say("st", locals()),
        facts={"topic": "steps", "person": P, "day": d + 1, "value": steps},
    )
    ep.world.claim("steps", P, d + 1)
    ep.view(
        e7,
        hh.tablet(P) or hh.laptop(P) or hh.phone(P),
        "app_usage",
        **say("tablet_app_usage", locals()),
        offset=-95,
    )

    qpart = b["qpart"]
    let_in = say("let_in", locals()) if H != P else ""
    asker = ep.asker(P, H) if len(hh.people) > 2 else H
    ep.ask(
        "causal",
        asker,
        **say(
            "ask_causal",
            locals(),
            label=ep.label(w1.device if w1 else None),
            refs=[[w1, e1], [dv, sp, cam], [look, plan], [drive, wl, verdict]],
        ),
        topic="injury",
        subject=P,
        moments={"clinic": t5},
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        **say("ask_fusion", locals(), refs=[[w1, e1], [dv, lock], [wl, verdict, back]]),
        topic="injury",
        subject=P,
        moments={"hurt": t1},
    )
    ep.perspective(
        [e2, e3],
        ep.asker(P),
        **say("perspective", locals()),
        topic="injury",
        subject=P,
        moments={"home": t2},
    )
    if w1 is not None and st is not None:
        ep.ask(
            "user_query",
            P,
            **say("ask_user_query", locals(), refs=[[w1], [hrv], [st, wl]]),
            topic="injury",
            subject=P,
            moments={"hurt": t1},
        )
    return True


def _mins(n: int):
    from datetime import timedelta

    return timedelta(minutes=n)


@template("fall_alert", span=2)
def fall_alert(ep: Ep) -> bool:
    say = W.at("fall_alert")
    hh, r = ep.hh, ep.r
    p = ep.pick([q for q in hh.residents if q.kind == "elder" and hh.watch(q.name)])
    if p is None:
        return False
    P, x = p.name, p.pron
    carer = next((q for q in hh.people if q.kind == "carer"), None) or ep.other_adult(P)
    C = carer.name if carer else P
    d = min(ep.day0, 4)
    ep.plan.title = say("title", locals())
    ep.keep_home(C, d, morning=False)
    t1 = ep.jitter(d, 7, 40, 58)
    e1 = ep.event(t1, [P], "garden", say("e1", locals()))
    fall = ep.view(e1, hh.watch(P), "motion", **say("fall", locals()), place="garden")
    door = ep.view(
        e1,
        hh.shared("door_window_sensor"),
        "device_status",
        **say("door", t1_clock=clock(t1 - _mins(2))),
        offset=-2,
    )
    t2 = t1 + _mins(r.randint(6, 12))
    e2 = ep.event(t2, [P], "kitchen", say("e2", locals()), causes=[e1])
    cam = ep.view(e2, hh.shared("indoor_camera"), "vision", **say("cam", locals()))
    sp = ep.view(
        e2, hh.first("smart_speaker", "smart_display"), "audio", **say("sp", locals()), offset=2
    )
    t3 = ep.at(d, 9, r.randint(0, 20))
    e3 = ep.event(t3, [C, P], "front_door", say("e3", locals()), causes=[e2])
    lk = ep.view(e3, hh.shared("smart_lock"), "location", **say("lk", locals()), people=[C])
    talk = ep.view(
        e3,
        hh.first("smart_display", "smart_speaker"),
        "dialogue",
        **say("talk", locals()),
        offset=25,
        people=[C, P],
    )
    t4 = ep.at(d + 1, 10, r.randint(0, 30))
    e4 = ep.event(t4, [C], "garden", say("e4", locals()), causes=[e3])
    buy = ep.view(e4, hh.phone(C), "app_usage", **say("buy"), offset=-70)
    door2 = ep.view(e4, hh.shared("door_window_sensor"), "device_status", **say("door2"))
    t5 = ep.at(d, 15, r.randint(0, 40))
    e5 = ep.event(t5, [C, P], "home", say("e5", locals()), causes=[e3])
    ep.view(e5, hh.phone(C), "dialogue", **say("phone_dialogue", locals()), place="home")
    ep.view(
        e5, hh.shared("indoor_camera"), "vision", **say("indoor_camera_vision", locals()), offset=20
    )
    ep.ask(
        "causal",
        ep.asker(P),
        **say("ask_causal", locals(), refs=[[fall, door], [cam, sp], [talk, lk], [buy, door2]]),
        topic="fall",
        subject=P,
        moments={"fix": t4},
    )
    ep.perspective(
        [e1, e2],
        C if C != P else ep.asker(),
        **say("perspective", locals()),
        topic="fall",
        subject=P,
        moments={"fall": t1},
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        **say("ask_fusion", locals(), refs=[[fall, door], [cam, sp], [lk, talk], [buy, door2]]),
        topic="fall",
        subject=P,
        moments={"fall": t1},
    )
    return True


@template("training", span=7)
def training(ep: Ep) -> bool:
    say = W.at("training")
    hh, r = ep.hh, ep.r
    p = ep.pick(
        [
            q
            for q in hh.residents
            if q.kind in ("adult", "teen")
            and hh.watch(q.name)
            and hh.phone(q.name)
            and not ep.world.any_claim("workout", q.name)
        ]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    ep.plan.title = say("title", locals())
    days = [1, 3, 5]
    paces = sorted([r.randint(318, 352) for _ in range(3)], reverse=True)
    dists = [r.choice([5.2, 6.0, 6.4]), r.choice([7.1, 7.5, 8.0]), r.choice([8.4, 9.0])]
    runs, vws, apps = [], [], []
    for day in range(7):
        ep.world.claim("workout", P, day)
    e0 = ep.event(ep.jitter(0, 20, 0, 40), [P], "living_room", say("e0", locals()))
    sign = ep.view(e0, hh.phone(P), "app_usage", **say("sign", draw=r))
    prev = e0
    for i, day in enumerate(days):
        t = ep.jitter(day, 18 if day < 5 else 9, 30, 50)
        pace = paces[i]
        ev = ep.event(
            t, [P], hh.places["park"], say("ev", i_plus=i + 1, dists_i=dists[i]), causes=[prev]
        )
        mins = int(dists[i] * pace / 60)
        v = ep.view(
            ev,
            hh.watch(P),
            "motion",
            **say("v", locals(), dists_i=dists[i], pace_div=pace // 60, pace_mod=pace % 60),
            offset=mins,
            facts={"topic": "run", "person": P, "day": day, "value": dists[i]},
            place=hh.places["park"],
        )
        hr = ep.view(
            ev, hh.phone(P), "app_usage", **say("hr", dists_i=dists[i], draw=r), offset=mins + 4
        )
        runs.append(ev)
        vws.append(v)
        apps.append(hr)
        prev = ev
    race = ep.event(
        ep.at(6, 10, r.randint(5, 15)), [P], say("race"), say("race_2", locals()), causes=[runs[-1]]
    )
    finish = r.randint(46, 56)
    rv = ep.view(race, hh.watch(P), "motion", **say("rv", locals(), draw=r), place=say("rv_place"))
    bib = ep.view(race, hh.shared("doorbell_camera"), "vision", **say("bib", locals()), offset=-95)
    cheer = ep.view(race, hh.phone(P), "dialogue", **say("cheer", locals()), offset=20)
    ep.ask(
        "user_aggregation",
        ep.asker(P),
        **say(
            "ask_user_aggregation",
            locals(),
            joined="; ".join(
                say("join", e=e, dist=dist, pc_div=pc // 60, pc_mod=pc % 60)
                for e, dist, pc in zip(runs, dists, paces)
            ),
        ),
        checklist=[
            (say("ask", e=e, dist=dist), [v, a], say("ask_2", dist=dist))
            for e, dist, v, a in zip(runs, dists, vws, apps)
        ],
        topic="run",
        subject=P,
    )
    ep.ask(
        "user_query",
        P,
        **say(
            "ask_user_query",
            locals(),
            v2=paces[-1] // 60,
            v3=paces[-1] % 60,
            refs=[[rv], vws, [sign]],
        ),
        topic="run",
        subject=P,
        delay=(2.0, 20.0),
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        **say("ask_fusion", locals(), refs=[[sign], [vws[0], vws[1], apps[2]], [bib], [rv, cheer]]),
        topic="run",
        subject=P,
        moments={},
    )
    return True
