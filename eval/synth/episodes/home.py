"""Storylines about the home: a broken appliance, food running out, bad air."""

from __future__ import annotations

from datetime import timedelta

from eval.synth.episodes.base import Ep, template
from eval.synth.tables import Words, load_table
from eval.synth.timewords import clock, day_label

TABLE = load_table("episodes/home")
W = Words("episodes/home")


def _m(n: int) -> timedelta:
    return timedelta(minutes=n)


APPLIANCES = TABLE["APPLIANCES"]


@template("appliance_fault", span=3)
def appliance_fault(ep: Ep) -> bool:
    say = W.at("appliance_fault")
    hh, r = ep.hh, ep.r
    kinds = [k for k in APPLIANCES if hh.shared(k)]
    owner = ep.pick([p for p in hh.residents if p.kind in ("adult", "elder") and hh.phone(p.name)])
    if not kinds or owner is None:
        return False
    kind = r.choice(kinds)
    a = APPLIANCES[kind]
    dev = hh.shared(kind)
    A = owner.name
    other = ep.other_adult(A)
    B = other.name if other else A
    d = min(ep.day0, 4)
    ep.plan.title = say("title", locals())
    k = r.randint(5, 9) if kind == "smart_fridge" else r.randint(24, 41)
    t1 = ep.jitter(d, 19, 0, 40)
    e1 = ep.event(t1, [A], "home", say("e1", locals()))
    fault = ep.view(
        e1,
        dev,
        "device_status",
        [f.format(k=k) for f in a["fault"]],
        **say("fault", locals(), v=a["fault"][0].format(k=k).split(":")[0]),
    )
    moan = ep.view(
        e1, hh.first("smart_speaker", "smart_display"), "audio", **say("moan", locals()), offset=6
    )
    t2 = t1 + _m(r.randint(20, 45))
    e2 = ep.event(t2, [A], "home", say("e2", locals()), causes=[e1])
    look = ep.view(e2, hh.phone(A), "app_usage", **say("look", locals(), draw=r))
    ref = f"RP-{r.randint(10000, 99999)}"
    t3 = ep.jitter(d + 1, 8, 10, 50)
    visit_day = min(d + 1 if r.random() < 0.5 else d + 2, 6)
    visit = ep.at(visit_day, 12, r.randint(20, 55))
    ep.keep_home(B, visit_day)
    e3 = ep.event(t3, [A], "home", say("e3", locals()), causes=[e2])
    book = ep.view(e3, hh.phone(A), "app_usage", **say("book", locals()))
    note = ep.view(
        e3,
        hh.first("smart_display", "smart_speaker"),
        "dialogue",
        **say("note", locals()),
        offset=3,
        people=[A, B],
    )
    e4 = ep.event(visit, [B], "front_door", say("e4"), causes=[e3])
    door = ep.view(e4, hh.shared("doorbell_camera"), "vision", **say("door"))
    lk = ep.view(
        e4,
        hh.shared("smart_lock"),
        "location",
        **say("lk", locals(), visit_clock=clock(visit + _m(1))),
        offset=1,
        people=[B],
    )
    t5 = visit + _m(r.randint(30, 45))
    e5 = ep.event(t5, [B], "home", say("e5", locals()), causes=[e4])
    ok = ep.view(e5, dev, "device_status", a["test"], **say("ok"))
    said = ep.view(
        e5, hh.first("smart_speaker", "smart_display"), "audio", **say("said", locals()), offset=-3
    )
    pay = ep.view(e5, hh.phone(B) or hh.phone(A), "app_usage", **say("pay", locals()), offset=4)
    t6 = ep.jitter(visit_day + 1, 9, 0, 50) if visit_day < 6 else t5 + _m(r.randint(150, 240))
    e6 = ep.event(t6, [], "home", say("e6", locals()), causes=[e5])
    norm = ep.view(e6, dev, "device_status", a["after"], **say("norm"))
    ep.ask(
        "causal",
        ep.asker(B),
        **say(
            "ask_causal",
            locals(),
            a_format=a["summary"].format(k=k),
            refs=[[fault, moan], [look, book, note], [door, lk], [said, ok, pay]],
        ),
        topic="appliance",
        subject=A,
        moments={"visit": visit},
    )
    ep.ask(
        "fusion",
        ep.asker(),
        **say("ask_fusion", locals(), refs=[[fault, said], [pay], [ok, norm]]),
        topic="appliance",
        subject=A,
    )
    ep.perspective(
        [e4, e5],
        ep.asker(),
        **say("perspective", locals()),
        topic="appliance",
        moments={"visit": visit},
    )
    return True


