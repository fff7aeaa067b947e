"""Storylines about the home: a broken appliance, food running out, bad air, lost keys,
a household dispute, and a parcel that went to the neighbours."""

from __future__ import annotations

from datetime import timedelta

from eval.synth.episodes.base import Ep, template
from eval.synth.timewords import clock, day_label, stamp


def _m(n: int) -> timedelta:
    return timedelta(minutes=n)


APPLIANCES = {
    "smart_washer_dryer": {
        "name": "washing machine",
        "qname": "the laundry machine",
        "fault": [
            (
                "the 'Cottons 40' cycle stopping at minute {k} with error E21 (drain blocked), "
                "drum "
                "still holding water"
            ),
            "an aborted wash at minute {k}: error code E21, water not draining",
        ],
        "complaint": "the washing machine's stopped halfway and it's full of water",
        "search": (
            "'E21 error drain pump filter' and a 6-minute video on clearing a washing-machine pump"
        ),
        "cause": "a sock jammed in the drain pump",
        "cost": 85,
        "company": "Swift Appliance Repairs",
        "test": [
            "a test drain completed and error E21 cleared; the machine is back to standby",
            "service test passed: pump draining normally, fault history cleared",
        ],
        "after": [
            "a full 'Cottons 40' cycle completed normally in 1 h 52 min",
            "the first normal wash since the fault, 'Cottons 40', finished after 1 h 52 min",
        ],
    },
    "smart_fridge": {
        "name": "fridge",
        "qname": "the fridge",
        "fault": [
            (
                "a temperature alarm: fridge compartment at {k}.4 °C and rising, compressor "
                "restarting "
                "every 3 minutes"
            ),
            "a warm-fridge warning at {k}.4 °C with the compressor cycling abnormally",
        ],
        "complaint": "the milk's warm, the fridge isn't cold at all",
        "search": "'fridge not cooling compressor clicking' and the manufacturer's fault-code page",
        "cause": "a failed start relay on the compressor",
        "cost": 120,
        "company": "CoolFix Repairs",
        "test": [
            "the compressor running steadily and the fridge compartment back down to 4.2 °C",
            "fault cleared, fridge compartment cooling to 4.2 °C",
        ],
        "after": [
            "an overnight fridge temperature holding between 3.8 and 4.4 °C",
            "a stable overnight fridge temperature of about 4 °C",
        ],
    },
    "robot_vacuum": {
        "name": "robot vacuum",
        "qname": "the robot cleaner",
        "fault": [
            "error 5: main brush stuck, the run aborted after {k} minutes in the hallway",
            "the cleaning run stopped after {k} minutes with 'main brush jammed' (error 5)",
        ],
        "complaint": "the hoover robot keeps beeping, it's stuck by the stairs",
        "search": "'robot vacuum error 5 main brush' and a replacement brush roll in the shop app",
        "cause": "hair wound round a cracked brush roll",
        "cost": 34,
        "company": "the manufacturer's shop",
        "test": [
            "a test run of 12 minutes with no errors after the brush roll was replaced",
            "a 12-minute error-free run on the new brush roll",
        ],
        "after": [
            "a full-house clean of 58 minutes completed without errors",
            "a 58-minute scheduled clean finished normally",
        ],
    },
}


