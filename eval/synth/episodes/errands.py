"""Storylines about getting things done: a big purchase delivered, a car that needs a garage."""

from __future__ import annotations

from eval.synth.episodes.base import Ep, template
from eval.synth.episodes.storyline import Storyline, minutes
from eval.synth.tables import Words, load_table

TABLE = load_table("episodes/errands")
W = Words("episodes/errands")

PURCHASES = TABLE["PURCHASES"]  # (item, price, how it is delivered, setting it up)
ELDER_PURCHASE = TABLE["ELDER_PURCHASE"]
CAR_ISSUES = TABLE["CAR_ISSUES"]  # (warning, what the car reports, the fix, cost in £)


@template("purchase", span=4)
def purchase(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    buyer = ep.pick([p for p in hh.residents if p.kind in ("adult", "elder") and hh.phone(p.name)])
    if buyer is None:
        return False
    B = buyer.name
    s = Storyline(ep, W.at("purchase"), "purchase", B)
    say = s.say
    options = PURCHASES if buyer.kind != "elder" else PURCHASES[2:] + [ELDER_PURCHASE]
    item, price, box, setup = r.choice(options)
    other = ep.other_adult(B)
    O = other.name if other else B
    d = min(ep.day0, 3)
    ep.plan.title = say("title", locals())
    ep.keep_home(O, d + 3)
    t0 = ep.jitter(d, 21, 0, 40)
    e0 = ep.event(t0, [B], "home", say("e0", locals()))
    budget = int(price.strip("£").replace(",", "")) + 50
    screen = hh.laptop(B) or hh.tablet(B) or hh.phone(B)
    res = s.view(e0, screen, "app_usage", "res", locals(), draw=r)
    t1 = ep.jitter(d + 1, 19, 0, 40)
    e1 = ep.event(t1, [B, O], "kitchen", say("e1", locals()), causes=[e0])
    agreed = say("agreed_together", locals()) if O != B else say("agreed_alone", locals())
    speaker = hh.first("smart_speaker", "smart_display")
    talk = s.view(e1, speaker, "dialogue", "talk", locals(), people=[B, O])
    t2 = t1 + minutes(r.randint(10, 30))
    e2 = ep.event(t2, [B], "kitchen", say("e2", locals()), causes=[e1])
    delivery = ep.at(d + 3, 9)
    order = s.view(e2, hh.phone(B), "app_usage", "order", locals())
    t3 = ep.jitter(d + 3, 10, 0, 50)
    e3 = ep.event(t3, [O], "front_door", say("e3", locals()), causes=[e2])
    box_word = box.split()[-1]
    drop = s.view(e3, hh.shared("doorbell_camera"), "vision", "drop", locals())
    opened = t3 + minutes(1)
    lk = s.view(e3, hh.shared("smart_lock"), "location", "lk", locals(), offset=1)
    t4 = ep.jitter(d + 3, 18, 0, 40)
    e4 = ep.event(t4, [B], "home", say("e4", locals()), causes=[e3])
    cam = s.view(e4, hh.first("indoor_camera", "smart_display"), "vision", "cam", locals())
    swear = s.view(e4, hh.shared("smart_speaker"), "audio", "swear", locals(), offset=25)
    causal_refs = [[res], [talk], [order], [drop, lk], [cam, swear]]
    s.ask("causal", ep.asker(B), locals(), refs=causal_refs, moments={"setup": t4})
    s.ask("user_query", B, locals(), refs=[[order, talk], [drop, lk]])
    s.ask("fusion", ep.asker(B), locals(), refs=[[talk, order], [drop, lk], [cam, swear, e4]])
    s.perspective([e3, e4], ep.asker(B), locals(), moments={"drop": t3})
    return True


@template("car_issue", span=3)
def car_issue(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    driver = ep.pick(hh.drivers())
    if driver is None:
        return False
    D, x = driver.name, driver.pron
    s = Storyline(ep, W.at("car_issue"), "car", D)
    say = s.say
    car = hh.car(D)
    garage = hh.places["garage"]
    name, reading, fix, cost = r.choice(CAR_ISSUES)
    d = min(ep.day0, 4)
    ep.plan.title = say("title", locals())
    ep.keep_home(D, d, evening=False)
    t1 = ep.jitter(d, 8 if driver.work else 10, 0, 30)
    e1 = ep.event(t1, [D], "car", say("e1", locals()))
    reading_value = reading.split()[-1]
    warn = s.view(e1, car, "dialogue", "warn", locals())
    t2 = t1 + minutes(r.randint(5, 14))
    e2 = ep.event(t2, [D], garage, say("e2", locals()), causes=[e1])
    trip = s.view(e2, car, "location", "trip", locals(), draw=r)
    call = s.view(e2, hh.phone(D), "dialogue", "call", locals(), offset=8)
    t3 = t2 + minutes(r.randint(50, 75))
    e3 = ep.event(t3, [D], garage, say("e3", locals()), causes=[e2])
    pay = s.view(e3, hh.phone(D), "app_usage", "pay", locals())
    t4 = ep.jitter(d, 18, 30, 59)
    e4 = ep.event(t4, [D], "kitchen", say("e4", locals()), causes=[e3])
    told = s.view(e4, hh.first("smart_speaker", "smart_display"), "audio", "told", locals())
    t5 = ep.jitter(d + 1, 8 if driver.work else 11, 0, 30)
    e5 = ep.event(t5, [D], "car", say("e5"), causes=[e3])
    ok = s.view(e5, car, "location", "ok", draw=r)
    warning = name.capitalize()
    stop = {"stop": t2}
    s.ask(
        "causal",
        ep.asker(D, include=[D]),
        locals(),
        refs=[[warn], [trip, call], [pay, told]],
        moments=stop,
    )
    s.ask("user_query", D, locals(), refs=[[told, warn], [pay], [ok]], moments=stop)
    s.ask("fusion", ep.asker(D), locals(), refs=[[warn], [trip, pay], [told], [ok]], moments=stop)
    s.perspective([e2, e3], ep.asker(D), locals(), moments=stop)
    return True
