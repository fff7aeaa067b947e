"""Calendar arithmetic on the question date: weekdays, dates without a year, whole-day spans."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from signatures.time_resolution.vocabulary import _DAY, _LAST_SECOND


def calendar_reference(question_time: datetime, days: int = 7) -> str:
    """The weekday/calendar line given to an LLM planner so it never has to count days."""
    lines = [f"Question time: {question_time:%A %Y-%m-%d %H:%M:%S}."]
    previous = [
        f"{(question_time - timedelta(days=i)):%A} = {(question_time - timedelta(days=i)):%Y-%m-%d}"
        for i in range(1, days)
    ]
    lines.append("Most recent earlier days: " + "; ".join(previous) + ".")
    return " ".join(lines)


def most_recent_weekday(weekday: int, today: date, strictly_before: bool = False) -> date:
    """The latest date with that weekday (0 = Monday) at or before ``today``."""
    delta = (today.weekday() - weekday) % 7
    if delta == 0 and strictly_before:
        delta = 7
    return today - timedelta(days=delta)


def next_weekday(weekday: int, today: date, strictly_after: bool = False) -> date:
    """The earliest date with that weekday at or after ``today``."""
    delta = (weekday - today.weekday()) % 7
    if delta == 0 and strictly_after:
        delta = 7
    return today + timedelta(days=delta)


def nearest_dated(month: int, day: int, today: date) -> date | None:
    """The occurrence of month/day nearest to today (ties to the past); None if impossible."""
    options = []
    for year in (today.year - 1, today.year, today.year + 1):
        try:
            options.append(date(year, month, day))
        except ValueError:
            continue
    if not options:
        return None
    return min(options, key=lambda d: (abs((d - today).days), d > today))


def nearest_day_of_month(day: int, today: date) -> date | None:
    """ "the 23rd": that day of the question's month or an adjacent one, whichever is nearest."""
    options = []
    for shift in (-1, 0, 1):
        month_index = today.year * 12 + today.month - 1 + shift
        try:
            options.append(date(month_index // 12, month_index % 12 + 1, day))
        except ValueError:
            continue
    if not options:
        return None
    return min(options, key=lambda d: (abs((d - today).days), d > today))


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(0, 0))


def _whole_days(first: date, last: date) -> tuple[datetime, datetime]:
    return _midnight(first), _midnight(last) + _LAST_SECOND


def _month_span(year: int, month: int) -> tuple[datetime, datetime]:
    first = date(year, month, 1)
    following = date(year + month // 12, month % 12 + 1, 1)
    return _whole_days(first, following - _DAY)


def _weekend(which: str, today: date) -> tuple[datetime, datetime]:
    """Saturday–Sunday of the weekend the words name.

    "this weekend" is the current one on a Saturday or Sunday, the one just gone on a
    Monday, and the coming one (a plan) from Tuesday on; "last weekend" is the most
    recent one already over; "the weekend" is the current or most recent one.
    """
    which = " ".join(which.split())
    weekday = today.weekday()
    latest_saturday = most_recent_weekday(5, today)
    if which in ("this coming", "coming"):
        saturday = next_weekday(5, today, strictly_after=True)
    elif which == "this":
        if weekday >= 5 or weekday == 0:
            saturday = latest_saturday
        else:
            saturday = next_weekday(5, today)
    elif which == "the":
        saturday = latest_saturday
    else:  # last, past, previous, this past
        saturday = latest_saturday - timedelta(days=7) if weekday >= 5 else latest_saturday
    return _whole_days(saturday, saturday + _DAY)
