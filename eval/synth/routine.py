"""Stage 3, everyday life: routine, periodic and incidental events around the storylines.

Routine events are simulated from each person's structured day (sleep, commute,
workouts, screens, meals, chores); they carry `facts` so stage 4 can ask aggregation
questions whose answers are computed, not guessed. Slots a storyline claimed (a sleep
night, a day's step count) are skipped so the two never contradict each other.
Screens and small daily habits are in `daily`; the household's shared devices, periodic
readings and noise, which fill the stream the way real sensors do, are in `background`.
"""

from __future__ import annotations

import random
from datetime import timedelta

from eval.synth.background import _household, incidental_noise, periodic_readings  # noqa: F401  (re-exported)
from eval.synth.daily import _daily_bits, _screens, on_day
from eval.synth.emit import Emitter, fact
from eval.synth.episodes import WorldState
from eval.synth.personas import Household, Person, usual_weight
from eval.synth.phrasing import duration
from eval.synth.tables import Words, load_table
from eval.synth.timewords import at, clock, is_weekend
from eval.synth.world import Obs

TABLE = load_table("routine")
W = Words("routine")

SLEEP_BASE: dict[str, int] = TABLE["SLEEP_BASE"]  # minutes a night, by kind of person
STEPS_BASE: dict[str, int] = TABLE["STEPS_BASE"]  # steps a day without a workout
CARRY = TABLE["CARRY"]


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