@template("appliance_fault", span=3)
def appliance_fault(ep: Ep) -> bool:
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
    ep.plan.title = f"The {a['name']} breaks down and is repaired"
    k = r.randint(5, 9) if kind == "smart_fridge" else r.randint(24, 41)
    t1 = ep.jitter(d, 19, 0, 40)
    e1 = ep.event(t1, [A], "home", f"the {a['name']} failed: {a['cause']}")
    fault = ep.view(
        e1,
        dev,
        "device_status",
        [f.format(k=k) for f in a["fault"]],
        gist=f"reported the fault ({a['fault'][0].format(k=k).split(':')[0]})",
        anchors=(f"{k}",),
    )
    moan = ep.view(
        e1,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            f'{A} calling out "{a["complaint"]}"',
            f'{A} groaning "{a["complaint"]}" and a cupboard door banging',
        ],
        offset=6,
        gist=f"heard {A} discover the problem",
        anchors=(A,),
    )
    t2 = t1 + _m(r.randint(20, 45))
    e2 = ep.event(t2, [A], "home", f"{A} tried to diagnose the fault", causes=[e1])
    look = ep.view(
        e2,
        hh.phone(A),
        "app_usage",
        [f"searches for {a['search']}", f"{r.randint(9, 17)} minutes on {a['search']}"],
        gist=f"showed {A} researching the fault",
        anchors=(),
    )
    ref = f"RP-{r.randint(10000, 99999)}"
    t3 = ep.jitter(d + 1, 8, 10, 50)
    visit_day = min(d + 1 if r.random() < 0.5 else d + 2, 6)
    visit = ep.at(visit_day, 12, r.randint(20, 55))
    ep.keep_home(B, visit_day)
    e3 = ep.event(t3, [A], "home", f"{A} booked {a['company']}", causes=[e2])
    book = ep.view(
        e3,
        hh.phone(A),
        "app_usage",
        [
            (
                f"a booking confirmation from {a['company']}: visit on {day_label(visit)} "
                "between 12:00 and "
                f"14:00, reference {ref}"
            ),
            (
                f"{a['company']} confirming an engineer slot for {day_label(visit)}, 12:00-14:00 "
                f"({ref})"
            ),
        ],
        gist=f"showed a booking with {a['company']} for {day_label(visit)} (ref {ref})",
        anchors=(ref,),
    )
    note = ep.view(
        e3,
        hh.shared("smart_display") or hh.shared("smart_speaker"),
        "dialogue",
        [
            (
                f"{A} asked for a reminder that someone must be in on {day_label(visit)} "
                "lunchtime for the "
                f"{a['name']} repair"
            ),
            (
                f"{A} said the repair visit is on {day_label(visit)} around midday and {B} should "
                "be home"
            ),
        ],
        offset=3,
        gist="noted that someone had to be home for the repair visit",
        anchors=("repair",),
        people=[A, B],
    )
    e4 = ep.event(visit, [B], "front_door", "the engineer arrived", causes=[e3])
    door = ep.view(
        e4,
        hh.shared("doorbell_camera"),
        "vision",
        [
            (
                "a man in a navy work jacket with a red toolbox ringing the bell; a van marked "
                "with a blue "
                "spanner logo parked across the drive"
            ),
            (
                "a technician carrying a toolbox at the door, a liveried van with a spanner logo "
                "behind him"
            ),
        ],
        gist="showed a technician with a toolbox at the door",
        anchors=("toolbox",),
    )
    lk = ep.view(
        e4,
        hh.shared("smart_lock"),
        "location",
        [
            (
                f"the door opened from inside by {B} at {clock(visit + _m(1))} and locked again 40 "
                "minutes later"
            ),
            f"an inside unlock by {B} at {clock(visit + _m(1))}; relocked after about 40 minutes",
        ],
        offset=1,
        gist=f"logged {B} letting the engineer in",
        anchors=(B,),
        people=[B],
    )
    t5 = visit + _m(r.randint(30, 45))
    e5 = ep.event(t5, [B], "home", f"the engineer fixed it: {a['cause']}", causes=[e4])
    ok = ep.view(
        e5, dev, "device_status", a["test"], gist="reported a successful test after the repair"
    )
    said = ep.view(
        e5,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            (
                f"a man's voice saying \"there's your culprit — {a['cause']}. That's "
                f"£{a['cost']} including "
                f'the call-out"'
            ),
            f"the engineer explaining it was {a['cause']} and quoting £{a['cost']}",
        ],
        offset=-3,
        gist=f"heard the engineer blame {a['cause']} and charge £{a['cost']}",
        anchors=(f"£{a['cost']}",),
    )
    pay = ep.view(
        e5,
        hh.phone(B) or hh.phone(A),
        "app_usage",
        [
            f"a card payment of £{a['cost']}.00 to {a['company']}",
            f"a £{a['cost']}.00 payment to {a['company']} in the banking app",
        ],
        offset=4,
        gist=f"showed £{a['cost']} paid to {a['company']}",
        anchors=(f"£{a['cost']}",),
    )
    t6 = ep.jitter(visit_day + 1, 9, 0, 50) if visit_day < 6 else t5 + _m(r.randint(150, 240))
    e6 = ep.event(t6, [], "home", f"the {a['name']} worked normally again", causes=[e5])
    norm = ep.view(e6, dev, "device_status", a["after"], gist="reported normal operation again")
    ep.ask(
        "causal",
        ep.asker(B),
        [
            "Why did someone with a toolbox come to the house {when:visit}?",
            "What was the tradesperson's visit {when:visit} about?",
        ],
        f"The {a['name']} failed on {stamp(t1)} ({a['fault'][0].format(k=k)}); {A} researched it, "
        f"booked {a['company']} ({ref}) the next morning, and the engineer found {a['cause']}, "
        "fixed it "
        f"and charged £{a['cost']}.",
        [
            (f"The {a['name']} fault", [fault, moan], []),
            (f"{A} researched and booked {a['company']}", [look, book, note], [ref]),
            (f"Engineer arrived and {B} let him in", [door, lk], []),
            (f"Cause: {a['cause']}; £{a['cost']}", [said, ok, pay], [f"£{a['cost']}"]),
        ],
        "appliance",
        subject=A,
        moments={"visit": visit},
    )
    ep.ask(
        "fusion",
        ep.asker(),
        [
            (
                f"What exactly went wrong with {a['qname']}, what did it cost to sort out, and "
                "when was it "
                f"working again?"
            ),
            (
                f"Give me the full story of {a['qname']} repair: the problem, the bill and the "
                "outcome."
            ),
        ],
        f"It was {a['cause']}; the fault appeared on {stamp(t1)}, the engineer fixed it on "
        f"{stamp(t5)} for £{a['cost']} paid to {a['company']}, and it ran normally again by "
        f"{stamp(t6)}.",
        [
            (f"Problem: {a['cause']}", [fault, said], []),
            (f"Cost £{a['cost']} to {a['company']}", [pay], [f"£{a['cost']}"]),
            ("Working again afterwards", [ok, norm], []),
        ],
        "appliance",
        subject=A,
    )
    ep.perspective(
        [e4, e5],
        ep.asker(),
        [
            "What did the devices around the house record during the repair visit {when:visit}?",
            "Device by device, what was captured while the engineer was here {when:visit}?",
        ],
        f"During the visit on {stamp(visit)}:",
        "appliance",
        moments={"visit": visit},
    )
    return True


FOOD = [
    (
        "milk",
        "pints of milk",
        "a single 2-pint bottle of milk about a quarter full in the door shelf",
        "the door shelf where the milk goes completely empty",
    ),
    (
        "orange juice",
        "cartons of orange juice",
        ("one carton of orange juice nearly empty on the top shelf"),
        "no juice cartons left on the top shelf",
    ),
    (
        "yoghurts",
        "yoghurt pots",
        "two strawberry yoghurt pots left on the middle shelf",
        "the middle shelf with no yoghurt pots, just an empty multipack sleeve",
    ),
]


