"""Storylines about bodies: an injury, a fever, a worrying trend, bad sleep, a fall, training."""

from __future__ import annotations

from eval.synth.episodes.base import Ep, template
from eval.synth.phrasing import hours_minutes
from eval.synth.timewords import clock, day_label, stamp

BODY = {
    "ankle": {
        "limp": "walking with a pronounced limp and keeping the weight off the {side} foot",
        "limp2": "hobbling up the path, hopping every few steps and holding the gate post",
        "home": "{P} on the sofa with the {side} foot raised on two cushions and a bag of frozen "
        "peas wrapped in a tea towel on the ankle",
        "home2": "{P} lying back on the sofa, {side} foot propped up on cushions, an improvised "
        "ice "
        "pack resting over the ankle bone",
        "diag": "a grade 1 sprain of the {side} ankle",
        "qpart": "foot",
        "support": "a compression bandage and crutches for a few days",
        "short": "limping",
    },
    "knee": {
        "limp": "walking stiffly and barely bending the {side} leg",
        "limp2": (
            "coming up the path slowly, swinging the {side} leg straight instead of bending it"
        ),
        "home": "{P} on the sofa with the {side} leg stretched out on the coffee table and an ice "
        "pack strapped around the knee",
        "home2": "{P} sitting sideways on the sofa, {side} leg straight along the cushions, a "
        "blue gel "
        "ice pack tied around the knee",
        "diag": "a mild ligament strain in the {side} knee",
        "qpart": "leg",
        "support": "a hinged knee brace and no sport for a week",
        "short": "walking stiffly",
    },
    "wrist": {
        "limp": "holding the {side} arm tucked against the chest",
        "limp2": "walking up the path cradling the {side} forearm with the other hand",
        "home": "{P} at the sofa with the {side} hand resting on a cushion and an ice pack over "
        "the wrist",
        "home2": "{P} sitting with the {side} forearm propped on a pillow, a bag of frozen "
        "sweetcorn "
        "laid across the wrist",
        "diag": "a sprained {side} wrist, with no fracture on the X-ray",
        "qpart": "arm",
        "support": "a wrist splint for ten days",
        "short": "cradling the arm",
    },
}