def _sleep(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    say = W.at("sleep")
    watch = hh.watch(p.name)
    night = day - 1
    if watch is None or world.is_claimed("sleep", p.name, night):
        return
    r = em.rng
    weekend_night = night % 7 in (4, 5)
    base = SLEEP_BASE[p.kind] + (60 if weekend_night and p.kind in ("teen", "adult") else 0)
    minutes = max(250, int(r.gauss(base, 38)))
    wake = at(day, 0, on_day(p.wake, day) + r.randint(-10, 12))
    bed = wake - timedelta(minutes=minutes + r.randint(8, 35))
    shown = duration(minutes, r)
    deep, rem, woke = r.randint(45, 115), r.randint(60, 120), r.randint(0, 4)
    words = say("watch_health", locals(), draw=r)
    facts = fact("sleep", p.name, night, minutes, shown=shown)
    em.emit(wake, watch, "health", **words, people=[p.name], place="bedroom", facts=facts)


def _resting(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    say = W.at("resting")
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
    ts = at(day, 0, on_day(p.wake, day) + r.randint(15, 40))
    words = say("watch_health", locals(), draw=r)
    facts = fact("resting_hr", p.name, day, rate)
    em.emit(ts, watch, "health", **words, people=[p.name], place="home", facts=facts)


def _commute(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    say = W.at("commute")
    if not p.work or day not in p.work_days or is_weekend(day):
        return
    r = em.rng
    name = p.name
    door, lock, car = hh.shared("doorbell_camera"), hh.shared("smart_lock"), hh.car(name)
    leave = at(day, 0, p.leave + r.randint(-6, 9))
    bags = CARRY["adult"] + [CARRY["cyclist" if p.commute == "bike" else "coat"]]
    adult = r.choice(bags)  # drawn whoever leaves, so the stream does not depend on who it is
    what = adult if p.kind == "adult" else CARRY.get(p.kind, CARRY["other"])
    # a storyline that keeps someone home (or makes them leave differently) claims the morning
    morning = not world.is_claimed("departure", name, day)
    if morning:
        words = say("doorbell_camera_vision", locals())
        facts = _day_out(name, day, say("day_out", locals()))
        em.emit(leave, door, "vision", **words, people=[name], facts=facts)
        if p.kind in ("adult", "teen") and r.random() < 0.85:
            locked = leave + timedelta(minutes=1)
            out_at = clock(locked)
            words = say("lock_location", locals())
            facts = fact("departure", name, day, out_at)
            em.emit(locked, lock, "location", **words, people=[name], facts=facts)
    trip = r.randint(14, 32)
    if morning and p.commute == "car" and car:
        parked = leave + timedelta(minutes=trip + 3)
        words = say("car_location", locals(), draw=r)
        facts = _day_out(name, day, say("day_out_2", locals()))
        em.emit(parked, car, "location", **words, people=[name], facts=facts)
    arrive_work = leave + timedelta(minutes=trip + 6)
    device = hh.phone(name) or (hh.watch(name) if p.kind == "child" else None)
    if morning and device and r.random() < 0.7:
        words = say("device_location", locals())
        facts = _day_out(name, day, say("day_out_3", locals()))
        em.emit(arrive_work, device, "location", **words, people=[name], place=p.work, facts=facts)
    if world.is_claimed("arrival", name, day):
        return
    back = at(day, 0, p.back + r.randint(-10, 28))
    bag = r.choice(say("bag"))
    words = say("doorbell_camera_vision_2", locals())
    facts = _day_out(name, day, say("day_out_4", locals()))
    em.emit(back, door, "vision", **words, people=[name], facts=facts)
    if p.kind in ("adult", "teen", "elder"):
        code = r.choice(say("code"))
        unlocked = back + timedelta(minutes=1)
        in_at = clock(unlocked)
        words = say("lock_location_2", locals())
        facts = fact("arrival", name, day, in_at)
        em.emit(unlocked, lock, "location", **words, people=[name], facts=facts)
    if p.commute == "car" and car:
        words = say("car_location_2", locals(), trip_plus=trip + r.randint(-3, 9))
        facts = _day_out(name, day, say("day_out_5", locals()))
        em.emit(back - timedelta(minutes=2), car, "location", **words, people=[name], facts=facts)


def _workout_text(kind: str, r: random.Random, m: int) -> tuple[str, str]:
    """(summary, noun) of a workout of `m` minutes; distance sports draw a pace per minute."""
    summary, noun = TABLE["WORKOUTS"][kind]
    drawn: dict[str, float | str] = {}
    if kind in ("running", "cycling", "walking"):
        lo, hi = {"running": (160, 190), "cycling": (330, 420), "walking": (85, 105)}[kind]
        km = m * r.randint(lo, hi) // 1000 + 0.1 * r.randint(0, 9)
        drawn["km"] = km
        seconds = round(m * 60 / max(km, 0.1))
        drawn["pace"] = f"{seconds // 60}:{seconds % 60:02d}"  # per km, as a watch shows it
    elif kind == "hiking":
        drawn["km"], drawn["climb"] = m * r.randint(60, 75) // 1000, r.randint(180, 520)
    elif kind == "swimming":
        drawn["metres"] = m * r.randint(30, 42)
    elif kind == "football":
        drawn["sprints"] = r.randint(25, 40)
    elif kind == "basketball":
        drawn["kcal"] = r.randint(300, 520)
    return summary.format(m=m, **drawn), noun


def _day_out(name: str, day: int, what: str) -> dict:
    return {"topic": "day_out", "person": name, "day": day, "what": what}


def _workouts(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    say = W.at("workouts")
    watch, phone, door = hh.watch(p.name), hh.phone(p.name), hh.shared("doorbell_camera")
    if watch is None or world.is_claimed("workout", p.name, day):
        return
    r = em.rng
    for wday, kind, start, minutes in p.workouts:
        if wday != day:
            continue
        begin = at(day, 0, start + r.randint(-10, 15))
        end = begin + timedelta(minutes=minutes)
        summary, noun = _workout_text(kind, r, minutes)
        avg, peak = r.randint(112, 158), r.randint(160, 184)
        if kind in ("yoga", "walking"):
            avg, peak = r.randint(88, 112), r.randint(114, 132)
        facts = fact("workout", p.name, day, minutes, kind=kind, group=f"{p.name}:{day}:{kind}")
        facts.update(summary=summary, noun=noun, avg=avg, peak=peak)
        outdoors = kind in ("running", "walking", "hiking", "football")
        place = hh.places["park" if outdoors else "gym"]
        words = say("watch_motion", locals(), v=summary.partition(" of ")[2] or summary)
        primary = {**facts, "primary": True}
        em.emit(end, watch, "motion", **words, people=[p.name], place=place, facts=primary)
        words = say("phone_app_usage", locals())
        saved = end + timedelta(minutes=1)
        em.emit(saved, phone, "app_usage", **words, people=[p.name], facts=facts)
        if r.random() < 0.4:
            setting_off = begin - timedelta(minutes=3)
            words = say("doorbell_camera_vision", locals())
            leaving = {**facts, "role": "leave"}
            em.emit(setting_off, door, "vision", **words, people=[p.name], facts=leaving)


def _steps(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    say = W.at("steps")
    watch = hh.watch(p.name)
    if watch is None or world.is_claimed("steps", p.name, day):
        return
    r = em.rng
    base = STEPS_BASE[p.kind] + (3500 if any(w[0] == day for w in p.workouts) else 0)
    steps = max(900, int(r.gauss(base, 2200)))
    ts = at(day, 0, on_day(p.bed, day) - r.randint(10, 40))
    shown = f"{steps:,}"
    words = say("watch_motion", locals(), v=steps * 0.72 / 1000, draw=r)
    facts = fact("steps", p.name, day, steps)
    em.emit(ts, watch, "motion", **words, people=[p.name], place="home", facts=facts)


def _weigh(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    say = W.at("weigh")
    scale = hh.shared("smart_scale")
    r = em.rng
    if scale is None or p.kind not in ("adult", "elder") or world.is_claimed("weight", p.name, day):
        return
    if r.random() > 0.4:
        return
    kg = usual_weight(p.name) + 0.1 * r.randint(-6, 6)
    ts = at(day, 0, on_day(p.wake, day) + r.randint(5, 25))
    words = say("scale_health", locals(), v=r.randint(180, 320) / 10)
    facts = fact("weight", p.name, day, round(kg, 1))
    em.emit(ts, scale, "health", **words, people=[p.name], facts=facts)


def _medication(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    say = W.at("medication")
    if p.kind != "elder" or world.is_claimed("medication", p.name, day):
        return
    r = em.rng
    dev = hh.first("smart_display", "smart_speaker")
    for hour, label in ((8, "morning"), (18, "evening")):
        ts = at(day, hour, r.randint(0, 12))
        words = say("dev_dialogue", locals())
        facts = fact("medication", p.name, day, label)
        em.emit(ts, dev, "dialogue", **words, people=[p.name], facts=facts)


def _carer(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    say = W.at("carer")
    if is_weekend(day) or world.is_claimed("arrival", p.name, day):
        return
    r = em.rng
    lock, door = hh.shared("smart_lock"), hh.shared("doorbell_camera")
    arrive = at(day, 0, p.leave + r.randint(-8, 12))
    facts = fact("carer_visit", p.name, day, clock(arrive))
    words = say("lock_location", locals())
    em.emit(arrive, lock, "location", **words, people=[p.name], facts=facts)
    words = say("doorbell_camera_vision", locals())
    em.emit(arrive - timedelta(minutes=1), door, "vision", **words, people=[p.name])
    leave = at(day, 0, p.back + r.randint(-10, 15))
    em.emit(leave, lock, "location", **say("lock_location_2", locals()), people=[p.name])
