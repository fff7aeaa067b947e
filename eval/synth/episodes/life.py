"""Storylines about plans and errands: a visit, a purchase, a deadline, a car problem, a party."""

from __future__ import annotations

from datetime import timedelta

from eval.synth.episodes.base import Ep, template
from eval.synth.personas import FEMALE, MALE
from eval.synth.timewords import clock, day_label, stamp


def _m(n: int) -> timedelta:
    return timedelta(minutes=n)


@template("visit", span=4)
def visit(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    host = ep.pick([p for p in hh.residents if p.kind in ("adult", "elder") and hh.phone(p.name)])
    if host is None:
        return False
    H, x = host.name, host.pron
    used = {p.name for p in hh.people}
    gender = r.choice("fm")
    guest = r.choice([n for n in (FEMALE if gender == "f" else MALE) if n not in used])
    ep.guests.add(guest)
    rel = r.choice(
        ["aunt", "old university friend", "cousin", "sister"]
        if gender == "f"
        else ["uncle", "old university friend", "cousin", "brother"]
    )
    g = {"he": "she", "his": "her"} if gender == "f" else {"he": "he", "his": "his"}
    arrive_day = min(max(ep.day0 + 2, 4), 5)
    ep.plan.title = f"{H}'s {rel} {guest} comes to stay"
    ep.keep_home(H, arrive_day)
    train = ep.at(arrive_day, 11, r.choice([12, 27, 42]))
    t0 = ep.jitter(ep.day0, 19, 0, 50)
    e0 = ep.event(t0, [H], "living_room", f"{H} arranged for {guest} to visit")
    call = ep.view(
        e0,
        hh.phone(H),
        "dialogue",
        [
            (
                f"{H} agreed with {x['his']} {rel} {guest} that {g['he']} will come on "
                f"{day_label(train)}, "
                f"arriving at {hh.places['station']} on the {clock(train)} train and staying two "
                "nights"
            ),
            (
                f"{guest} ({H}'s {rel}) is visiting from {day_label(train)}, train due into "
                f"{hh.places['station']} at {clock(train)}, for two nights"
            ),
        ],
        gist=f"noted the plan: {guest} arriving on the {clock(train)} train on {day_label(train)}",
        anchors=(clock(train),),
    )
    cal = ep.view(
        e0,
        hh.laptop(H) or hh.shared("smart_display"),
        "app_usage" if hh.laptop(H) else "dialogue",
        [
            f"a calendar entry '{guest} visiting — pick up {clock(train)}' across two nights",
            f"'{guest} staying' added to the calendar with a {clock(train)} station pickup",
        ]
        if hh.laptop(H)
        else [
            f"{H} asked to remember that {guest} arrives at {clock(train)} on {day_label(train)}",
            f"{H} wants a reminder about collecting {guest} at {clock(train)}",
        ],
        offset=6,
        gist=f"recorded the pickup at {clock(train)}",
        anchors=(clock(train),),
    )
    t1 = ep.jitter(arrive_day - 1, 16, 0, 40)
    e1 = ep.event(t1, [H], "home", "the house was cleaned and the spare bed made up", causes=[e0])
    vac = ep.view(
        e1,
        hh.shared("robot_vacuum"),
        "device_status",
        [
            (
                "an extra full-house 'deep clean' run started from the app outside the normal "
                "schedule, "
                "71 minutes"
            ),
            "an unscheduled deep-clean run of all rooms, 71 minutes",
        ],
        gist="reported an unscheduled 71-minute deep clean",
        anchors=("71",),
    )
    wash = ep.view(
        e1,
        hh.shared("smart_washer_dryer"),
        "device_status",
        [
            "a 'Bedding 60' programme followed by a 90-minute dry",
            "bed linen washed on the 60 °C bedding cycle and tumble-dried",
        ],
        offset=20,
        gist="reported a bedding wash and dry",
        anchors=("edding",),
    )
    tidy = ep.view(
        e1,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            (
                f'{H} saying "{guest} will be here tomorrow, can everyone clear their stuff off '
                "the "
                'spare bed"'
            ),
            f"{H} asking the household to tidy up before {guest} arrives tomorrow",
        ],
        offset=-30,
        gist=f"heard {H} ask everyone to tidy up for {guest}",
        anchors=(guest,),
    )
    t2 = train - _m(r.randint(22, 30))
    e2 = ep.event(t2, [H], hh.places["station"], f"{H} drove to collect {guest}", causes=[e0])
    car = ep.view(
        e2,
        hh.car(H) or hh.phone(H),
        "location",
        [
            (
                f"a drive to {hh.places['station']} pick-up bay, waiting there {r.randint(18, 31)} "
                "minutes"
            ),
            (
                f"a trip ending at {hh.places['station']} short-stay parking shortly before "
                f"{clock(train)}"
            ),
        ],
        gist=f"logged the trip to {hh.places['station']}",
        anchors=(hh.places["station"],),
        place="car" if hh.car(H) else hh.places["station"],
    )
    t3 = train + _m(r.randint(28, 40))
    e3 = ep.event(t3, [H, guest], "front_door", f"{guest} arrived at the house", causes=[e2])
    door = ep.view(
        e3,
        hh.shared("doorbell_camera"),
        "vision",
        [
            (
                f"{H} and a {'woman' if gender == 'f' else 'man'} with a wheeled suitcase and a "
                "bunch of "
                f"flowers coming up the path"
            ),
            f"{H} arriving with a visitor pulling a small suitcase, flowers in hand",
        ],
        gist=f"showed {H} arriving with a visitor and a suitcase",
        anchors=("suitcase",),
    )
    ep.view(
        e3,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            'excited greetings and a voice saying "look at you all! the train was packed"',
            "hellos in the hallway and a visitor laughing about a crowded train",
        ],
        offset=2,
        gist="heard the visitor being greeted",
        anchors=("train",),
    )
    lk = ep.view(
        e3,
        hh.shared("smart_lock"),
        "location",
        [
            f"the door unlocked with {H}'s phone key at {clock(t3)}",
            f"{H}'s phone key unlocking the door at {clock(t3)}",
        ],
        gist=f"logged {H}'s unlock",
        anchors=(H,),
        people=[H],
    )
    t4 = ep.at(min(arrive_day + 2, 6), 15, r.randint(0, 40))
    e4 = ep.event(t4, [H, guest], "front_door", f"{guest} left to go home", causes=[e3])
    bye = ep.view(
        e4,
        hh.shared("doorbell_camera"),
        "vision",
        [
            f"the visitor leaving with the suitcase, hugging {H} on the doorstep",
            f"{H} waving off the visitor and the suitcase at the gate",
        ],
        gist=f"showed {guest} leaving with the suitcase",
        anchors=("suitcase",),
    )
    ep.ask(
        "causal",
        ep.asker(H),
        [
            "Why was there a big clean-up {when:clean}?",
            "What was the extra cleaning and laundry {when:clean} for?",
        ],
        f"{H}'s {rel} {guest} was coming to stay: on {stamp(t0)} {H} arranged the visit "
        f"(train at {clock(train)} on {day_label(train)}); the day before, the house got an "
        f"unscheduled deep clean and the bedding was washed, and {H} collected {guest} from "
        f"{hh.places['station']}.",
        [
            (f"Visit of {guest} arranged", [call, cal], [clock(train)]),
            ("Deep clean and bedding wash", [vac, wash, tidy], []),
            (f"{H} collected {guest}", [car, door], []),
        ],
        "visit",
        subject=H,
        moments={"clean": t1},
    )
    ep.ask(
        "fusion",
        ep.asker(),
        [
            f"How long was {guest} with us, and how did {g['he']} get here?",
            f"When did {H}'s {rel} arrive and leave, and by what means did {g['he']} come?",
        ],
        f"{guest} came by train to {hh.places['station']} ({clock(train)} on "
        f"{day_label(train)}), was "
        f"picked up by {H} and reached the house at {clock(t3)}; {g['he']} left on {stamp(t4)}, "
        "two "
        f"nights later.",
        [
            (f"Train at {clock(train)}", [call], [clock(train)]),
            ("Picked up at the station", [car], []),
            (f"Arrived at {clock(t3)}", [door, lk], []),
            (f"Left on {day_label(t4)}", [bye], []),
        ],
        "visit",
        subject=H,
    )
    ep.perspective(
        [e2, e3],
        ep.asker(),
        [
            "What did each device register as our guest was collected and turned up {when:arr}?",
            (
                "Device by device, how was the visitor's arrival {when:arr} captured, from the "
                "station run "
                "to the front door?"
            ),
        ],
        f"From the station run to the arrival on {stamp(t3)}:",
        "visit",
        moments={"arr": t3},
    )
    return True