@template("food_running_out", span=2)
def food_running_out(ep: Ep) -> bool:
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
    ep.plan.title = f"The household runs out of {item}"
    ep.keep_home(B, d + 1, evening=False)
    t1 = ep.jitter(d, 7, 10, 40)
    e1 = ep.event(t1, [A], "kitchen", f"the {item} was running low")
    v1 = ep.view(
        e1,
        fridge,
        "vision",
        [low, f"{low}, behind a jar of pickles"],
        gist=f"showed the {item} running low",
        anchors=(stem,),
    )
    t2 = ep.jitter(d, 16, 0, 50)
    e2 = ep.event(t2, [finisher], "kitchen", f"{finisher} finished the {item}", causes=[e1])
    v2 = ep.view(
        e2,
        fridge,
        "vision",
        [empty, f"{empty}; the door was open for 35 seconds"],
        gist=f"showed no {item} left",
        anchors=(stem,),
    )
    cam = ep.view(
        e2,
        hh.shared("indoor_camera") or hh.shared("smart_display"),
        "vision",
        [
            (
                f"{finisher} at the kitchen counter tipping the last of a {item} container into a "
                "glass"
            ),
            f"{finisher} finishing off the {item} straight from the container",
        ],
        offset=-1,
        gist=f"showed {finisher} finishing the {item}",
        anchors=(finisher,),
        people=[finisher],
    )
    t3 = ep.jitter(d, 18, 30, 55)
    e3 = ep.event(
        t3,
        [A, finisher],
        "kitchen",
        f"{A} noticed and put {item} on the shopping list",
        causes=[e2],
    )
    who = ep.view(
        e3,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            (
                f'{A} asking "who left the empty {item} in the fridge?" and {finisher} '
                'answering "sorry, '
                f'that was me"'
            ),
            f'{A} sighing "there\'s no {item} again" and {finisher} admitting to finishing {it}',
        ],
        gist=f"heard {A} find the {item} gone and {finisher} own up",
        anchors=(finisher,),
    )
    lst = ep.view(
        e3,
        hh.shared("smart_display")
        if hh.shared("smart_speaker") and hh.shared("smart_display")
        else hh.phone(A),
        "dialogue",
        [
            f"{A} asked to add {item}, bananas and bin bags to the shopping list",
            f"{A} wants {item}, bananas and bin bags on the shopping list",
        ],
        offset=2,
        gist=f"noted {A} adding {item}, bananas and bin bags to the list",
        anchors=("bananas",),
        people=[A],
    )
    total = f"£{r.randint(38, 96)}.{r.randint(10, 99)}"
    t4 = t3 + _m(r.randint(40, 90))
    e4 = ep.event(t4, [A], "living_room", f"{A} placed a grocery order", causes=[e3])
    order = ep.view(
        e4,
        hh.phone(A),
        "app_usage",
        [
            (
                f"a grocery order from {hh.places['supermarket']} placed for {total}, delivery "
                "slot "
                f"{day_label(ep.at(d + 1, 8))} 08:00-09:00, including {plural} and bananas"
            ),
            (
                f"checkout completed in the {hh.places['supermarket']} app: {total}, delivery "
                "next morning "
                f"8-9 am, basket includes {item}"
            ),
        ],
        gist=f"showed the grocery order ({total}) with {item} for delivery next morning 8-9 am",
        anchors=(total,),
    )
    t5 = ep.jitter(d + 1, 8, 10, 45)
    e5 = ep.event(t5, [B], "front_door", "the groceries were delivered", causes=[e4])
    drop = ep.view(
        e5,
        hh.shared("doorbell_camera"),
        "vision",
        [
            "a delivery driver in a green fleece setting down three plastic crates on the doorstep",
            "a driver unloading three grocery crates at the door from a green van",
        ],
        gist="showed a driver leaving three grocery crates",
        anchors=("crates",),
    )
    lk = ep.view(
        e5,
        hh.shared("smart_lock"),
        "location",
        [
            f"the door unlocked from inside by {B} at {clock(t5 + _m(2))}",
            f"an inside unlock at {clock(t5 + _m(2))} by {B}",
        ],
        offset=2,
        gist=f"logged {B} opening up for the delivery",
        anchors=(B,),
        people=[B],
    )
    e6 = ep.event(t5 + _m(12), [B], "kitchen", f"the fridge was restocked with {item}", causes=[e5])
    v6 = ep.view(
        e6,
        fridge,
        "vision",
        [
            f"new {plural} on the shelves next to a bag of bananas",
            f"a restocked fridge: {plural}, fresh vegetables in the drawer",
        ],
        gist=f"showed fresh {item} back in the fridge",
        anchors=(stem,),
    )
    ep.ask(
        "causal",
        ep.asker(A),
        [
            "Why did a grocery van turn up {when:drop}?",
            "What led to the supermarket delivery {when:drop}?",
        ],
        f"The {item} {was} low on {stamp(t1)} and gone by the afternoon ({finisher} finished "
        f"{it}); {A} "
        f"found {it} missing that evening, put {item} on the shopping list and ordered groceries "
        f"({total}) for the 8-9 am slot, which arrived on {stamp(t5)}.",
        [
            (f"{item.capitalize()} low, then finished by {finisher}", [v1, v2, cam], []),
            (f"{A} noticed and added it to the list", [who, lst], []),
            (f"Order for {total}", [order], [total]),
            ("Delivery and restock", [drop, v6], []),
        ],
        "food",
        subject=A,
        moments={"drop": t5},
    )
    ep.ask(
        "user_query",
        A,
        [
            "What did I ask to put on the shopping list {when:list}, and did it all get ordered?",
            "Remind me what I added to the list {when:list} and what the order came to.",
        ],
        f"You asked for {item}, bananas and bin bags; the order you placed from "
        f"{hh.places['supermarket']} came to {total} and included {item} and bananas.",
        [
            (f"{item}, bananas and bin bags on the list", [lst], ["bananas"]),
            (f"Order total {total}", [order], [total]),
            (f"{item.capitalize()} arrived next morning", [drop, v6], []),
        ],
        "food",
        subject=A,
        moments={"list": t3},
    )
    ep.perspective(
        [e5, e6],
        ep.asker(),
        [
            "What did each device see or log when the shopping arrived {when:drop}?",
            "How was the grocery drop-off {when:drop} registered across the house's devices?",
        ],
        f"At the delivery on {stamp(t5)}:",
        "food",
        moments={"drop": t5},
    )
    ep.ask(
        "fusion",
        ep.asker(finisher),
        [
            (
                f"Who used up the last of the {item}, how much was the shop that replaced it, "
                "and when was it back "
                f"in the fridge?"
            ),
            (
                f"Trace the {item} shortage {{when:gone}}: who finished it, what was ordered and "
                "when it arrived."
            ),
        ],
        f"{finisher} finished the {item} on {stamp(t2)}; {A} ordered groceries for {total} that "
        "evening and "
        f"the fridge was restocked after the delivery on {stamp(t5)}.",
        [
            (f"{finisher} finished it", [v2, cam, who], []),
            (f"Order for {total}", [order], [total]),
            ("Delivered and restocked", [drop, lk, v6], []),
        ],
        "food",
        subject=A,
        moments={"gone": t2},
    )
    return True


