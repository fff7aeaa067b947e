"""Finding the time mentions in a question: dates, periods, relative days, weekdays, shifts,
clock times and parts of day, each pattern claiming its text in turn."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, datetime, timedelta

from signatures.time_resolution.calendar import (
    most_recent_weekday,
    nearest_dated,
    nearest_day_of_month,
    next_weekday,
)
from signatures.time_resolution.mentions import _Day, _Part, _Scan, _Shift
from signatures.time_resolution.periods import _scan_periods
from signatures.time_resolution.vocabulary import (
    _CLOCK,
    _CLOCK_RANGE,
    _COUNTED,
    _DATE_CONTEXT,
    _DAY_MONTH,
    _DAY_OF_MONTH,
    _DAYS_AGO,
    _DAYS_MONTH,
    _ISO_DATE,
    _ISO_T,
    _MODIFIER,
    _MONTH_DAY,
    _MONTH_DAYS,
    _NEXT_DAY,
    _NOISE,
    _NOT_A_TIME,
    _PART_PATTERNS,
    _RELATIVE_DAYS,
    _SHIFT,
    _VAGUE,
    _WEEKDAY,
    _WEEKDAY_ALIASES,
    CLOCK_MARGIN,
    CONFIDENT,
    EXPLICIT_DATE,
    MEALS,
    MONTHS,
    PARTS_OF_DAY,
    _at,
    _number,
)


def _normalise(question: str) -> tuple[str, str]:
    """Whitespace folded and curly apostrophes straightened; also its same-length lowercase."""
    text = " ".join(question.replace("\u2019", "'").replace("\u2018", "'").split())
    text = _ISO_T.sub(r"\1 \2", text)  # 2026-05-12T14:30: the date, then a clock time
    if text.isascii():  # every character lowercases to one: the string's own lower()
        return text, text.lower()
    lower = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    return text, lower


def _scan(question: str, now: datetime) -> _Scan:
    """Every time mention in the question, resolved against ``now`` where it can be."""
    original, text = _normalise(question)
    scan = _Scan(text=text)
    today = now.date()
    for match in _NOISE.finditer(text):
        scan.claim(match)
    _scan_periods(scan, original, now)  # first: "the week of 11 May" is a week, not a date
    _scan_dates(scan, today)
    for match in _VAGUE.finditer(text):
        if scan.free(match):
            scan.claim(match)
            scan.vague.append(match.group(0))
    _scan_relative_days(scan, today)
    _scan_weekdays(scan, today)
    _scan_shifts(scan)
    _scan_clocks(scan)
    _scan_parts(scan)
    scan.days.sort(key=lambda d: d.start)
    scan.parts.sort(key=lambda p: p.start)
    return scan


def _scan_dates(scan: _Scan, today: date) -> None:
    """Calendar dates: ISO, "May 12", "12th of May", "the 23rd"."""
    text = scan.text
    for match in _ISO_DATE.finditer(text):
        y, m, d = (int(g) for g in match.groups())
        _add_date(scan, match, _safe_date(y, m, d))
    for pattern, groups in ((_MONTH_DAYS, (1, 2, 3)), (_DAYS_MONTH, (3, 1, 2))):
        for match in pattern.finditer(text):
            if scan.free(match):
                _add_date_pair(scan, match, *groups, today=today)
    for pattern, order in ((_MONTH_DAY, "md"), (_DAY_MONTH, "dm")):
        for match in pattern.finditer(text):
            if not scan.free(match):
                continue
            first, second, year = match.groups()
            month, day = (first, second) if order == "md" else (second, first)
            if year:
                resolved = _safe_date(int(year), MONTHS[month], int(day))
            else:
                resolved = nearest_dated(MONTHS[month], int(day), today)
            _add_date(scan, match, resolved)
    for match in _DAY_OF_MONTH.finditer(text):
        if not scan.free(match) or _COUNTED.match(text, match.end()):
            continue
        if not _DATE_CONTEXT.search(text[: match.start()]):
            continue
        _add_date(scan, match, nearest_day_of_month(int(match.group(1)), today))


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _add_date(scan: _Scan, match: re.Match[str], resolved: date | None) -> None:
    start, end = scan.claim(match)
    if resolved is not None:
        scan.days.append(_Day(start, end, resolved, EXPLICIT_DATE, match.group(0), "date"))


def _add_date_pair(
    scan: _Scan, match: re.Match[str], month: int, first: int, last: int, today: date
) -> None:
    """Two dates of one month ("May 14-16"): each its own mention, the dash between them."""
    number = MONTHS[match.group(month)]
    scan.claim(match)
    spans = [(match.start(), match.end(first)), (match.start(last), match.end())]
    for (start, end), group in zip(spans, (first, last), strict=True):
        digits = re.match(r"\d+", match.group(group))
        resolved = nearest_dated(number, int(digits.group(0)), today) if digits else None
        if resolved is not None:
            label = f"{match.group(group)} {match.group(month)}"
            scan.days.append(_Day(start, end, resolved, EXPLICIT_DATE, label, "date"))


def _scan_relative_days(scan: _Scan, today: date) -> None:
    """Days named relative to the question date ("yesterday", "last night", "3 days ago")."""
    for offset, part, pattern in _RELATIVE_DAYS:
        for match in pattern.finditer(scan.text):
            if not scan.free(match):
                continue
            start, end = scan.claim(match)
            day = _Day(
                start,
                end,
                today + timedelta(days=offset),
                EXPLICIT_DATE,
                match.group(0),
                "relative",
            )
            scan.days.append(day)
            if part:
                scan.parts.append(_Part(start, end, part, PARTS_OF_DAY[part]))
    for match in _DAYS_AGO.finditer(scan.text):
        if scan.free(match):
            start, end = scan.claim(match)
            ago = today - timedelta(days=_number(match.group(1)))
            scan.days.append(_Day(start, end, ago, EXPLICIT_DATE, match.group(0), "relative"))


def _scan_weekdays(scan: _Scan, today: date) -> None:
    """Weekdays with their modifier ("last Tuesday", "this Friday", "next Monday")."""
    for match in _WEEKDAY.finditer(scan.text):
        if not scan.free(match, 2):
            continue
        modifier = " ".join((match.group(1) or "").split())
        if modifier and not scan.free(match, 1):
            modifier = ""
        weekday = _WEEKDAY_ALIASES[match.group(2)]
        if modifier == "last" or modifier.endswith("past"):
            day = most_recent_weekday(weekday, today, strictly_before=True)
        elif modifier in ("next", "coming", "this coming"):
            day = next_weekday(weekday, today, strictly_after=True)
        elif modifier == "this":
            day = today - timedelta(days=today.weekday()) + timedelta(days=weekday)
        else:
            day = most_recent_weekday(weekday, today)
        start, end = match.start(1 if modifier else 2), match.end()
        scan.claimed.append((start, end))
        scan.days.append(
            _Day(
                start,
                end,
                day,
                CONFIDENT,
                scan.text[start:end],
                "weekday",
                weekday=weekday,
                modifier=modifier,
                possessive=bool(match.group(3)),
            )
        )


def _scan_shifts(scan: _Scan) -> None:
    """ "the day before …", "the next morning": days relative to another mention or an event."""
    for match in _SHIFT.finditer(scan.text):
        if scan.free(match):
            start, end = scan.claim(match)
            unit, direction = match.groups()
            offset = -1 if direction == "before" else 1
            part = None if unit == "day" else unit
            scan.shifts.append(_Shift(start, end, offset, part, anchored_after=True))
    for match in _NEXT_DAY.finditer(scan.text):
        if scan.free(match):
            start, end = scan.claim(match)
            which, unit = match.groups()
            offset = 1 if which in ("next", "following") else -1
            part = None if unit == "day" else unit
            scan.shifts.append(_Shift(start, end, offset, part, anchored_after=False))


def _scan_clocks(scan: _Scan) -> None:
    """Clock ranges ("between 2 and 4 pm") and clock times ("at 16:45", "around 4 pm")."""
    for match in _CLOCK_RANGE.finditer(scan.text):
        h1, m1, ap1, h2, m2, ap2 = match.groups()
        if not scan.free(match) or not (ap1 or ap2 or (m1 and m2)):
            continue
        first = _clock(int(h1), int(m1 or 0), ap1 or (ap2 if int(h1) <= int(h2) else None))
        last = _clock(int(h2), int(m2 or 0), ap2)
        if first is None or last is None or last < first:
            continue
        start, end = scan.claim(match)
        scan.parts.append(_Part(start, end, "clock range", (first, last)))
    for match in _CLOCK.finditer(scan.text):
        preposition, hour, minute, ampm = match.groups()
        if not scan.free(match):
            continue
        if not ampm and not (minute and (preposition or len(hour) == 2)):
            continue  # "at 7" alone could be a count; only clock-shaped numbers are times
        moment = _clock(int(hour), int(minute or 0), ampm)
        if moment is None:
            continue
        start, end = scan.claim(match)
        modifier = _modifier_of(preposition or "")
        scan.parts.append(
            _Part(
                start,
                end,
                "clock",
                (moment - CLOCK_MARGIN, moment + CLOCK_MARGIN),
                moment=moment,
                meridiem=bool(ampm) or int(hour) > 12,
                modifier=modifier,
            )
        )


def _clock(hour: int, minute: int, ampm: str | None) -> timedelta | None:
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm.startswith("p") else 0)
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return _at(hour, minute)


def _modifier_of(preposition: str) -> str:
    if preposition in ("after", "since", "from"):
        return "after"
    if preposition in ("before", "by", "until", "till"):
        return "before"
    return ""


def _scan_parts(scan: _Scan) -> None:
    """Parts of day and meals, each with an "after"/"before" modifier when one precedes it."""
    text = scan.text
    for name, pattern in _PART_PATTERNS:
        for match in pattern.finditer(text):
            if not scan.free(match) or _NOT_A_TIME.match(text, match.end()):
                continue
            start, end = scan.claim(match)
            meal = name in MEALS
            span = MEALS[name] if meal else PARTS_OF_DAY[name]
            preceding = _MODIFIER.search(text[:start])
            modifier = _modifier_of(preceding.group(1)) if preceding else ""
            scan.parts.append(_Part(start, end, name, span, modifier=modifier, meal=meal))


def _time_mentions(scan: _Scan) -> Iterator[tuple[int, int]]:
    """Where the time words are, for stripping them from keyword text (meals stay words)."""
    meals = {(p.start, p.end) for p in scan.parts if p.meal}
    for span in scan.claimed:
        if span not in meals:
            yield span
