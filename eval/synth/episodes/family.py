"""Storylines about living together: lost keys, a household dispute, and a parcel that
went to the neighbours."""

from __future__ import annotations

from datetime import timedelta

from eval.synth.episodes.base import Ep, template
from eval.synth.tables import Words, load_table
from eval.synth.timewords import clock, day_label, stamp

TABLE = load_table("episodes/family")
W = Words("episodes/family")


def _m(n: int) -> timedelta:
    return timedelta(minutes=n)


ITEMS = TABLE["ITEMS"]


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
    d = min(ep.day0, 3)
    ep.plan.title = say("title", locals())
    ep.keep_home(P, d + 1, evening=False)
    t1 = ep.jitter(d, 20, 0, 50)
    e1 = ep.event(t1, [P], "living_room", say("e1", locals()))
    seen = ep.view(
        e1, hh.first("indoor_camera", "smart_display"), "vision", **say("seen", locals())
    )
    # When no camera saw the item put down, no evidence holds that moment: answers say less.
    left_since = stamp(t1) if seen is not None else say("unseen")
    left_at = f"on {left_since}" if seen is not None else left_since
    t2 = ep.at(
        d + 1, p.leave // 60 if p.work else 9, (p.leave % 60 if p.work else 0) + r.randint(0, 4)
    )
    e2 = ep.event(t2, [P], "hallway", say("e2", locals()), causes=[e1])
    shout = ep.view(
        e2, hh.first("smart_speaker", "smart_display"), "audio", **say("shout", locals())
    )
    mot = ep.view(e2, hh.shared("motion_sensor"), "motion", **say("mot"), offset=2, people=[P])
    t3 = t2 + _m(r.randint(8, 13))
    e3 = ep.event(t3, [P], "living_room", say("e3", locals()), causes=[e2])
    app = ep.view(e3, hh.phone(P), "app_usage", **say("app", locals()))
    found = ep.view(
        e3,
        hh.first("smart_speaker", "smart_display"),
        "audio",
        **say(
            "found",
            locals(),
            alt=say("found_2", locals()) if item.endswith("s") else say("found_3", locals()),
        ),
        offset=1,
    )
    t4 = t3 + _m(r.randint(3, 6))
    late = r.randint(17, 28)
    e4 = ep.event(t4, [P], "front_door", say("e4", locals()), causes=[e3])
    lk = ep.view(e4, hh.shared("smart_lock"), "location", **say("lk", locals()), people=[P])
    msg = ep.view(e4, hh.phone(P), "dialogue", **say("msg", locals()), offset=2)
    t5 = ep.jitter(d + 1, 19, 0, 50)
    e5 = ep.event(t5, [P], "hallway", say("e5", locals()), causes=[e4])
    ep.view(
        e5, hh.first("smart_speaker", "smart_display"), "audio", **say("speaker_audio", locals())
    )
    ep.view(
        e5,
        hh.shared("motion_sensor"),
        "motion",
        **say("motion_sensor_motion"),
        offset=2,
        people=[P],
    )
    ep.ask(
        "causal",
        ep.asker(P),
        **say(
            "ask_causal",
            locals(),
            item_capitalize=item.capitalize(),
            refs=[[seen], [shout, mot], [app, found], [lk, msg]],
        ),
        topic="lost_item",
        subject=P,
        moments={"late": t4},
    )
    ep.ask(
        "user_query",
        P,
        [
            say("ask", locals()) if item.endswith("s") else say("ask_2", locals()),
            say("ask_3", locals()) if item.endswith("s") else say("ask_4", locals()),
        ],
        **say("ask_user_query", locals(), refs=[[seen, found], [app]]),
        topic="lost_item",
        subject=P,
        moments={"late": t4},
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        **say(
            "ask_fusion",
            locals(),
            alt=say("ask_5", locals()) if item.endswith("s") else say("ask_6", locals()),
            refs=[[seen], [mot, app, found], [lk, msg]],
        ),
        topic="lost_item",
        subject=P,
        moments={"late": t4},
    )
    ep.perspective(
        [e2, e3],
        ep.asker(P),
        **say("perspective", locals()),
        topic="lost_item",
        subject=P,
        moments={"late": t2},
    )
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


def _heating_dispute(ep: Ep, a, b) -> bool:
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
    t2 = t1 + _m(r.randint(25, 45))
    e2 = ep.event(t2, [A], "living_room", say("e2", locals()), causes=[e1])
    down = ep.view(e2, hh.phone(A), "app_usage", **say("down", locals()))
    row = ep.view(
        e2,
        hh.first("smart_speaker", "smart_display"),
        "audio",
        **say("row", locals()),
        offset=3,
        people=[A, B],
    )
    t3 = ep.jitter(d + 1, 19, 0, 40)
    e3 = ep.event(t3, [A, B], "kitchen", say("e3"), causes=[e2])
    deal = ep.view(
        e3,
        hh.first("smart_display", "smart_speaker"),
        "dialogue",
        **say("deal", locals()),
        people=[A, B],
    )
    sched = ep.view(e3, thermo, "environment", **say("sched"), offset=5)
    t4 = ep.at(min(d + 2, 6), 20, r.randint(0, 40))
    e4 = ep.event(t4, [A, B], "living_room", say("e4"), causes=[e3])
    ep.view(e4, thermo, "environment", **say("thermo_environment"))
    ep.view(
        e4,
        hh.first("indoor_camera", "smart_display"),
        "vision",
        **say("indoor_camera_vision", locals()),
    )
    ep.ask(
        "causal",
        ep.asker(include=[A, B]),
        **say("ask_causal", locals(), refs=[[up], [down], [row], [deal, sched]]),
        topic="dispute",
        subject=A,
        moments={"deal": t3},
    )
    ep.perspective(
        [e1, e2],
        ep.asker(A, B) if len(hh.people) > 2 else A,
        **say("perspective", locals()),
        topic="dispute",
        moments={"row": t1},
    )
    ep.ask(
        "fusion",
        ep.asker(include=[A, B]),
        **say("ask_fusion", locals(), refs=[[up], [down], [deal, sched]]),
        topic="dispute",
        subject=A,
        moments={"row": t1},
    )
    return True


