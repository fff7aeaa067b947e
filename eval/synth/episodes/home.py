"""Storylines about the home: a broken appliance, food running out, bad air."""

from __future__ import annotations

from eval.synth.episodes.base import Ep, template
from eval.synth.episodes.storyline import Questions, camera, display, minutes, speaker
from eval.synth.tables import Words, load_table

W = Words("episodes/home")
APPLIANCES = load_table("episodes/home")["APPLIANCES"]
FOOD = load_table("episodes/home")["FOOD"]


@template("appliance_fault", span=3)
def appliance_fault(ep: Ep) -> bool:
    say = W.at("appliance_fault")
    hh, r = ep.hh, ep.r
    kinds = [k for k in APPLIANCES if hh.shared(k)]
    owner = ep.pick([p for p in hh.residents if p.kind in ("adult", "elder") and hh.phone(p.name)])
    if not kinds or owner is None:
        return False
    kind = r.choice(kinds)
    dev = hh.shared(kind)
    A = owner.name
    other = ep.other_adult(A)
    B = other.name if other else A
    d = min(ep.day0, 4)
    k = r.randint(5, 9) if kind == "smart_fridge" else r.randint(24, 41)  # °C, else minutes
    a = W(f"APPLIANCES.{kind}", {"k": k})  # the appliance's words, its fault reading filled in
    headline = a["fault"][0].split(":")[0]  # how the fault gist names it
    ep.plan.title = say("title", locals())
    t1 = ep.jitter(d, 19, 0, 40)
    e1 = ep.event(t1, [A], "home", say("e1", locals()))
    fault = ep.view(e1, dev, "device_status", a["fault"], **say("fault", locals()))
    moan = speaker(ep, e1, say("moan", locals()), offset=6)
    t2 = t1 + minutes(r.randint(20, 45))
    e2 = ep.event(t2, [A], "home", say("e2", locals()), causes=[e1])
    look = ep.view(e2, hh.phone(A), "app_usage", **say("look", locals(), draw=r))
    ref = f"RP-{r.randint(10000, 99999)}"
    t3 = ep.jitter(d + 1, 8, 10, 50)
    visit_day = min(d + 1 if r.random() < 0.5 else d + 2, 6)
    visit = ep.at(visit_day, 12, r.randint(20, 55))
    opened = visit + minutes(1)
    ep.keep_home(B, visit_day)
    e3 = ep.event(t3, [A], "home", say("e3", locals()), causes=[e2])
    book = ep.view(e3, hh.phone(A), "app_usage", **say("book", locals()))
    note = display(ep, e3, say("note", locals()), offset=3, people=[A, B])
    e4 = ep.event(visit, [B], "front_door", say("e4"), causes=[e3])
    door = ep.view(e4, hh.shared("doorbell_camera"), "vision", **say("door"))
    lk = ep.view(
        e4, hh.shared("smart_lock"), "location", **say("lk", locals()), offset=1, people=[B]
    )
    t5 = visit + minutes(r.randint(30, 45))
    e5 = ep.event(t5, [B], "home", say("e5", locals()), causes=[e4])
    ok = ep.view(e5, dev, "device_status", a["test"], **say("ok"))
    said = speaker(ep, e5, say("said", locals()), offset=-3)
    pay = ep.view(e5, hh.phone(B) or hh.phone(A), "app_usage", **say("pay", locals()), offset=4)
    t6 = ep.jitter(visit_day + 1, 9, 0, 50) if visit_day < 6 else t5 + minutes(r.randint(150, 240))
    e6 = ep.event(t6, [], "home", say("e6", locals()), causes=[e5])
    norm = ep.view(e6, dev, "device_status", a["after"], **say("norm"))
    ask = Questions(ep, say, locals(), "appliance", A)
    refs = [[fault, moan], [look, book, note], [door, lk], [said, ok, pay]]
    ask("causal", ep.asker(B), refs, {"visit": visit})
    ask("fusion", ep.asker(), [[fault, said], [pay], [ok, norm]])
    ask.perspective([e4, e5], ep.asker(), {"visit": visit})
    return True


