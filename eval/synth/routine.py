"""Stage 3, everyday life: routine, periodic and incidental events around the storylines.

Routine events are simulated from each person's structured day (sleep, commute,
workouts, screens, meals, chores); they carry `facts` so stage 4 can ask aggregation
questions whose answers are computed, not guessed. Slots a storyline claimed (a sleep
night, a day's step count) are skipped so the two never contradict each other.
Periodic readings and noise fill the stream the way real sensors do.
"""

from __future__ import annotations

import random
from datetime import timedelta

from eval.synth.emit import Emitter
from eval.synth.episodes import WorldState
from eval.synth.personas import Household, Person, usual_weight
from eval.synth.phrasing import duration, hours_minutes
from eval.synth.timewords import at, clock, is_weekend
from eval.synth.world import Obs

SLEEP_BASE = {"adult": 415, "teen": 450, "child": 600, "toddler": 640, "elder": 395, "carer": 420}
STEPS_BASE = {
    "adult": 8200,
    "teen": 9000,
    "child": 11500,
    "toddler": 0,
    "elder": 4600,
    "carer": 9000,
}
APPS = {
    "adult": [
        "WhatsApp",
        "the BBC News app",
        "Outlook",
        "Instagram",
        "Spotify",
        "Podcasts",
        "Maps",
    ],
    "teen": ["TikTok", "YouTube", "Snapchat", "Discord", "Instagram", "Spotify"],
    "elder": ["the BBC News app", "WhatsApp", "Facebook", "a crossword app", "the radio app"],
}
SHOWS = [
    "the evening news",
    "a Scandi crime drama",
    "a baking competition",
    ("Premier League highlights"),
    "a nature documentary",
    "a quiz show",
    "a cooking programme",
    "a sitcom rerun",
]
GAMES = ["Rocket League", "Minecraft", "EA FC", "Fortnite", "Mario Kart", "Forza Horizon"]
FRIDGE = [
    "a bag of spinach in the crisper",
    "half a lasagne in a glass dish",
    "a block of cheddar",
    "a jar of pesto",
    "three peppers",
    "a tub of hummus",
    "leftover curry in a takeaway tub",
    "a bottle of white wine on its side",
    "a pack of chicken thighs",
    "grapes in a punnet",
    "a jar of mayonnaise",
    "carrots in the bottom drawer",
    "a cucumber",
    "a pot of olives",
]


def simulate_routines(hh: Household, world: WorldState, rng: random.Random) -> list[Obs]:
    em = Emitter(hh, rng, "routine", f"{hh.scenario_id}_R")
    for day in range(7):
        for p in hh.people:
            if not p.lives_in:
                _carer(em, hh, world, p, day)
                continue
            _sleep(em, hh, world, p, day)
            _resting(em, hh, world, p, day)
            _commute(em, hh, world, p, day)
            _workouts(em, hh, world, p, day)
            _steps(em, hh, world, p, day)
            _screens(em, hh, world, p, day)
            _weigh(em, hh, world, p, day)
            _medication(em, hh, world, p, day)
            _daily_bits(em, hh, world, p, day)
        _household(em, hh, world, day)
    return em.items


def _dur(r: random.Random, minutes: int) -> str:
    return duration(minutes, r)