@template("air_quality", span=1)
def air_quality(ep: Ep) -> bool:
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
        fact, q_what = f"{P} burnt toast under the grill", "the smoky kitchen"
        reading = r.randint(160, 240)
        peak = [
            f"PM2.5 climbing from 9 to {reading} µg/m³ within four minutes",
            f"a particulate spike: PM2.5 at {reading} µg/m³, up from single digits",
        ]
        heard = [
            f'a smoke alarm chirping and {P} shouting "it\'s only the toast, open the back door"',
            f'the smoke alarm going off and {P} calling "burnt toast, sorry, sorry"',
        ]
        remedy = "binned the toast and opened the back door"
        unit, anchor = "µg/m³", f"{reading}"
    else:
        t1 = ep.jitter(d, 14, 0, 40)
        fact, q_what = f"{P} painted the {room} skirting boards with oil-based gloss", "the fumes"
        reading = r.randint(380, 470)
        peak = [
            f"a VOC index of {reading}, rated 'very poor', rising through the afternoon",
            f"volatile organic compounds at index {reading} ('very poor')",
        ]
        heard = [
            f'{P} saying "the smell of this gloss is awful, I\'ll open a window"',
            f"{P} coughing and muttering that the paint fumes are making {x['his']} eyes water",
        ]
        remedy = "opened the windows and left the room"
        unit, anchor = "VOC", f"{reading}"
    ep.plan.title = f"Bad air in the {room}"
    e1 = ep.event(t1, [P], room, fact)
    pk = ep.view(
        e1,
        sensor,
        "environment",
        peak,
        offset=3,
        gist=f"measured a spike to {reading} ({unit})",
        anchors=(anchor,),
    )
    sp = ep.view(
        e1,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        heard,
        offset=4,
        gist=f"heard {P} react to the problem",
        anchors=(P,),
    )
    t2 = t1 + _m(r.randint(3, 6))
    e2 = ep.event(t2, [P], room, f"{P} {remedy}", causes=[e1])
    door_dev = hh.shared("door_window_sensor")
    door_name = hh.device(door_dev).location.replace("_", " ") if door_dev else "door"
    dr = ep.view(
        e2,
        door_dev,
        "device_status",
        [
            f"the {door_name} opened and left open for {r.randint(14, 26)} minutes",
            "a door opened and held open for about a quarter of an hour",
        ],
        gist="reported a door opened for ventilation",
        anchors=("open",),
    )
    pu = ep.view(
        e2,
        purifier if purifier != sensor else None,
        "device_status",
        [
            "automatic switch to turbo mode, fan at 100%",
            "mode change from 'auto quiet' to 'turbo' triggered by the sensor",
        ],
        gist="reported switching itself to turbo",
        anchors=("turbo",),
    )
    th = ep.view(
        e2,
        hh.shared("smart_thermostat"),
        "environment",
        [
            (
                f"the living-area temperature dropping from 20.8 to {r.choice(['18.9', '19.2'])} "
                "°C within "
                f"15 minutes"
            ),
            "a fast drop of nearly 2 °C over a quarter of an hour",
        ],
        offset=12,
        gist="measured the temperature dropping by about two degrees",
        anchors=("°C",),
    )
    t3 = t2 + _m(r.randint(35, 70))
    e3 = ep.event(t3, [], room, "the air cleared", causes=[e2])
    clear = ep.view(
        e3,
        sensor,
        "environment",
        [
            (
                f"{'PM2.5' if kind == 'toast' else 'VOC index'} back down to "
                f"{r.randint(8, 14) if kind == 'toast' else r.randint(60, 110)}, rated good"
            ),
            (
                f"air quality returning to 'good' ({'PM2.5' if kind == 'toast' else 'VOC'} "
                f"{r.randint(8, 14) if kind == 'toast' else r.randint(60, 110)})"
            ),
        ],
        gist="measured the air back to 'good'",
        anchors=("good",),
    )
    t4 = t3 + _m(r.randint(60, 150))
    e4 = ep.event(t4, [P], "home", f"{P} took steps to avoid a repeat", causes=[e3])
    ep.view(
        e4,
        hh.phone(P),
        "app_usage",
        [
            "an order for a new grill pan and a toaster with an auto-stop"
            if kind == "toast"
            else "an order for a respirator mask and water-based low-odour gloss paint",
            "a hardware shop basket: a toaster with auto-stop"
            if kind == "toast"
            else "a shopping basket with low-VOC paint and a mask",
        ],
        gist="showed an order to prevent a repeat",
    )
    ep.view(
        e4,
        hh.shared("smart_display") or hh.shared("smart_speaker"),
        "dialogue",
        [
            (
                f"{P} said next time {x['he']}'ll "
                f"{'stay by the grill' if kind == 'toast' else 'paint with the windows open'}"
            ),
            (
                f"{P} promised to "
                f"{'watch the toast' if kind == 'toast' else 'use the low-odour paint from now on'}"
            ),
        ],
        offset=8,
        gist=f"noted {P}'s promise to avoid a repeat",
        people=[P],
    )
    ep.ask(
        "causal",
        ep.asker(P),
        [
            "Why was the house suddenly cold {when:cold}?",
            "What explains the temperature drop indoors {when:cold}?",
        ],
        f"On {stamp(t1)} {fact}, sending the air-quality reading to {reading} ({unit}); "
        f"{P} {remedy} to ventilate, so the temperature fell by about two degrees until the air "
        "was "
        f"good again around {clock(t3)}.",
        [
            ("Air-quality spike", [pk], [anchor]),
            (f"{P}'s reaction", [sp], []),
            ("Door opened / ventilation", [dr, pu], []),
            ("Temperature drop", [th], []),
            ("Air back to good", [clear], []),
        ],
        "air",
        subject=P,
        moments={"cold": t2},
    )
    ep.perspective(
        [e1, e2],
        ep.asker(),
        [
            (
                f"What did each sensor or device pick up during the episode with {q_what} "
                f"{{when:air}}?"
            ),
            f"Walk me through how the devices registered {q_what} {{when:air}}.",
        ],
        f"Around {stamp(t1)}:",
        "air",
        subject=P,
        moments={"air": t1},
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        [
            (
                "What set off the bad-air readings {when:air}, what was done, and how long until "
                "it "
                "cleared?"
            ),
            "Explain the air-quality incident {when:air} from start to finish.",
        ],
        f"{fact[0].upper() + fact[1:]} on {stamp(t1)}, sending the reading to {reading} "
        f"({unit}); {P} "
        f"{remedy}, and the air was rated good again by {clock(t3)}.",
        [
            ("Spike and its cause", [pk, sp], [anchor]),
            ("Ventilation", [dr, pu, th], []),
            ("Back to good", [clear], []),
        ],
        "air",
        subject=P,
        moments={"air": t1},
    )
    return True


ITEMS = [
    ("car keys", "a bunch of keys on a red fob", "key tag"),
    ("wallet", "a brown leather wallet", "wallet tracker card"),
    ("glasses", "a black glasses case", "tracker sticker on the case"),
]


