"""Storylines about plans: a visit, a deadline, a party."""

from __future__ import annotations

from datetime import timedelta

from eval.synth.episodes.base import Ep, template
from eval.synth.personas import FEMALE, MALE
from eval.synth.tables import Words

W = Words("episodes/life")


def _m(n: int) -> timedelta:
    return timedelta(minutes=n)


@template("visit", span=4)
def visit(ep: Ep) -> bool:
    say = W.at("visit")
    hh, r = ep.hh, ep.r
    host = ep.pick([p for p in hh.residents if p.kind in ("adult", "elder") and hh.phone(p.name)])
    if host is None:
        return False
    H, x = host.name, host.pron
    used = {p.name for p in hh.people}
    gender = r.choice("fm")
    guest = r.choice([n for n in (FEMALE if gender == "f" else MALE) if n not in used])
    ep.guests.add(guest)
    rel = r.choice(say("rel") if gender == "f" else say("rel_2"))
    g = {"he": "she", "his": "her"} if gender == "f" else {"he": "he", "his": "his"}
    arrive_day = min(max(ep.day0 + 2, 4), 5)
    ep.plan.title = say("title", locals())
    ep.keep_home(H, arrive_day)
    train = ep.at(arrive_day, 11, r.choice([12, 27, 42]))
    t0 = ep.jitter(ep.day0, 19, 0, 50)
    e0 = ep.event(t0, [H], "living_room", say("e0", locals()))
    call = ep.view(e0, hh.phone(H), "dialogue", **say("call", locals()))
    cal = ep.view(
        e0,
        hh.laptop(H) or hh.shared("smart_display"),
        "app_usage" if hh.laptop(H) else "dialogue",
        say("cal_2", locals()) if hh.laptop(H) else say("cal_3", locals()),
        offset=6,
        **say("cal", locals()),
    )
    t1 = ep.jitter(arrive_day - 1, 16, 0, 40)
    e1 = ep.event(t1, [H], "home", say("e1"), causes=[e0])
    vac = ep.view(e1, hh.shared("robot_vacuum"), "device_status", **say("vac"))
    wash = ep.view(e1, hh.shared("smart_washer_dryer"), "device_status", **say("wash"), offset=20)
    tidy = ep.view(
        e1, hh.first("smart_speaker", "smart_display"), "audio", **say("tidy", locals()), offset=-30
    )
    t2 = train - _m(r.randint(22, 30))
    e2 = ep.event(t2, [H], hh.places["station"], say("e2", locals()), causes=[e0])
    car = ep.view(
        e2,
        hh.car(H) or hh.phone(H),
        "location",
        **say("car", locals(), draw=r),
        place="car" if hh.car(H) else hh.places["station"],
    )
    t3 = train + _m(r.randint(28, 40))
    e3 = ep.event(t3, [H, guest], "front_door", say("e3", locals()), causes=[e2])
    door = ep.view(
        e3,
        hh.shared("doorbell_camera"),
        "vision",
        **say("door", locals(), alt="woman" if gender == "f" else "man"),
    )
    ep.view(
        e3, hh.first("smart_speaker", "smart_display"), "audio", **say("speaker_audio"), offset=2
    )
    lk = ep.view(e3, hh.shared("smart_lock"), "location", **say("lk", locals()), people=[H])
    t4 = ep.at(min(arrive_day + 2, 6), 15, r.randint(0, 40))
    e4 = ep.event(t4, [H, guest], "front_door", say("e4", locals()), causes=[e3])
    bye = ep.view(e4, hh.shared("doorbell_camera"), "vision", **say("bye", locals()))
    ep.ask(
        "causal",
        ep.asker(H),
        **say("ask_causal", locals(), refs=[[call, cal], [vac, wash, tidy], [car, door]]),
        topic="visit",
        subject=H,
        moments={"clean": t1},
    )
    ep.ask(
        "fusion",
        ep.asker(),
        **say("ask_fusion", locals(), refs=[[call], [car], [door, lk], [bye]]),
        topic="visit",
        subject=H,
    )
    ep.perspective(
        [e2, e3], ep.asker(), **say("perspective", locals()), topic="visit", moments={"arr": t3}
    )
    return True


