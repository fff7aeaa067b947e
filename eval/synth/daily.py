"""Stage 3, everyday life per person: screen time and the small daily habits around it."""

from __future__ import annotations

from datetime import timedelta

from eval.synth.emit import Emitter
from eval.synth.episodes import WorldState
from eval.synth.personas import Household, Person
from eval.synth.phrasing import duration
from eval.synth.tables import Words, load_table
from eval.synth.timewords import at, clock, is_weekend

TABLE = load_table("daily")
W = Words("daily")


APPS = TABLE["APPS"]
GAMES = TABLE["GAMES"]


def _screens(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    say = W.at("screens")
    r = em.rng
    phone = hh.phone(p.name)
    if phone and not world.is_claimed("screen_time", p.name, day):
        base = {"teen": 290, "elder": 95}.get(p.kind, 165) + (50 if is_weekend(day) else 0)
        minutes = max(35, int(r.gauss(base, 45)))
        apps = r.sample(APPS.get(p.kind, APPS["adult"]), 2)
        top = int(minutes * r.uniform(0.3, 0.5))
        shown = duration(minutes, r)
        em.emit(
            at(day, 0, p.bed[1 if is_weekend(day) else 0] - 12),
            phone,
            "app_usage",
            **say("phone_app_usage", locals(), minutes_div=minutes // 5, draw=r),
            people=[p.name],
            place="home",
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
        show = r.choice(say("show") if p.kind == "child" else say("show_2"))
        minutes = r.randint(20, 65)
        em.emit(
            at(day, 16 if p.kind == "child" else 14, r.randint(0, 50)),
            tablet,
            "app_usage",
            **say("tablet_app_usage", locals()),
            people=[p.name],
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
            **say("console_app_usage", locals()),
            people=[p.name],
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
            **say("laptop_app_usage", locals(), draw=r),
            people=[p.name],
            facts={"topic": "laptop_work", "person": p.name, "day": day, "value": minutes},
        )


def _daily_bits(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    """Small daily habits: the alarm, the weather question, homework, the kids' TV."""
    say = W.at("daily_bits")
    r = em.rng
    wake = at(day, 0, p.wake[1 if is_weekend(day) else 0])
    phone = hh.phone(p.name)
    if phone and r.random() < 0.6:
        sent, got = r.randint(4, 60), r.randint(10, 140)
        em.emit(
            at(day, 21, r.randint(0, 59)),
            phone,
            "app_usage",
            **say("phone_app_usage", locals(), draw=r),
            people=[p.name],
            place="home",
        )
    if phone and r.random() < 0.8:
        em.emit(
            wake + timedelta(minutes=r.randint(0, 3)),
            phone,
            "app_usage",
            **say("phone_app_usage_2", locals(), draw=r),
            people=[p.name],
            place="bedroom",
        )
    talker = hh.first("smart_speaker", "smart_display")
    if talker and p.kind in ("adult", "elder", "teen") and r.random() < 0.35:
        temp, sky = (r.randint(9, 21), r.choice(say("choice")))
        em.emit(
            wake + timedelta(minutes=r.randint(20, 50)),
            talker,
            "dialogue",
            **say("talker_dialogue", locals()),
            people=[p.name],
        )
    laptop = hh.laptop(p.name)
    if laptop and p.kind == "teen" and not is_weekend(day) and r.random() < 0.7:
        minutes = r.randint(30, 95)
        em.emit(
            at(day, 17, r.randint(0, 90)),
            laptop,
            "app_usage",
            **say("laptop_app_usage", locals()),
            people=[p.name],
            facts={"topic": "homework", "person": p.name, "day": day, "value": minutes},
        )
    watch = hh.watch(p.name)
    if watch and r.random() < 0.5 and not world.is_claimed("steps", p.name, day):
        so_far = r.randint(2100, 6900)
        em.emit(
            at(day, 13, r.randint(0, 40)),
            watch,
            "motion",
            **say("watch_motion", locals(), draw=r),
            people=[p.name],
            place=p.work if (p.work and day in p.work_days and not is_weekend(day)) else "home",
        )
    if phone and p.kind in ("adult", "teen") and r.random() < 0.6:
        bedtime = at(day, 0, p.bed[1 if is_weekend(day) else 0] - r.randint(15, 40))
        em.emit(
            bedtime,
            phone,
            "app_usage",
            **say("phone_app_usage_3", locals(), wake_clock=clock(wake + timedelta(days=1))),
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
            **say("phone_location", locals()),
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
            **say("watch_motion_2", locals(), draw=r),
            people=[p.name],
            place="garden",
        )
    tv = hh.shared("smart_tv")
    if tv and p.kind in ("child", "toddler") and r.random() < 0.6:
        show = r.choice(say("show"))
        em.emit(
            at(day, 16 if not is_weekend(day) else 8, r.randint(5, 50)),
            tv,
            "app_usage",
            **say("tv_app_usage", locals(), draw=r),
            people=[p.name],
        )


def on_day(times: tuple[int, int], day: int) -> int:
    """The weekday or the weekend one of a person's (weekday, weekend) times."""
    return times[1 if is_weekend(day) else 0]