@template("injury", span=3)
def injury(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    p = ep.pick(
        [
            q
            for q in hh.residents
            if q.kind in ("child", "teen", "adult")
            and hh.watch(q.name)
            and not ep.world.any_claim("workout", q.name)
        ]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    helper = ep.other_adult(P)
    H = helper.name if helper else P
    choices = [
        ("football", "ankle", hh.places["park"]),
        ("running", "knee", hh.places["park"]),
        ("basketball", "wrist", hh.places["gym"]),
        ("five-a-side", "ankle", hh.places["gym"]),
    ]
    if p.kind == "child":
        choices.append(("trampolining", "ankle", hh.places["park"]))
    sport, body, venue = r.choice(choices)
    side = r.choice(["left", "right"])
    doing = "out running" if sport == "running" else f"playing {sport}"
    b = {k: v.format(side=side, P=P) for k, v in BODY[body].items()}
    d = ep.day0
    t1 = ep.jitter(d, 10 if d >= 5 else 17, 5, 45)
    played, idle, cad = r.randint(22, 48), r.randint(9, 23), r.randint(148, 171)
    ep.plan.title = f"{P}'s {body} injury and its treatment"
    ep.keep_home(P, d + 1)
    ep.keep_home(H, d + 1)
    for day in range(d, min(d + 5, 7)):
        ep.world.claim("workout", P, day)
    e1 = ep.event(t1, [P], venue, f"{P} injured {x['his']} {side} {body} {doing} at {venue}")
    w1 = ep.view(
        e1,
        hh.watch(P),
        "motion",
        [
            (
                f"{P}'s {sport} session stopping abruptly after {played} minutes, cadence "
                f"falling from {cad} "
                f"steps per minute to zero within four seconds, followed by {idle} minutes of "
                "almost no movement"
            ),
            (
                f"a sudden halt {played} minutes into {P}'s {sport} session: cadence dropped "
                f"from {cad} spm to "
                f"nothing and the next {idle} minutes show barely any movement"
            ),
        ],
        gist=f"recorded the {sport} session halting abruptly after {played} minutes, then {idle} "
        f"minutes of near-stillness",
        anchors=(f"{idle} minutes",),
        place=venue,
    )
    ep.view(
        e1,
        hh.phone(P),
        "location",
        [
            (
                f"{P}'s phone stationary at the edge of {venue} for {idle + 5} minutes, well "
                "past the usual "
                f"end of the session"
            ),
            (
                f"a GPS position for {P} that stayed fixed beside the pitch at {venue} for "
                f"{idle + 5} minutes"
            ),
        ],
        offset=3,
        gist=f"placed {P} motionless at {venue} for {idle + 5} minutes",
        place=venue,
    )
    t2 = t1.replace(second=0) + _mins(r.randint(38, 70))
    e2 = ep.event(
        t2, [P] + ([H] if H != P else []), "front_door", f"{P} came home {b['short']}", causes=[e1]
    )
    dv = ep.view(
        e2,
        hh.shared("doorbell_camera"),
        "vision",
        [f"{P} {b['limp']}, a sports bag over one shoulder", f"{P} {b['limp2']}"],
        gist=f"showed {P} {b['short']} up the path",
        anchors=(P,),
    )
    lock = ep.view(
        e2,
        hh.shared("smart_lock"),
        "location",
        [
            (
                f"the front door unlocked from inside by {H} at {clock(t2 + _mins(1))}, held open "
                "for 41 seconds"
            ),
            (
                f"an unlock from the inside handle at {clock(t2 + _mins(1))} ({H}'s presence tag "
                "nearby), door "
                f"open for 41 seconds"
            ),
        ]
        if H != P
        else [
            (
                f"an unlock from outside with {P}'s phone key at {clock(t2 + _mins(1))}, door open "
                "for 41 seconds"
            ),
            (
                f"{P}'s phone key opening the door at {clock(t2 + _mins(1))}; it stayed open 41 "
                "seconds"
            ),
        ],
        offset=1,
        gist=f"logged {H} opening the door from inside for {P}"
        if H != P
        else f"logged {P} letting {x['him']}self in",
        anchors=("41 seconds",),
        people=[H, P],
    )
    t3 = t2 + _mins(r.randint(9, 18))
    e3 = ep.event(
        t3,
        [P, H],
        "living_room",
        f"{H} checked {P}'s {body}, which was swelling, and iced it",
        causes=[e2],
    )
    sp = ep.view(
        e3,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            (
                f'{H} asking "does it hurt when I press here?" and {P} answering "yes, right '
                "there, it's "
                f'getting puffy", followed by the freezer drawer sliding open'
            ),
            (
                f'{P} wincing and saying the {body} "feels fat and hot", and {H} replying "keep '
                "it up, "
                f"I'm getting something cold for it\""
            ),
        ],
        gist=f"heard {P} complain the {body} was swollen while {H} fetched something cold",
        anchors=(P,),
    )
    cam_id = hh.shared("indoor_camera") or hh.shared("smart_display")
    cam = ep.view(
        e3,
        cam_id,
        "vision",
        [b["home"], b["home2"]],
        offset=6,
        gist=f"showed {P} resting with the {body} raised and iced",
        anchors=(P,),
    )
    ep.view(
        e3,
        hh.shared("smart_fridge"),
        "device_status",
        [
            "the freezer door opened for 52 seconds, longer than its usual 10 to 15 seconds",
            "a 52-second freezer door opening, flagged as unusually long",
        ],
        offset=2,
        gist="logged the freezer door open for 52 seconds",
        anchors=("52",),
    )
    t4 = t3 + _mins(r.randint(140, 190))
    e4 = ep.event(
        t4,
        [H, P],
        "living_room",
        f"{H} looked up advice and decided {P} should be seen at "
        f"{hh.places['clinic']} the next morning",
        causes=[e3],
    )
    look = ep.view(
        e4,
        hh.phone(H),
        "app_usage",
        [
            (
                f"{r.randint(11, 19)} minutes in the NHS 111 symptom checker on the page "
                "'Sprains and strains: "
                "when to get medical help', then a search for opening hours of "
                f"{hh.places['clinic']}"
            ),
            (
                "a symptom-checker session on 'sprains and strains' followed by the "
                "opening-times page of "
                f"{hh.places['clinic']}"
            ),
        ],
        gist=f"showed {H} reading sprain advice and checking {hh.places['clinic']}'s opening hours",
        anchors=("sprains and strains",),
    )
    plan = ep.view(
        e4,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "dialogue",
        [
            (
                f"{H} said {x['he']} would take {P} to {hh.places['clinic']} when it opens at 8 "
                "and that "
                f"{P} should skip {'PE' if p.kind != 'adult' else 'the gym'} for now"
            ),
            (
                f"{H} decided {P} is going to {hh.places['clinic']} first thing in the morning "
                "and asked the "
                f"assistant for a 7:30 alarm"
            ),
        ],
        offset=4,
        gist=f"noted {H}'s plan to take {P} to {hh.places['clinic']} in the morning",
        anchors=(hh.places["clinic"],),
        people=[H, P],
    )
    rest_hr = r.randint(92, 104)
    hrv = ep.view(
        e4,
        hh.watch(P),
        "health",
        [
            f"a resting heart rate of {rest_hr} bpm, about 25 above {P}'s usual evening level",
            f"{rest_hr} bpm while sitting still, well above {P}'s typical evening resting rate",
        ],
        offset=-20,
        gist=f"recorded a raised resting heart rate of {rest_hr} bpm that evening",
        anchors=(f"{rest_hr}",),
    )
    t5 = ep.jitter(d + 1, 8, 5, 25)
    e5 = ep.event(
        t5, [H, P], hh.places["clinic"], f"{H} took {P} to {hh.places['clinic']}", causes=[e4]
    )
    drive = ep.view(
        e5,
        hh.car(H) or hh.phone(H),
        "location",
        [
            (
                f"a {r.randint(9, 16)}-minute trip from home ending at the car park of "
                f"{hh.places['clinic']}, "
                f"where it stayed for 1 h 25 min"
            ),
            f"arrival at {hh.places['clinic']} after a short drive, parked there 1 h 25 min",
        ],
        gist=f"logged the trip to {hh.places['clinic']} and a 1 h 25 min stay",
        anchors=(hh.places["clinic"],),
        place="car" if hh.car(H) else hh.places["clinic"],
    )
    wl = ep.view(
        e5,
        hh.watch(P),
        "location",
        [
            (
                f"{P}'s position inside {hh.places['clinic']} from {clock(t5 + _mins(12))} for "
                "about 80 "
                f"minutes"
            ),
            (
                f"a location fix for {P} at {hh.places['clinic']}, reception area, "
                f"{clock(t5 + _mins(12))}"
            ),
        ],
        offset=12,
        gist=f"placed {P} at {hh.places['clinic']}",
        anchors=(hh.places["clinic"],),
        place=hh.places["clinic"],
    )
    t6 = t5 + _mins(r.randint(105, 130))
    e6 = ep.event(
        t6,
        [H, P],
        "home",
        f"the clinic found {b['diag']} and prescribed {b['support']}",
        causes=[e5],
    )
    verdict = ep.view(
        e6,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            (
                f"{H} telling someone on speakerphone \"good news, it's not broken, just "
                f"{b['diag']}; they "
                f'gave {x["him"]} {b["support"]}"'
            ),
            (
                f"{H} on a call saying the nurse called it {b['diag']} and sent {P} home with "
                f"{b['support']}"
            ),
        ],
        gist=f"heard {H} relay the diagnosis: {b['diag']}, treated with {b['support']}",
        anchors=(b["diag"].split(",")[0],),
    )
    back = ep.view(
        e6,
        hh.shared("doorbell_camera"),
        "vision",
        [
            (
                f"{P} arriving back with {H}, the {body} now strapped up, moving slowly from the "
                "car to the door"
            ),
            f"{H} and {P} returning, {P}'s {body} bandaged and {x['his']} pace slow",
        ],
        offset=-6,
        gist=f"showed {P} returning with the {body} strapped up",
        anchors=(P,),
    )
    t7 = ep.jitter(d + 1, 21, 20, 45)
    steps = r.randint(1100, 2600)
    e7 = ep.event(t7, [P], "home", f"{P} barely moved the day after the injury", causes=[e6])
    st = ep.view(
        e7,
        hh.watch(P),
        "motion",
        [
            (
                f"a daily total of {steps:,} steps for {P}, the lowest of the week, with no "
                "workout "
                "logged"
            ),
            f"only {steps:,} steps for {P} across the whole day and no recorded exercise",
        ],
        gist=f"counted only {steps:,} steps for {P} the day after",
        anchors=(f"{steps:,}",),
        facts={"topic": "steps", "person": P, "day": d + 1, "value": steps},
    )
    ep.world.claim("steps", P, d + 1)
    ep.view(
        e7,
        hh.tablet(P) or hh.laptop(P) or hh.phone(P),
        "app_usage",
        [
            f"a 14-minute video, 'Gentle {body} mobility exercises after a sprain', watched twice",
            (
                f"two plays of a physiotherapy video on {body} mobility after a sprain, 14 minutes "
                "each"
            ),
        ],
        offset=-95,
        gist=f"showed {P} watching a {body} rehab video",
        anchors=("14",),
    )

    qpart = b["qpart"]
    let_in = f" and {H} let {x['him']} in" if H != P else ""
    asker = ep.asker(P, H) if len(hh.people) > 2 else H
    ep.ask(
        "causal",
        asker,
        [
            f"Why did {P} end up being seen by a nurse {{when:clinic}}?",
            f"What led to {P}'s trip to the clinic {{when:clinic}}?",
        ],
        f"{P} hurt {x['his']} {side} {body} {doing} at {venue} on {stamp(t1)}: "
        f"{ep.label(w1.device if w1 else None)} "
        f"showed the session stop abruptly with {idle} minutes of near-stillness. {P} came home "
        f"{b['short']}, the {body} swelled and was iced on the sofa, and that evening {H} read "
        "sprain advice "
        f"and planned the visit; on {stamp(t5)} the clinic found {b['diag']}.",
        [
            (
                (
                    f"The injury happened during {sport} at {venue} (abrupt stop, {idle} minutes "
                    "still)"
                ),
                [w1, e1],
                [f"{idle} minutes"],
            ),
            (f"{P} came home {b['short']} and the {body} was swollen and iced", [dv, sp, cam], []),
            (
                f"{H} looked up sprain advice and planned the clinic visit for the morning",
                [look, plan],
                [],
            ),
            (f"At {hh.places['clinic']} it was diagnosed as {b['diag']}", [drive, wl, verdict], []),
        ],
        "injury",
        subject=P,
        moments={"clinic": t5},
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        [
            (
                f"Where was {P} when {x['he']} hurt {x['his']} {qpart}, how did {x['he']} get "
                "home, and what "
                f"did the nurse conclude?"
            ),
            (
                f"Putting the devices together: what happened to {P}'s {qpart} {{when:hurt}}, "
                "and how did "
                f"it turn out?"
            ),
        ],
        f"It happened during {sport} at {venue} on {stamp(t1)} ({idle} minutes of stillness "
        "after an "
        f"abrupt stop on the watch). {P} came home {b['short']}{let_in}; the "
        "next "
        f"morning {hh.places['clinic']} diagnosed {b['diag']} and gave {b['support']}.",
        [
            (f"Hurt during {sport} at {venue}", [w1, e1], [f"{idle} minutes"]),
            (f"Came home {b['short']}, let in by {H}", [dv, lock], []),
            (f"Diagnosis: {b['diag']}", [verdict, back], []),
        ],
        "injury",
        subject=P,
        moments={"hurt": t1},
    )
    ep.perspective(
        [e2, e3],
        ep.asker(P),
        [
            f"What did each of the home devices notice when {P} got back {{when:home}}?",
            f"How did the different devices in the house register {P}'s return {{when:home}}?",
        ],
        f"When {P} came home on {stamp(t2)}:",
        "injury",
        subject=P,
        moments={"home": t2},
    )
    if w1 is not None and st is not None:
        ep.ask(
            "user_query",
            P,
            [
                (
                    "What did my watch pick up when I got hurt {when:hurt}, and how active was I "
                    "the "
                    "day after?"
                ),
                (
                    f"My {qpart} injury {{when:hurt}} — what did my watch record then and on the "
                    "following day?"
                ),
            ],
            f"Your watch showed the {sport} session stop abruptly after {played} minutes with "
            f"{idle} "
            f"minutes of almost no movement, a resting heart rate of {rest_hr} bpm that evening, "
            "your "
            f"position at {hh.places['clinic']} the next morning, and only {steps:,} steps the "
            "day after.",
            [
                ("Abrupt stop in the session, then near-stillness", [w1], [f"{idle} minutes"]),
                (f"Raised resting heart rate of {rest_hr} bpm that evening", [hrv], [f"{rest_hr}"]),
                (f"Only {steps:,} steps the following day", [st, wl], [f"{steps:,}"]),
            ],
            "injury",
            subject=P,
            moments={"hurt": t1},
        )
    return True


