"""Storylines about plans: a visit, a deadline, a party."""

from __future__ import annotations

from eval.synth.episodes.base import Ep, template
from eval.synth.episodes.storyline import Questions, display, minutes, speaker
from eval.synth.personas import FEMALE, MALE
from eval.synth.tables import Words
from eval.synth.world import View

W = Words("episodes/life")


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
    rel = r.choice(say(f"rel.{gender}"))
    g = say(f"pron.{gender}")  # the guest's pronouns, and "woman" or "man"
    arrive_day = min(max(ep.day0 + 2, 4), 5)
    ep.plan.title = say("title", locals())
    ep.keep_home(H, arrive_day)
    train = ep.at(arrive_day, 11, r.choice([12, 27, 42]))
    t0 = ep.jitter(ep.day0, 19, 0, 50)
    e0 = ep.event(t0, [H], "living_room", say("e0", locals()))
    call = ep.view(e0, hh.phone(H), "dialogue", **say("call", locals()))
    if hh.laptop(H):  # the pickup goes into the calendar, or else is told to the display
        cal = ep.view(e0, hh.laptop(H), "app_usage", **say("calendar", locals()), offset=6)
    else:
        display_dev = hh.shared("smart_display")
        cal = ep.view(e0, display_dev, "dialogue", **say("reminder", locals()), offset=6)
    t1 = ep.jitter(arrive_day - 1, 16, 0, 40)
    e1 = ep.event(t1, [H], "home", say("e1"), causes=[e0])
    vac = ep.view(e1, hh.shared("robot_vacuum"), "device_status", **say("vac"))
    wash = ep.view(e1, hh.shared("smart_washer_dryer"), "device_status", **say("wash"), offset=20)
    tidy = speaker(ep, e1, say("tidy", locals()), offset=-30)
    t2 = train - minutes(r.randint(22, 30))
    e2 = ep.event(t2, [H], hh.places["station"], say("e2", locals()), causes=[e0])
    tracker = hh.car(H) or hh.phone(H)
    place = "car" if hh.car(H) else hh.places["station"]
    car = ep.view(e2, tracker, "location", **say("car", locals(), draw=r), place=place)
    t3 = train + minutes(r.randint(28, 40))
    e3 = ep.event(t3, [H, guest], "front_door", say("e3", locals()), causes=[e2])
    door = ep.view(e3, hh.shared("doorbell_camera"), "vision", **say("door", locals()))
    speaker(ep, e3, say("greeting"), offset=2)
    lk = ep.view(e3, hh.shared("smart_lock"), "location", **say("lk", locals()), people=[H])
    t4 = ep.at(min(arrive_day + 2, 6), 15, r.randint(0, 40))
    e4 = ep.event(t4, [H, guest], "front_door", say("e4", locals()), causes=[e3])
    bye = ep.view(e4, hh.shared("doorbell_camera"), "vision", **say("bye", locals()))
    ask = Questions(ep, say, locals(), "visit", H)
    ask("causal", ep.asker(H), [[call, cal], [vac, wash, tidy], [car, door]], {"clean": t1})
    ask("fusion", ep.asker(), [[call], [car], [door, lk], [bye]])
    ask.perspective([e2, e3], ep.asker(), {"arr": t3})
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
    late_views: list[View | None] = []  # night by night: the laptop, then the watch
    prev = e0
    for night in (d, d + 1):
        t = ep.at(night + 1, 1, r.randint(5, 40))
        ev = ep.event(t, [P], "home", say("ev", locals()), causes=[prev])
        hours = r.randint(4, 6)
        late_views.append(ep.view(ev, lap, "app_usage", **say("v", locals())))
        sleep_min = r.randint(250, 300)
        facts = {"topic": "sleep", "person": P, "day": night, "value": sleep_min}
        offset = r.randint(330, 380)  # the watch sums up the night next morning
        s = ep.view(ev, hh.watch(P), "health", **say("s", locals()), offset=offset, facts=facts)
        if s is not None:
            ep.world.claim("sleep", P, night)
        late_views.append(s)
        prev = ev
    worked, slept = late_views[::2], late_views[1::2]
    t2 = due - minutes(r.randint(12, 50))
    e2 = ep.event(t2, [P], "home", say("e2", locals()), causes=[prev])
    sub = ep.view(e2, lap, "app_usage", **say("sub", locals()))
    joy = speaker(ep, e2, say("joy", locals()), offset=3)
    t3 = ep.at(d + 2, 19, r.randint(0, 30))
    e3 = ep.event(t3, [P], "home", say("e3", locals()), causes=[e2])
    ep.view(e3, hh.phone(P), "app_usage", **say("takeaway", draw=r))
    thing_capitalized = thing[0].upper() + thing[1:]
    ask = Questions(ep, say, locals(), "deadline", P)
    ask("causal", ep.asker(P), [[mail], worked, slept, [sub, joy]])
    if hh.watch(P):
        nights = [v.anchors[0] for v in slept if v]  # how long each short night was
        ep.ask(
            "user_query",
            P,
            **say("ask_user_query", joined=" and ".join(nights)),
            checklist=[(say("late_finishes"), worked, []), (say("short_nights"), slept, nights)],
            topic="sleep",
            subject=P,
        )
    ask("fusion", ep.asker(P), [[mail], late_views, [sub, joy], [e3]])
    ask.perspective([e2, e3], ep.asker(P), {"sub": t2}, subject=P)
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
    inv = display(ep, e0, say("inv", locals(), draw=r), offset=10, people=[A, C])
    t1 = ep.at(day, 14, r.randint(50, 59))
    e1 = ep.event(t1, [A, C], "living_room", say("e1"), causes=[e0])
    door = ep.view(e1, hh.shared("doorbell_camera"), "vision", **say("door"))
    party_light = hh.shared("smart_light")
    if party_light and hh.device(party_light).location not in ("living_room", "hallway", "landing"):
        party_light = None
    lights = ep.view(e1, party_light, "device_status", **say("lights"))
    music = speaker(ep, e1, say("music", locals()), offset=70)
    t2 = ep.at(day, 18, r.randint(10, 40))
    e2 = ep.event(t2, [A], "living_room", say("e2"), causes=[e1])
    vac = ep.view(e2, hh.shared("robot_vacuum"), "device_status", **say("vac"))
    wash = ep.view(e2, hh.shared("smart_washer_dryer"), "device_status", **say("wash"), offset=20)
    t3 = ep.at(6, 9, r.randint(0, 50))
    e3 = ep.event(t3, [A, C], "kitchen", say("e3"), causes=[e2])
    ep.view(e3, hh.shared("smart_fridge"), "vision", **say("leftovers"))
    thanked = hh.phone(A) or hh.shared("smart_speaker")
    ep.view(e3, thanked, "dialogue", **say("thanks", locals(), draw=r), offset=15)
    ask = Questions(ep, say, locals(), "party", C)
    ask.perspective([e1, e2], ep.asker(C), {"party": t1}, subject=C)
    ask("causal", ep.asker(), [[buy, inv], [door, lights, music], [vac, wash]], {"clean": t2})
    ask("fusion", ep.asker(C), [[buy, inv], [door, music, lights], [vac, wash, e2]])
    return True
