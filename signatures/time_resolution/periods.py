"""Spans named as a whole: weeks, weekends, months, "the past 3 days"."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from signatures.time_resolution.calendar import (
    _midnight,
    _month_span,
    _weekend,
    _whole_days,
    nearest_dated,
)
from signatures.time_resolution.mentions import _Period, _Scan
from signatures.time_resolution.vocabulary import _DAY, _FULL_MONTHS, _PERIODS, MONTHS, _number


def _scan_periods(scan: _Scan, original: str, now: datetime) -> None:
    """Spans named as a whole: weeks, weekends, months, "the past 3 days"."""
    for label, pattern in _PERIODS:
        for match in pattern.finditer(scan.text):
            if not scan.free(match):
                continue
            if (
                label == "in month"
                and match.group(2) == "may"
                and not re.match(r"May\b", original[match.start(2) :])
            ):
                continue  # "in may" is the verb
            start, end = scan.claim(match)
            span = _period_span(label, match, now)
            scan.periods.append(_Period(start, end, match.group(0), span))


def _period_span(
    label: str, match: re.Match[str], now: datetime
) -> tuple[datetime, datetime] | None:
    """The [start, end] of a named period; a future period still gets its (future) span."""
    today = now.date()
    monday = today - timedelta(days=today.weekday())
    if label == "past n":
        amount, unit = _number(match.group(1)), match.group(2)
        if unit.startswith("hour"):
            return now - timedelta(hours=amount), now
        days = amount * (7 if unit.startswith("week") else 1)
        return _midnight(today - timedelta(days=days)), now
    if label in ("next n", "next week"):
        return now + _DAY, now + 2 * _DAY  # only its being later matters
    if label == "past week":
        return _midnight(today - timedelta(days=7)), now
    if label == "this week":
        return _midnight(monday), now
    if label == "last week":
        weeks = 2 if "before last" in match.group(0) else 1
        first = monday - timedelta(days=7 * weeks)
        return _whole_days(first, first + timedelta(days=6))
    if label == "weekend":
        return _weekend(match.group(1), today)
    if label == "weeks ago":
        centre = today - timedelta(days=7 * _number(match.group(1)))
        return _whole_days(centre - _DAY, centre + _DAY)
    if label == "week of":
        return _week_of(match, today)
    if label == "this month":
        return _midnight(today.replace(day=1)), now
    if label == "last month":
        previous = today.replace(day=1) - _DAY
        return _month_span(previous.year, previous.month)
    return _named_month(match, today, now)


def _week_of(match: re.Match[str], today: date) -> tuple[datetime, datetime] | None:
    """ "the week of 11 May": Monday to Sunday around it; "the week starting 11 May": 7 days."""
    day = int(match.group(2) or match.group(5))
    month = MONTHS[(match.group(3) or match.group(4)).lower()]
    named = nearest_dated(month, day, today)
    if named is None:
        return None
    first = named if match.group(1) != "of" else named - timedelta(days=named.weekday())
    return _whole_days(first, first + timedelta(days=6))


def _named_month(match: re.Match[str], today: date, now: datetime) -> tuple[datetime, datetime]:
    """ "in April": the most recent April; "since April": April 1 to the question time."""
    month = _FULL_MONTHS.index(match.group(2)) + 1
    year = (
        int(match.group(3))
        if match.group(3)
        else (today.year if month <= today.month else today.year - 1)
    )
    first, last = _month_span(year, month)
    if match.group(1) == "since":
        return first, now
    return first, last