PURCHASES = [
    ("standing desk", "£349", "two long flat boxes", "assembling a desk frame with an Allen key"),
    ("e-bike", "£1,180", "a huge bike box", "unboxing a bike and fitting the pedals"),
    ("mattress", "£520", "a rolled mattress in plastic", "unrolling a new mattress in the bedroom"),
    ("bean-to-cup coffee machine", "£289", "a heavy square box", "setting up a coffee machine"),
]


@template("purchase", span=4)
def purchase(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    buyer = ep.pick([p for p in hh.residents if p.kind in ("adult", "elder") and hh.phone(p.name)])
    if buyer is None:
        return False
    B = buyer.name
    item, price, box, setup = r.choice(
        PURCHASES
        if buyer.kind != "elder"
        else PURCHASES[2:]
        + [
            (
                "riser recliner chair",
                "£640",
                "a large upright box",
                ("sitting in a new armchair trying the riser buttons"),
            )
        ]
    )
    other = ep.other_adult(B)
    O = other.name if other else B
    d = min(ep.day0, 3)
    ep.plan.title = f"{B} buys a {item}"
    ep.keep_home(O, d + 3)
    t0 = ep.jitter(d, 21, 0, 40)
    e0 = ep.event(t0, [B], "home", f"{B} researched {item}s")
    res = ep.view(
        e0,
        hh.laptop(B) or hh.tablet(B) or hh.phone(B),
        "app_usage",
        [
            (
                f"{r.randint(35, 55)} minutes comparing {item}s across three shops and a review "
                "video "
                f"'Best {item}s under £{int(price.strip('£').replace(',', '')) + 50}'"
            ),
            f"a long browsing session on {item} reviews and price comparisons",
        ],
        gist=f"showed {B} comparing {item}s",
        anchors=(item,),
    )
    t1 = ep.jitter(d + 1, 19, 0, 40)
    e1 = ep.event(t1, [B, O], "kitchen", f"{B} and {O} agreed on the purchase", causes=[e0])
    talk = ep.view(
        e1,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "dialogue",
        [
            f"{B} and {O} agreed to buy the {item} at {price} if it can be delivered by the weekend"
            if O != B
            else f"{B} decided to buy the {item} at {price} if delivery is before the weekend",
            f"the decision to go for the {price} {item} as long as delivery is quick",
        ],
        gist=f"noted the decision to buy the {item} at {price}",
        anchors=(price,),
        people=[B, O],
    )
    t2 = t1 + _m(r.randint(10, 30))
    e2 = ep.event(t2, [B], "kitchen", f"{B} ordered the {item}", causes=[e1])
    order = ep.view(
        e2,
        hh.phone(B),
        "app_usage",
        [
            f"an order confirmation: {item}, {price}, delivery {day_label(ep.at(d + 3, 9))}",
            f"checkout for the {item} at {price} with delivery on {day_label(ep.at(d + 3, 9))}",
        ],
        gist=f"showed the order confirmation at {price}",
        anchors=(price,),
    )
    t3 = ep.jitter(d + 3, 10, 0, 50)
    e3 = ep.event(t3, [O], "front_door", f"the {item} was delivered", causes=[e2])
    drop = ep.view(
        e3,
        hh.shared("doorbell_camera"),
        "vision",
        [
            f"two couriers carrying {box} up the path",
            f"a courier wheeling {box} to the door on a trolley",
        ],
        gist=f"showed {box} being delivered",
        anchors=(box.split()[-1],),
    )
    lk = ep.view(
        e3,
        hh.shared("smart_lock"),
        "location",
        [
            f"the door opened from inside at {clock(t3 + _m(1))} and left unlocked for 6 minutes",
            f"an inside unlock at {clock(t3 + _m(1))}, door unbolted for 6 minutes",
        ],
        offset=1,
        gist="logged the door opened for the delivery",
        anchors=("6 minutes",),
    )
    t4 = ep.jitter(d + 3, 18, 0, 40)
    e4 = ep.event(t4, [B], "home", f"{B} set up the {item}", causes=[e3])
    cam = ep.view(
        e4,
        hh.shared("indoor_camera") or hh.shared("smart_display"),
        "vision",
        [
            f"{B} {setup} amid cardboard and polystyrene",
            f"{B} {setup}, packaging all over the floor",
        ],
        gist=f"showed {B} {setup}",
        anchors=(B,),
    )
    swear = ep.view(
        e4,
        hh.shared("smart_speaker"),
        "audio",
        [
            f'{B} reading instructions aloud and saying "step 14, where is bolt C?"',
            f"{B} muttering about missing bolts while following an instruction leaflet",
        ],
        offset=25,
        gist=f"heard {B} struggling with the instructions",
        anchors=("bolt",),
    )
    ep.ask(
        "causal",
        ep.asker(B),
        [
            "Why was there so much cardboard in the house {when:setup}?",
            f"What was {B} putting together {{when:setup}}, and how did it come about?",
        ],
        f"{B} had researched {item}s on {stamp(t0)}, agreed the {price} purchase the next evening, "
        f"ordered it, and it was delivered on {stamp(t3)}; {B} then set it up that evening.",
        [
            (f"Research into {item}s", [res], []),
            (f"Agreed to buy at {price}", [talk], [price]),
            ("Order placed", [order], []),
            ("Delivery", [drop, lk], []),
            ("Setting it up", [cam, swear], []),
        ],
        "purchase",
        subject=B,
        moments={"setup": t4},
    )
    ep.ask(
        "user_query",
        B,
        [
            f"What did I end up paying for the {item}, and when did it arrive?",
            f"Remind me of the price of my {item} and the day it came.",
        ],
        f"You ordered it for {price} on {stamp(t2)} and it was delivered on {stamp(t3)}.",
        [(f"Paid {price}", [order, talk], [price]), (f"Arrived {day_label(t3)}", [drop, lk], [])],
        "purchase",
        subject=B,
    )
    ep.ask(
        "fusion",
        ep.asker(B),
        [
            (
                f"What did {B} buy this week, for how much, and when was it delivered and put "
                "together?"
            ),
            f"Tell me about {B}'s big purchase: the price, the delivery and the assembly.",
        ],
        f"A {item} for {price}: agreed on {stamp(t1)}, ordered at {clock(t2)}, delivered on "
        f"{stamp(t3)} "
        f"({box}), and set up by {B} that evening.",
        [
            (f"{item} for {price}", [talk, order], [price]),
            ("Delivery", [drop, lk], []),
            ("Set up that evening", [cam, swear, e4], []),
        ],
        "purchase",
        subject=B,
        moments={},
    )
    ep.perspective(
        [e3, e4],
        ep.asker(B),
        [
            (
                f"What did each device record when the {item} was delivered and put together "
                f"{{when:drop}}?"
            ),
            "How did the house's devices register the big delivery {when:drop} and the assembly?",
        ],
        f"From the delivery on {stamp(t3)} to the evening assembly:",
        "purchase",
        subject=B,
        moments={"drop": t3},
    )
    return True


@template("deadline", span=4)
def deadline(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    p = ep.pick([q for q in hh.residents if hh.laptop(q.name) and q.kind in ("adult", "teen")])
    if p is None:
        return False
    P = p.name
    lap = hh.laptop(P)
    thing = (
        "the history coursework on the Industrial Revolution"
        if p.kind == "teen"
        else r.choice(
            ["the quarterly budget report", "a grant application", "the client pitch deck"]
        )
    )
    d = min(ep.day0, 2)
    due = ep.at(d + 2, 17, 0)
    ep.plan.title = f"{P} races to finish {thing}"
    t0 = ep.jitter(d, 9 if p.kind != "teen" else 16, 10, 40)
    e0 = ep.event(t0, [P], "home", f"{P} learned {thing} was due {day_label(due)} 17:00")
    mail = ep.view(
        e0,
        lap,
        "app_usage",
        [
            f"an email titled 'Reminder: {thing} due {day_label(due)}, 5 pm' opened and flagged",
            f"a flagged message reminding {P} that {thing} is due at 17:00 on {day_label(due)}",
        ],
        gist=f"showed the reminder that {thing} was due {day_label(due)} 17:00",
        anchors=(day_label(due),),
    )
    late_views = []
    prev = e0
    for i in range(2):
        night = d + i
        t = ep.at(night + 1, 1, r.randint(5, 40))
        ev = ep.event(t, [P], "home", f"{P} worked past 1 am", causes=[prev])
        hours = r.randint(4, 6)
        v = ep.view(
            ev,
            lap,
            "app_usage",
            [
                (
                    f"{hours} hours of continuous use in the word processor and spreadsheet, "
                    "last keystroke "
                    f"at {clock(t)}"
                ),
                (
                    f"document editing from the evening until {clock(t)}, {hours} hours without "
                    "a break over "
                    f"15 minutes"
                ),
            ],
            gist=f"showed {P} working until {clock(t)}",
            anchors=(clock(t),),
        )
        late_views.append(v)
        sleep_min = r.randint(250, 300)
        s = ep.view(
            ev,
            hh.watch(P),
            "health",
            [
                (
                    f"{P}'s sleep that night: {sleep_min // 60} h {sleep_min % 60:02d} min, "
                    "heart rate "
                    f"staying above 70 bpm for the first hour"
                ),
                f"a short night of {sleep_min // 60} h {sleep_min % 60:02d} min for {P}",
            ],
            offset=r.randint(330, 380),
            gist=f"recorded only {sleep_min // 60} h {sleep_min % 60:02d} min of sleep",
            anchors=(f"{sleep_min // 60} h {sleep_min % 60:02d} min",),
            facts={"topic": "sleep", "person": P, "day": night, "value": sleep_min},
        )
        if s is not None:
            ep.world.claim("sleep", P, night)
        late_views.append(s)
        prev = ev
    t2 = due - _m(r.randint(12, 50))
    e2 = ep.event(t2, [P], "home", f"{P} submitted {thing} just before the deadline", causes=[prev])
    sub = ep.view(
        e2,
        lap,
        "app_usage",
        [
            f"an upload confirmation for {thing} at {clock(t2)}",
            f"'{thing}' submitted through the portal at {clock(t2)}, receipt saved",
        ],
        gist=f"showed the submission at {clock(t2)}",
        anchors=(clock(t2),),
    )
    joy = ep.view(
        e2,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            f'{P} shouting "done! sent it with minutes to spare"',
            f"{P} cheering that it was finally sent",
        ],
        offset=3,
        gist=f"heard {P} celebrate sending it",
        anchors=(P,),
    )
    t3 = ep.at(d + 2, 19, r.randint(0, 30))
    e3 = ep.event(t3, [P], "home", f"{P} celebrated with a takeaway", causes=[e2])
    ep.view(
        e3,
        hh.phone(P),
        "app_usage",
        [
            (
                f"a takeaway order from a Thai restaurant, £{r.randint(24, 41)}.50, note "
                "'celebration!'"
            ),
            "a food-delivery order of pad thai and green curry, tip added",
        ],
        gist="showed a celebratory takeaway order",
    )
    ep.ask(
        "causal",
        ep.asker(P),
        [
            f"Why was {P} up so late on consecutive nights {{week}}?",
            f"What kept {P} working into the early hours {{week}}?",
        ],
        f"{thing[0].upper() + thing[1:]} was due on {day_label(due)} at 17:00 (reminder on "
        f"{stamp(t0)}); "
        f"{P} worked past 1 am two nights running, sleeping only about four to five hours, and "
        f"submitted it at {clock(t2)} on the deadline day.",
        [
            ("Deadline reminder", [mail], [day_label(due)]),
            ("Two late nights on the laptop", [v for v in late_views[::2] if v], []),
            ("Short sleep on those nights", [v for v in late_views[1::2] if v], []),
            (f"Submitted at {clock(t2)}", [sub, joy], [clock(t2)]),
        ],
        "deadline",
        subject=P,
    )
    if hh.watch(P):
        short_nights = [
            v.gist.split("only ")[-1].replace(" of sleep", "") for v in late_views[1::2] if v
        ]
        ep.ask(
            "user_query",
            P,
            [
                "How little did I sleep while I was finishing that deadline?",
                "What did my nights look like while I was rushing to submit my work?",
            ],
            f"You worked until after 1 am two nights in a row and slept only "
            f"{' and '.join(short_nights)}.",
            [
                ("Late finishes on the laptop", [v for v in late_views[::2] if v], []),
                (
                    "Short nights on the watch",
                    [v for v in late_views[1::2] if v],
                    [a for v in late_views[1::2] if v for a in v.anchors],
                ),
            ],
            "sleep",
            subject=P,
        )
    ep.ask(
        "fusion",
        ep.asker(P),
        [
            (
                f"When was {P}'s piece of work due, when did it actually go in, and how was it "
                "celebrated?"
            ),
            (
                f"Give me the timeline of {P}'s deadline {{week}}: due date, late nights, "
                "submission, celebration."
            ),
        ],
        f"It was due {day_label(due)} at 17:00; after two nights working past 1 am {P} submitted "
        "it at "
        f"{clock(t2)}, cheered out loud, and ordered a celebratory takeaway at {clock(t3)}.",
        [
            ("Due date", [mail], [day_label(due)]),
            ("Late nights", [v for v in late_views if v], []),
            (f"Submitted at {clock(t2)}", [sub, joy], [clock(t2)]),
            ("Takeaway", [e3], []),
        ],
        "deadline",
        subject=P,
    )
    ep.perspective(
        [e2, e3],
        ep.asker(P),
        [
            f"What did the devices register when {P} finally submitted {{when:sub}}?",
            f"Device by device, what happened around {P}'s submission {{when:sub}}?",
        ],
        f"Around {stamp(t2)}:",
        "deadline",
        subject=P,
        moments={"sub": t2},
    )
    return True


@template("car_issue", span=3)
def car_issue(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    driver = ep.pick(hh.drivers())
    if driver is None:
        return False
    D, x = driver.name, driver.pron
    car = hh.car(D)
    garage = hh.places["garage"]
    issue = r.choice(
        [
            (
                "tyre-pressure warning",
                "the front-left tyre at 24 psi against 33 recommended",
                "a screw in the front-left tyre, which they plugged",
                28,
            ),
            (
                "battery warning",
                "the battery voltage at 11.6 V on start-up",
                "a failing 6-year-old battery, which they replaced",
                139,
            ),
            (
                "engine-management light",
                "a misfire code on cylinder 2",
                "a worn ignition coil on cylinder 2, which they replaced",
                96,
            ),
        ]
    )
    name, reading, fix, cost = issue
    d = min(ep.day0, 4)
    ep.plan.title = f"{D}'s car shows a {name}"
    ep.keep_home(D, d, evening=False)
    t1 = ep.jitter(d, 8 if driver.work else 10, 0, 30)
    e1 = ep.event(t1, [D], "car", f"a {name} came on in {D}'s car")
    warn = ep.view(
        e1,
        car,
        "dialogue",
        [
            f"{D} asked the car assistant what the orange warning meant and it explained {reading}",
            f"{D} queried the dashboard warning by voice; the assistant reported {reading}",
        ],
        gist=f"noted the warning: {reading}",
        anchors=(reading.split()[-1],),
    )
    t2 = t1 + _m(r.randint(5, 14))
    e2 = ep.event(t2, [D], garage, f"{D} diverted to {garage}", causes=[e1])
    trip = ep.view(
        e2,
        car,
        "location",
        [
            f"an unplanned stop at {garage}, parked for {r.randint(45, 80)} minutes",
            f"a detour ending at {garage} instead of the usual route",
        ],
        gist=f"logged the detour to {garage}",
        anchors=(garage,),
    )
    call = ep.view(
        e2,
        hh.phone(D),
        "dialogue",
        [
            f"{D} said {x['he']} would be late because the car needed looking at",
            f"{D} warned a colleague that the car was at the garage and {x['he']} would be late",
        ],
        offset=8,
        gist=f"noted {D} warning {x['he']} would be late because of the car",
        anchors=("late",),
    )
    t3 = t2 + _m(r.randint(50, 75))
    e3 = ep.event(t3, [D], garage, f"the garage found {fix} and charged £{cost}", causes=[e2])
    pay = ep.view(
        e3,
        hh.phone(D),
        "app_usage",
        [
            f"a card payment of £{cost}.00 to {garage}",
            f"£{cost}.00 paid at {garage} in the banking app",
        ],
        gist=f"showed £{cost} paid to {garage}",
        anchors=(f"£{cost}",),
    )
    t4 = ep.jitter(d, 18, 30, 59)
    e4 = ep.event(t4, [D], "kitchen", f"{D} told the household about the car", causes=[e3])
    told = ep.view(
        e4,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            f'{D} saying "turned out to be {fix}, £{cost}, could have been worse"',
            f"{D} telling someone the garage found {fix} and charged £{cost}",
        ],
        gist=f"heard {D} explain it was {fix}",
        anchors=(f"£{cost}",),
    )
    t5 = ep.jitter(d + 1, 8 if driver.work else 11, 0, 30)
    e5 = ep.event(t5, [D], "car", "the next drive was normal", causes=[e3])
    ok = ep.view(
        e5,
        car,
        "location",
        [
            f"a normal {r.randint(14, 25)}-minute journey on the usual route with no warnings",
            "an uneventful trip along the regular route, no dashboard alerts",
        ],
        gist="logged a normal trip with no warnings",
        anchors=("no",),
    )
    ep.ask(
        "causal",
        ep.asker(D, include=[D]),
        [
            f"Why did {D} stop at {garage} {{when:stop}}?",
            f"What made {D} take the car in {{when:stop}}?",
        ],
        f"A {name} came on during {D}'s drive on {stamp(t1)} ({reading}); {D} diverted to "
        f"{garage}, "
        f"which found {fix} and charged £{cost}.",
        [
            (f"{name.capitalize()}: {reading}", [warn], []),
            (f"Detour to {garage}", [trip, call], []),
            (f"Fix: {fix}, £{cost}", [pay, told], [f"£{cost}"]),
        ],
        "car",
        subject=D,
        moments={"stop": t2},
    )
    ep.ask(
        "user_query",
        D,
        [
            "What did the garage do to my car and what did it cost me?",
            "How much did the car repair {when:stop} set me back, and what was wrong?",
        ],
        f"They found {fix}; you paid £{cost} at {garage}, and the next drive had no warnings.",
        [
            (f"{fix}", [told, warn], []),
            (f"£{cost} paid", [pay], [f"£{cost}"]),
            ("Normal next trip", [ok], []),
        ],
        "car",
        subject=D,
        moments={"stop": t2},
    )
    ep.ask(
        "fusion",
        ep.asker(D),
        [
            (
                f"What happened with {D}'s car {{when:stop}}: the warning, the garage's verdict "
                "and "
                "whether it's fine now?"
            ),
            f"Piece together {D}'s car trouble {{when:stop}} from start to finish.",
        ],
        f"On {stamp(t1)} the car reported {reading}; {D} went to {garage} (paid £{cost}) where "
        "it was "
        f"{fix}; the next day's trip showed no warnings.",
        [
            ("Warning reading", [warn], []),
            ("Garage stop and payment", [trip, pay], [f"£{cost}"]),
            ("Explanation at home", [told], []),
            ("Normal afterwards", [ok], []),
        ],
        "car",
        subject=D,
        moments={"stop": t2},
    )
    ep.perspective(
        [e2, e3],
        ep.asker(D),
        [
            f"What did {D}'s devices each record during the garage stop {{when:stop}}?",
            f"Device by device, what was logged while {D}'s car was in the garage {{when:stop}}?",
        ],
        f"During the garage stop on {stamp(t2)}:",
        "car",
        subject=D,
        moments={"stop": t2},
    )
    return True


@template("party", span=3)
def party(ep: Ep) -> bool:
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
    ep.plan.title = f"{C}'s birthday party"
    t0 = ep.jitter(min(ep.day0, 3), 20, 0, 40)
    e0 = ep.event(t0, [A], "home", f"{A} ordered a cake and decorations for {C}'s party")
    buy = ep.view(
        e0,
        hh.phone(A) or hh.laptop(A),
        "app_usage",
        [
            (
                f"an order for a number-{age} balloon set, bunting and a chocolate drip cake for "
                "collection "
                f"on Saturday"
            ),
            (
                f"a party-supplies basket (balloons with the number {age}, bunting) and a cake "
                "order for Saturday"
            ),
        ],
        gist=f"showed an order of number-{age} balloons and a cake",
        anchors=(f"{age}",),
    )
    inv = ep.view(
        e0,
        hh.shared("smart_display") or hh.shared("smart_speaker"),
        "dialogue",
        [
            f"{A} said {r.randint(6, 11)} guests are coming to {C}'s party on Saturday at 3 pm",
            f"{A} confirmed the party is Saturday 3 pm with about {r.randint(6, 11)} guests",
        ],
        offset=10,
        gist="noted the party set for Saturday at 3 pm",
        anchors=("3 pm",),
        people=[A, C],
    )
    t1 = ep.at(day, 14, r.randint(50, 59))
    e1 = ep.event(t1, [A, C], "living_room", "guests arrived for the party", causes=[e0])
    door = ep.view(
        e1,
        hh.shared("doorbell_camera"),
        "vision",
        [
            (
                "a stream of visitors with wrapped presents and balloons, at least five arrivals "
                "in "
                "ten minutes"
            ),
            "several families arriving with gift bags, children running up the path",
        ],
        gist="showed guests arriving with presents",
    )
    party_light = hh.shared("smart_light")
    if party_light and hh.device(party_light).location not in ("living_room", "hallway", "landing"):
        party_light = None
    lights = ep.view(
        e1,
        party_light,
        "device_status",
        [
            "switched to the 'party' colour-cycle scene at full brightness",
            "a colour-cycling party scene activated",
        ],
        gist="reported the party lighting scene",
        anchors=("party",),
    )
    music = ep.view(
        e1,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            (
                "children shouting, a pop playlist at high volume and a chorus of 'happy birthday' "
                f"for {C}"
            ),
            f"the birthday song sung for {C} over loud music and laughter",
        ],
        offset=70,
        gist=f"heard 'happy birthday' being sung for {C}",
        anchors=(C,),
    )
    t2 = ep.at(day, 18, r.randint(10, 40))
    e2 = ep.event(t2, [A], "living_room", "the clean-up after the party", causes=[e1])
    vac = ep.view(
        e2,
        hh.shared("robot_vacuum"),
        "device_status",
        [
            "a spot-clean of the living room reporting the dust bin full after 14 minutes",
            "a living-room clean that stopped after 14 minutes with 'empty the bin'",
        ],
        gist="reported a post-party clean that filled its bin",
        anchors=("14",),
    )
    wash = ep.view(
        e2,
        hh.shared("smart_washer_dryer"),
        "device_status",
        [
            "a 'Mixed 40' wash started, labelled stains programme",
            "a stain-removal programme started",
        ],
        offset=20,
        gist="reported a stain-removal wash",
        anchors=("stain",),
    )
    t3 = ep.at(6, 9, r.randint(0, 50))
    e3 = ep.event(
        t3, [A, C], "kitchen", "leftovers and thank-you messages the next morning", causes=[e2]
    )
    ep.view(
        e3,
        hh.shared("smart_fridge"),
        "vision",
        [
            "half a chocolate drip cake on a plate under cling film, and a bowl of leftover crisps",
            "the remains of a chocolate cake and a stack of party sandwiches wrapped in foil",
        ],
        gist="showed leftover birthday cake in the fridge",
        anchors=("cake",),
    )
    ep.view(
        e3,
        hh.phone(A) or hh.shared("smart_speaker"),
        "dialogue",
        [
            f"{A} said {r.randint(3, 6)} parents had messaged to say thank you for the party",
            f"{A} mentioned the thank-you messages from other parents after {C}'s party",
        ],
        offset=15,
        gist="noted thank-you messages after the party",
        anchors=("thank",),
    )
    ep.perspective(
        [e1, e2],
        ep.asker(C),
        [
            (
                f"What did the house's devices each capture of {C}'s birthday party "
                f"{{when:party}} and the "
                f"tidy-up afterwards?"
            ),
            (
                f"Device by device, what was recorded while {C}'s party was going on "
                f"{{when:party}} "
                "and after?"
            ),
        ],
        f"From the party on {stamp(t1)} to the clean-up:",
        "party",
        subject=C,
        moments={"party": t1},
    )
    ep.ask(
        "causal",
        ep.asker(),
        [
            "Why did the robot vacuum fill up {when:clean}?",
            "What was the cleaning {when:clean} about?",
        ],
        f"It was the clean-up after {C}'s birthday party: {A} had ordered balloons and a cake "
        "for a "
        f"Saturday 3 pm party, guests arrived from {clock(t1)}, and afterwards the living room was "
        f"cleaned (bin full after 14 minutes) and a stain wash run.",
        [
            ("Party organised", [buy, inv], []),
            ("Guests and celebrations", [door, lights, music], []),
            ("Clean-up", [vac, wash], []),
        ],
        "party",
        subject=C,
        moments={"clean": t2},
    )
    ep.ask(
        "fusion",
        ep.asker(C),
        [
            (
                f"Who organised {C}'s party, when did the guests turn up, and how was the mess "
                "dealt with?"
            ),
            f"Put together the story of {C}'s birthday do: preparations, arrivals and clean-up.",
        ],
        f"{A} ordered the number-{age} balloons and cake and set the party for Saturday at 3 pm; "
        "guests "
        f"arrived from {clock(t1)} with presents, 'happy birthday' was sung, and from "
        f"{clock(t2)} the "
        f"robot vacuum (bin full after 14 minutes) and a stain wash dealt with the mess.",
        [
            ("Organised by " + A, [buy, inv], [f"{age}"]),
            ("Guests arrived", [door, music, lights], []),
            ("Clean-up", [vac, wash, e2], []),
        ],
        "party",
        subject=C,
        moments={},
    )
    return True