def _screen_dispute(ep: Ep, teen, parent, console) -> bool:
    say = W.at("screen_dispute")
    hh, r = ep.hh, ep.r
    T, A = teen.name, parent.name
    d = min(ep.day0, 3)
    ep.plan.title = say("title", locals())
    for day in range(d, 7):
        ep.world.claim("gaming", T, day)
    game = r.choice(say("game"))
    t1 = ep.at(d, 23, r.randint(30, 55))
    e1 = ep.event(t1, [T], "living_room", say("e1", locals()))
    c1 = ep.view(e1, console, "app_usage", **say("c1", locals()))
    light = ep.view(
        e1,
        hh.shared("motion_sensor"),
        "motion",
        **say("light", t1_clock=clock(t1 + _m(4))),
        offset=4,
        people=[A],
    )
    t2 = t1 + _m(6)
    e2 = ep.event(t2, [A, T], "living_room", say("e2", locals()), causes=[e1])
    row = ep.view(e2, hh.first("smart_speaker", "smart_display"), "audio", **say("row", locals()))
    off = ep.view(e2, console, "device_status", **say("off"), offset=1)
    t3 = ep.jitter(d + 1, 7, 10, 40)
    e3 = ep.event(t3, [A], "kitchen", say("e3", locals()), causes=[e2])
    lim = ep.view(e3, hh.phone(A), "app_usage", **say("lim", locals()))
    t4 = ep.at(d + 1, 22, 0)
    e4 = ep.event(t4, [T], "living_room", say("e4"), causes=[e3])
    cut = ep.view(e4, console, "device_status", **say("cut", locals()))
    ph = ep.view(e4, hh.phone(T), "app_usage", **say("ph", locals()), offset=1)
    ep.ask(
        "causal",
        ep.asker(T, A, include=[A]),
        **say("ask_causal", locals(), refs=[[c1, light], [row, off], [lim], [cut]]),
        topic="gaming",
        subject=T,
        moments={"cut": t4},
    )
    ep.ask(
        "fusion",
        A,
        **say("ask_fusion", locals(), refs=[[cut], [lim], [ph]]),
        topic="gaming",
        subject=T,
        moments={"cut": t4},
    )
    ep.perspective(
        [e1, e2],
        ep.asker(T),
        **say("perspective", locals()),
        topic="gaming",
        subject=T,
        moments={"row": t1},
    )
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
    ep.plan.title = say("title", locals())
    t0 = ep.jitter(max(d - 1, 0), 21, 0, 40)
    e0 = ep.event(t0, [P], "home", say("e0", locals()))
    order = ep.view(
        e0, hh.phone(P), "app_usage", **say("order", locals(), d_day=day_label(ep.at(d, 9)))
    )
    t1 = ep.jitter(d, 11, 5, 50)
    e1 = ep.event(t1, [], "front_door", say("e1", locals()), causes=[e0])
    cam = ep.view(e1, hh.shared("doorbell_camera"), "vision", **say("cam", locals()))
    heard = ep.view(e1, hh.shared("smart_speaker"), "audio", **say("heard"))
    note = ep.view(e1, hh.phone(P), "app_usage", **say("note", locals()), offset=3)
    t2 = ep.jitter(d, 18, 20, 59)
    e2 = ep.event(t2, [P], "front_door", say("e2", locals()), causes=[e1])
    out = ep.view(e2, hh.shared("doorbell_camera"), "vision", **say("out", locals()))
    lk = ep.view(
        e2,
        hh.shared("smart_lock"),
        "location",
        **say("lk", locals(), t2_clock=clock(t2 + _m(4))),
        offset=4,
        people=[P],
    )
    t3 = t2 + _m(r.randint(10, 40))
    e3 = ep.event(t3, [P], "living_room", say("e3", locals()), causes=[e2])
    ep.view(
        e3,
        hh.first("indoor_camera", "smart_display"),
        "vision",
        **say("indoor_camera_vision", locals()),
    )
    ep.view(e3, hh.phone(P), "app_usage", **say("phone_app_usage", locals()), offset=5)
    ep.ask(
        "causal",
        ep.asker(P, include=[P]),
        **say("ask_causal", locals(), refs=[[order], [cam, heard], [note], [out, lk]]),
        topic="delivery",
        subject=P,
        moments={"fetch": t2},
    )
    ep.perspective(
        [e1, e2], ep.asker(), **say("perspective", locals()), topic="delivery", moments={"drop": t1}
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        **say(
            "ask_fusion",
            locals(),
            t2_clock=clock(t2 + _m(4)),
            refs=[[order], [cam, note], [out, lk]],
        ),
        topic="delivery",
        subject=P,
        moments={"drop": t1},
    )
    return True