def _sleep(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    watch = hh.watch(p.name)
    night = day - 1
    if watch is None or world.is_claimed("sleep", p.name, night):
        return
    r = em.rng
    weekend_night = night % 7 in (4, 5)
    base = SLEEP_BASE[p.kind] + (60 if weekend_night and p.kind in ("teen", "adult") else 0)
    minutes = max(250, int(r.gauss(base, 38)))
    wake_min = p.wake[1 if is_weekend(day) else 0] + r.randint(-10, 12)
    wake = at(day, 0, wake_min)
    bed = wake - timedelta(minutes=minutes + r.randint(8, 35))
    shown = _dur(r, minutes)
    deep, rem, woke = r.randint(45, 115), r.randint(60, 120), r.randint(0, 4)
    em.emit(
        wake,
        watch,
        "health",
        [
            (
                f"{p.name}'s night: {shown} asleep, in bed from {clock(bed)} to {clock(wake)}, "
                f"{deep} min of "
                f"deep sleep and {woke} short awakenings"
            ),
            (
                f"a sleep session for {p.name} of {shown} with a sleep score of "
                f"{r.randint(58, 92)}/100 and "
                f"{rem} min of REM"
            ),
            (
                f"{shown} of sleep for {p.name}, {woke} wake-ups, lowest overnight heart rate "
                f"{r.randint(44, 62)} bpm"
            ),
        ],
        people=[p.name],
        place="bedroom",
        anchors=[shown],
        facts={"topic": "sleep", "person": p.name, "day": night, "value": minutes, "shown": shown},
    )


def _resting(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    watch = hh.watch(p.name)
    r = em.rng
    if (
        watch is None
        or p.kind not in ("adult", "elder")
        or world.is_claimed("resting_hr", p.name, day)
    ):
        return
    if r.random() > 0.45:
        return
    rate, hrv = r.randint(54, 72), r.randint(28, 66)
    ts = at(day, 0, p.wake[1 if is_weekend(day) else 0] + r.randint(15, 40))
    em.emit(
        ts,
        watch,
        "health",
        [
            (
                f"a resting heart rate of {rate} bpm for {p.name} on waking and heart-rate "
                f"variability of {hrv} ms"
            ),
            (
                f"{p.name}'s morning readiness: resting pulse {rate} bpm, HRV {hrv} ms, "
                "breathing rate "
                f"{r.randint(12, 17)} per minute"
            ),
        ],
        people=[p.name],
        place="home",
        anchors=[f"{rate}"],
        facts={"topic": "resting_hr", "person": p.name, "day": day, "value": rate},
    )


def _commute(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    if not p.work or day not in p.work_days or is_weekend(day):
        return
    r = em.rng
    name = p.name
    leave = at(day, 0, p.leave + r.randint(-6, 9))
    carry = {
        "child": "a book bag and a lunchbox",
        "teen": "a rucksack and earphones in",
        "adult": r.choice(
            [
                "a laptop bag",
                "a travel mug and a backpack",
                "a tote bag",
                "a cycle helmet" if p.commute == "bike" else "a coat over one arm",
            ]
        ),
    }
    what = carry.get(p.kind, "a bag")
    # a storyline that keeps someone home (or makes them leave differently) claims the morning
    morning = not world.is_claimed("departure", name, day)
    if morning:
        em.emit(
            leave,
            hh.shared("doorbell_camera"),
            "vision",
            [
                f"{name} leaving the house with {what}",
                f"{name} heading down the path with {what}",
                f"{name} stepping out of the front door carrying {what}",
            ],
            people=[name],
            facts=_day_out(name, day, "left the house with " + what),
        )
        if p.kind in ("adult", "teen") and r.random() < 0.85:
            out_at = clock(leave + timedelta(minutes=1))
            em.emit(
                leave + timedelta(minutes=1),
                hh.shared("smart_lock"),
                "location",
                [
                    f"the front door locked from outside with {name}'s phone key at {out_at}",
                    f"a lock event from outside at {out_at}, authorised by {name}'s phone",
                    f"the door bolted from the outside by {name} on the way out ({out_at})",
                ],
                people=[name],
                anchors=[name, out_at],
                facts={"topic": "departure", "person": name, "day": day, "value": out_at},
            )
    trip = r.randint(14, 32)
    if morning and p.commute == "car" and hh.car(name):
        em.emit(
            leave + timedelta(minutes=trip + 3),
            hh.car(name),
            "location",
            [
                (
                    f"a {trip}-minute drive from home to {p.work}, "
                    f"{r.randint(6, 19)}.{r.randint(0, 9)} km"
                ),
                f"a trip ending at {p.work} after {trip} minutes in moderate traffic",
            ],
            people=[name],
            facts=_day_out(name, day, f"drove to {p.work}"),
        )
    arrive_work = leave + timedelta(minutes=trip + 6)
    device = hh.phone(name) or (hh.watch(name) if p.kind == "child" else None)
    if morning and device and r.random() < 0.7:
        em.emit(
            arrive_work,
            device,
            "location",
            [
                f"{name} arriving at {p.work}",
                f"a position fix for {name} at {p.work}",
                f"{name} entering the geofence around {p.work}",
            ],
            people=[name],
            place=p.work,
            facts=_day_out(name, day, f"reached {p.work} around {clock(arrive_work)}"),
        )
    if world.is_claimed("arrival", name, day):
        return
    back = at(day, 0, p.back + r.randint(-10, 28))
    bag = r.choice(
        [
            "with a bag of shopping",
            "with a rucksack",
            "with a bunch of flowers",
            "empty-handed",
            "with a takeaway coffee",
            "with a parcel from the post office",
        ]
    )
    em.emit(
        back,
        hh.shared("doorbell_camera"),
        "vision",
        [
            f"{name} arriving home {bag}",
            f"{name} walking up to the front door {bag}",
            f"{name} coming back {bag} and fishing for keys",
        ],
        people=[name],
        facts=_day_out(name, day, f"came home {bag}"),
    )
    if p.kind in ("adult", "teen", "elder"):
        code = r.choice(["keypad code", "phone key", "fingerprint"])
        in_at = clock(back + timedelta(minutes=1))
        em.emit(
            back + timedelta(minutes=1),
            hh.shared("smart_lock"),
            "location",
            [
                f"the front door unlocked from outside with {name}'s {code} at {in_at}",
                f"an entry by {name} ({code}) at {in_at}",
                f"{name}'s {code} opening the door from outside at {in_at}",
            ],
            people=[name],
            anchors=[name, in_at],
            facts={"topic": "arrival", "person": name, "day": day, "value": in_at},
        )
    if p.commute == "car" and hh.car(name):
        em.emit(
            back - timedelta(minutes=2),
            hh.car(name),
            "location",
            [
                f"a {trip + r.randint(-3, 9)}-minute drive from {p.work} back home",
                f"the return journey from {p.work} ending on the drive at home",
            ],
            people=[name],
            facts=_day_out(name, day, f"drove back from {p.work}"),
        )


WORKOUT_TEXT = {
    "running": lambda r, m: (
        (
            f"an outdoor run of {m * r.randint(160, 190) // 1000 + 0.1 * r.randint(0, 9):.1f} km "
            f"in {m} min"
        ),
        "run",
    ),
    "cycling": lambda r, m: (
        f"a {m * r.randint(330, 420) // 1000 + 0.1 * r.randint(0, 9):.1f} km ride in {m} min",
        "ride",
    ),
    "yoga": lambda r, m: (
        f"a {m}-minute yoga session, mostly in the low-intensity zone",
        "yoga session",
    ),
    "swimming": lambda r, m: (f"a pool swim of {m * r.randint(30, 42):,} m in {m} minutes", "swim"),
    "football": lambda r, m: (
        f"a {m}-minute football session with {r.randint(25, 40)} sprints",
        "football session",
    ),
    "basketball": lambda r, m: (
        f"a {m}-minute basketball session, {r.randint(300, 520)} active calories",
        "basketball session",
    ),
    "walking": lambda r, m: (
        (
            f"a brisk walk of {m * r.randint(85, 105) // 1000 + 0.1 * r.randint(0, 9):.1f} km "
            f"in {m} minutes"
        ),
        "walk",
    ),
    "hiking": lambda r, m: (
        (
            f"a hike of {m * r.randint(60, 75) // 1000:.1f} km over {m} minutes with "
            f"{r.randint(180, 520)} m of climbing"
        ),
        "hike",
    ),
}


def _day_out(name: str, day: int, what: str) -> dict:
    return {"topic": "day_out", "person": name, "day": day, "what": what}


def _workouts(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    watch = hh.watch(p.name)
    if watch is None or world.is_claimed("workout", p.name, day):
        return
    r = em.rng
    for wday, kind, start, minutes in p.workouts:
        if wday != day:
            continue
        begin = at(day, 0, start + r.randint(-10, 15))
        end = begin + timedelta(minutes=minutes)
        summary, noun = WORKOUT_TEXT[kind](r, minutes)
        group = f"{p.name}:{day}:{kind}"
        avg, peak = r.randint(112, 158), r.randint(160, 184)
        if kind in ("yoga", "walking"):
            avg, peak = r.randint(88, 112), r.randint(114, 132)
        facts = {
            "topic": "workout",
            "person": p.name,
            "day": day,
            "kind": kind,
            "value": minutes,
            "group": group,
            "summary": summary,
            "noun": noun,
            "avg": avg,
            "peak": peak,
        }
        em.emit(
            end,
            watch,
            "motion",
            [
                summary + f", started at {clock(begin)}",
                f"{summary} for {p.name}, beginning {clock(begin)}",
                (
                    f"{p.name}'s {noun}: {summary.partition(' of ')[2] or summary}"
                    f", from {clock(begin)}"
                ),
            ],
            people=[p.name],
            place=hh.places["park"]
            if kind in ("running", "walking", "hiking", "football")
            else hh.places["gym"],
            facts={**facts, "primary": True},
            anchors=[str(minutes)],
        )
        em.emit(
            end + timedelta(minutes=1),
            hh.phone(p.name),
            "app_usage",
            [
                (
                    f"the fitness app saving {p.name}'s {noun}: average heart rate {avg} bpm, peak "
                    f"{peak} bpm"
                ),
                (
                    f"a workout summary in the fitness app — {noun}, {minutes} min, heart rate "
                    f"{avg} avg / {peak} max"
                ),
            ],
            people=[p.name],
            facts=facts,
            anchors=[str(avg)],
        )
        if r.random() < 0.4:
            em.emit(
                begin - timedelta(minutes=3),
                hh.shared("doorbell_camera"),
                "vision",
                [
                    f"{p.name} heading out in sports kit",
                    (f"{p.name} leaving in workout clothes with a water bottle"),
                ],
                people=[p.name],
                facts={**facts, "role": "leave"},
            )


def _steps(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    watch = hh.watch(p.name)
    if watch is None or world.is_claimed("steps", p.name, day):
        return
    r = em.rng
    base = STEPS_BASE[p.kind] + (3500 if any(w[0] == day for w in p.workouts) else 0)
    steps = max(900, int(r.gauss(base, 2200)))
    ts = at(day, 0, p.bed[1 if is_weekend(day) else 0] - r.randint(10, 40))
    shown = f"{steps:,}"
    em.emit(
        ts,
        watch,
        "motion",
        [
            f"{p.name}'s step count for the day: {shown}, about {steps * 0.72 / 1000:.1f} km",
            f"a daily total of {shown} steps and {r.randint(8, 70)} active minutes for {p.name}",
            f"{shown} steps so far today for {p.name}, {r.randint(4, 14)} floors climbed",
        ],
        people=[p.name],
        place="home",
        anchors=[shown],
        facts={"topic": "steps", "person": p.name, "day": day, "value": steps},
    )


def _screens(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    r = em.rng
    phone = hh.phone(p.name)
    if phone and not world.is_claimed("screen_time", p.name, day):
        base = {"teen": 290, "elder": 95}.get(p.kind, 165) + (50 if is_weekend(day) else 0)
        minutes = max(35, int(r.gauss(base, 45)))
        apps = r.sample(APPS.get(p.kind, APPS["adult"]), 2)
        top = int(minutes * r.uniform(0.3, 0.5))
        shown = _dur(r, minutes)
        em.emit(
            at(day, 0, p.bed[1 if is_weekend(day) else 0] - 12),
            phone,
            "app_usage",
            [
                (
                    f"daily screen time of {shown}: {apps[0]} {top} min, {apps[1]} "
                    f"{minutes // 5} min, "
                    f"{r.randint(40, 140)} pickups"
                ),
                f"{shown} on screen today, most of it in {apps[0]} ({top} min), then {apps[1]}",
                f"a screen-time total of {shown} for {p.name}, led by {apps[0]} at {top} minutes",
            ],
            people=[p.name],
            place="home",
            anchors=[shown],
            facts={
                "topic": "screen_time",
                "person": p.name,
                "day": day,
                "value": minutes,
                "top": apps[0],
                "shown": shown,
            },
        )
    tablet = hh.tablet(p.name)
    if tablet and p.kind in ("child", "elder") and r.random() < 0.75:
        show = r.choice(
            [
                "Bluey",
                "Minecraft Education",
                "a phonics game",
                "Octonauts",
                "a jigsaw app",
                "a drawing app",
            ]
            if p.kind == "child"
            else ["the crossword", "video calls with family", "a gardening magazine"]
        )
        minutes = r.randint(20, 65)
        em.emit(
            at(day, 16 if p.kind == "child" else 14, r.randint(0, 50)),
            tablet,
            "app_usage",
            [
                f"{minutes} minutes of {show} on {p.name}'s profile",
                f"a {minutes}-minute session of {show}",
            ],
            people=[p.name],
            anchors=[f"{minutes}"],
            facts={"topic": "tablet", "person": p.name, "day": day, "value": minutes, "what": show},
        )
    console = hh.shared("gaming_console")
    if (
        console
        and p.kind in ("teen", "adult")
        and not world.is_claimed("gaming", p.name, day)
        and r.random() < (0.5 if p.kind == "teen" else 0.2)
    ):
        game, minutes = r.choice(GAMES), r.randint(35, 150)
        end = at(day, 20, r.randint(0, 140))
        em.emit(
            end,
            console,
            "app_usage",
            [
                (
                    f"{p.name}'s profile in {game} for {hours_minutes(minutes)}, ending at "
                    f"{clock(end)}"
                ),
                (
                    f"a {game} session of {hours_minutes(minutes)} on {p.name}'s profile, last "
                    "input "
                    f"{clock(end)}"
                ),
            ],
            people=[p.name],
            anchors=[clock(end)],
            facts={
                "topic": "gaming",
                "person": p.name,
                "day": day,
                "value": minutes,
                "end": clock(end),
                "game": game,
            },
        )
    laptop = hh.laptop(p.name)
    if (
        laptop
        and p.kind == "adult"
        and not is_weekend(day)
        and (p.work is None or day not in p.work_days)
    ):
        minutes = r.randint(330, 470)
        first = at(day, 8, r.randint(30, 59))
        em.emit(
            first + timedelta(minutes=minutes + r.randint(20, 60)),
            laptop,
            "app_usage",
            [
                (
                    "work apps (Teams, Outlook, a spreadsheet) active for "
                    f"{hours_minutes(minutes)}, first "
                    f"activity {clock(first)}"
                ),
                (
                    f"{hours_minutes(minutes)} of work-app use since {clock(first)}, "
                    f"{r.randint(3, 9)} video calls"
                ),
            ],
            people=[p.name],
            anchors=[hours_minutes(minutes)],
            facts={"topic": "laptop_work", "person": p.name, "day": day, "value": minutes},
        )


def _daily_bits(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    """Small daily habits: the alarm, the weather question, homework, the kids' TV."""
    r = em.rng
    wake = at(day, 0, p.wake[1 if is_weekend(day) else 0])
    phone = hh.phone(p.name)
    if phone and r.random() < 0.6:
        sent, got = r.randint(4, 60), r.randint(10, 140)
        em.emit(
            at(day, 21, r.randint(0, 59)),
            phone,
            "app_usage",
            [
                f"{sent} messages sent and {got} received in WhatsApp so far today",
                (
                    f"a messaging tally for the day: {sent} sent, {got} received, "
                    f"{r.randint(1, 6)} voice notes"
                ),
            ],
            people=[p.name],
            place="home",
        )
    if phone and r.random() < 0.8:
        em.emit(
            wake + timedelta(minutes=r.randint(0, 3)),
            phone,
            "app_usage",
            [
                (
                    f"the alarm dismissed at {clock(wake)} followed by {r.randint(3, 14)} "
                    "minutes of "
                    f"{r.choice(['news headlines', 'messages', 'email', 'social media'])}"
                ),
                (
                    f"{p.name} snoozing the alarm once, then checking "
                    f"{r.choice(['the weather', 'messages', 'the news'])}"
                ),
            ],
            people=[p.name],
            place="bedroom",
        )
    talker = hh.shared("smart_speaker") or hh.shared("smart_display")
    if talker and p.kind in ("adult", "elder", "teen") and r.random() < 0.35:
        temp, sky = (
            r.randint(9, 21),
            r.choice(["showers", "sunny spells", "cloud", "light rain", "a dry day"]),
        )
        em.emit(
            wake + timedelta(minutes=r.randint(20, 50)),
            talker,
            "dialogue",
            [
                f"{p.name} asked about the weather; the forecast given was {temp} °C with {sky}",
                (
                    f"{p.name} wanted to know if an umbrella was needed today ({sky}, high of "
                    f"{temp} °C)"
                ),
            ],
            people=[p.name],
        )
    laptop = hh.laptop(p.name)
    if laptop and p.kind == "teen" and not is_weekend(day) and r.random() < 0.7:
        minutes = r.randint(30, 95)
        em.emit(
            at(day, 17, r.randint(0, 90)),
            laptop,
            "app_usage",
            [
                f"{minutes} minutes in the school's homework portal and a maths practice site",
                f"a {minutes}-minute homework session: the online classroom, then a revision quiz",
            ],
            people=[p.name],
            anchors=[f"{minutes}"],
            facts={"topic": "homework", "person": p.name, "day": day, "value": minutes},
        )
    watch = hh.watch(p.name)
    if watch and r.random() < 0.5 and not world.is_claimed("steps", p.name, day):
        so_far = r.randint(2100, 6900)
        em.emit(
            at(day, 13, r.randint(0, 40)),
            watch,
            "motion",
            [
                (
                    f"{so_far:,} steps by lunchtime for {p.name} and {r.randint(2, 9)} of 12 stand "
                    "hours so far"
                ),
                f"a midday activity check: {so_far:,} steps, {r.randint(4, 30)} active minutes",
            ],
            people=[p.name],
            place=p.work if (p.work and day in p.work_days and not is_weekend(day)) else "home",
        )
    if phone and p.kind in ("adult", "teen") and r.random() < 0.6:
        bedtime = at(day, 0, p.bed[1 if is_weekend(day) else 0] - r.randint(15, 40))
        em.emit(
            bedtime,
            phone,
            "app_usage",
            [
                (
                    f"bedtime mode switching on at {clock(bedtime)}, notifications silenced until "
                    f"{clock(wake + timedelta(days=1))}"
                ),
                f"wind-down started at {clock(bedtime)}: screen greyscale, do-not-disturb on",
            ],
            people=[p.name],
            place="bedroom",
        )
    if (
        p.work
        and day in p.work_days
        and not is_weekend(day)
        and phone
        and p.lives_in
        and not world.is_claimed("arrival", p.name, day)
    ):
        home_at = at(day, 0, p.back - r.randint(3, 12))
        em.emit(
            home_at,
            phone,
            "location",
            [
                f"{p.name} entering the home geofence",
                f"{p.name} arriving back in the home zone",
            ],
            people=[p.name],
            place="home",
        )
    if (
        p.kind == "elder"
        and watch
        and r.random() < 0.6
        and not world.is_claimed("workout", p.name, day)
    ):
        em.emit(
            at(day, 15, r.randint(0, 50)),
            watch,
            "motion",
            [
                (
                    f"a gentle {r.randint(12, 30)}-minute walk around the garden and the street "
                    "for "
                    f"{p.name}"
                ),
                (
                    f"{p.name} pottering in the garden for {r.randint(12, 30)} minutes, mostly "
                    "slow "
                    "walking"
                ),
            ],
            people=[p.name],
            place="garden",
        )
    tv = hh.shared("smart_tv")
    if tv and p.kind in ("child", "toddler") and r.random() < 0.6:
        show = r.choice(["Bluey", "Hey Duggee", "Paw Patrol", "Octonauts", "a nature cartoon"])
        em.emit(
            at(day, 16 if not is_weekend(day) else 8, r.randint(5, 50)),
            tv,
            "app_usage",
            [
                f"{show} on the kids' profile for {r.randint(15, 45)} minutes",
                f"the children's profile playing {show}, {r.randint(2, 4)} episodes",
            ],
            people=[p.name],
        )


def _weigh(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    scale = hh.shared("smart_scale")
    r = em.rng
    if scale is None or p.kind not in ("adult", "elder") or world.is_claimed("weight", p.name, day):
        return
    if r.random() > 0.4:
        return
    kg = usual_weight(p.name) + 0.1 * r.randint(-6, 6)
    em.emit(
        at(day, 0, p.wake[1 if is_weekend(day) else 0] + r.randint(5, 25)),
        scale,
        "health",
        [
            f"{kg:.1f} kg for {p.name}'s profile, body fat {r.randint(180, 320) / 10:.1f}%",
            f"a weigh-in recognised as {p.name}: {kg:.1f} kg",
        ],
        people=[p.name],
        anchors=[f"{kg:.1f}"],
        facts={"topic": "weight", "person": p.name, "day": day, "value": round(kg, 1)},
    )


def _medication(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    if p.kind != "elder" or world.is_claimed("medication", p.name, day):
        return
    r = em.rng
    dev = hh.shared("smart_display") or hh.shared("smart_speaker")
    for hour, label in ((8, "morning"), (18, "evening")):
        em.emit(
            at(day, hour, r.randint(0, 12)),
            dev,
            "dialogue",
            [
                f"{p.name} confirmed taking the {label} tablets after the reminder",
                f'the {label} medication reminder for {p.name} was acknowledged: "yes, taken them"',
            ],
            people=[p.name],
            facts={"topic": "medication", "person": p.name, "day": day, "value": label},
        )


def _carer(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    if is_weekend(day) or world.is_claimed("arrival", p.name, day):
        return
    r = em.rng
    arrive = at(day, 0, p.leave + r.randint(-8, 12))
    em.emit(
        arrive,
        hh.shared("smart_lock"),
        "location",
        [
            f"an entry with {p.name}'s keypad code at {clock(arrive)}",
            f"the door unlocked from outside by {p.name}'s code at {clock(arrive)}",
        ],
        people=[p.name],
        anchors=[p.name, clock(arrive)],
        facts={"topic": "carer_visit", "person": p.name, "day": day, "value": clock(arrive)},
    )
    em.emit(
        arrive - timedelta(minutes=1),
        hh.shared("doorbell_camera"),
        "vision",
        [
            f"{p.name} arriving with a tote bag and a lanyard",
            f"{p.name} at the door in a blue tunic",
        ],
        people=[p.name],
    )
    em.emit(
        at(day, 0, p.back + r.randint(-10, 15)),
        hh.shared("smart_lock"),
        "location",
        [
            f"the door locked from outside by {p.name} on leaving",
            f"{p.name}'s code locking up on the way out",
        ],
        people=[p.name],
    )


def _household(em: Emitter, hh: Household, world: WorldState, day: int) -> None:
    r = em.rng
    home = [p.name for p in hh.residents]
    dinner = at(day, 0, hh.dinner + r.randint(-10, 15))
    if len(home) > 1:
        a, b = r.sample(home, 2)
        em.emit(
            dinner,
            hh.shared("smart_speaker"),
            "audio",
            [
                f"cutlery and several voices at the table; {a} asking {b} how the day went",
                f"dinner-time chatter, plates being passed and {a} laughing at something {b} said",
                f"the sounds of a family meal and {b} asking for the salt",
            ],
            people=home,
        )
    else:
        em.emit(
            dinner,
            hh.shared("smart_speaker"),
            "audio",
            [
                f"a podcast playing while {home[0]} cooked, a pan sizzling",
                f"{home[0]} humming along to the radio over the sound of chopping",
            ],
            people=home,
        )
    if r.random() < 0.8 and not world.is_claimed("tv", "household", day):
        show, minutes = r.choice(SHOWS), r.randint(35, 170)
        start = at(day, 19, r.randint(20, 90))
        watcher = r.choice(home)
        em.emit(
            start + timedelta(minutes=minutes),
            hh.shared("smart_tv"),
            "app_usage",
            [
                f"{show} watched for {hours_minutes(minutes)} from {clock(start)}",
                f"a {hours_minutes(minutes)} viewing session ({show}) starting {clock(start)}",
            ],
            people=[watcher],
            anchors=[hours_minutes(minutes)],
            facts={
                "topic": "tv",
                "person": "household",
                "day": day,
                "value": minutes,
                "show": show,
            },
        )
    light = hh.shared("smart_light")
    if light:
        em.emit(
            at(day, 20, r.randint(30, 55)),
            light,
            "device_status",
            [
                f"switched on at {r.choice([60, 70, 80])}% warm white by the evening schedule",
                "turned on automatically at sunset by the schedule",
            ],
        )
        em.emit(
            at(day, 23, r.randint(0, 40)),
            light,
            "device_status",
            [
                "switched off by the bedtime routine",
                "turned off from the wall switch",
            ],
        )
    curtain = hh.shared("smart_curtain")
    if curtain:
        em.emit(
            at(day, 7, r.randint(15, 45)),
            curtain,
            "device_status",
            ["opened to 100% by the morning scene", "fully opened on the wake-up schedule"],
        )
        em.emit(
            at(day, 21, r.randint(0, 30)),
            curtain,
            "device_status",
            ["closed by the evening scene", "drawn shut automatically at dusk"],
        )
    vac = hh.shared("robot_vacuum")
    if vac and day in (0, 2, 4):
        em.emit(
            at(day, 10, r.randint(30, 59)),
            vac,
            "device_status",
            [
                (
                    f"the scheduled clean finished after {r.randint(38, 62)} min, "
                    f"{r.randint(48, 92)} m² covered"
                ),
                (
                    f"a routine cleaning run completed ({r.randint(38, 62)} minutes) and docked to "
                    "charge"
                ),
            ],
        )
    washer = hh.shared("smart_washer_dryer")
    if washer and r.random() < 0.45:
        em.emit(
            at(day, 9 if is_weekend(day) else 19, r.randint(0, 59)),
            washer,
            "device_status",
            [
                (
                    f"a '{r.choice(['Cottons 40', 'Synthetics 30', 'Quick 30', 'Eco 40-60'])}' "
                    "cycle completed"
                ),
                f"the {r.choice(['mixed', 'darks', 'towels'])} wash finished and the door unlocked",
            ],
        )
    fridge = hh.shared("smart_fridge")
    if fridge:
        items = r.sample(FRIDGE, 3)
        em.emit(
            at(day, 8, r.randint(30, 59)),
            fridge,
            "vision",
            [
                f"the shelves holding {items[0]}, {items[1]} and {items[2]}",
                f"an interior photo showing {items[0]}, {items[1]} and {items[2]}",
            ],
        )
    motion = hh.shared("motion_sensor")
    if motion and r.random() < 0.4 and not world.is_claimed("night_motion", "household", day):
        em.emit(
            at(day + 1, 3, r.randint(0, 50)),
            motion,
            "motion",
            [
                "a single trigger in the dark hallway, then nothing for the rest of the night",
                "one brief night-time detection in the hallway, probably a trip to the bathroom",
            ],
        )
    lock = hh.shared("smart_lock")
    if lock and hh.residents:
        night = at(day, 22, r.randint(20, 59))
        em.emit(
            night,
            lock,
            "location",
            [
                f"the door locked from the inside for the night at {clock(night)}",
                f"the night lock engaged from the inside handle ({clock(night)})",
            ],
            anchors=[clock(night)],
            facts={"topic": "night_lock", "person": "household", "day": day, "value": clock(night)},
        )
    kettle = hh.shared("smart_speaker")
    if kettle and r.random() < 0.7:
        who = r.choice(home)
        em.emit(
            at(day, 7 if not is_weekend(day) else 8, r.randint(5, 55)),
            kettle,
            "audio",
            [
                f"the kettle boiling and {who} asking who wants toast",
                f"breakfast noises: a toaster popping and {who} calling up the stairs",
                f"{who} unloading the dishwasher while the radio played",
            ],
            people=[who],
        )
    fridge = hh.shared("smart_fridge")
    for _ in range(r.randint(1, 3) if fridge else 0):
        em.emit(
            at(day, r.choice([7, 12, 17, 18, 21]), r.randint(0, 59)),
            fridge,
            "device_status",
            [
                f"the door opened for {r.randint(5, 35)} seconds",
                f"a {r.randint(5, 35)}-second door opening",
            ],
        )
    talker_evening = hh.shared("smart_speaker")
    if talker_evening and r.random() < 0.6:
        who = r.choice(home)
        asked = r.choice(
            [
                "a jazz playlist",
                "the radio",
                "a podcast episode",
                "rain sounds",
                "the cricket score",
            ]
        )
        wanted = r.choice(
            [
                "some quiet music",
                "the news headlines",
                "a timer for 20 minutes",
                "tomorrow's forecast",
            ]
        )
        em.emit(
            at(day, 20, r.randint(0, 59)),
            talker_evening,
            "dialogue",
            [
                f"{who} asked for {asked}",
                f"{who} requested {wanted}",
            ],
            people=[who],
        )
    carer = next((p for p in hh.people if p.kind == "carer"), None)
    display = hh.shared("smart_display") or hh.shared("smart_speaker")
    if carer and display and not is_weekend(day):
        elder = r.choice([p.name for p in hh.residents])
        em.emit(
            at(day, 0, carer.back - r.randint(10, 30)),
            display,
            "dialogue",
            [
                (
                    f"{carer.name} noted that {elder} ate "
                    f"{r.choice(['porridge', 'toast and marmalade', 'a boiled egg'])} "
                    f"and seemed {r.choice(['cheerful', 'a bit tired', 'chatty', 'quiet'])} this "
                    "morning"
                ),
                (
                    f"{carer.name}'s visit note: {elder} "
                    f"{r.choice(['did the crossword', 'watered the plants', 'had a shower'])} "
                    f"and had {r.choice(['tea', 'coffee', 'juice'])} mid-morning"
                ),
            ],
            people=[carer.name, elder],
        )
    purifier = hh.shared("air_purifier")
    if purifier:
        em.emit(
            at(day, 22, r.randint(0, 20)),
            purifier,
            "device_status",
            ["switched to sleep mode, fan at 20%", "night mode engaged, display dimmed"],
        )


# ---------------------------------------------------------------- periodic readings


def periodic_readings(hh: Household, rng: random.Random) -> list[Obs]:
    em = Emitter(hh, rng, "periodic", f"{hh.scenario_id}_P")
    thermo, aq, pur = (
        hh.shared("smart_thermostat"),
        hh.shared("air_quality_monitor"),
        hh.shared("air_purifier"),
    )
    motion, fridge = hh.shared("motion_sensor"), hh.shared("smart_fridge")
    for day in range(7):
        for hour in range(24):
            temp = 19.0 + 1.8 * (8 <= hour <= 22) + rng.randint(-8, 8) / 10
            em.emit(
                at(day, hour, rng.randint(0, 4)),
                thermo,
                "environment",
                [
                    f"{temp:.1f} °C and {rng.randint(38, 61)}% humidity in the living room",
                    f"room temperature {temp:.1f} °C, humidity {rng.randint(38, 61)}%",
                ],
            )
        for hour in range(1, 24, 2):
            em.emit(
                at(day, hour, rng.randint(5, 10)),
                aq,
                "environment",
                [
                    (
                        f"PM2.5 {rng.randint(3, 17)} µg/m³, CO2 {rng.randint(430, 980)} ppm, VOC "
                        "index "
                        f"{rng.randint(40, 140)}"
                    ),
                    (
                        f"air quality 'good': PM2.5 {rng.randint(3, 17)}, CO2 "
                        f"{rng.randint(430, 980)} ppm"
                    ),
                ],
            )
        for hour in range(2, 24, 3) if pur else ():
            room = hh.device(pur).location.replace("_", " ")
            em.emit(
                at(day, hour, rng.randint(10, 20)),
                pur,
                "environment",
                [
                    f"PM2.5 {rng.randint(2, 12)} µg/m³ in the {room}",
                    (
                        f"particulates at {rng.randint(2, 12)} µg/m³, filter life "
                        f"{rng.randint(40, 88)}%"
                    ),
                ],
            )
        for hour in range(7, 23):
            n = rng.randint(0, 14)
            em.emit(
                at(day, hour, 59),
                motion,
                "motion",
                [
                    f"{n} motion triggers in the past hour",
                    f"{n} detections in the hallway over the last hour",
                ],
            )
        for hour in (3, 9, 15, 21):
            em.emit(
                at(day, hour, 30),
                fridge,
                "device_status",
                [
                    (
                        f"fridge at {rng.randint(32, 46) / 10:.1f} °C, freezer at "
                        f"-{rng.randint(170, 200) / 10:.1f} °C"
                    ),
                    (
                        f"compartment temperatures: fridge {rng.randint(32, 46) / 10:.1f} °C, "
                        "freezer "
                        f"-{rng.randint(170, 200) / 10:.1f} °C"
                    ),
                ],
            )
    return em.items


# ---------------------------------------------------------------- incidental noise

NOISE = [
    (
        "doorbell_camera",
        "vision",
        [
            "a neighbour walking a dog past the gate",
            "a delivery van stopping two doors down",
            "a cat crossing the front path",
            "a man in a hi-vis vest pushing a leaflet through the letterbox",
            "two children cycling past on the pavement",
            "a recycling lorry collecting bins across the road",
        ],
    ),
    (
        "doorbell_camera",
        "audio",
        [
            "a siren passing on the main road",
            "a car alarm going off nearby",
            "the neighbour's dog barking for about a minute",
        ],
    ),
    (
        "smart_speaker",
        "audio",
        [
            "a radio news bulletin",
            "the washing-up being done and a tap running",
            "a phone ringing twice in another room",
            "rain against the window",
            "someone whistling in the kitchen",
            "the microwave beeping three times",
        ],
    ),
    (
        "indoor_camera",
        "vision",
        [
            "sunlight moving across the floor triggering motion",
            "the cat jumping onto the windowsill",
            "an empty room with the TV off",
            "a curtain moving in the draught",
        ],
    ),
    (
        "smart_display",
        "audio",
        ["music playing quietly from the display", "a kitchen timer going off"],
    ),
    (
        "smart_tv",
        "device_status",
        [
            "a software update installed overnight",
            "standby after 4 hours idle",
            "input switched to the streaming stick",
        ],
    ),
    (
        "gaming_console",
        "device_status",
        ["a system update downloaded in rest mode", "controllers charging in rest mode"],
    ),
    (
        "motion_sensor",
        "motion",
        [
            "a single brief trigger with nobody home, probably the cat",
            "a trigger as the heating came on and the curtains moved",
        ],
    ),
    (
        "door_window_sensor",
        "device_status",
        ["opened for 40 seconds", "opened briefly and closed again"],
    ),
    (
        "smart_fridge",
        "device_status",
        [
            "the door opened for 8 seconds",
            "ice maker cycle completed",
            "the door opened for 14 seconds",
        ],
    ),
    (
        "robot_vacuum",
        "device_status",
        ["firmware update to version 3.8.2", "docked and fully charged"],
    ),
]
PHONE_NOISE = [
    "{n} minutes in the weather app",
    "a {n}-minute call with an unknown number",
    "the banking app opened for {n} minutes",
    "{n} minutes reading the news",
    "a calendar reminder dismissed",
    "a group chat thread read for {n} minutes",
    "a podcast resumed for {n} minutes",
    "the photo gallery opened for {n} minutes",
]


def incidental_noise(hh: Household, rng: random.Random, per_day: int = 44) -> list[Obs]:
    em = Emitter(hh, rng, "noise", f"{hh.scenario_id}_N")
    pool = [(hh.shared(t), m, texts) for t, m, texts in NOISE if hh.shared(t)]
    phones = [(p.name, hh.phone(p.name)) for p in hh.residents if hh.phone(p.name)]
    for day in range(7):
        for _ in range(per_day):
            ts = at(day, rng.randint(6, 23), rng.randint(0, 59))
            if phones and rng.random() < 0.3:
                name, phone = rng.choice(phones)
                texts = [t.format(n=rng.randint(2, 25)) for t in rng.sample(PHONE_NOISE, 2)]
                em.emit(ts, phone, "app_usage", texts, people=[name], place="home")
                continue
            device, modality, texts = rng.choice(pool)
            em.emit(ts, device, modality, rng.sample(texts, min(2, len(texts))))
    return em.items
