"""The benchmark week and the ways people refer to moments in it.

Questions name time the way a household member would ("yesterday evening", "last
night", "on Tuesday afternoon", "on 12 May"), relative to when the question is asked;
answers use absolute times so they stay true whenever they are read.
"""

from __future__ import annotations

import random
from datetime import date, datetime, time, timedelta

WEEK_START = date(2026, 5, 11)  # a Monday
DAYS: tuple[date, ...] = tuple(WEEK_START + timedelta(days=i) for i in range(7))
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
WEEK_END = datetime.combine(DAYS[-1], time(23, 59))


def at(day: int, hour: int, minute: int = 0) -> datetime:
    """A moment of the week: day 0 is Monday 11 May; hours past 24 roll into the next day."""
    return datetime.combine(DAYS[0], time(0, 0)) + timedelta(days=day, hours=hour, minutes=minute)


def is_weekend(day: int) -> bool:
    return day % 7 >= 5


def weekday(ts: datetime | date) -> str:
    return WEEKDAY_NAMES[(ts.weekday())]


def clock(ts: datetime) -> str:
    return ts.strftime("%H:%M")


def hours_minutes(minutes: int) -> str:
    """Canonical duration used in reference answers: '6 h 05 min', '42 min'."""
    h, m = divmod(minutes, 60)
    return f"{h} h {m:02d} min" if h else f"{m} min"


def day_label(d: date | datetime) -> str:
    """'Tuesday 12 May' (absolute, for answers)."""
    d = d.date() if isinstance(d, datetime) else d
    return f"{WEEKDAY_NAMES[d.weekday()]} {d.day} May"


def stamp(ts: datetime) -> str:
    """'Tuesday 12 May at 17:42' (absolute, for answers)."""
    return f"{day_label(ts)} at {clock(ts)}"


def part_of_day(ts: datetime) -> str:
    h = ts.hour
    if h < 5:
        return "night"
    if h < 12:
        return "morning"
    if h < 17:
        return "afternoon"
    if h < 21:
        return "evening"
    return "night"


def _night_of(ts: datetime) -> date:
    """A moment after midnight belongs to the previous evening's night."""
    return (ts - timedelta(hours=5)).date() if ts.hour < 5 else ts.date()


def when(ts: datetime, now: datetime, rng: random.Random) -> str:
    """How someone asking at `now` would refer to `ts` (relative or explicit)."""
    pod = part_of_day(ts)
    day = _night_of(ts) if pod == "night" else ts.date()
    delta = (now.date() - day).days
    explicit = [f"on {day_label(day)}", f"on {day.day} May in the {_pod_word(pod)}"]
    if pod == "night":
        explicit = [f"on the night of {day_label(day)}", f"on {WEEKDAY_NAMES[day.weekday()]} night"]
    relative: list[str] = []
    if delta == 0 and pod != "night":
        relative = [f"this {pod}" if pod != "evening" else "earlier this evening", "earlier today"]
    elif delta == 0:
        relative = ["tonight", "earlier tonight"]
    elif delta == 1:
        relative = ["last night"] if pod == "night" else [f"yesterday {pod}"]
    elif 1 < delta < 7:
        name = WEEKDAY_NAMES[day.weekday()]
        relative = [f"on {name} {pod}", f"{name} {pod}"]
    if relative and rng.random() < 0.72:
        return rng.choice(relative)
    return rng.choice(explicit)


def _pod_word(pod: str) -> str:
    return "late evening" if pod == "night" else pod


def on_day(d: date | datetime, now: datetime, rng: random.Random) -> str:
    """A whole day, relative to `now`: 'yesterday', 'on Tuesday', 'on 12 May'."""
    d = d.date() if isinstance(d, datetime) else d
    delta = (now.date() - d).days
    options = [f"on {day_label(d)}", f"on {d.day} May"]
    if delta == 0:
        options = ["today"] * 3 + options
    elif delta == 1:
        options = ["yesterday"] * 3 + options
    elif 1 < delta < 7:
        options = [f"on {WEEKDAY_NAMES[d.weekday()]}"] * 3 + options
    return rng.choice(options)


def over_week(now: datetime, rng: random.Random) -> str:
    """The whole benchmark week, as the asker would name it."""
    if now.date() <= DAYS[-1]:
        return rng.choice(["this week", "so far this week", "since Monday"])
    return rng.choice(["last week", "over the past week", "during the week of 11 May"])