@template("lost_item", span=2)
def lost_item(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    p = ep.pick([q for q in hh.residents if q.kind in ("adult", "elder") and hh.phone(q.name)])
    if p is None:
        return False
    P, x = p.name, p.pron
    item, look, tag = r.choice([i for i in ITEMS if i[0] != "car keys" or hh.car(P)])
    spot = r.choice(["bookshelf by the window", "shoe rack", "fruit bowl", "piano lid"])
    d = min(ep.day0, 3)
    ep.plan.title = f"{P} loses the {item}"
    ep.keep_home(P, d + 1, evening=False)
    t1 = ep.jitter(d, 20, 0, 50)
    e1 = ep.event(t1, [P], "living_room", f"{P} put the {item} down on the {spot} while on a call")
    seen = ep.view(
        e1,
        hh.shared("indoor_camera") or hh.shared("smart_display"),
        "vision",
        [
            f"{P} on the phone, absent-mindedly setting {look} down on the {spot}",
            f"{P} talking on the phone and leaving {look} on the {spot} before walking off",
        ],
        gist=f"showed {P} leaving {look} on the {spot}",
        anchors=(spot,),
    )
    t2 = ep.at(
        d + 1, p.leave // 60 if p.work else 9, (p.leave % 60 if p.work else 0) + r.randint(0, 4)
    )
    e2 = ep.event(t2, [P], "hallway", f"{P} could not find the {item} when leaving", causes=[e1])
    shout = ep.view(
        e2,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            f'{P} shouting "has anyone seen my {item}? I\'m going to be late"',
            f"{P} asking around the house for {x['his']} {item}, sounding rushed",
        ],
        gist=f"heard {P} searching for the {item}",
        anchors=(item,),
    )
    mot = ep.view(
        e2,
        hh.shared("motion_sensor"),
        "motion",
        [
            "repeated back-and-forth movement through the hallway for 11 minutes",
            "continuous hallway triggers for 11 minutes, far more than a normal departure",
        ],
        offset=2,
        gist="detected 11 minutes of back-and-forth in the hallway",
        anchors=("11 minutes",),
        people=[P],
    )
    t3 = t2 + _m(r.randint(8, 13))
    e3 = ep.event(t3, [P], "living_room", f"{P} used the tracker to find the {item}", causes=[e2])
    app = ep.view(
        e3,
        hh.phone(P),
        "app_usage",
        [
            f"the Find My app ringing the {tag} for 30 seconds; last seen 'living room'",
            f"a 'play sound' request to the {tag} in the tracking app, location 'living room'",
        ],
        gist=f"showed {P} ringing the {tag} from the tracking app",
        anchors=("living room",),
    )
    found = ep.view(
        e3,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            f'a faint electronic chirp and {P} saying "on the {spot}! why on earth…"',
            f"a beeping tag and {P} exclaiming that the {item} were on the {spot}"
            if item.endswith("s")
            else f"a beeping tag and {P} exclaiming the {item} was on the {spot}",
        ],
        offset=1,
        gist=f"heard the tag chirp and {P} find it on the {spot}",
        anchors=(spot,),
    )
    t4 = t3 + _m(r.randint(3, 6))
    late = r.randint(17, 28)
    e4 = ep.event(t4, [P], "front_door", f"{P} left {late} minutes late", causes=[e3])
    lk = ep.view(
        e4,
        hh.shared("smart_lock"),
        "location",
        [
            (
                f"the door locked from outside by {P} at {clock(t4)}, {late} minutes later than "
                f"{x['his']} usual weekday departure"
            ),
            f"{P}'s departure lock at {clock(t4)}, {late} minutes behind {x['his']} normal time",
        ],
        gist=f"logged {P} leaving {late} minutes late",
        anchors=(f"{late} minutes",),
        people=[P],
    )
    msg = ep.view(
        e4,
        hh.phone(P),
        "dialogue",
        [
            (
                f"{P} told a colleague {x['he']} would be about twenty minutes late because of the "
                f"{item}"
            ),
            f"{P} said {x['he']} was running late after hunting for the {item}",
        ],
        offset=2,
        gist=f"noted {P} warning that {x['he']} would be late",
        anchors=("late",),
    )
    t5 = ep.jitter(d + 1, 19, 0, 50)
    e5 = ep.event(t5, [P], "hallway", f"{P} put up a hook for the {item} by the door", causes=[e4])
    ep.view(
        e5,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            f'drilling in the hallway and {P} saying "right, from now on they live on this hook"',
            f"a drill and {P} announcing a new hook by the front door",
        ],
        gist=f"heard {P} put up a hook by the door",
        anchors=("hook",),
    )
    ep.view(
        e5,
        hh.shared("motion_sensor"),
        "motion",
        [
            "continuous movement in the hallway for 14 minutes",
            "14 minutes of steady hallway activity",
        ],
        offset=2,
        gist="detected 14 minutes of activity in the hallway",
        anchors=("14",),
        people=[P],
    )
    ep.ask(
        "causal",
        ep.asker(P),
        [
            f"Why did {P} leave so late {{when:late}}?",
            f"What held {P} up on the way out {{when:late}}?",
        ],
        f"{P} had left the {item} on the {spot} during a phone call on {stamp(t1)}; the next "
        "morning "
        f"{x['he']} searched the hallway for about 11 minutes, found them with the {tag} in the "
        "tracking "
        f"app, and locked up {late} minutes later than usual.",
        [
            (f"{item.capitalize()} left on the {spot}", [seen], [spot]),
            ("Search in the hallway", [shout, mot], ["11 minutes"]),
            ("Found via the tracker", [app, found], []),
            (f"Left {late} minutes late", [lk, msg], [f"{late} minutes"]),
        ],
        "lost_item",
        subject=P,
        moments={"late": t4},
    )
    ep.ask(
        "user_query",
        P,
        [
            f"Where did I leave my {item}, and how did I find them again?"
            if item.endswith("s")
            else f"Where did I leave my {item}, and how did I find it again?",
            f"I lost my {item} {{when:late}} — where were they and what gave them away?"
            if item.endswith("s")
            else f"I lost my {item} {{when:late}} — where was it?",
        ],
        f"You put them on the {spot} while on a call the evening before; you rang the {tag} from "
        f"the tracking app and heard it chirp there.",
        [(f"On the {spot}", [seen, found], [spot]), (f"Found by ringing the {tag}", [app], [])],
        "lost_item",
        subject=P,
        moments={"late": t4},
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        [
            (
                f"Where had {P}'s {item} been all night, how were they tracked down, and how late "
                f"did {P} leave?"
            )
            if item.endswith("s")
            else (
                f"Where had {P}'s {item} been all night, how was it tracked down, and how late "
                f"did {P} leave?"
            ),
            (
                f"Sum up {P}'s search {{when:late}}: where the {item} turned up and the knock-on "
                "delay."
            ),
        ],
        f"The {item} had been on the {spot} since {stamp(t1)}; the next morning {P} searched for "
        "about "
        f"11 minutes, rang the {tag} and heard it there, and left {late} minutes late at "
        f"{clock(t4)}.",
        [
            (f"Left on the {spot}", [seen], [spot]),
            ("Search and tracker", [mot, app, found], []),
            (f"{late} minutes late", [lk, msg], [f"{late} minutes"]),
        ],
        "lost_item",
        subject=P,
        moments={"late": t4},
    )
    ep.perspective(
        [e2, e3],
        ep.asker(P),
        [
            f"What did the devices pick up while {P} hunted for the {item} {{when:late}}?",
            "Device by device, what was recorded during the search {when:late}?",
        ],
        f"During the search on {stamp(t2)}:",
        "lost_item",
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
    hh, r = ep.hh, ep.r
    thermo = hh.shared("smart_thermostat")
    A, B = a.name, b.name
    d = min(ep.day0, 5)
    ep.plan.title = f"{A} and {B} argue about the heating"
    bill = r.randint(180, 260)
    t1 = ep.jitter(d, 20, 0, 20)
    e1 = ep.event(t1, [B], "living_room", f"{B} turned the heating up to 23 °C")
    up = ep.view(
        e1,
        thermo,
        "environment",
        [
            "a manual setpoint change from 19.5 to 23.0 °C at the wall unit, room at 19.2 °C",
            (
                "the target temperature raised by hand to 23.0 °C from 19.5 °C while the room read "
                "19.2 °C"
            ),
        ],
        gist="measured the setpoint raised to 23 °C by hand",
        anchors=("23",),
        people=[B],
    )
    t2 = t1 + _m(r.randint(25, 45))
    e2 = ep.event(t2, [A], "living_room", f"{A} turned it back down from the app", causes=[e1])
    down = ep.view(
        e2,
        hh.phone(A),
        "app_usage",
        [
            (
                "the heating app used for 1 minute to set the living room back to 19.0 °C and lock "
                "the schedule"
            ),
            "a quick visit to the heating app: target 19.0 °C, schedule locked",
        ],
        gist=f"showed {A} setting 19 °C from the heating app",
        anchors=("19.0",),
    )
    row = ep.view(
        e2,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            (
                f'raised voices: {B} saying "it\'s freezing in here" and {A} answering "put a '
                "jumper on, the "
                f'last gas bill was £{bill}"'
            ),
            (
                f"an argument, {A} mentioning the £{bill} gas bill and {B} complaining about being "
                "cold"
            ),
        ],
        offset=3,
        gist=f"heard the argument, with {A} citing the £{bill} gas bill",
        anchors=(f"£{bill}",),
        people=[A, B],
    )
    t3 = ep.jitter(d + 1, 19, 0, 40)
    e3 = ep.event(t3, [A, B], "kitchen", "they agreed a compromise schedule", causes=[e2])
    deal = ep.view(
        e3,
        hh.shared("smart_display") or hh.shared("smart_speaker"),
        "dialogue",
        [
            (
                f"{A} and {B} agreed on 21 °C in the evenings and 17 °C overnight, with a blanket "
                "on the sofa"
            ),
            (
                f"the agreed rule is 21 degrees from 6 to 10 pm and 17 overnight, {B} gets the "
                "sofa "
                "blanket"
            ),
        ],
        gist="noted the compromise: 21 °C evenings, 17 °C overnight",
        anchors=("21",),
        people=[A, B],
    )
    sched = ep.view(
        e3,
        thermo,
        "environment",
        [
            (
                "a new schedule: 21.0 °C from 18:00 to 22:00 and 17.0 °C overnight, room currently "
                "20.6 °C"
            ),
            "the schedule updated to 21 °C evenings and 17 °C at night; current 20.6 °C",
        ],
        offset=5,
        gist="measured the new schedule in place (21 °C evenings, 17 °C nights)",
        anchors=("17",),
    )
    t4 = ep.at(min(d + 2, 6), 20, r.randint(0, 40))
    e4 = ep.event(
        t4, [A, B], "living_room", "the new heating rule held the next evening", causes=[e3]
    )
    ep.view(
        e4,
        thermo,
        "environment",
        [
            "20.9 °C in the living room with the evening setpoint of 21.0 °C being held",
            "the room at 20.9 °C, tracking the 21 °C evening target",
        ],
        gist="measured the room holding the new 21 °C evening setting",
        anchors=("21",),
    )
    ep.view(
        e4,
        hh.shared("indoor_camera") or hh.shared("smart_display"),
        "vision",
        [
            f"{B} on the sofa under a fleece blanket next to {A}, both watching TV",
            f"{A} and {B} sharing the sofa, {B} wrapped in a blanket",
        ],
        gist=f"showed {B} under a blanket on the sofa with {A}",
        anchors=("blanket",),
    )
    ep.ask(
        "causal",
        ep.asker(include=[A, B]),
        [
            "Why did the heating schedule change {when:deal}?",
            "How did the house end up on a new heating plan {when:deal}?",
        ],
        f"On {stamp(t1)} {B} turned the heating up to 23 °C; {A} set it back to 19 °C from the app "
        f"and they argued, {A} pointing to the £{bill} gas bill; the next evening they agreed on "
        "21 °C "
        f"in the evenings and 17 °C overnight and the schedule was changed.",
        [
            (f"{B} raised it to 23 °C", [up], []),
            (f"{A} set 19 °C from the app", [down], []),
            (f"Argument over the £{bill} bill", [row], [f"£{bill}"]),
            ("Compromise schedule 21/17 °C", [deal, sched], []),
        ],
        "dispute",
        subject=A,
        moments={"deal": t3},
    )
    ep.perspective(
        [e1, e2],
        ep.asker(A, B) if len(hh.people) > 2 else A,
        [
            "What did each device register of the heating row {when:row}?",
            (
                "Device by device, what was captured during the disagreement over the heating "
                "{when:row}?"
            ),
        ],
        f"On {stamp(t1)}-{clock(t2)}:",
        "dispute",
        moments={"row": t1},
    )
    ep.ask(
        "fusion",
        ep.asker(include=[A, B]),
        [
            (
                "What settings did the heating go through between the row {when:row} and the "
                "agreement?"
            ),
            (
                "Track the thermostat from the argument {when:row} to the deal: who set what, and "
                "what's the rule now?"
            ),
        ],
        f"{B} raised it by hand from 19.5 to 23 °C on {stamp(t1)}, {A} put it back to 19 °C from "
        "the app "
        f"at {clock(t2)}, and on {stamp(t3)} they agreed on 21 °C in the evenings and 17 °C "
        "overnight, "
        f"which is now the schedule.",
        [
            (f"{B}: 23 °C by hand", [up], ["23"]),
            (f"{A}: 19 °C from the app", [down], ["19.0"]),
            ("Agreed 21/17 °C", [deal, sched], []),
        ],
        "dispute",
        subject=A,
        moments={"row": t1},
    )
    return True


