"""Storylines about getting things done: a big purchase delivered, a car that needs a garage."""

from __future__ import annotations

from datetime import timedelta

from eval.synth.episodes.base import Ep, template
from eval.synth.tables import Words, load_table
from eval.synth.timewords import clock, day_label

TABLE = load_table("episodes/errands")
W = Words("episodes/errands")


def _m(n: int) -> timedelta:
    return timedelta(minutes=n)


PURCHASES = TABLE["PURCHASES"]
ELDER_PURCHASE = tuple(TABLE["ELDER_PURCHASE"])


@template("purchase", span=4)
def purchase(ep: Ep) -> bool:
    say = W.at("purchase")
    hh, r = ep.hh, ep.r
    buyer = ep.pick([p for p in hh.residents if p.kind in ("adult", "elder") and hh.phone(p.name)])
    if buyer is None:
        return False
    B = buyer.name
    item, price, box, setup = r.choice(
        PURCHASES if buyer.kind != "elder" else PURCHASES[2:] + [ELDER_PURCHASE]
    )
    other = ep.other_adult(B)
    O = other.name if other else B
    d = min(ep.day0, 3)
    ep.plan.title = say("title", locals())
    ep.keep_home(O, d + 3)
    t0 = ep.jitter(d, 21, 0, 40)
    e0 = ep.event(t0, [B], "home", say("e0", locals()))
    res = ep.view(
        e0,
        hh.laptop(B) or hh.tablet(B) or hh.phone(B),
        "app_usage",
        **say("res", locals(), v=int(price.strip("£").replace(",", "")) + 50, draw=r),
    )
    t1 = ep.jitter(d + 1, 19, 0, 40)
    e1 = ep.event(t1, [B, O], "kitchen", say("e1", locals()), causes=[e0])
    talk = ep.view(
        e1,
        hh.first("smart_speaker", "smart_display"),
        "dialogue",
        **say("talk", locals(), alt=say("talk_2", locals()) if O != B else say("talk_3", locals())),
        people=[B, O],
    )
    t2 = t1 + _m(r.randint(10, 30))
    e2 = ep.event(t2, [B], "kitchen", say("e2", locals()), causes=[e1])
    order = ep.view(
        e2, hh.phone(B), "app_usage", **say("order", locals(), day=day_label(ep.at(d + 3, 9)))
    )
    t3 = ep.jitter(d + 3, 10, 0, 50)
    e3 = ep.event(t3, [O], "front_door", say("e3", locals()), causes=[e2])
    drop = ep.view(
        e3, hh.shared("doorbell_camera"), "vision", **say("drop", locals(), v=box.split()[-1])
    )
    lk = ep.view(
        e3, hh.shared("smart_lock"), "location", **say("lk", t3_clock=clock(t3 + _m(1))), offset=1
    )
    t4 = ep.jitter(d + 3, 18, 0, 40)
    e4 = ep.event(t4, [B], "home", say("e4", locals()), causes=[e3])
    cam = ep.view(e4, hh.first("indoor_camera", "smart_display"), "vision", **say("cam", locals()))
    swear = ep.view(e4, hh.shared("smart_speaker"), "audio", **say("swear", locals()), offset=25)
    ep.ask(
        "causal",
        ep.asker(B),
        **say("ask_causal", locals(), refs=[[res], [talk], [order], [drop, lk], [cam, swear]]),
        topic="purchase",
        subject=B,
        moments={"setup": t4},
    )
    ep.ask(
        "user_query",
        B,
        **say("ask_user_query", locals(), refs=[[order, talk], [drop, lk]]),
        topic="purchase",
        subject=B,
    )
    ep.ask(
        "fusion",
        ep.asker(B),
        **say("ask_fusion", locals(), refs=[[talk, order], [drop, lk], [cam, swear, e4]]),
        topic="purchase",
        subject=B,
        moments={},
    )
    ep.perspective(
        [e3, e4],
        ep.asker(B),
        **say("perspective", locals()),
        topic="purchase",
        subject=B,
        moments={"drop": t3},
    )
    return True


@template("car_issue", span=3)
def car_issue(ep: Ep) -> bool:
    say = W.at("car_issue")
    hh, r = ep.hh, ep.r
    driver = ep.pick(hh.drivers())
    if driver is None:
        return False
    D, x = driver.name, driver.pron
    car = hh.car(D)
    garage = hh.places["garage"]
    issue = r.choice(
        [
            (say("issue"), say("issue_2"), say("issue_3"), 28),
            (say("issue_4"), say("issue_5"), say("issue_6"), 139),
            (say("issue_7"), say("issue_8"), say("issue_9"), 96),
        ]
    )
    name, reading, fix, cost = issue
    d = min(ep.day0, 4)
    ep.plan.title = say("title", locals())
    ep.keep_home(D, d, evening=False)
    t1 = ep.jitter(d, 8 if driver.work else 10, 0, 30)
    e1 = ep.event(t1, [D], "car", say("e1", locals()))
    warn = ep.view(e1, car, "dialogue", **say("warn", locals(), v=reading.split()[-1]))
    t2 = t1 + _m(r.randint(5, 14))
    e2 = ep.event(t2, [D], garage, say("e2", locals()), causes=[e1])
    trip = ep.view(e2, car, "location", **say("trip", locals(), draw=r))
    call = ep.view(e2, hh.phone(D), "dialogue", **say("call", locals()), offset=8)
    t3 = t2 + _m(r.randint(50, 75))
    e3 = ep.event(t3, [D], garage, say("e3", locals()), causes=[e2])
    pay = ep.view(e3, hh.phone(D), "app_usage", **say("pay", locals()))
    t4 = ep.jitter(d, 18, 30, 59)
    e4 = ep.event(t4, [D], "kitchen", say("e4", locals()), causes=[e3])
    told = ep.view(e4, hh.first("smart_speaker", "smart_display"), "audio", **say("told", locals()))
    t5 = ep.jitter(d + 1, 8 if driver.work else 11, 0, 30)
    e5 = ep.event(t5, [D], "car", say("e5"), causes=[e3])
    ok = ep.view(e5, car, "location", **say("ok", draw=r))
    ep.ask(
        "causal",
        ep.asker(D, include=[D]),
        **say(
            "ask_causal",
            locals(),
            name_capitalize=name.capitalize(),
            refs=[[warn], [trip, call], [pay, told]],
        ),
        topic="car",
        subject=D,
        moments={"stop": t2},
    )
    ep.ask(
        "user_query",
        D,
        **say("ask_user_query", locals(), refs=[[told, warn], [pay], [ok]]),
        topic="car",
        subject=D,
        moments={"stop": t2},
    )
    ep.ask(
        "fusion",
        ep.asker(D),
        **say("ask_fusion", locals(), refs=[[warn], [trip, pay], [told], [ok]]),
        topic="car",
        subject=D,
        moments={"stop": t2},
    )
    ep.perspective(
        [e2, e3],
        ep.asker(D),
        **say("perspective", locals()),
        topic="car",
        subject=D,
        moments={"stop": t2},
    )
    return True