@template("food_running_out", span=2)
def food_running_out(ep: Ep) -> bool:
    say = W.at("food_running_out")
    hh, r = ep.hh, ep.r
    fridge = hh.shared("smart_fridge")
    shopper = ep.pick(
        [p for p in hh.residents if p.kind in ("adult", "elder") and hh.phone(p.name)]
    )
    if fridge is None or shopper is None:
        return False
    A = shopper.name
    item, plural, low, empty, stem = r.choice(FOOD)  # stem: the word the fridge views show
    was, it = ("were", "them") if item.endswith("s") else ("was", "it")
    other = ep.other_adult(A)
    B = other.name if other else A
    kid = next((p.name for p in hh.residents if p.kind in ("teen", "child") and p.name != A), None)
    finisher = kid or B
    d = min(ep.day0, 5)
    ep.plan.title = say("title", locals())
    ep.keep_home(B, d + 1, evening=False)
    t1 = ep.jitter(d, 7, 10, 40)
    e1 = ep.event(t1, [A], "kitchen", say("e1", locals()))
    v1 = ep.view(e1, fridge, "vision", **say("v1", locals()))
    t2 = ep.jitter(d, 16, 0, 50)
    e2 = ep.event(t2, [finisher], "kitchen", say("e2", locals()), causes=[e1])
    v2 = ep.view(e2, fridge, "vision", **say("v2", locals()))
    cam = camera(ep, e2, say("cam", locals()), offset=-1, people=[finisher])
    t3 = ep.jitter(d, 18, 30, 55)
    e3 = ep.event(t3, [A, finisher], "kitchen", say("e3", locals()), causes=[e2])
    who = speaker(ep, e3, say("who", locals()))
    # The list goes to the display when it is not the device that heard the row, else the phone.
    both = hh.shared("smart_speaker") and hh.shared("smart_display")
    lister = hh.shared("smart_display") if both else hh.phone(A)
    lst = ep.view(e3, lister, "dialogue", **say("lst", locals()), offset=2, people=[A])
    total = f"£{r.randint(38, 96)}.{r.randint(10, 99)}"
    t4 = t3 + minutes(r.randint(40, 90))
    delivery = ep.at(d + 1, 8)
    e4 = ep.event(t4, [A], "living_room", say("e4", locals()), causes=[e3])
    order = ep.view(e4, hh.phone(A), "app_usage", **say("order", locals()))
    t5 = ep.jitter(d + 1, 8, 10, 45)
    opened = t5 + minutes(2)
    e5 = ep.event(t5, [B], "front_door", say("e5"), causes=[e4])
    drop = ep.view(e5, hh.shared("doorbell_camera"), "vision", **say("drop"))
    lk = ep.view(
        e5, hh.shared("smart_lock"), "location", **say("lk", locals()), offset=2, people=[B]
    )
    e6 = ep.event(t5 + minutes(12), [B], "kitchen", say("e6", locals()), causes=[e5])
    v6 = ep.view(e6, fridge, "vision", **say("v6", locals()))
    item_capitalized = item.capitalize()
    ask = Questions(ep, say, locals(), "food", A)
    ask("causal", ep.asker(A), [[v1, v2, cam], [who, lst], [order], [drop, v6]], {"drop": t5})
    ask("user_query", A, [[lst], [order], [drop, v6]], {"list": t3})
    ask.perspective([e5, e6], ep.asker(), {"drop": t5})
    ask("fusion", ep.asker(finisher), [[v2, cam, who], [order], [drop, lk, v6]], {"gone": t2})
    return True


@template("air_quality", span=1)
def air_quality(ep: Ep) -> bool:
    say = W.at("air_quality")
    hh, r = ep.hh, ep.r
    monitor = hh.shared("air_quality_monitor")
    purifier = hh.shared("air_purifier")
    sensor = monitor or purifier
    cook = ep.pick([p for p in hh.residents if p.kind in ("adult", "elder", "teen")])
    if sensor is None or cook is None:
        return False
    P, x = cook.name, cook.pron
    room = hh.device(sensor).location.replace("_", " ")
    kind = r.choice(["toast", "paint"])
    d = ep.day0
    if kind == "toast":  # burnt toast: smoke in the morning
        t1 = ep.jitter(d, 7 if d < 5 else 9, 5, 40)
        reading = r.randint(160, 240)
    else:  # gloss paint: fumes in the afternoon
        t1 = ep.jitter(d, 14, 0, 40)
        reading = r.randint(380, 470)
    air = say(kind, locals())  # the words of this kind of bad air
    ep.plan.title = say("title", locals())
    e1 = ep.event(t1, [P], room, air["fact"])
    pk = ep.view(e1, sensor, "environment", **air["peak"], offset=3)
    sp = speaker(ep, e1, air["heard"], offset=4)
    t2 = t1 + minutes(r.randint(3, 6))
    e2 = ep.event(t2, [P], room, say("e2", locals()), causes=[e1])
    door_dev = hh.shared("door_window_sensor")
    door_name = hh.device(door_dev).location.replace("_", " ") if door_dev else "door"
    dr = ep.view(e2, door_dev, "device_status", **say("dr", locals(), draw=r))
    pu = ep.view(e2, purifier if purifier != sensor else None, "device_status", **say("pu"))
    th = ep.view(e2, hh.shared("smart_thermostat"), "environment", **say("th", draw=r), offset=12)
    t3 = t2 + minutes(r.randint(35, 70))
    e3 = ep.event(t3, [], room, say("e3"), causes=[e2])
    clear = ep.view(e3, sensor, "environment", **say(f"clear.{kind}", draw=r))
    t4 = t3 + minutes(r.randint(60, 150))
    e4 = ep.event(t4, [P], "home", say("e4", locals()), causes=[e3])
    ep.view(e4, hh.phone(P), "app_usage", **air["order"])
    display(ep, e4, say("promise", locals()), offset=8, people=[P])
    ask = Questions(ep, say, locals(), "air", P)
    ask("causal", ep.asker(P), [[pk], [sp], [dr, pu], [th], [clear]], {"cold": t2})
    ask.perspective([e1, e2], ep.asker(), {"air": t1}, subject=P)
    ask("fusion", ep.asker(P), [[pk, sp], [dr, pu, th], [clear]], {"air": t1})
    return True