def _screen_dispute(ep: Ep, teen, parent, console) -> bool:
    hh, r = ep.hh, ep.r
    T, A = teen.name, parent.name
    d = min(ep.day0, 3)
    ep.plan.title = f"{A} limits {T}'s late-night gaming"
    for day in range(d, 7):
        ep.world.claim("gaming", T, day)
    game = r.choice(["Rocket League", "Fortnite", "Minecraft", "EA FC"])
    t1 = ep.at(d, 23, r.randint(30, 55))
    e1 = ep.event(t1, [T], "living_room", f"{T} was still gaming near midnight on a school night")
    c1 = ep.view(
        e1,
        console,
        "app_usage",
        [
            f"{game} running under {T}'s profile for 2 h 50 min, still in a match at {clock(t1)}",
            (
                f"{T}'s profile signed in to {game} since early evening, a match in progress at "
                f"{clock(t1)}"
            ),
        ],
        gist=f"showed {T} playing {game} near midnight",
        anchors=(game,),
    )
    light = ep.view(
        e1,
        hh.shared("motion_sensor"),
        "motion",
        [
            f"someone coming down the hallway at {clock(t1 + _m(4))} after an hour of no movement",
            f"a single hallway trigger at {clock(t1 + _m(4))}",
        ],
        offset=4,
        gist=f"detected someone coming down the hallway at {clock(t1 + _m(4))}",
        people=[A],
    )
    t2 = t1 + _m(6)
    e2 = ep.event(
        t2, [A, T], "living_room", f"{A} told {T} off and switched the console off", causes=[e1]
    )
    row = ep.view(
        e2,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            (
                f'{A} saying "it\'s nearly midnight, you\'ve got school" and {T} protesting "one '
                'more game"'
            ),
            f"{T} arguing for one more game and {A} insisting it's bedtime on a school night",
        ],
        gist=f"heard {A} and {T} argue about the late game",
        anchors=(T,),
    )
    off = ep.view(
        e2,
        console,
        "device_status",
        [
            "powered off from the button, not from the menu, mid-match",
            "a hard power-off during an online match",
        ],
        offset=1,
        gist="reported a hard power-off mid-match",
    )
    t3 = ep.jitter(d + 1, 7, 10, 40)
    e3 = ep.event(t3, [A], "kitchen", f"{A} set a school-night limit", causes=[e2])
    lim = ep.view(
        e3,
        hh.phone(A),
        "app_usage",
        [
            (
                f"the family-controls app: a 22:00 cut-off and 2-hour daily limit on {T}'s "
                "console profile "
                f"for Sunday to Thursday"
            ),
            (
                f"{A} configuring parental controls — {T}'s console time capped at 2 hours, "
                "lights-out 22:00 "
                f"on school nights"
            ),
        ],
        gist=f"showed {A} setting a 22:00 cut-off and 2-hour limit for {T}",
        anchors=("22:00",),
    )
    t4 = ep.at(d + 1, 22, 0)
    e4 = ep.event(t4, [T], "living_room", "the console shut down at the new cut-off", causes=[e3])
    cut = ep.view(
        e4,
        console,
        "device_status",
        [
            f"an automatic shutdown at 22:00 by parental controls, {T}'s profile",
            f"parental-control shutdown at 22:00 ending {T}'s session",
        ],
        gist="reported the automatic 22:00 shutdown",
        anchors=("22:00",),
    )
    ph = ep.view(
        e4,
        hh.phone(T),
        "app_usage",
        [
            f"{T} switching to a video app at 22:01 for 25 minutes",
            (f"25 minutes of videos on {T}'s phone straight after 22:00"),
        ],
        offset=1,
        gist=f"showed {T} moving to videos on the phone right after",
        anchors=("25",),
    )
    ep.ask(
        "causal",
        ep.asker(T, A, include=[A]),
        [
            "Why did the console switch itself off {when:cut}?",
            "What's behind the console shutting down by itself {when:cut}?",
        ],
        f"{T} was still playing {game} near midnight on {stamp(t1)}; {A} came down, argued with "
        f"{T} and hard-switched the console off, then the next morning set a 22:00 cut-off and "
        "2-hour "
        f"school-night limit, which shut the console down at 22:00.",
        [
            (f"{T} gaming near midnight", [c1, light], []),
            ("The argument and hard power-off", [row, off], []),
            ("Limit set in the family-controls app", [lim], ["22:00"]),
            ("Automatic shutdown", [cut], []),
        ],
        "gaming",
        subject=T,
        moments={"cut": t4},
    )
    ep.ask(
        "fusion",
        A,
        [
            f"Did the new rules actually stop {T}'s screen time {{when:cut}}?",
            f"After the limits went on, what did {T} do at the cut-off {{when:cut}}?",
        ],
        f"The console shut down at 22:00 as set, but {T} immediately moved to videos on "
        f"{teen.pron['his']} phone for about 25 minutes, so screen time continued.",
        [
            ("Console auto-shutdown at 22:00", [cut], ["22:00"]),
            ("Limit had been configured", [lim], []),
            ("25 minutes of phone videos afterwards", [ph], ["25"]),
        ],
        "gaming",
        subject=T,
        moments={"cut": t4},
    )
    ep.perspective(
        [e1, e2],
        ep.asker(T),
        [
            "What did each device register of the late-night gaming row {when:row}?",
            "How did the house's devices capture the console argument {when:row}?",
        ],
        f"Around {stamp(t1)}:",
        "gaming",
        subject=T,
        moments={"row": t1},
    )
    return True