def _mins(n: int):
    from datetime import timedelta

    return timedelta(minutes=n)


@template("fever", span=3)
def fever(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    p = ep.pick(
        [q for q in hh.residents if q.kind in ("child", "teen", "toddler", "adult", "elder")]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    helper = ep.other_adult(P)
    H = helper.name if helper else P
    d = max(1, min(ep.day0, 4))  # the evening before falls inside the week
    ep.plan.title = f"{P} comes down with a fever"
    absent = f"{P} absent" if H != P else f"{x['him']}self off sick"
    ep.keep_home(P, d)
    ep.keep_home(H, d)
    temp1, temp2 = r.choice([38.4, 38.6, 38.9, 39.1]), r.choice([37.6, 37.8, 37.9])
    t1 = ep.jitter(d, 6, 35, 55)
    t0 = ep.at(d - 1, 18, r.randint(0, 50)) if d > 0 else ep.at(0, 0, 30)
    e0 = ep.event(t0, [P], "kitchen", f"{P} complained of a sore throat the evening before")
    ep.view(
        e0,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            (
                f"{P} saying \"my throat's scratchy, I don't want any dinner\" and a chair "
                "scraping "
                "back"
            ),
            f"{P} croaking that {x['his']} throat hurts and pushing a plate away",
        ],
        gist=f"heard {P} complain of a sore throat",
        anchors=("throat",),
    )
    ep.view(
        e0,
        hh.tablet(P) or hh.phone(P),
        "app_usage",
        [
            "a cartoon paused after 4 minutes and the tablet left idle"
            if hh.tablet(P)
            else "a half-hour of lying-down scrolling, the phone's brightness turned right down",
            "the screen left idle early in the evening, well before the usual bedtime",
        ],
        offset=40,
        gist="showed the screen left idle unusually early",
    )
    e1 = ep.event(t1, [P, H], "bedroom", f"{P} woke up hot and unwell", causes=[e0])
    wv = ep.view(
        e1,
        hh.watch(P),
        "health",
        [
            (
                f"a sleeping heart rate averaging {r.randint(96, 112)} bpm overnight and a skin "
                "temperature "
                f"{r.choice(['1.3', '1.5', '1.8'])} °C above {P}'s baseline"
            ),
            (
                f"an elevated overnight heart rate and skin temperature running "
                f"{r.choice(['1.3', '1.5', '1.8'])} °C above {P}'s normal range"
            ),
        ],
        gist=f"recorded an elevated overnight heart rate and skin temperature for {P}",
        anchors=("temperature",),
    )
    sp = ep.view(
        e1,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            (
                f'{H} saying "you\'re burning up" and a thermometer beep, then {H} reading out '
                f'"{temp1}"'
            ),
            (
                f"the beep of a digital thermometer and {H} announcing \"{temp1}, right, you're "
                'staying home"'
            ),
        ],
        offset=14,
        gist=f"heard {H} read a thermometer at {temp1}",
        anchors=(f"{temp1}",),
        people=[H, P],
    )
    ep.world.claim("workout", P, d)
    ep.world.claim("workout", P, d + 1)
    t2 = t1 + _mins(r.randint(40, 70))
    e2 = ep.event(
        t2,
        [H, P],
        "kitchen",
        f"{H} kept {P} off {'school' if p.kind != 'adult' else 'work'} and arranged cover",
        causes=[e1],
    )
    msg = ep.view(
        e2,
        hh.phone(H),
        "dialogue",
        [
            (
                f"{H} said {x['he']} had rung "
                f"{'the school office' if p.kind != 'adult' else P + chr(39) + 's manager'} "
                f"to report {P} absent with a high temperature"
            ),
            f"{H} mentioned phoning in {P}'s absence because of a temperature of {temp1}",
        ],
        gist=f"noted {H} reporting {P} absent",
        anchors=("absen",),
        people=[H, P],
    )
    ep.view(
        e2,
        hh.laptop(H) or hh.laptop(P),
        "app_usage",
        [
            (
                "a calendar change moving the morning's meetings to video calls and a status set "
                "to "
                "'working from home - family illness'"
            ),
            (
                "the work calendar rescheduled for a home day, with the status 'WFH, looking "
                "after someone "
                "unwell'"
            ),
        ],
        offset=9,
        gist="showed the calendar switched to a home day",
        anchors=("home",),
    )
    lock = ep.view(
        e2,
        hh.shared("smart_lock"),
        "location",
        [
            (
                f"no departure for {P} on a {day_label(t2).split()[0]} morning, when {x['he']} "
                "usually "
                f"leaves around the same time; the door stayed locked until the afternoon"
            ),
            (
                "the door staying bolted through the usual school-and-work departure window; "
                f"{P}'s "
                f"presence tag never left the house"
            ),
        ],
        offset=60,
        gist=f"showed {P} never left the house that morning",
        anchors=(P,),
    )
    t3 = ep.jitter(d, 14, 0, 40)
    e3 = ep.event(
        t3, [H, P], hh.places["pharmacy"], f"{H} fetched paracetamol and fluids", causes=[e2]
    )
    buy = ep.view(
        e3,
        hh.phone(H),
        "app_usage",
        [
            f"a contactless payment of £{r.randint(6, 14)}.{r.choice(['20', '45', '85'])} at "
            f"{hh.places['pharmacy']} for children's paracetamol and rehydration sachets"
            if p.kind in ("child", "toddler")
            else f"a contactless payment at {hh.places['pharmacy']} for paracetamol, throat "
            "lozenges and "
            f"rehydration sachets",
            (
                f"a receipt in the banking app from {hh.places['pharmacy']}: paracetamol "
                "suspension, "
                f"electrolyte sachets"
            ),
        ],
        gist=f"showed a purchase of paracetamol and rehydration sachets at {hh.places['pharmacy']}",
        anchors=(hh.places["pharmacy"],),
        place=hh.places["pharmacy"],
    )
    thermo = ep.view(
        e3,
        hh.shared("smart_thermostat"),
        "environment",
        [
            (
                f"the {'nursery' if p.kind == 'toddler' else 'house'} at 23.5 °C after the "
                "setpoint was "
                f"raised manually by 1.5 degrees"
            ),
            "23.5 °C after a manual boost of 1.5 degrees, well above the usual afternoon 20 °C",
        ],
        offset=-50,
        gist="measured the house warmed to 23.5 °C after a manual boost",
        anchors=("23.5",),
    )
    t4 = ep.jitter(d + 1, 7, 0, 30)
    e4 = ep.event(t4, [P], "bedroom", f"{P}'s fever eased by the next morning", causes=[e3])
    sp2 = ep.view(
        e4,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            f'another thermometer beep and {H} saying "{temp2}, much better than yesterday"',
            f'{H} reading "{temp2}" off the thermometer and sounding relieved',
        ],
        gist=f"heard the temperature read at {temp2} the next morning",
        anchors=(f"{temp2}",),
        people=[H, P],
    )
    wv2 = ep.view(
        e4,
        hh.watch(P),
        "health",
        [
            (
                f"an overnight average heart rate back down to {r.randint(68, 82)} bpm and skin "
                "temperature "
                f"within 0.3 °C of baseline"
            ),
            (
                f"overnight readings near normal again: heart rate averaging {r.randint(68, 82)} "
                "bpm, skin "
                f"temperature within 0.3 °C of baseline"
            ),
        ],
        offset=-25,
        gist="recorded near-normal overnight heart rate and skin temperature",
        anchors=("0.3",),
    )
    t5 = ep.jitter(min(d + 2, 6), 8, 0, 30)
    e5 = ep.event(t5, [P], "front_door", f"{P} was well enough to go out again", causes=[e4])
    ep.view(
        e5,
        hh.shared("doorbell_camera"),
        "vision",
        [
            f"{P} heading out in a warm coat and scarf, moving briskly",
            f"{P} leaving the house wrapped up, a water bottle in hand",
        ],
        gist=f"showed {P} going out again, wrapped up",
        anchors=(P,),
    )
    ep.view(
        e5,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "dialogue",
        [
            f"{H} told {P} to take it easy and ring if {x['he']} feels feverish again",
            f"{H} reminded {P} to drink plenty and come home if the temperature comes back",
        ],
        offset=-6,
        gist=f"noted {H}'s advice to {P} to take it easy",
        anchors=(P,),
        people=[H, P],
    )
    ep.ask(
        "causal",
        ep.asker(P, H),
        [
            f"Why wasn't {P} out of the house as usual {{when:sick}}?",
            f"What kept {P} at home {{when:sick}}?",
        ],
        f"{P} woke up unwell on {stamp(t1)}: the watch showed a raised overnight heart rate and "
        "skin "
        f"temperature and {H} measured {temp1}. {H} reported {absent} and switched to a home "
        "day, "
        f"and {P} never left the house that morning.",
        [
            ("Raised overnight heart rate / skin temperature on the watch", [wv], []),
            (f"Thermometer reading of {temp1}", [sp], [f"{temp1}"]),
            (f"{H} reported the absence and rearranged the day", [msg, e2], []),
            (f"{P} stayed in (no departure)", [lock], []),
        ],
        "illness",
        subject=P,
        moments={"sick": t1},
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        [
            (
                f"How high did {P}'s temperature get, what was bought for it, and how was "
                f"{x['he']} by the "
                f"next morning?"
            ),
            (
                f"Trace {P}'s illness {{when:sick}} through to the next day: the peak reading, "
                "the remedies "
                f"and the recovery."
            ),
        ],
        f"The peak reading was {temp1} on {stamp(t1)}; {H} bought paracetamol and rehydration "
        "sachets "
        f"at {hh.places['pharmacy']} that afternoon and the house was warmed to 23.5 °C; the next "
        f"morning the thermometer read {temp2} and the watch's overnight readings were near "
        "normal.",
        [
            (f"Peak of {temp1}", [sp, wv], [f"{temp1}"]),
            ("Paracetamol and rehydration sachets from the pharmacy", [buy], []),
            ("House warmed to 23.5 °C", [thermo], ["23.5"]),
            (f"{temp2} and near-normal readings next morning", [sp2, wv2], [f"{temp2}"]),
        ],
        "illness",
        subject=P,
        moments={"sick": t1},
    )
    ep.perspective(
        [e1, e2],
        ep.asker(P),
        [
            (
                f"What did each device around the house pick up the morning {P} woke up ill "
                f"{{when:sick}}?"
            ),
            f"Device by device, how did the house register {P} being unwell {{when:sick}}?",
        ],
        f"On the morning of {stamp(t1)}:",
        "illness",
        subject=P,
        moments={"sick": t1},
    )
    return True