@template("deadline", span=4)
def deadline(ep: Ep) -> bool:
    say = W.at("deadline")
    hh, r = ep.hh, ep.r
    p = ep.pick([q for q in hh.residents if hh.laptop(q.name) and q.kind in ("adult", "teen")])
    if p is None:
        return False
    P = p.name
    lap = hh.laptop(P)
    thing = say("thing") if p.kind == "teen" else r.choice(say("thing_2"))
    d = min(ep.day0, 2)
    due = ep.at(d + 2, 17, 0)
    ep.plan.title = say("title", locals())
    t0 = ep.jitter(d, 9 if p.kind != "teen" else 16, 10, 40)
    e0 = ep.event(t0, [P], "home", say("e0", locals()))
    mail = ep.view(e0, lap, "app_usage", **say("mail", locals()))
    late_views = []
    prev = e0
    for i in range(2):
        night = d + i
        t = ep.at(night + 1, 1, r.randint(5, 40))
        ev = ep.event(t, [P], "home", say("ev", locals()), causes=[prev])
        hours = r.randint(4, 6)
        v = ep.view(ev, lap, "app_usage", **say("v", locals()))
        late_views.append(v)
        sleep_min = r.randint(250, 300)
        s = ep.view(
            ev,
            hh.watch(P),
            "health",
            **say("s", locals(), sleep_min_div=sleep_min // 60, sleep_min_mod=sleep_min % 60),
            offset=r.randint(330, 380),
            gist=say("s_gist", sleep_min_div=sleep_min // 60, sleep_min_mod=sleep_min % 60),
            anchors=(
                say("s_anchors", sleep_min_div=sleep_min // 60, sleep_min_mod=sleep_min % 60),
            ),
            facts={"topic": "sleep", "person": P, "day": night, "value": sleep_min},
        )
        if s is not None:
            ep.world.claim("sleep", P, night)
        late_views.append(s)
        prev = ev
    t2 = due - _m(r.randint(12, 50))
    e2 = ep.event(t2, [P], "home", say("e2", locals()), causes=[prev])
    sub = ep.view(e2, lap, "app_usage", **say("sub", locals()))
    joy = ep.view(
        e2, hh.first("smart_speaker", "smart_display"), "audio", **say("joy", locals()), offset=3
    )
    t3 = ep.at(d + 2, 19, r.randint(0, 30))
    e3 = ep.event(t3, [P], "home", say("e3", locals()), causes=[e2])
    ep.view(e3, hh.phone(P), "app_usage", **say("phone_app_usage", draw=r))
    ep.ask(
        "causal",
        ep.asker(P),
        **say(
            "ask_causal",
            locals(),
            v2=thing[0].upper() + thing[1:],
            refs=[
                [mail],
                [v for v in late_views[::2] if v],
                [v for v in late_views[1::2] if v],
                [sub, joy],
            ],
        ),
        topic="deadline",
        subject=P,
    )
    if hh.watch(P):
        short_nights = [
            v.gist.split("only ")[-1].replace(" of sleep", "") for v in late_views[1::2] if v
        ]
        ep.ask(
            "user_query",
            P,
            **say("ask_user_query", joined=" and ".join(short_nights)),
            checklist=[
                (say("ask"), [v for v in late_views[::2] if v], []),
                (
                    say("ask_2"),
                    [v for v in late_views[1::2] if v],
                    [a for v in late_views[1::2] if v for a in v.anchors],
                ),
            ],
            topic="sleep",
            subject=P,
        )
    ep.ask(
        "fusion",
        ep.asker(P),
        **say(
            "ask_fusion", locals(), refs=[[mail], [v for v in late_views if v], [sub, joy], [e3]]
        ),
        topic="deadline",
        subject=P,
    )
    ep.perspective(
        [e2, e3],
        ep.asker(P),
        **say("perspective", locals()),
        topic="deadline",
        subject=P,
        moments={"sub": t2},
    )
    return True


@template("party", span=3)
def party(ep: Ep) -> bool:
    say = W.at("party")
    hh, r = ep.hh, ep.r
    kids = [p for p in hh.residents if p.kind in ("child", "teen")]
    celebrant = ep.pick(kids or [p for p in hh.residents if p.kind == "adult"] or hh.residents)
    planner = ep.other_adult(celebrant.name) if celebrant else None
    if celebrant is None:
        return False
    C = celebrant.name
    A = planner.name if planner else C
    age = celebrant.age + 1
    day = 5
    ep.plan.title = say("title", locals())
    t0 = ep.jitter(min(ep.day0, 3), 20, 0, 40)
    e0 = ep.event(t0, [A], "home", say("e0", locals()))
    buy = ep.view(e0, hh.phone(A) or hh.laptop(A), "app_usage", **say("buy", locals()))
    inv = ep.view(
        e0,
        hh.first("smart_display", "smart_speaker"),
        "dialogue",
        **say("inv", locals(), draw=r),
        offset=10,
        people=[A, C],
    )
    t1 = ep.at(day, 14, r.randint(50, 59))
    e1 = ep.event(t1, [A, C], "living_room", say("e1"), causes=[e0])
    door = ep.view(e1, hh.shared("doorbell_camera"), "vision", **say("door"))
    party_light = hh.shared("smart_light")
    if party_light and hh.device(party_light).location not in ("living_room", "hallway", "landing"):
        party_light = None
    lights = ep.view(e1, party_light, "device_status", **say("lights"))
    music = ep.view(
        e1, hh.first("smart_speaker", "smart_display"), "audio", **say("music", locals()), offset=70
    )
    t2 = ep.at(day, 18, r.randint(10, 40))
    e2 = ep.event(t2, [A], "living_room", say("e2"), causes=[e1])
    vac = ep.view(e2, hh.shared("robot_vacuum"), "device_status", **say("vac"))
    wash = ep.view(e2, hh.shared("smart_washer_dryer"), "device_status", **say("wash"), offset=20)
    t3 = ep.at(6, 9, r.randint(0, 50))
    e3 = ep.event(t3, [A, C], "kitchen", say("e3"), causes=[e2])
    ep.view(e3, hh.shared("smart_fridge"), "vision", **say("fridge_vision"))
    ep.view(
        e3,
        hh.phone(A) or hh.shared("smart_speaker"),
        "dialogue",
        **say("phone_dialogue", locals(), draw=r),
        offset=15,
    )
    ep.perspective(
        [e1, e2],
        ep.asker(C),
        **say("perspective", locals()),
        topic="party",
        subject=C,
        moments={"party": t1},
    )
    ep.ask(
        "causal",
        ep.asker(),
        **say("ask_causal", locals(), refs=[[buy, inv], [door, lights, music], [vac, wash]]),
        topic="party",
        subject=C,
        moments={"clean": t2},
    )
    ep.ask(
        "fusion",
        ep.asker(C),
        **say("ask_fusion", locals(), refs=[[buy, inv], [door, music, lights], [vac, wash, e2]]),
        topic="party",
        subject=C,
        moments={},
    )
    return True