@template("package_delivery", span=2)
def package_delivery(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    p = ep.pick(
        [q for q in hh.residents if q.kind in ("adult", "teen", "elder") and hh.phone(q.name)]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    thing = r.choice(
        [
            "a cordless drill",
            "a pair of trail-running shoes",
            "a birthday present",
            "a replacement phone charger",
            "a set of garden chairs",
        ]
    )
    neighbour = r.choice(["No. 14", "No. 9", "the flat downstairs", "No. 22"])
    carrier = r.choice(["DPD", "Evri", "Royal Mail", "Yodel"])
    d = max(1, min(ep.day0, 4))
    ep.plan.title = f"{P}'s parcel goes to the neighbours"
    t0 = ep.jitter(max(d - 1, 0), 21, 0, 40)
    e0 = ep.event(t0, [P], "home", f"{P} ordered {thing}")
    order = ep.view(
        e0,
        hh.phone(P),
        "app_usage",
        [
            f"an order confirmation for {thing}, delivery by {carrier} on {day_label(ep.at(d, 9))}",
            f"{thing} bought online with {carrier} delivery due {day_label(ep.at(d, 9))}",
        ],
        gist=f"showed the order of {thing} with {carrier} delivery",
        anchors=(carrier,),
    )
    t1 = ep.jitter(d, 11, 5, 50)
    e1 = ep.event(
        t1,
        [],
        "front_door",
        f"the {carrier} courier got no answer and left the parcel at {neighbour}",
        causes=[e0],
    )
    cam = ep.view(
        e1,
        hh.shared("doorbell_camera"),
        "vision",
        [
            (
                f"a courier in a {carrier} jacket ringing twice, waiting about 40 seconds and "
                "walking off with "
                f"a box towards {neighbour}"
            ),
            f"a {carrier} driver at the door with a medium box, no answer, then heading next door",
        ],
        gist=f"showed the {carrier} courier get no answer and take the box towards {neighbour}",
        anchors=(carrier,),
    )
    heard = ep.view(
        e1,
        hh.shared("smart_speaker"),
        "audio",
        [
            "the doorbell chime twice and nobody coming to the door",
            "two doorbell rings with no one answering",
        ],
        gist="heard the doorbell ring twice with nobody answering",
        anchors=("doorbell",),
    )
    note = ep.view(
        e1,
        hh.phone(P),
        "app_usage",
        [
            (
                f"a {carrier} notification: 'Delivered to your neighbour at {neighbour}', photo "
                "attached"
            ),
            f"a push alert from {carrier}: parcel left with {neighbour}",
        ],
        offset=3,
        gist=f"showed the alert that it was left with {neighbour}",
        anchors=(neighbour,),
    )
    t2 = ep.jitter(d, 18, 20, 59)
    e2 = ep.event(t2, [P], "front_door", f"{P} fetched the parcel from {neighbour}", causes=[e1])
    out = ep.view(
        e2,
        hh.shared("doorbell_camera"),
        "vision",
        [
            f"{P} going out empty-handed and coming back four minutes later carrying a box",
            f"{P} stepping out and returning with a cardboard box under one arm",
        ],
        gist=f"showed {P} going out and returning with the box",
        anchors=("box",),
    )
    lk = ep.view(
        e2,
        hh.shared("smart_lock"),
        "location",
        [
            f"the door unlocked from outside with {P}'s phone key at {clock(t2 + _m(4))}",
            f"a phone-key unlock by {P} at {clock(t2 + _m(4))}",
        ],
        offset=4,
        gist=f"logged {P} letting {x['him']}self back in",
        anchors=(P,),
        people=[P],
    )
    t3 = t2 + _m(r.randint(10, 40))
    e3 = ep.event(t3, [P], "living_room", f"{P} unpacked {thing}", causes=[e2])
    ep.view(
        e3,
        hh.shared("indoor_camera") or hh.shared("smart_display"),
        "vision",
        [
            f"{P} cutting open a cardboard box and lifting out {thing}",
            f"{P} unboxing {thing} on the living-room floor",
        ],
        gist=f"showed {P} unboxing {thing}",
        anchors=(P,),
    )
    ep.view(
        e3,
        hh.phone(P),
        "app_usage",
        [
            f"a 'rate your delivery' survey from {carrier} answered with 3 stars",
            f"the {carrier} app's feedback page: 3 out of 5 for the delivery",
        ],
        offset=5,
        gist=f"showed {P} rating the {carrier} delivery 3 stars",
        anchors=("3",),
    )
    ep.ask(
        "causal",
        ep.asker(P, include=[P]),
        [
            f"Why did {P} pop out to the neighbours {{when:fetch}}?",
            f"What was {P}'s quick trip next door {{when:fetch}} about?",
        ],
        f"{P} had ordered {thing}; on {stamp(t1)} the {carrier} courier got no answer and left "
        "it "
        f"with {neighbour}, so {P} collected it that evening.",
        [
            (f"Order of {thing}", [order], [carrier]),
            ("No answer at the door", [cam, heard], []),
            (f"Left with {neighbour}", [note], [neighbour]),
            ("Collected in the evening", [out, lk], []),
        ],
        "delivery",
        subject=P,
        moments={"fetch": t2},
    )
    ep.perspective(
        [e1, e2],
        ep.asker(),
        [
            (
                "What did each device pick up about the parcel {when:drop}, from the courier's "
                "visit to its "
                "collection?"
            ),
            (
                "How did the house's devices register the failed delivery {when:drop} and what "
                "followed?"
            ),
        ],
        f"From the courier's visit on {stamp(t1)} to the evening collection:",
        "delivery",
        moments={"drop": t1},
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        [
            (
                f"What was {P}'s parcel, who looked after it during the day, and when did {P} get "
                "hold of it?"
            ),
            f"Where did {P}'s delivery end up {{when:drop}}, and when did it reach {P}?",
        ],
        f"It was {thing} from {carrier}; nobody answered at {clock(t1)} so the courier left it "
        "with "
        f"{neighbour}, and {P} collected it and let {x['him']}self back in at {clock(t2 + _m(4))}.",
        [
            (f"{thing} via {carrier}", [order], [carrier]),
            (f"Left with {neighbour}", [cam, note], [neighbour]),
            ("Collected in the evening", [out, lk], []),
        ],
        "delivery",
        subject=P,
        moments={"drop": t1},
    )
    return True