@template("health_trend", span=5)
def health_trend(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    p = ep.pick(
        [
            q
            for q in hh.residents
            if q.kind in ("elder", "adult") and hh.watch(q.name) and q.age >= 40
        ]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    d = min(ep.day0, 2)
    ep.plan.title = f"{P}'s rising resting heart rate"
    rates = sorted(r.sample(range(66, 95), 4))
    events, views = [], []
    prev = None
    for i, rate in enumerate(rates):
        day = d + i
        t = ep.jitter(day, 7, 2, 25)
        ev = ep.event(
            t,
            [P],
            "bedroom",
            f"{P}'s morning resting heart rate was {rate} bpm",
            causes=[prev] if prev else [],
        )
        v = ep.view(
            ev,
            hh.watch(P),
            "health",
            [
                (
                    f"a morning resting heart rate of {rate} bpm for {P}, with heart-rate "
                    "variability of "
                    f"{r.randint(18, 41)} ms"
                ),
                f"{P}'s resting pulse at {rate} bpm on waking; HRV {r.randint(18, 41)} ms",
            ],
            gist=f"recorded a resting heart rate of {rate} bpm on {day_label(t)}",
            anchors=(f"{rate}",),
            facts={"topic": "resting_hr", "person": P, "day": day, "value": rate},
        )
        ep.world.claim("resting_hr", P, day)
        events.append(ev)
        views.append(v)
        prev = ev
    t5 = ep.jitter(d + 2, 19, 0, 40)
    e5 = ep.event(
        t5, [P], "living_room", f"{P} felt light-headed on the stairs", causes=[events[2]]
    )
    dizzy = ep.view(
        e5,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            (
                f'{P} saying "I came over all woozy on the stairs just now" and a chair being '
                "pulled out"
            ),
            (
                f'{P} telling someone "my head went swimmy halfway up the stairs, I had to hold '
                "the "
                'banister"'
            ),
        ],
        gist=f"heard {P} describe a dizzy spell on the stairs",
        anchors=("stairs",),
    )
    mot = ep.view(
        e5,
        hh.shared("motion_sensor"),
        "motion",
        [
            (
                "movement in the hallway that stopped for 95 seconds halfway through, then resumed "
                "slowly"
            ),
            "a hallway trigger, a 95-second pause with no motion, then slow movement again",
        ],
        offset=-3,
        gist="detected a 95-second pause in movement on the way through the hallway",
        anchors=("95",),
        people=[P],
    )
    t6 = ep.jitter(d + 3, 9, 10, 40)
    e6 = ep.event(
        t6, [P], "home", f"{P} booked a GP appointment about the heart rate", causes=[e5, events[3]]
    )
    book = ep.view(
        e6,
        hh.phone(P) or hh.tablet(P),
        "app_usage",
        [
            (
                f"the surgery booking app confirming an appointment at {hh.places['clinic']} for "
                f"{day_label(ep.at(d + 4, 9))} at 10:40, reason 'raised pulse and dizziness'"
            ),
            (
                f"a booking confirmation from {hh.places['clinic']}: "
                f"{day_label(ep.at(d + 4, 9))}, 10:40, "
                f"'pulse higher than usual, dizzy spell'"
            ),
        ],
        gist=f"showed a GP booking at {hh.places['clinic']} for the pulse and dizziness",
        anchors=("10:40",),
    )
    ask_ = ep.view(
        e6,
        hh.shared("smart_display") or hh.shared("smart_speaker"),
        "dialogue",
        [
            f"{P} asked to be reminded to take {x['his']} watch readings to the GP appointment",
            f"{P} wants to show the doctor {x['his']} heart-rate history from the watch",
        ],
        offset=5,
        gist=f"noted {P} wanting to show the watch history to the GP",
        anchors=("watch",),
    )
    t7 = ep.at(d + 4, 11, r.randint(30, 50))
    e7 = ep.event(
        t7,
        [P],
        hh.places["clinic"],
        f"the GP adjusted {P}'s medication and advised cutting caffeine",
        causes=[e6],
    )
    gp = ep.view(
        e7,
        hh.phone(P) or hh.shared("smart_speaker"),
        "dialogue",
        [
            (
                f"{P} said the GP thinks the new decongestant tablets pushed {x['his']} pulse "
                "up, told "
                f"{x['him']} to stop them and cut down to one coffee a day"
            ),
            (
                f"{P} reported that the doctor blamed the cold-and-flu decongestant for the "
                "raised pulse and "
                f"said to stop it and limit coffee"
            ),
        ],
        gist="noted the GP blamed a decongestant and advised stopping it and cutting coffee",
        anchors=("decongestant",),
        place=hh.places["clinic"] if hh.phone(P) else None,
    )
    ep.ask(
        "user_aggregation",
        ep.asker(P),
        [
            f"How did {P}'s resting heart rate develop over those mornings {{week}}?",
            (
                f"What was the trend in {P}'s morning pulse across the days leading up to the GP "
                "visit?"
            ),
        ],
        (
            "It rose steadily: "
            f"{', '.join(f'{v} bpm on {day_label(e.ts)}' for v, e in zip(rates, events))}."
        ),
        [
            (f"{rate} bpm on {day_label(e.ts)}", [v], [f"{rate}"])
            for rate, e, v in zip(rates, events, views)
        ],
        "resting_hr",
        subject=P,
    )
    ep.ask(
        "causal",
        ep.asker(P),
        [
            f"Why did {P} go to see the doctor {{when:gp}}?",
            f"What prompted {P}'s GP appointment {{when:gp}}?",
        ],
        f"{P}'s resting heart rate had climbed from {rates[0]} to {rates[-1]} bpm over four "
        "mornings, "
        f"and on {stamp(t5)} {x['he']} had a dizzy spell on the stairs (a 95-second pause in the "
        f"hallway); {x['he']} booked the appointment the next morning, and the GP blamed a "
        "decongestant.",
        [
            (
                f"Resting heart rate rising from {rates[0]} to {rates[-1]} bpm",
                [views[0], views[-1]],
                [f"{rates[0]}", f"{rates[-1]}"],
            ),
            ("Dizzy spell on the stairs", [dizzy, mot], []),
            ("Appointment booked for the pulse and dizziness", [book, ask_], []),
            ("GP blamed the decongestant", [gp], []),
        ],
        "health",
        subject=P,
        moments={"gp": t7},
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        [
            f"What happened to {P} on the way upstairs {{when:dizzy}}, and what came of it?",
            f"Tell me about {P}'s funny turn {{when:dizzy}} and the follow-up.",
        ],
        f"On {stamp(t5)} {P} had a dizzy spell on the stairs — {x['he']} described it aloud and "
        "the hallway "
        f"sensor shows a 95-second pause — then booked a GP appointment for 10:40 on "
        f"{day_label(ep.at(d + 4, 9))}, where the doctor blamed a decongestant and advised "
        "stopping it "
        f"and cutting coffee.",
        [
            ("Dizzy spell on the stairs", [dizzy, e5], []),
            ("95-second pause in the hallway", [mot], ["95"]),
            ("GP booked for 10:40", [book, ask_], ["10:40"]),
            ("Decongestant blamed", [gp], []),
        ],
        "health",
        subject=P,
        moments={"dizzy": t5},
    )
    ep.perspective(
        [e5],
        ep.asker(P),
        [
            f"What did the different devices notice when {P} came over dizzy {{when:dizzy}}?",
            f"How was {P}'s dizzy spell {{when:dizzy}} captured, device by device?",
        ],
        f"When {P} felt faint on {stamp(t5)}:",
        "health",
        subject=P,
        moments={"dizzy": t5},
    )
    return True


@template("sleep_problem", span=4)
def sleep_problem(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    p = ep.pick(
        [q for q in hh.residents if q.kind in ("adult", "teen", "elder") and hh.watch(q.name)]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    d = min(ep.day0, 3)
    cause = r.choice(["heat", "screens", "noise"])
    ep.plan.title = f"{P} sleeps badly ({cause})"
    climate = (
        hh.shared("air_quality_monitor")
        or hh.shared("air_purifier")
        or hh.shared("smart_thermostat")
    )
    sleeps, evs, vws = [], [], []
    prev = None
    for i in range(3):
        night = d + i
        t = ep.at(
            night + 1,
            p.wake[0 if (night + 1) % 7 < 5 else 1] // 60,
            p.wake[0 if (night + 1) % 7 < 5 else 1] % 60 + r.randint(0, 8),
        )
        minutes = r.randint(290, 345) if i < 2 else r.randint(420, 470)
        sleeps.append(minutes)
        wakes = r.randint(4, 7) if i < 2 else r.randint(0, 2)
        ev = ep.event(
            t, [P], "bedroom", f"{P} slept {hours_minutes(minutes)}", causes=[prev] if prev else []
        )
        v = ep.view(
            ev,
            hh.watch(P),
            "health",
            [
                (
                    f"{P}'s sleep for the night: {hours_minutes(minutes)} asleep, woken {wakes} "
                    "times, deep sleep "
                    f"{r.randint(35, 80)} min"
                ),
                f"a night of {hours_minutes(minutes)} total sleep for {P} with {wakes} awakenings",
            ],
            gist=f"recorded {hours_minutes(minutes)} of sleep and {wakes} awakenings",
            anchors=(hours_minutes(minutes),),
            facts={"topic": "sleep", "person": P, "day": night, "value": minutes},
        )
        ep.world.claim("sleep", P, night)
        evs.append(ev)
        vws.append(v)
        prev = ev
    # the cause, observed on the first bad night
    tc = ep.at(d, 23, r.randint(20, 50))
    if cause == "heat":
        ec = ep.event(tc, [P], "bedroom", f"{P}'s bedroom was too warm at night")
        cv = ep.view(
            ec,
            climate,
            "environment",
            [
                "26.4 °C and 63% relative humidity at night, the warmest reading of the week",
                "a night-time temperature of 26.4 °C with humidity at 63%",
            ],
            gist="measured 26.4 °C at night",
            anchors=("26.4",),
        )
        cv2 = ep.view(
            ec,
            hh.shared("smart_thermostat") if climate != hh.shared("smart_thermostat") else None,
            "environment",
            [
                "the heating still running at 23:00 because the schedule had been left on 'winter'",
                "heating active late at night on the 'winter' schedule",
            ],
            gist="showed the heating still running on the winter schedule",
            anchors=("winter",),
        )
        fix_text = (
            "switched the heating schedule to 'summer' and set the bedroom to 19 °C",
            [
                "the heating schedule changed to 'summer' with a 19 °C night setpoint",
                "a switch to the 'summer' schedule and a bedroom target of 19 °C",
            ],
        )
        fix_dev, fix_mod = hh.shared("smart_thermostat"), "environment"
        qcause = "an overheated bedroom"
    elif cause == "screens":
        ec = ep.event(tc, [P], "bedroom", f"{P} was on the phone late in bed")
        cv = ep.view(
            ec,
            hh.phone(P),
            "app_usage",
            [
                (
                    f"{r.randint(70, 105)} minutes of short-video scrolling after 23:00, the "
                    "screen last "
                    f"unlocked at 01:{r.randint(10, 50)}"
                ),
                "late-night use of the short-video app for over an hour, last unlock after 1 am",
            ],
            gist=f"showed {P} scrolling videos in bed past 1 am",
            anchors=("video",),
        )
        cv2 = ep.view(
            ec,
            hh.shared("smart_light"),
            "device_status",
            [
                "the lights left on a dim 12% glow until after midnight",
                "a dim 12% setting kept on past midnight",
            ],
            gist="reported lights left dimly on past midnight",
            anchors=("12%",),
        )
        fix_text = (
            "turned on a 22:30 wind-down mode that locks the video apps",
            [
                f"a 22:30 bedtime mode set up on {P}'s phone, blocking the video apps",
                "a new wind-down schedule from 22:30 with the short-video apps locked",
            ],
        )
        fix_dev, fix_mod = hh.phone(P), "app_usage"
        qcause = "late-night phone use"
    else:
        ec = ep.event(tc, [P], "bedroom", "roadworks outside kept going at night")
        cv = ep.view(
            ec,
            hh.shared("doorbell_camera"),
            "audio",
            [
                "a continuous pneumatic drilling noise from the street, peaking at 71 dB",
                "loud intermittent drilling and reversing alarms from the road, up to 71 dB",
            ],
            gist="heard night-time drilling from the street at up to 71 dB",
            anchors=("71",),
        )
        cv2 = ep.view(
            ec,
            hh.shared("smart_speaker"),
            "audio",
            [
                f'{P} muttering "they\'re digging up the road at midnight, unbelievable"',
                f"{P} complaining aloud about the roadworks noise at this hour",
            ],
            gist=f"heard {P} complain about the roadworks",
            anchors=("road",),
        )
        fix_text = (
            "ordered foam earplugs",
            [
                "an order for foam earplugs with next-day delivery",
                "a purchase of two packs of foam earplugs",
            ],
        )
        fix_dev, fix_mod = hh.phone(P), "app_usage"
        qcause = "noise outside"
    tf = ep.at(d + 2, 20, r.randint(0, 40))
    ef = ep.event(tf, [P], "home", f"{P} fixed the cause", causes=[evs[1], ec])
    fx = ep.view(ef, fix_dev, fix_mod, fix_text[1], gist=f"recorded {fix_text[1][0]}")
    tired = ep.view(
        evs[1],
        hh.shared("smart_speaker") if cause != "noise" else hh.shared("smart_display"),
        "dialogue",
        [
            (
                f"{P} said {x['he']} feels wrecked after another bad night and wants to sort the "
                "bedroom out"
            ),
            (
                f"{P} complained of being exhausted two nights running and planned to fix "
                "whatever is keeping "
                f"{x['him']} up"
            ),
        ],
        offset=40,
        gist=f"noted {P} saying {x['he']} was exhausted after two bad nights",
        anchors=("night",),
    )
    ep.ask(
        "causal",
        ep.asker(P, include=[P]),
        [
            f"Why did {P} sleep so much better on the third night?",
            f"What changed before {P}'s good night {{when:good}}?",
        ],
        f"The two previous nights were short ({hours_minutes(sleeps[0])} and "
        f"{hours_minutes(sleeps[1])}, many awakenings) because of {qcause}; after complaining of "
        f"exhaustion {P} {fix_text[0]} on {stamp(tf)}, and the next night was "
        f"{hours_minutes(sleeps[2])}.",
        [
            (
                f"Two short nights: {hours_minutes(sleeps[0])}, {hours_minutes(sleeps[1])}",
                vws[:2],
                [hours_minutes(sleeps[0]), hours_minutes(sleeps[1])],
            ),
            (f"The cause: {qcause}", [cv, cv2], []),
            (f"The fix: {P} {fix_text[0]}", [fx, tired], []),
            (f"Then {hours_minutes(sleeps[2])} of sleep", [vws[2]], [hours_minutes(sleeps[2])]),
        ],
        "sleep",
        subject=P,
        moments={"good": evs[2].ts},
    )
    ep.ask(
        "user_query",
        P,
        [
            (
                "How long did I sleep on each of those three nights, and what was different about "
                "the last one?"
            ),
            "Compare my last three nights of sleep for me — what changed?",
        ],
        f"You slept {hours_minutes(sleeps[0])}, then {hours_minutes(sleeps[1])}, then "
        f"{hours_minutes(sleeps[2])}; before the last night you {fix_text[0]}.",
        [
            (f"Night 1: {hours_minutes(sleeps[0])}", [vws[0]], [hours_minutes(sleeps[0])]),
            (f"Night 2: {hours_minutes(sleeps[1])}", [vws[1]], [hours_minutes(sleeps[1])]),
            (f"Night 3: {hours_minutes(sleeps[2])}", [vws[2]], [hours_minutes(sleeps[2])]),
            ("What changed beforehand", [fx], []),
        ],
        "sleep",
        subject=P,
        delay=(3.0, 12.0),
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        [
            (
                f"What was keeping {P} awake during {x['his']} run of bad nights, and what did "
                f"{x['he']} do about it?"
            ),
            f"What was behind {P}'s broken sleep starting {{when:bad}}, and what fixed it?",
        ],
        f"The cause was {qcause} (first bad night, around {clock(tc)}); after two short nights "
        f"({hours_minutes(sleeps[0])}, {hours_minutes(sleeps[1])}) {P} said {x['he']} was "
        "exhausted, and on "
        f"{stamp(tf)} {x['he']} {fix_text[0]}.",
        [
            (f"Cause: {qcause}", [cv, cv2, ec], []),
            ("Exhausted after two short nights", [tired] + vws[:2], []),
            (f"Fix: {P} {fix_text[0]}", [fx], []),
        ],
        "sleep",
        subject=P,
        moments={"bad": tc},
    )
    return True


@template("fall_alert", span=2)
def fall_alert(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    p = ep.pick([q for q in hh.residents if q.kind == "elder" and hh.watch(q.name)])
    if p is None:
        return False
    P, x = p.name, p.pron
    carer = next((q for q in hh.people if q.kind == "carer"), None) or ep.other_adult(P)
    C = carer.name if carer else P
    d = min(ep.day0, 4)
    ep.plan.title = f"{P} has a fall in the garden"
    ep.keep_home(C, d, morning=False)
    t1 = ep.jitter(d, 7, 40, 58)
    e1 = ep.event(t1, [P], "garden", f"{P} slipped on the wet back step and fell")
    fall = ep.view(
        e1,
        hh.watch(P),
        "motion",
        [
            (
                f"a hard fall for {P}: impact of about 3 g followed by 70 seconds without "
                "getting up; "
                f"{P} pressed 'I'm OK' on the alert"
            ),
            (
                f"fall detected — a sharp impact and {P} on the ground for 70 seconds before "
                "dismissing the "
                f"emergency-call countdown"
            ),
        ],
        gist=f"detected a hard fall with {P} down for 70 seconds",
        anchors=("70 seconds",),
        place="garden",
    )
    door = ep.view(
        e1,
        hh.shared("door_window_sensor"),
        "device_status",
        [
            "the back door opened at 07:4x and left open for 9 minutes".replace(
                "07:4x", clock(t1 - _mins(2))
            ),
            f"back door open from {clock(t1 - _mins(2))} for 9 minutes",
        ],
        offset=-2,
        gist="reported the back door open for 9 minutes around then",
        anchors=("9 minutes",),
    )
    t2 = t1 + _mins(r.randint(6, 12))
    e2 = ep.event(t2, [P], "kitchen", f"{P} came back in shaken, with a grazed hand", causes=[e1])
    cam = ep.view(
        e2,
        hh.shared("indoor_camera"),
        "vision",
        [
            (
                f"{P} coming in slowly from the back, holding the left hand away from the body "
                "and sitting "
                f"down heavily at the table"
            ),
            f"{P} walking in unsteadily, sitting at the kitchen table and inspecting a grazed palm",
        ],
        gist=f"showed {P} coming in unsteadily and nursing a grazed hand",
        anchors=(P,),
    )
    sp = ep.view(
        e2,
        hh.shared("smart_speaker") or hh.shared("smart_display"),
        "audio",
        [
            f'{P} saying "that step was like ice, I went straight down" and a tap running',
            f"{P} muttering about the slippery back step and running the cold tap",
        ],
        offset=2,
        gist=f"heard {P} blame the slippery back step",
        anchors=("step",),
    )
    t3 = ep.at(d, 9, r.randint(0, 20))
    e3 = ep.event(t3, [C, P], "front_door", f"{C} arrived and checked {P} over", causes=[e2])
    lk = ep.view(
        e3,
        hh.shared("smart_lock"),
        "location",
        [
            f"an unlock with {C}'s keypad code at {clock(t3)}",
            f"keypad entry by {C} at {clock(t3)}",
        ],
        gist=f"logged {C}'s keypad entry",
        anchors=(C,),
        people=[C],
    )
    talk = ep.view(
        e3,
        hh.shared("smart_display") or hh.shared("smart_speaker"),
        "dialogue",
        [
            (
                f"{C} said {x['he']} will put grip tape on the back step and ring the surgery "
                "about "
                f"{P}'s wrist"
            ),
            f"{C} planned to fit an anti-slip strip on the back step and get {P}'s wrist looked at",
        ],
        offset=25,
        gist=f"noted {C}'s plan to fit an anti-slip strip and get the wrist checked",
        anchors=("step",),
        people=[C, P],
    )
    t4 = ep.at(d + 1, 10, r.randint(0, 30))
    e4 = ep.event(t4, [C], "garden", f"{C} fitted anti-slip strips on the back step", causes=[e3])
    buy = ep.view(
        e4,
        hh.phone(C),
        "app_usage",
        [
            "an order for outdoor anti-slip tape, 5 m, collected from the hardware shop",
            "a click-and-collect receipt for anti-slip step tape",
        ],
        offset=-70,
        gist="showed the anti-slip tape purchase",
        anchors=("anti-slip",),
    )
    door2 = ep.view(
        e4,
        hh.shared("door_window_sensor"),
        "device_status",
        [
            "the back door propped open for 26 minutes mid-morning",
            "back door open for 26 minutes",
        ],
        gist="reported the back door open 26 minutes while the strips went on",
        anchors=("26",),
    )
    t5 = ep.at(d, 15, r.randint(0, 40))
    e5 = ep.event(t5, [C, P], "home", f"{C} rang the surgery about {P}'s wrist", causes=[e3])
    ep.view(
        e5,
        hh.phone(C),
        "dialogue",
        [
            (
                f"{C} said the practice nurse advised a cold compress and an X-ray only if {P}'s "
                "wrist swells"
            ),
            (
                f"{C} reported the surgery's advice: keep {P}'s wrist cool, come in if the "
                "swelling "
                "grows"
            ),
        ],
        gist="noted the surgery's advice: cold compress, X-ray only if the swelling grows",
        anchors=("swell",),
        place="home",
    )
    ep.view(
        e5,
        hh.shared("indoor_camera"),
        "vision",
        [
            f"{P} in the armchair with a cold compress wrapped round the left wrist",
            f"{P} resting in the armchair, a cloth held against one wrist",
        ],
        offset=20,
        gist=f"showed {P} resting with a compress on the wrist",
        anchors=(P,),
    )
    ep.ask(
        "causal",
        ep.asker(P),
        [
            f"Why did {C} go out to the back step {{when:fix}}?",
            "What was behind the work on the back step {when:fix}?",
        ],
        f"{P} fell on the wet back step on {stamp(t1)} — the watch detected a hard fall and 70 "
        "seconds "
        f"on the ground — came in with a grazed hand blaming the slippery step, and when {C} "
        "arrived "
        f"{x['he']} planned anti-slip strips, which {x['he']} fitted the next day.",
        [
            ("Watch detected a hard fall", [fall, door], ["70 seconds"]),
            ("Came in with a grazed hand, blaming the slippery step", [cam, sp], []),
            (f"{C} decided on anti-slip strips", [talk, lk], []),
            ("Strips bought and fitted", [buy, door2], []),
        ],
        "fall",
        subject=P,
        moments={"fix": t4},
    )
    ep.perspective(
        [e1, e2],
        C if C != P else ep.asker(),
        [
            f"What did the house's devices each register of {P}'s accident {{when:fall}}?",
            f"Go device by device: what was captured when {P} fell {{when:fall}}?",
        ],
        f"Around {stamp(t1)}:",
        "fall",
        subject=P,
        moments={"fall": t1},
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        [
            (
                f"How bad was {P}'s tumble {{when:fall}}, where did it happen, and what has been "
                "done since?"
            ),
            f"Piece together {P}'s accident {{when:fall}} and the aftermath.",
        ],
        f"{P} fell on the wet back step on {stamp(t1)} (watch: hard fall, 70 seconds on the "
        "ground; back "
        f"door open at the time), came in with a grazed hand, {C} checked {x['him']} over after "
        "arriving "
        f"at {clock(t3)}, and anti-slip strips were fitted the next day.",
        [
            ("Hard fall on the back step", [fall, door], ["70 seconds"]),
            ("Grazed hand", [cam, sp], []),
            (f"{C} arrived and planned the fix", [lk, talk], []),
            ("Strips fitted", [buy, door2], []),
        ],
        "fall",
        subject=P,
        moments={"fall": t1},
    )
    return True


@template("training", span=7)
def training(ep: Ep) -> bool:
    hh, r = ep.hh, ep.r
    p = ep.pick(
        [
            q
            for q in hh.residents
            if q.kind in ("adult", "teen")
            and hh.watch(q.name)
            and hh.phone(q.name)
            and not ep.world.any_claim("workout", q.name)
        ]
    )
    if p is None:
        return False
    P, x = p.name, p.pron
    ep.plan.title = f"{P} trains for the Sunday 10k"
    days = [1, 3, 5]
    paces = sorted([r.randint(318, 352) for _ in range(3)], reverse=True)
    dists = [r.choice([5.2, 6.0, 6.4]), r.choice([7.1, 7.5, 8.0]), r.choice([8.4, 9.0])]
    runs, vws, apps = [], [], []
    for day in range(7):
        ep.world.claim("workout", P, day)
    e0 = ep.event(ep.jitter(0, 20, 0, 40), [P], "living_room", f"{P} signed up for a 10k on Sunday")
    sign = ep.view(
        e0,
        hh.phone(P),
        "app_usage",
        [
            (
                "a race entry confirmation for the Riverside 10k on Sunday 17 May, bib number "
                f"{r.randint(300, 1900)}"
            ),
            "an email receipt: entry to the Riverside 10k, Sunday 17 May, start 09:00",
        ],
        gist="showed the entry confirmation for the Riverside 10k on Sunday",
        anchors=("10k",),
    )
    prev = e0
    for i, day in enumerate(days):
        t = ep.jitter(day, 18 if day < 5 else 9, 30, 50)
        pace = paces[i]
        ev = ep.event(
            t, [P], hh.places["park"], f"training run {i + 1}: {dists[i]} km", causes=[prev]
        )
        mins = int(dists[i] * pace / 60)
        v = ep.view(
            ev,
            hh.watch(P),
            "motion",
            [
                (
                    f"an outdoor run of {dists[i]} km in {mins} minutes, average pace "
                    f"{pace // 60}:{pace % 60:02d} per km"
                ),
                f"{dists[i]} km run, {mins} min, {pace // 60}:{pace % 60:02d}/km average",
            ],
            offset=mins,
            gist=f"recorded {dists[i]} km at {pace // 60}:{pace % 60:02d}/km",
            anchors=(f"{dists[i]} km", f"{pace // 60}:{pace % 60:02d}"),
            facts={"topic": "run", "person": P, "day": day, "value": dists[i]},
            place=hh.places["park"],
        )
        hr = ep.view(
            ev,
            hh.phone(P),
            "app_usage",
            [
                (
                    f"the running app's summary: {dists[i]} km, average heart rate "
                    f"{r.randint(148, 166)} bpm, "
                    f"'{r.choice(['Steady', 'Tempo', 'Long'])} run' saved"
                ),
                (
                    f"a saved activity in the running app, {dists[i]} km, with a training-plan "
                    "tick "
                    "for week 3"
                ),
            ],
            offset=mins + 4,
            gist=f"showed the running app logging the {dists[i]} km run",
            anchors=(f"{dists[i]} km",),
        )
        runs.append(ev)
        vws.append(v)
        apps.append(hr)
        prev = ev
    race = ep.event(
        ep.at(6, 10, r.randint(5, 15)),
        [P],
        "Riverside 10k course",
        f"{P} ran the 10k",
        causes=[runs[-1]],
    )
    finish = r.randint(46, 56)
    rv = ep.view(
        race,
        hh.watch(P),
        "motion",
        [
            f"a 10.0 km run finishing in {finish} min {r.randint(0, 59):02d} s",
            f"10.0 km completed in {finish} minutes and change",
        ],
        gist=f"recorded the 10 km finished in about {finish} minutes",
        anchors=(f"{finish}",),
        place="Riverside 10k course",
    )
    bib = ep.view(
        race,
        hh.shared("doorbell_camera"),
        "vision",
        [
            f"{P} leaving in running kit with a race number pinned to the vest",
            f"{P} heading off early with a race bib on {x['his']} top and a foil blanket in hand",
        ],
        offset=-95,
        gist=f"showed {P} setting off with a race number pinned on",
        anchors=("race",),
    )
    cheer = ep.view(
        race,
        hh.phone(P),
        "dialogue",
        [
            f"{P} said {x['he']} beat {x['his']} target and will frame the medal",
            f"{P} told a friend {x['he']} finished faster than planned and was thrilled",
        ],
        offset=20,
        gist=f"noted {P} saying {x['he']} beat {x['his']} target",
    )
    ep.ask(
        "user_aggregation",
        ep.asker(P),
        [
            f"How did {P}'s training runs progress {{week}} before the race?",
            f"Summarise {P}'s preparation runs {{week}}: distances and pace.",
        ],
        "; ".join(
            f"{day_label(e.ts)}: {dist} km at {pc // 60}:{pc % 60:02d}/km"
            for e, dist, pc in zip(runs, dists, paces)
        )
        + " — each run longer and faster.",
        [
            (f"{day_label(e.ts)}: {dist} km", [v, a], [f"{dist} km"])
            for e, dist, v, a in zip(runs, dists, vws, apps)
        ],
        "run",
        subject=P,
    )
    ep.ask(
        "user_query",
        P,
        [
            "How did my race on Sunday go compared with my training?",
            "Was my Sunday race quicker than my practice runs this week?",
        ],
        f"You finished the 10 km in about {finish} minutes; your training runs were {dists[0]}, "
        f"{dists[1]} and {dists[2]} km, the fastest at {paces[-1] // 60}:{paces[-1] % 60:02d}/km.",
        [
            (f"Race: 10 km in about {finish} minutes", [rv], [f"{finish}"]),
            ("Training run distances", vws, [f"{dists[0]} km"]),
            ("Race entry", [sign], []),
        ],
        "run",
        subject=P,
        delay=(2.0, 20.0),
    )
    ep.ask(
        "fusion",
        ep.asker(P),
        [
            f"How did {P} prepare for Sunday's race, and how did the race itself go?",
            f"From sign-up to finish line: what did {P}'s race week look like?",
        ],
        f"{P} entered the Riverside 10k on {stamp(e0.ts)}, ran {dists[0]}, {dists[1]} and "
        f"{dists[2]} km in "
        f"training, set off on Sunday with a race number pinned on, finished in about {finish} "
        "minutes and "
        f"said {x['he']} beat {x['his']} target.",
        [
            ("Race entry", [sign], []),
            ("Three training runs", [vws[0], vws[1], apps[2]], []),
            ("Set off on race morning", [bib], []),
            (f"Finished in about {finish} minutes", [rv, cheer], [f"{finish}"]),
        ],
        "run",
        subject=P,
        moments={},
    )
    return True
