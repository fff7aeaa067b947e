"""Stage 3, everyday life per person: screen time and the small daily habits around it."""

from __future__ import annotations

from datetime import timedelta

from eval.synth.emit import Emitter, fact
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
        ts = at(day, 0, on_day(p.bed, day) - 12)
        words = say("phone_app_usage", locals(), minutes_div=minutes // 5, draw=r)
        facts = fact("screen_time", p.name, day, minutes, top=apps[0], shown=shown)
        em.emit(ts, phone, "app_usage", **words, people=[p.name], place="home", facts=facts)
    tablet = hh.tablet(p.name)
    if tablet and p.kind in ("child", "elder") and r.random() < 0.75:
        show = r.choice(say("show") if p.kind == "child" else say("show_2"))
        minutes = r.randint(20, 65)
        watched = at(day, 16 if p.kind == "child" else 14, r.randint(0, 50))
        words = say("tablet_app_usage", locals())
        facts = fact("tablet", p.name, day, minutes, what=show)
        em.emit(watched, tablet, "app_usage", **words, people=[p.name], facts=facts)
    console = hh.shared("gaming_console")
    if (
        console
        and p.kind in ("teen", "adult")
        and not world.is_claimed("gaming", p.name, day)
        and r.random() < (0.5 if p.kind == "teen" else 0.2)
    ):
        game, minutes = r.choice(GAMES), r.randint(35, 150)
        end = at(day, 20, r.randint(0, 140))
        words = say("console_app_usage", locals())
        facts = fact("gaming", p.name, day, minutes, end=clock(end), game=game)
        em.emit(end, console, "app_usage", **words, people=[p.name], facts=facts)
    laptop = hh.laptop(p.name)
    at_home = p.work is None or day not in p.work_days
    if laptop and p.kind == "adult" and not is_weekend(day) and at_home:
        minutes = r.randint(330, 470)
        first = at(day, 8, r.randint(30, 59))
        done = first + timedelta(minutes=minutes + r.randint(20, 60))
        words = say("laptop_app_usage", locals(), draw=r)
        facts = fact("laptop_work", p.name, day, minutes)
        em.emit(done, laptop, "app_usage", **words, people=[p.name], facts=facts)


def _daily_bits(em: Emitter, hh: Household, world: WorldState, p: Person, day: int) -> None:
    """Small daily habits: the alarm, the weather question, homework, the kids' TV."""
    say = W.at("daily_bits")
    r = em.rng
    wake = at(day, 0, on_day(p.wake, day))
    workday = bool(p.work) and day in p.work_days and not is_weekend(day)
    phone = hh.phone(p.name)
    if phone and r.random() < 0.6:
        sent, got = r.randint(4, 60), r.randint(10, 140)
        evening = at(day, 21, r.randint(0, 59))
        words = say("phone_app_usage", locals(), draw=r)
        em.emit(evening, phone, "app_usage", **words, people=[p.name], place="home")
    if phone and r.random() < 0.8:
        alarm = wake + timedelta(minutes=r.randint(0, 3))
        words = say("phone_app_usage_2", locals(), draw=r)
        em.emit(alarm, phone, "app_usage", **words, people=[p.name], place="bedroom")
    talker = hh.first("smart_speaker", "smart_display")
    if talker and p.kind in ("adult", "elder", "teen") and r.random() < 0.35:
        temp, sky = (r.randint(9, 21), r.choice(say("choice")))
        asked = wake + timedelta(minutes=r.randint(20, 50))
        em.emit(asked, talker, "dialogue", **say("talker_dialogue", locals()), people=[p.name])
    laptop = hh.laptop(p.name)
    if laptop and p.kind == "teen" and not is_weekend(day) and r.random() < 0.7:
        minutes = r.randint(30, 95)
        homework = at(day, 17, r.randint(0, 90))
        facts = fact("homework", p.name, day, minutes)
        words = say("laptop_app_usage", locals())
        em.emit(homework, laptop, "app_usage", **words, people=[p.name], facts=facts)
    watch = hh.watch(p.name)
    if watch and r.random() < 0.5 and not world.is_claimed("steps", p.name, day):
        so_far = r.randint(2100, 6900)
        midday = at(day, 13, r.randint(0, 40))
        words = say("watch_motion", locals(), draw=r)
        place = p.work if workday else "home"
        em.emit(midday, watch, "motion", **words, people=[p.name], place=place)
    if phone and p.kind in ("adult", "teen") and r.random() < 0.6:
        bedtime = at(day, 0, on_day(p.bed, day) - r.randint(15, 40))
        words = say("phone_app_usage_3", locals(), wake_clock=clock(wake + timedelta(days=1)))
        em.emit(bedtime, phone, "app_usage", **words, people=[p.name], place="bedroom")
    if workday and phone and p.lives_in and not world.is_claimed("arrival", p.name, day):
        home_at = at(day, 0, p.back - r.randint(3, 12))
        words = say("phone_location", locals())
        em.emit(home_at, phone, "location", **words, people=[p.name], place="home")
    if (
        p.kind == "elder"
        and watch
        and r.random() < 0.6
        and not world.is_claimed("workout", p.name, day)
    ):
        walk = at(day, 15, r.randint(0, 50))
        words = say("watch_motion_2", locals(), draw=r)
        em.emit(walk, watch, "motion", **words, people=[p.name], place="garden")
    tv = hh.shared("smart_tv")
    if tv and p.kind in ("child", "toddler") and r.random() < 0.6:
        show = r.choice(say("show"))
        starts = at(day, 16 if not is_weekend(day) else 8, r.randint(5, 50))
        em.emit(starts, tv, "app_usage", **say("tv_app_usage", locals(), draw=r), people=[p.name])


def on_day(times: tuple[int, int], day: int) -> int:
    """The weekday or the weekend one of a person's (weekday, weekend) times."""
    return times[1 if is_weekend(day) else 0]
