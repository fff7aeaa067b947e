"""Storylines about living together: lost keys, a household dispute, and a parcel that
went to the neighbours."""

from __future__ import annotations

from eval.synth.episodes.base import Ep, template
from eval.synth.episodes.storyline import Questions, camera, display, minutes, speaker
from eval.synth.personas import Person
from eval.synth.tables import Words, load_table
from eval.synth.timewords import stamp

W = Words("episodes/family")
ITEMS = load_table("episodes/family")["ITEMS"]


@template("lost_item", span=2)
def lost_item(ep: Ep) -> bool:
    say = W.at("lost_item")
    hh, r = ep.hh, ep.r
    p = ep.pick([q for q in hh.residents if q.kind in ("adult", "elder") and hh.phone(q.name)])
    if p is None:
        return False
    P, x = p.name, p.pron
    item, look, tag = r.choice([i for i in ITEMS if i[0] != "car keys" or hh.car(P)])
    spot = r.choice(say("spot"))
    forms = say("plural" if item.endswith("s") else "singular", locals())  # says "them" or "it"
    d = min(ep.day0, 3)
    ep.plan.title = say("title", locals())
    ep.keep_home(P, d + 1, evening=False)
    t1 = ep.jitter(d, 20, 0, 50)
    e1 = ep.event(t1, [P], "living_room", say("e1", locals()))
    seen = camera(ep, e1, say("seen", locals()))
    # When no camera saw the item put down, no evidence holds that moment: answers say less.
    left_since = stamp(t1) if seen is not None else say("unseen")
    left_at = f"on {left_since}" if seen is not None else left_since
    leave = p.leave if p.work else 9 * 60
    t2 = ep.at(d + 1, leave // 60, leave % 60 + r.randint(0, 4))
    e2 = ep.event(t2, [P], "hallway", say("e2", locals()), causes=[e1])
    shout = speaker(ep, e2, say("shout", locals()))
    mot = ep.view(e2, hh.shared("motion_sensor"), "motion", **say("mot"), offset=2, people=[P])
    t3 = t2 + minutes(r.randint(8, 13))
    e3 = ep.event(t3, [P], "living_room", say("e3", locals()), causes=[e2])
    app = ep.view(e3, hh.phone(P), "app_usage", **say("app", locals()))
    found = speaker(ep, e3, say("found", locals()), offset=1)
    t4 = t3 + minutes(r.randint(3, 6))
    late = r.randint(17, 28)
    e4 = ep.event(t4, [P], "front_door", say("e4", locals()), causes=[e3])
    lk = ep.view(e4, hh.shared("smart_lock"), "location", **say("lk", locals()), people=[P])
    msg = ep.view(e4, hh.phone(P), "dialogue", **say("msg", locals()), offset=2)
    t5 = ep.jitter(d + 1, 19, 0, 50)
    e5 = ep.event(t5, [P], "hallway", say("e5", locals()), causes=[e4])
    speaker(ep, e5, say("hook", locals()))
    ep.view(e5, hh.shared("motion_sensor"), "motion", **say("drilling"), offset=2, people=[P])
    item_capitalized = item.capitalize()
    ask = Questions(ep, say, locals(), "lost_item", P)
    ask("causal", ep.asker(P), [[seen], [shout, mot], [app, found], [lk, msg]], {"late": t4})
    ask("user_query", P, [[seen, found], [app]], {"late": t4})
    ask("fusion", ep.asker(P), [[seen], [mot, app, found], [lk, msg]], {"late": t4})
    ask.perspective([e2, e3], ep.asker(P), {"late": t2}, subject=P)
    return True


@template("dispute", span=2)
def dispute(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    teens = [p for p in hh.residents if p.kind == "teen"]
    console = hh.shared("gaming_console")
    adults = [p for p in hh.residents if p.kind in ("adult", "elder") and hh.phone(p.name)]
    if teens and console and adults and r.random() < 0.6:
        return _screen_dispute(ep, ep.pick(teens), ep.pick(adults, protagonist=False), console)
    if len(adults) < 2 and not (adults and len(hh.residents) > 1):
        return False
    a = ep.pick(adults)
    others = [p for p in hh.residents if p.name != a.name and p.kind in ("adult", "elder", "teen")]
    if a is None or not others:
        return False
    return _heating_dispute(ep, a, r.choice(others))


def _heating_dispute(ep: Ep, a: Person, b: Person) -> bool:
    say = W.at("heating_dispute")
    hh, r = ep.hh, ep.r
    thermo = hh.shared("smart_thermostat")
    A, B = a.name, b.name
    d = min(ep.day0, 5)
    ep.plan.title = say("title", locals())
    bill = r.randint(180, 260)
    t1 = ep.jitter(d, 20, 0, 20)
    e1 = ep.event(t1, [B], "living_room", say("e1", locals()))
    up = ep.view(e1, thermo, "environment", **say("up"), people=[B])
    t2 = t1 + minutes(r.randint(25, 45))
    e2 = ep.event(t2, [A], "living_room", say("e2", locals()), causes=[e1])
    down = ep.view(e2, hh.phone(A), "app_usage", **say("down", locals()))
    row = speaker(ep, e2, say("row", locals()), offset=3, people=[A, B])
    t3 = ep.jitter(d + 1, 19, 0, 40)
    e3 = ep.event(t3, [A, B], "kitchen", say("e3"), causes=[e2])
    deal = display(ep, e3, say("deal", locals()), people=[A, B])
    sched = ep.view(e3, thermo, "environment", **say("sched"), offset=5)
    t4 = ep.at(min(d + 2, 6), 20, r.randint(0, 40))
    e4 = ep.event(t4, [A, B], "living_room", say("e4"), causes=[e3])
    ep.view(e4, thermo, "environment", **say("held"))
    camera(ep, e4, say("blanket", locals()))
    ask = Questions(ep, say, locals(), "dispute", A)
    ask("causal", ep.asker(include=[A, B]), [[up], [down], [row], [deal, sched]], {"deal": t3})
    ask.perspective([e1, e2], ep.asker(A, B) if len(hh.people) > 2 else A, {"row": t1})
    ask("fusion", ep.asker(include=[A, B]), [[up], [down], [deal, sched]], {"row": t1})
    return True


def _screen_dispute(ep: Ep, teen: Person, parent: Person, console: str) -> bool:
    say = W.at("screen_dispute")
    hh, r = ep.hh, ep.r
    T, A = teen.name, parent.name
    d = min(ep.day0, 3)
    ep.plan.title = say("title", locals())
    for day in range(d, 7):
        ep.world.claim("gaming", T, day)
    game = r.choice(say("game"))
    t1 = ep.at(d, 23, r.randint(30, 55))
    came_down = t1 + minutes(4)
    e1 = ep.event(t1, [T], "living_room", say("e1", locals()))
    c1 = ep.view(e1, console, "app_usage", **say("c1", locals()))
    light = ep.view(
        e1, hh.shared("motion_sensor"), "motion", **say("light", locals()), offset=4, people=[A]
    )
    t2 = t1 + minutes(6)
    e2 = ep.event(t2, [A, T], "living_room", say("e2", locals()), causes=[e1])
    row = speaker(ep, e2, say("row", locals()))
    off = ep.view(e2, console, "device_status", **say("off"), offset=1)
    t3 = ep.jitter(d + 1, 7, 10, 40)
    e3 = ep.event(t3, [A], "kitchen", say("e3", locals()), causes=[e2])
    lim = ep.view(e3, hh.phone(A), "app_usage", **say("lim", locals()))
    t4 = ep.at(d + 1, 22, 0)
    e4 = ep.event(t4, [T], "living_room", say("e4"), causes=[e3])
    cut = ep.view(e4, console, "device_status", **say("cut", locals()))
    ph = ep.view(e4, hh.phone(T), "app_usage", **say("ph", locals()), offset=1)
    ask = Questions(ep, say, locals(), "gaming", T)
    ask("causal", ep.asker(T, A, include=[A]), [[c1, light], [row, off], [lim], [cut]], {"cut": t4})
    ask("fusion", A, [[cut], [lim], [ph]], {"cut": t4})
    ask.perspective([e1, e2], ep.asker(T), {"row": t1}, subject=T)
    return True


@template("package_delivery", span=2)
def package_delivery(ep: Ep) -> bool:
    say = W.at("package_delivery")
    hh, r = ep.hh, ep.r
    p = ep.pick(
        [q for q in hh.residents if q.kind in ("adult", "teen", "elder") and hh.phone(q.name)]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    thing = r.choice(say("thing"))
    neighbour = r.choice(say("neighbour"))
    carrier = r.choice(say("carrier"))
    d = max(1, min(ep.day0, 4))
    due = ep.at(d, 9)
    ep.plan.title = say("title", locals())
    t0 = ep.jitter(max(d - 1, 0), 21, 0, 40)
    e0 = ep.event(t0, [P], "home", say("e0", locals()))
    order = ep.view(e0, hh.phone(P), "app_usage", **say("order", locals()))
    t1 = ep.jitter(d, 11, 5, 50)
    e1 = ep.event(t1, [], "front_door", say("e1", locals()), causes=[e0])
    cam = ep.view(e1, hh.shared("doorbell_camera"), "vision", **say("cam", locals()))
    heard = ep.view(e1, hh.shared("smart_speaker"), "audio", **say("heard"))
    note = ep.view(e1, hh.phone(P), "app_usage", **say("note", locals()), offset=3)
    t2 = ep.jitter(d, 18, 20, 59)
    back = t2 + minutes(4)
    e2 = ep.event(t2, [P], "front_door", say("e2", locals()), causes=[e1])
    out = ep.view(e2, hh.shared("doorbell_camera"), "vision", **say("out", locals()))
    lk = ep.view(
        e2, hh.shared("smart_lock"), "location", **say("lk", locals()), offset=4, people=[P]
    )
    t3 = t2 + minutes(r.randint(10, 40))
    e3 = ep.event(t3, [P], "living_room", say("e3", locals()), causes=[e2])
    camera(ep, e3, say("unbox", locals()))
    ep.view(e3, hh.phone(P), "app_usage", **say("rating", locals()), offset=5)
    ask = Questions(ep, say, locals(), "delivery", P)
    refs = [[order], [cam, heard], [note], [out, lk]]
    ask("causal", ep.asker(P, include=[P]), refs, {"fetch": t2})
    ask.perspective([e1, e2], ep.asker(), {"drop": t1})
    ask("fusion", ep.asker(P), [[order], [cam, note], [out, lk]], {"drop": t1})
    return True
