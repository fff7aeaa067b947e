"""Stage 3, paired conflicts: two sources disagree about one fact, a third settles it.

Each builder emits the two disagreeing observations (source `conflict`) plus ordinary
corroborating observations (source `routine`) that make one side better supported, claims
the routine slot it replaces, and proposes the conflict question whose reference answer
states both claims and which one the rest of the evidence backs.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta

from eval.synth.emit import Emitter
from eval.synth.episodes import WorldState
from eval.synth.episodes.base import canonical_label
from eval.synth.personas import Household, Person, usual_weight
from eval.synth.phrasing import duration, hours_minutes
from eval.synth.timewords import at, clock, day_label, is_weekend
from eval.synth.world import CheckDraft, Obs, QuestionDraft

Builder = Callable[["Ctx", Person], "QuestionDraft | None"]


class Ctx:
    def __init__(self, hh: Household, world: WorldState, rng: random.Random):
        self.hh, self.world, self.r = hh, world, rng
        self.conflict = Emitter(hh, rng, "conflict", f"{hh.scenario_id}_C")
        self.support = Emitter(hh, rng, "routine", f"{hh.scenario_id}_S")

    def label(self, device: str) -> str:
        return canonical_label(self.hh.device(device))

    def free_day(self, topic: str, person: str, days: list[int]) -> int | None:
        free = [d for d in days if not self.world.is_claimed(topic, person, d)]
        return self.r.choice(free) if free else None

    def asker(self, *exclude: str) -> str:
        pool = [
            p.name
            for p in self.hh.people
            if p.kind in ("adult", "elder", "carer", "teen") and p.name not in exclude
        ]
        return self.r.choice(pool or [self.hh.people[0].name])


def _draft(
    ctx: Ctx,
    topic: str,
    person: str,
    texts: list[str],
    answer: str,
    a: tuple[str, Obs | None, str],
    b: tuple[str, Obs | None, str],
    verdict: tuple[str, list[Obs | None]],
    moments: dict,
    asker: str | None = None,
) -> QuestionDraft | None:
    if a[1] is None or b[1] is None:
        return None
    support = [o for o in verdict[1] if o is not None]
    if not support:
        return None
    ctx.world.conflicted.add((topic, person))
    return QuestionDraft(
        category="conflict",
        asker=asker or ctx.asker(person),
        texts=texts,
        answer=answer,
        checklist=[
            CheckDraft(a[0], [a[1]], [a[2]]),
            CheckDraft(b[0], [b[1]], [b[2]]),
            CheckDraft(verdict[0], support, []),
        ],
        topic=topic,
        subject=person,
        moments=moments,
        origin="conflict",
    )


def sleep_apps(ctx: Ctx, p: Person) -> QuestionDraft | None:
    hh, r, P = ctx.hh, ctx.r, p.name
    watch, phone = hh.watch(P), hh.phone(P)
    night = ctx.free_day("sleep", P, [0, 1, 2, 3, 4, 5])
    if not (watch and phone and hh.shared("motion_sensor")) or night is None:
        return None
    ctx.world.claim("sleep", P, night)
    ctx.world.claim("night_motion", "household", night)
    wake = at(night + 1, 0, p.wake[1 if is_weekend(night + 1) else 0] + r.randint(-5, 10))
    true_min = r.randint(330, 380)
    app_min = true_min + r.randint(62, 95)
    up = at(night + 1, 2, r.randint(5, 25))
    gap = r.randint(34, 48)
    ws, ps = duration(true_min, r), duration(app_min, r)
    a = ctx.conflict.emit(
        wake,
        watch,
        "health",
        [
            f"{P}'s night: {ws} asleep, with an awake period of {gap} minutes starting {clock(up)}",
            f"{ws} of sleep for {P}, interrupted by {gap} minutes awake from {clock(up)}",
        ],
        people=[P],
        place="bedroom",
        anchors=[ws],
        facts={"topic": "sleep", "person": P, "day": night, "value": true_min, "conflict": True},
    )
    b = ctx.conflict.emit(
        wake + timedelta(minutes=2),
        phone,
        "app_usage",
        [
            (
                f"the sleep app on the bedside table estimating {ps} asleep for {P}, no "
                "interruptions detected"
            ),
            f"a sleep-tracking summary of {ps}, 'undisturbed night', recorded from the nightstand",
        ],
        people=[P],
        place="bedroom",
        anchors=[ps],
    )
    s1 = ctx.support.emit(
        up + timedelta(minutes=2),
        hh.shared("motion_sensor"),
        "motion",
        [
            (
                f"movement in the hallway at {clock(up + timedelta(minutes=2))} after hours of "
                "stillness"
            ),
            f"a hallway trigger at {clock(up + timedelta(minutes=2))} in the middle of the night",
        ],
        people=[P],
    )
    s2 = ctx.support.emit(
        up + timedelta(minutes=9),
        hh.shared("smart_speaker"),
        "audio",
        [
            f'the kettle being filled and {P} muttering "can\'t sleep, might as well have a tea"',
            f"{P} quietly making tea and sighing about being wide awake",
        ],
        people=[P],
    )
    s3 = ctx.support.emit(
        up + timedelta(minutes=1),
        hh.shared("smart_light"),
        "device_status",
        [
            (
                f"switched on from the wall switch at {clock(up + timedelta(minutes=1))} and off "
                "again "
                f"{gap - 2} minutes later"
            ),
            (
                f"a manual switch-on at {clock(up + timedelta(minutes=1))}, "
                f"lasting {gap - 2} minutes"
            ),
        ],
    )
    s4 = ctx.support.emit(
        wake + timedelta(minutes=r.randint(30, 60)),
        hh.shared("smart_display") or hh.shared("smart_speaker"),
        "dialogue",
        [
            (
                f"{P} said {p.pron['he']} was up for a while in the middle of the night and feels "
                "groggy"
            ),
            f"{P} mentioned lying awake around 2 am and making tea",
        ],
        people=[P],
    )
    when = "night"
    return _draft(
        ctx,
        "sleep",
        P,
        [
            f"How long did {P} actually sleep {{when:{when}}}?",
            f"{P}'s sleep {{when:{when}}}: the readings differ — what's the real figure?",
        ],
        f"The sources disagree: {ctx.label(watch)} recorded {hours_minutes(true_min)} asleep "
        "with a "
        f"{gap}-minute awake spell from {clock(up)}, while the phone's sleep app estimated "
        f"{hours_minutes(app_min)} with no interruptions. The watch is better supported: the "
        "hallway "
        f"motion sensor and the kitchen speaker show {P} up making tea at around {clock(up)}, "
        "which the "
        f"phone on the bedside table could not notice.",
        (f"Watch: {hours_minutes(true_min)} with a {gap}-minute awake spell", a, ws),
        (f"Phone sleep app: {hours_minutes(app_min)}, undisturbed", b, ps),
        (f"Watch better supported: {P} was up around {clock(up)}", [s1, s2, s3, s4]),
        {when: up},
    )


def steps(ctx: Ctx, p: Person) -> QuestionDraft | None:
    hh, r, P = ctx.hh, ctx.r, p.name
    watch, phone = hh.watch(P), hh.phone(P)
    day = ctx.free_day("steps", P, [0, 1, 2, 3, 4, 5, 6])
    if not (watch and phone) or day is None:
        return None
    ctx.world.claim("steps", P, day)
    true, app = r.randint(10800, 13900), r.randint(3900, 5600)
    walk = at(day, 18, r.randint(0, 30))
    wlen = r.randint(55, 75)
    a = ctx.conflict.emit(
        at(day, 21, r.randint(30, 50)),
        watch,
        "motion",
        [
            (
                f"{P}'s step count for the day: {true:,}, including a {wlen}-minute walk from "
                f"{clock(walk)}"
            ),
            f"a daily total of {true:,} steps for {P}, with a long walk starting {clock(walk)}",
        ],
        people=[P],
        place="home",
        anchors=[f"{true:,}"],
        facts={"topic": "steps", "person": P, "day": day, "value": true, "conflict": True},
    )
    b = ctx.conflict.emit(
        at(day, 21, r.randint(51, 58)),
        phone,
        "app_usage",
        [
            f"the health app's pedometer reporting {app:,} steps for the day",
            f"{app:,} steps today according to the phone's built-in step counter",
        ],
        people=[P],
        place="home",
        anchors=[f"{app:,}"],
    )
    s1 = ctx.support.emit(
        walk,
        hh.shared("doorbell_camera"),
        "vision",
        [
            f"{P} setting off on foot with empty hands and a light jacket",
            f"{P} leaving for a walk, nothing in hand",
        ],
        people=[P],
    )
    s2 = ctx.support.emit(
        walk + timedelta(minutes=wlen // 2),
        phone,
        "location",
        [
            (
                f"the phone stationary at home (kitchen charging point) between {clock(walk)} and "
                f"{clock(walk + timedelta(minutes=wlen))}"
            ),
            f"no movement of {P}'s phone from the house for over an hour from {clock(walk)}",
        ],
        people=[P],
        place="home",
    )
    s3 = ctx.support.emit(
        walk + timedelta(minutes=wlen),
        hh.shared("doorbell_camera"),
        "vision",
        [
            f"{P} coming back up the path, slightly out of breath",
            f"{P} returning on foot, still empty-handed",
        ],
        people=[P],
    )
    return _draft(
        ctx,
        "steps",
        P,
        [
            f"How many steps did {P} really do {{day:day}}?",
            f"The step counts for {P} {{day:day}} don't match — which is right?",
        ],
        f"They disagree: {ctx.label(watch)} counted {true:,} steps, the phone's pedometer "
        f"{app:,}. The "
        f"watch is better supported: the doorbell camera saw {P} leave for a walk at {clock(walk)} "
        f"empty-handed, and the phone stayed at home during it, so the phone missed the walk.",
        (f"Watch: {true:,} steps", a, f"{true:,}"),
        (f"Phone: {app:,} steps", b, f"{app:,}"),
        ("Watch better supported: the phone was left at home during the walk", [s1, s2, s3]),
        {"day": walk},
    )


STOCK = [
    (
        "eggs",
        "a box of six eggs on the middle shelf",
        (
            "cracking the last eggs into a bowl for "
            "omelettes and dropping the empty box in the recycling"
        ),
    ),
    (
        "butter",
        "a full block of butter in the door",
        ("using the whole block of butter for a tray of flapjacks and binning the wrapper"),
    ),
    (
        "cheese",
        "a large wedge of cheddar cheese on the top shelf",
        ("grating the rest of the cheese onto a dish of pasta bake and throwing away the wrapper"),
    ),
]


def fridge_stock(ctx: Ctx, p: Person) -> QuestionDraft | None:
    hh, r, A = ctx.hh, ctx.r, p.name
    fridge, speaker = hh.shared("smart_fridge"), hh.shared("smart_speaker")
    cam = next(
        (
            c
            for c in (hh.shared("indoor_camera"), hh.shared("smart_display"))
            if c and hh.device(c).location in ("kitchen", "living_room")
        ),
        None,
    )
    if p.kind not in ("adult", "elder", "teen"):
        return None
    others = [q.name for q in hh.residents if q.name != A and q.kind in ("adult", "teen", "elder")]
    day = ctx.free_day("stock", "household", [0, 1, 2, 3, 4, 5, 6])
    if not (fridge and cam and speaker and others) or day is None:
        return None
    ctx.world.claim("stock", "household", day)
    item, seen, used = r.choice(STOCK)
    K = r.choice(others)
    snap = at(day, 15, r.randint(0, 40))
    a = ctx.conflict.emit(
        snap,
        fridge,
        "vision",
        [
            f"the interior photo showing {seen}",
            f"{seen}, next to a jar of jam",
        ],
        anchors=[item],
    )
    s1 = ctx.support.emit(
        snap + timedelta(minutes=r.randint(70, 100)),
        cam,
        "vision",
        [
            f"{K} at the counter {used}",
            f"{K} {used}",
        ],
        people=[K],
        anchors=[item],
    )
    s2 = ctx.support.emit(
        s1.ts - timedelta(minutes=2) if s1 else snap + timedelta(minutes=80),
        fridge,
        "device_status",
        ["the door opened for 22 seconds", "a 22-second door opening"],
    )
    b = ctx.conflict.emit(
        at(day, 19, r.randint(0, 40)),
        speaker,
        "dialogue",
        [
            f"{A} said there's no {item} left in the house and put {item} on the shopping list",
            f"{A} noted the {item} has run out and asked for it to be added to the list",
        ],
        people=[A],
        anchors=[item],
    )
    return _draft(
        ctx,
        "food",
        A,
        [
            f"Did we have any {item} in {{when:day}}?",
            (
                f"{'Were there any' if item.endswith('s') else 'Was there any'} {item} left in "
                "the fridge "
                f"{{when:day}} or not?"
            ),
        ],
        f"The records conflict: the fridge camera's photo at {clock(snap)} showed {seen}, but "
        f"{A} said "
        f"that evening there was none left. {A}'s statement is better supported: after the photo "
        f"{ctx.label(cam)} saw {K} use it up ({used.split(' and ')[0]}), so the photo was out of "
        "date.",
        (f"Fridge photo at {clock(snap)}: {seen}", a, item),
        (f"{A}: no {item} left", b, item),
        (f"{A} better supported: {K} used it up after the photo", [s1, s2]),
        {"day": snap},
        asker=ctx.asker(K),
    )


def arrival(ctx: Ctx, p: Person) -> QuestionDraft | None:
    hh, r, P = ctx.hh, ctx.r, p.name
    lock, door = hh.shared("smart_lock"), hh.shared("doorbell_camera")
    talker = hh.shared("smart_speaker") or hh.shared("smart_display")
    days = [d for d in p.work_days if d < 5] if p.work else []
    day = ctx.free_day("arrival", P, days)
    if not (lock and door and talker and p.kind == "adult") or day is None:
        return None
    ctx.world.claim("arrival", P, day)
    back = at(day, 18, r.randint(38, 58))
    claim = r.choice(["six", "half six", "just after six"])
    s1 = ctx.support.emit(
        back - timedelta(minutes=1),
        door,
        "vision",
        [
            f"{P} arriving at the front door",
            f"{P} walking up the path with a work bag",
        ],
        people=[P],
    )
    a = ctx.conflict.emit(
        back,
        lock,
        "location",
        [
            f"the front door unlocked from outside by {P}'s keypad code at {clock(back)}",
            f"an entry with {P}'s code at {clock(back)}",
        ],
        people=[P],
        anchors=[clock(back)],
        facts={"topic": "arrival", "person": P, "day": day, "value": clock(back), "conflict": True},
    )
    s2 = ctx.support.emit(
        back - timedelta(minutes=4),
        hh.car(P),
        "location",
        [
            f"the drive home ending at {clock(back - timedelta(minutes=4))}",
            f"the car parked on the drive at {clock(back - timedelta(minutes=4))}",
        ],
        people=[P],
    )
    s3 = ctx.support.emit(
        back - timedelta(minutes=3),
        hh.phone(P),
        "location",
        [
            f"{P} entering the home geofence at {clock(back - timedelta(minutes=3))}",
            f"{P}'s phone arriving in the home zone ({clock(back - timedelta(minutes=3))})",
        ],
        people=[P],
        place="home",
    )
    b = ctx.conflict.emit(
        at(day, 21, r.randint(10, 50)),
        talker,
        "dialogue",
        [
            f"{P} said {p.pron['he']} had been home since about {claim} that evening",
            f"{P} claimed to have got in at around {claim}",
        ],
        people=[P],
        anchors=[claim],
    )
    return _draft(
        ctx,
        "arrival",
        P,
        [
            f"What time did {P} really get home {{when:day}}?",
            (
                f"When did {P} get back {{when:day}} — {p.pron['he']} says one thing, the house "
                "says another?"
            ),
        ],
        f"There are two versions: the front-door lock logged {P}'s code at {clock(back)}, while "
        f"{P} later "
        f"said {p.pron['he']} had been home since about {claim}. The lock is better supported: the "
        f"doorbell camera saw {P} arrive a minute earlier"
        + (f" and the car was parked at {clock(back - timedelta(minutes=4))}" if s2 else "")
        + ".",
        (f"Lock: entry at {clock(back)}", a, clock(back)),
        (f"{P}: home since about {claim}", b, claim),
        ("Lock better supported by the doorbell camera, phone (and car)", [s1, s2, s3]),
        {"day": back},
    )


def tv_time(ctx: Ctx, p: Person) -> QuestionDraft | None:
    hh, r, P = ctx.hh, ctx.r, p.name
    tv, cam = hh.shared("smart_tv"), hh.shared("indoor_camera")
    talker = hh.shared("smart_speaker") or hh.shared("smart_display")
    day = ctx.free_day("tv", "household", [0, 1, 2, 3, 4, 5])
    if not (tv and cam and talker) or day is None or p.kind not in ("adult", "teen"):
        return None
    ctx.world.claim("tv", "household", day)
    start = at(day, 20, r.randint(0, 20))
    minutes = r.randint(150, 185)
    show = r.choice(["a true-crime series", "a fantasy box set", "a reality dating show"])
    a = ctx.conflict.emit(
        start + timedelta(minutes=minutes),
        tv,
        "app_usage",
        [
            (
                f"{show} played on {P}'s profile for {hours_minutes(minutes)} from {clock(start)}, "
                f"{minutes // 50} episodes back to back"
            ),
            (
                f"{hours_minutes(minutes)} of {show} streamed under {P}'s profile starting "
                f"{clock(start)}"
            ),
        ],
        people=[P],
        anchors=[hours_minutes(minutes)],
        facts={"topic": "tv", "person": "household", "day": day, "value": minutes, "show": show},
    )
    s1 = ctx.support.emit(
        start + timedelta(minutes=minutes - 25),
        cam,
        "vision",
        [
            f"{P} stretched out on the sofa under a blanket with the TV on",
            f"{P} on the sofa facing the TV, a bowl of popcorn nearby",
        ],
        people=[P],
    )
    end = start + timedelta(minutes=minutes)
    s2 = ctx.support.emit(
        end + timedelta(minutes=2),
        tv,
        "device_status",
        [
            f"switched to standby at {clock(end + timedelta(minutes=2))}",
            (f"powered down at {clock(end + timedelta(minutes=2))} from the remote"),
        ],
    )
    s3 = ctx.support.emit(
        end + timedelta(minutes=5),
        hh.shared("motion_sensor"),
        "motion",
        [
            f"a hallway trigger at {clock(end + timedelta(minutes=5))}, someone heading upstairs",
            f"movement through the hallway at {clock(end + timedelta(minutes=5))}",
        ],
        people=[P],
    )
    b = ctx.conflict.emit(
        at(day + 1, 18, r.randint(0, 50)),
        talker,
        "dialogue",
        [
            f"{P} said {p.pron['he']} only watched about an hour of TV last night",
            f'{P} insisted {p.pron["his"]} TV last night was "an hour, tops"',
        ],
        people=[P],
        anchors=["hour"],
    )
    return _draft(
        ctx,
        "tv",
        P,
        [
            f"How much TV did {P} watch {{when:night}}?",
            f"Is it true {P} watched only a little TV {{when:night}}?",
        ],
        f"The accounts differ: the TV logged {hours_minutes(minutes)} of {show} on {P}'s profile "
        "from "
        f"{clock(start)}, while {P} said the next day it was only about an hour. The TV log is "
        "better "
        f"supported: the living-room camera still saw {P} on the sofa with the TV on near the end.",
        (f"TV: {hours_minutes(minutes)} of {show}", a, hours_minutes(minutes)),
        (f"{P}: about an hour", b, "hour"),
        ("Camera and standby time show the viewing continued", [s1, s2, s3]),
        {"night": start},
        asker=ctx.asker(P),
    )


def weight(ctx: Ctx, p: Person) -> QuestionDraft | None:
    hh, r, P = ctx.hh, ctx.r, p.name
    scale = hh.shared("smart_scale")
    talker = hh.phone(P) or hh.shared("smart_speaker")
    if not (scale and talker) or p.kind not in ("adult", "elder"):
        return None
    days = sorted(r.sample([d for d in range(7) if not ctx.world.is_claimed("weight", P, d)], 3))
    base = usual_weight(P) + 0.5
    readings = [round(base + 0.1 * r.randint(-3, 3), 1) for _ in days]
    obs = []
    for d, kg in zip(days, readings):
        ctx.world.claim("weight", P, d)
        em = ctx.conflict if d == days[-1] else ctx.support
        obs.append(
            em.emit(
                at(d, 7, r.randint(0, 40)),
                scale,
                "health",
                [
                    f"{kg:.1f} kg on {P}'s profile",
                    (f"a weigh-in for {P}: {kg:.1f} kg, body fat {r.randint(190, 300) / 10:.1f}%"),
                ],
                people=[P],
                anchors=[f"{kg:.1f}"],
                facts={"topic": "weight", "person": P, "day": d, "value": kg},
            )
        )
    claimed = round(base - r.randint(30, 45) / 10, 0)
    b = ctx.conflict.emit(
        at(days[-1], 19, r.randint(0, 50)),
        talker,
        "dialogue",
        [
            f"{P} told a friend {p.pron['he']} is down to {claimed:.0f} kilos now",
            f"{P} said {p.pron['his']} weight has dropped to {claimed:.0f} kg",
        ],
        people=[P],
        anchors=[f"{claimed:.0f}"],
    )
    return _draft(
        ctx,
        "weight",
        P,
        [
            f"What does {P} actually weigh at the moment?",
            f"How much did {P} weigh {{day:day}}, really?",
        ],
        f"The figures conflict: the bathroom scale measured {readings[-1]:.1f} kg on "
        f"{day_label(obs[-1].ts) if obs[-1] else ''}, while {P} told someone {p.pron['he']} was "
        "down to "
        f"{claimed:.0f} kg. The scale is better supported: its earlier weigh-ins this week "
        f"({', '.join(f'{k:.1f}' for k in readings[:-1])} kg) are consistent with it.",
        (f"Scale: {readings[-1]:.1f} kg", obs[-1], f"{readings[-1]:.1f}"),
        (f"{P}: {claimed:.0f} kg", b, f"{claimed:.0f}"),
        ("Scale consistent with earlier weigh-ins", obs[:-1]),
        {"day": obs[-1].ts if obs[-1] else at(0, 0)},
    )


def back_door(ctx: Ctx, p: Person) -> QuestionDraft | None:
    hh, r, P = ctx.hh, ctx.r, p.name
    sensor, talker = hh.shared("door_window_sensor"), hh.shared("smart_speaker")
    others = [q.name for q in hh.residents if q.name != P and q.kind in ("adult", "teen", "elder")]
    day = ctx.free_day("door", "household", [0, 1, 2, 3, 4, 5])
    if not (sensor and talker) or day is None or p.kind not in ("adult", "teen"):
        return None
    ctx.world.claim("door", "household", day)
    B = r.choice(others) if others else P
    opened = at(day, 21, r.randint(30, 50))
    closed = opened + timedelta(minutes=r.randint(38, 52))
    place = hh.device(sensor).location.replace("_", " ")
    a = ctx.conflict.emit(
        opened,
        sensor,
        "device_status",
        [
            f"the {place} opened at {clock(opened)} and not closed again",
            f"an open event at {clock(opened)}; no matching close followed",
        ],
        anchors=[clock(opened)],
    )
    b = ctx.conflict.emit(
        opened + timedelta(minutes=6),
        talker,
        "dialogue",
        [
            (
                f"{P} said {p.pron['he']} had put the bins out and definitely shut the {place} "
                "behind "
                f"{'her' if p.gender == 'f' else 'him'}"
            ),
            f"{P} stated the {place} was closed after the bins went out",
        ],
        people=[P],
        anchors=["bins"],
    )
    s1 = ctx.support.emit(
        closed - timedelta(minutes=1),
        hh.shared("smart_display") or talker,
        "audio",
        [
            f'{B} saying "why is the {place} wide open? it\'s freezing"',
            f"{B} complaining that the {place} had been left open",
        ],
        people=[B],
    )
    s2 = ctx.support.emit(
        closed,
        sensor,
        "device_status",
        [
            f"the {place} closed at {clock(closed)}",
            f"a close event at {clock(closed)}",
        ],
    )
    s3 = ctx.support.emit(
        closed + timedelta(minutes=1),
        hh.shared("motion_sensor"),
        "motion",
        [
            (
                f"a hallway trigger at {clock(closed + timedelta(minutes=1))} as someone came back "
                "through"
            ),
            f"movement in the hallway at {clock(closed + timedelta(minutes=1))}",
        ],
        people=[B],
    )
    return _draft(
        ctx,
        "door",
        P,
        [
            f"Was the {place} left open {{when:night}}?",
            f"{P} says {p.pron['he']} shut the {place} {{when:night}} — did {p.pron['he']}?",
        ],
        f"The records disagree: the {place} sensor shows it opened at {clock(opened)} with no "
        "close, "
        f"while {P} said {p.pron['he']} shut it after putting the bins out. The sensor is better "
        f"supported: {B} later found it wide open and it only registered closed at "
        f"{clock(closed)}.",
        (f"Sensor: opened at {clock(opened)}, not closed", a, clock(opened)),
        (f"{P}: closed after the bins", b, "bins"),
        (f"{B} found it open; closed at {clock(closed)}", [s1, s2, s3]),
        {"night": opened},
    )


def medication(ctx: Ctx, p: Person) -> QuestionDraft | None:
    hh, r, P = ctx.hh, ctx.r, p.name
    cam = hh.shared("indoor_camera")
    talker = hh.shared("smart_display") or hh.shared("smart_speaker")
    carer = next((q.name for q in hh.people if q.kind == "carer"), None)
    day = ctx.free_day("medication", P, [0, 1, 2, 3, 4])
    if not (cam and talker and carer) or day is None or p.kind != "elder":
        return None
    ctx.world.claim("medication", P, day)
    s1 = ctx.support.emit(
        at(day, 8, r.randint(0, 10)),
        talker,
        "dialogue",
        [
            f"the morning tablet reminder for {P} timed out without a reply",
            f"{P}'s 8 o'clock medication reminder was dismissed with no answer",
        ],
        people=[P],
    )
    wd = day_label(at(day, 0)).split()[0]
    a = ctx.conflict.emit(
        at(day, 11, r.randint(20, 40)),
        cam,
        "vision",
        [
            (
                f"the pill organiser on the counter with the {wd}-morning compartment still closed "
                "and full"
            ),
            f"a close view of the pill box: {wd} morning lid shut, tablets inside",
        ],
        anchors=[wd],
    )
    b = ctx.conflict.emit(
        at(day, 11, r.randint(45, 58)),
        hh.shared("smart_speaker") or talker,
        "dialogue",
        [
            f"{P} told {carer} {p.pron['he']} had taken the morning tablets with breakfast",
            f"{P} assured {carer} the morning pills were already taken",
        ],
        people=[P, carer],
        anchors=[carer],
    )
    s2 = ctx.support.emit(
        at(day, 12, r.randint(20, 40)),
        hh.phone(carer) or talker,
        "dialogue",
        [
            (
                f"{carer} noted that the {wd}-morning tablets were still in the organiser when "
                f"{carer} left"
            ),
            f"{carer} recorded finding {P}'s {wd}-morning pills untouched at the end of the visit",
        ],
        people=[carer, P],
    )
    return _draft(
        ctx,
        "medication",
        P,
        [
            f"Did {P} take the morning tablets {{day:day}}?",
            f"{P}'s morning medication {{day:day}} — taken or not?",
        ],
        f"They conflict: the living-room camera saw the {wd}-morning compartment still closed "
        "and full "
        f"at late morning, while {P} told {carer} the tablets had been taken. The camera is better "
        f"supported: the 8 o'clock reminder had gone unanswered.",
        (f"Camera: {wd}-morning compartment still full", a, wd),
        (f"{P}: tablets taken", b, carer),
        ("Reminder unanswered; carer found the tablets untouched", [s1, s2]),
        {"day": at(day, 11)},
        asker=carer,
    )


def workout_length(ctx: Ctx, p: Person) -> QuestionDraft | None:
    hh, r, P = ctx.hh, ctx.r, p.name
    watch, phone, door = hh.watch(P), hh.phone(P), hh.shared("doorbell_camera")
    day = ctx.free_day("workout", P, [0, 1, 2, 3, 4, 5, 6])
    if not (watch and phone and door) or day is None or p.kind not in ("adult", "teen"):
        return None
    ctx.world.claim("workout", P, day)
    start = at(day, 18 if day < 5 else 9, r.randint(0, 40))
    true = r.randint(28, 36)
    app = true + r.randint(13, 22)
    km = round(true / r.uniform(5.3, 6.2), 1)
    s1 = ctx.support.emit(
        start - timedelta(minutes=1),
        door,
        "vision",
        [
            f"{P} setting off in running kit at {clock(start - timedelta(minutes=1))}",
            f"{P} jogging away from the house in shorts and a running vest",
        ],
        people=[P],
    )
    back = start + timedelta(minutes=true + 1)
    s2 = ctx.support.emit(
        back,
        door,
        "vision",
        [
            f"{P} back at the gate, hands on knees, at {clock(back)}",
            f"{P} returning at a jog and stretching on the path ({clock(back)})",
        ],
        people=[P],
    )
    a = ctx.conflict.emit(
        start + timedelta(minutes=true),
        watch,
        "motion",
        [
            (
                f"an outdoor run of {km} km in {true} min, auto-detected end at "
                f"{clock(start + timedelta(minutes=true))}"
            ),
            f"{P}'s run: {km} km, {true} minutes, ended automatically when {P} stopped moving",
        ],
        people=[P],
        place=hh.places["park"],
        anchors=[f"{true}"],
        facts={"topic": "workout_conflict", "person": P, "day": day},
    )
    s3 = ctx.support.emit(
        back + timedelta(minutes=2),
        hh.shared("smart_lock"),
        "location",
        [
            (
                f"the front door unlocked from outside with {P}'s phone key at "
                f"{clock(back + timedelta(minutes=2))}"
            ),
            f"{P}'s phone key opening the door at {clock(back + timedelta(minutes=2))}",
        ],
        people=[P],
    )
    b = ctx.conflict.emit(
        start + timedelta(minutes=app),
        phone,
        "app_usage",
        [
            (
                f"the running app saving a {app}-minute run for {P}, recording stopped manually, "
                f"distance {km} km"
            ),
            f"a {app}-minute workout in the running app (stopped by hand), {km} km",
        ],
        people=[P],
        place="home",
        anchors=[f"{app}"],
    )
    return _draft(
        ctx,
        "workout",
        P,
        [
            f"How long was {P}'s run {{day:day}}, really?",
            f"{P}'s run {{day:day}}: the watch and the app disagree on the time — which is right?",
        ],
        f"They disagree: {ctx.label(watch)} recorded {true} minutes ({km} km), the phone's "
        "running app "
        f"{app} minutes. The watch is better supported: the doorbell camera saw {P} leave and "
        "come back "
        f"{true + 2} minutes apart and the door was unlocked right after, so the app was simply "
        "stopped "
        f"late.",
        (f"Watch: {true} minutes", a, f"{true}"),
        (f"App: {app} minutes", b, f"{app}"),
        ("Doorbell and lock times match the watch", [s1, s2, s3]),
        {"day": start},
    )


def temperature(ctx: Ctx, p: Person) -> QuestionDraft | None:
    hh, r, P = ctx.hh, ctx.r, p.name
    thermo = hh.shared("smart_thermostat")
    talker = hh.shared("smart_speaker") or hh.shared("smart_display")
    day = ctx.free_day("cold", "household", [0, 1, 2, 3, 4, 5, 6])
    if not (thermo and talker) or day is None or p.kind not in ("adult", "elder", "teen"):
        return None
    ctx.world.claim("cold", "household", day)
    came_in = at(day, 19, r.randint(0, 20))
    reading = round(20.8 + r.randint(0, 9) / 10, 1)
    s1 = ctx.support.emit(
        came_in,
        hh.shared("doorbell_camera"),
        "vision",
        [
            f"{P} coming in from the garden in a T-shirt, rubbing {p.pron['his']} arms",
            f"{P} hurrying indoors without a coat after being outside in the drizzle",
        ],
        people=[P],
    )
    b = ctx.conflict.emit(
        came_in + timedelta(minutes=6),
        talker,
        "dialogue",
        [
            (
                f"{P} said it must be about 16 degrees in the living room and wanted the heating "
                "turned up"
            ),
            f'{P} complained the house is freezing, "16 degrees at most"',
        ],
        people=[P],
        anchors=["16"],
    )
    a = ctx.conflict.emit(
        came_in + timedelta(minutes=8),
        thermo,
        "environment",
        [
            f"{reading} °C in the living room, within 0.3 °C of the evening setpoint",
            f"a living-room temperature of {reading} °C, steady for the past hour",
        ],
        anchors=[f"{reading}"],
    )
    s2 = ctx.support.emit(
        came_in + timedelta(minutes=40),
        thermo,
        "environment",
        [
            f"{round(reading - 0.1, 1)} °C and {r.randint(44, 55)}% humidity in the living room",
            f"room temperature {round(reading - 0.1, 1)} °C, unchanged",
        ],
    )
    s3 = ctx.support.emit(
        came_in + timedelta(minutes=3),
        hh.watch(P),
        "health",
        [
            f"a skin temperature 1.6 °C below {P}'s baseline",
            f"{P}'s wrist temperature down 1.6 °C on baseline",
        ],
        people=[P],
    )
    return _draft(
        ctx,
        "temperature",
        P,
        [
            "How cold was it really in the living room {when:night}?",
            f"{P} said the living room was freezing {{when:night}} — was it?",
        ],
        f"The readings disagree with {P}: {ctx.label(thermo)} measured {reading} °C, while {P} "
        "said it was "
        "about 16 degrees. The thermostat is better supported: its readings stayed around "
        f"{reading} °C for "
        f"the next hour, and {P} had just come in from outside without a coat"
        + (" with a chilled wrist temperature" if s3 else "")
        + ", which explains feeling cold.",
        (f"Thermostat: {reading} °C", a, f"{reading}"),
        (f"{P}: about 16 degrees", b, "16"),
        ("Steady readings; had just come in from the cold", [s1, s2, s3]),
        {"night": came_in},
    )


BUILDERS: list[tuple[str, Builder]] = [
    ("sleep", sleep_apps),
    ("steps", steps),
    ("food", fridge_stock),
    ("arrival", arrival),
    ("tv", tv_time),
    ("weight", weight),
    ("door", back_door),
    ("medication", medication),
    ("workout", workout_length),
    ("temperature", temperature),
]


def paired_conflicts(
    hh: Household, world: WorldState, rng: random.Random, target: int = 8
) -> tuple[list[Obs], list[QuestionDraft]]:
    """Up to `target` conflicts, at most one per (kind, person), spread over kinds and people."""
    ctx = Ctx(hh, world, rng)
    drafts: list[QuestionDraft] = []
    attempts = [(kind, fn, p) for kind, fn in BUILDERS for p in hh.residents]
    rng.shuffle(attempts)
    used_kinds: dict[str, int] = {}
    used_people: dict[str, int] = {}
    repeatable = {"sleep", "steps"}  # person-specific enough to appear twice in one household
    while attempts and len(drafts) < target:
        attempts.sort(key=lambda a: (used_kinds.get(a[0], 0), used_people.get(a[2].name, 0)))
        kind, fn, person = attempts.pop(0)
        if used_kinds.get(kind, 0) >= (2 if kind in repeatable else 1):
            continue
        draft = fn(ctx, person)
        if draft is None:
            continue
        used_kinds[kind] = used_kinds.get(kind, 0) + 1
        used_people[person.name] = used_people.get(person.name, 0) + 1
        drafts.append(draft)
    return ctx.conflict.items + ctx.support.items, drafts