FOOD = TABLE["FOOD"]


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
    item, plural, low, empty = r.choice(FOOD)
    stem = {"milk": "milk", "orange juice": "juice", "yoghurts": "yoghurt"}[item]
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
    cam = ep.view(
        e2,
        hh.first("indoor_camera", "smart_display"),
        "vision",
        **say("cam", locals()),
        offset=-1,
        people=[finisher],
    )
    t3 = ep.jitter(d, 18, 30, 55)
    e3 = ep.event(t3, [A, finisher], "kitchen", say("e3", locals()), causes=[e2])
    who = ep.view(e3, hh.first("smart_speaker", "smart_display"), "audio", **say("who", locals()))
    lst = ep.view(
        e3,
        hh.shared("smart_display")
        if hh.shared("smart_speaker") and hh.shared("smart_display")
        else hh.phone(A),
        "dialogue",
        **say("lst", locals()),
        offset=2,
        people=[A],
    )
    total = f"£{r.randint(38, 96)}.{r.randint(10, 99)}"
    t4 = t3 + _m(r.randint(40, 90))
    e4 = ep.event(t4, [A], "living_room", say("e4", locals()), causes=[e3])
    order = ep.view(
        e4, hh.phone(A), "app_usage", **say("order", locals(), day=day_label(ep.at(d + 1, 8)))
    )
    t5 = ep.jitter(d + 1, 8, 10, 45)
    e5 = ep.event(t5, [B], "front_door", say("e5"), causes=[e4])
    drop = ep.view(e5, hh.shared("doorbell_camera"), "vision", **say("drop"))
    lk = ep.view(
        e5,
        hh.shared("smart_lock"),
        "location",
        **say("lk", locals(), t5_clock=clock(t5 + _m(2))),
        offset=2,
        people=[B],
    )
    e6 = ep.event(t5 + _m(12), [B], "kitchen", say("e6", locals()), causes=[e5])
    v6 = ep.view(e6, fridge, "vision", **say("v6", locals()))
    ep.ask(
        "causal",
        ep.asker(A),
        **say(
            "ask_causal",
            locals(),
            item_capitalize=item.capitalize(),
            refs=[[v1, v2, cam], [who, lst], [order], [drop, v6]],
        ),
        topic="food",
        subject=A,
        moments={"drop": t5},
    )
    ep.ask(
        "user_query",
        A,
        **say(
            "ask_user_query",
            locals(),
            item_capitalize=item.capitalize(),
            refs=[[lst], [order], [drop, v6]],
        ),
        topic="food",
        subject=A,
        moments={"list": t3},
    )
    ep.perspective(
        [e5, e6], ep.asker(), **say("perspective", locals()), topic="food", moments={"drop": t5}
    )
    ep.ask(
        "fusion",
        ep.asker(finisher),
        **say("ask_fusion", locals(), refs=[[v2, cam, who], [order], [drop, lk, v6]]),
        topic="food",
        subject=A,
        moments={"gone": t2},
    )
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
    if kind == "toast":
        t1 = ep.jitter(d, 7 if d < 5 else 9, 5, 40)
        fact, q_what = say("text", locals()), say("text_2")
        reading = r.randint(160, 240)
        peak = say("peak", locals())
        heard = say("heard", locals())
        remedy = say("remedy")
        lesson = say("lesson")
        promise = say("promise")
        unit, anchor = "µg/m³", f"{reading}"
    else:
        t1 = ep.jitter(d, 14, 0, 40)
        fact, q_what = say("text_3", locals()), say("text_4")
        reading = r.randint(380, 470)
        peak = say("peak_2", locals())
        heard = say("heard_2", locals())
        remedy = say("remedy_2")
        lesson = say("lesson_2")
        promise = say("promise_2")
        unit, anchor = "VOC", f"{reading}"
    ep.plan.title = say("title", locals())
    e1 = ep.event(t1, [P], room, fact)
    pk = ep.view(e1, sensor, "environment", peak, offset=3, **say("pk", locals()))
    sp = ep.view(
        e1,
        hh.first("smart_speaker", "smart_display"),
        "audio",
        heard,
        offset=4,
        **say("sp", locals()),
    )
    t2 = t1 + _m(r.randint(3, 6))
    e2 = ep.event(t2, [P], room, f"{P} {remedy}", causes=[e1])
    door_dev = hh.shared("door_window_sensor")
    door_name = hh.device(door_dev).location.replace("_", " ") if door_dev else "door"
    dr = ep.view(e2, door_dev, "device_status", **say("dr", locals(), draw=r))
    pu = ep.view(e2, purifier if purifier != sensor else None, "device_status", **say("pu"))
    th = ep.view(e2, hh.shared("smart_thermostat"), "environment", **say("th", draw=r), offset=12)
    t3 = t2 + _m(r.randint(35, 70))
    e3 = ep.event(t3, [], room, say("e3"), causes=[e2])
    clear = ep.view(
        e3,
        sensor,
        "environment",
        **say(
            "clear",
            alt="PM2.5" if kind == "toast" else "VOC index",
            alt2=r.randint(8, 14) if kind == "toast" else r.randint(60, 110),
            alt3="PM2.5" if kind == "toast" else "VOC",
            alt4=r.randint(8, 14) if kind == "toast" else r.randint(60, 110),
        ),
    )
    t4 = t3 + _m(r.randint(60, 150))
    e4 = ep.event(t4, [P], "home", say("e4", locals()), causes=[e3])
    ep.view(
        e4,
        hh.phone(P),
        "app_usage",
        [
            say("view") if kind == "toast" else say("view_2"),
            say("view_3") if kind == "toast" else say("view_4"),
        ],
        **say("phone_app_usage"),
    )
    ep.view(
        e4,
        hh.first("smart_display", "smart_speaker"),
        "dialogue",
        **say("display_dialogue", locals()),
        offset=8,
        people=[P],
    )
    ep.ask(
        "causal",
        ep.asker(P),
        **say("ask_causal", locals(), refs=[[pk], [sp], [dr, pu], [th], [clear]]),
        topic="air",
        subject=P,
        moments={"cold": t2},
    )
    ep.perspective(
        [e1, e2],
        ep.asker(),
        **say("perspective", locals()),
        topic="air",
        subject=P,
        moments={"air": t1},
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        **say(
            "ask_fusion",
            locals(),
            v=fact[0].upper() + fact[1:],
            refs=[[pk, sp], [dr, pu, th], [clear]],
        ),
        topic="air",
        subject=P,
        moments={"air": t1},
    )
    return True
