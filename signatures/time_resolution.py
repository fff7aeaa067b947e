"""Resolving a question's time words against the frozen question time (pure functions).

The offline planner turns "on Tuesday evening" or "how did I sleep last night" into
one bounded span, or decides that no single span fits ("this week", two dates). A
confident window makes the search drop evidence outside it, so a window is only
reported as confident (≥ 0.6) when the words pin down one bounded span; a guess
keeps a lower confidence and is carried along but not applied.

Choices the paper leaves open, fixed here:

- A weekday means the most recent such day at or before the question time (asked
  on a Monday, "on Monday" is that same day); "last <weekday>" is strictly before.
- A date without a year is the occurrence nearest to the question time (ties go to
  the past).
- "last night" is the evening before the question date (18:00–23:59:59); "tonight"
  and "this evening" are the question date's evening.
- Sleep questions look at the wake-up summaries, 00:00–11:59:59: the named day's
  morning ("how did I sleep on Tuesday"), but the morning after a named night ("last
  night" → the question date, "Friday night" → Saturday), because a night's summary is
  written when the sleeper wakes.
- A question reaching into a later day ("through to the next day") gets no window.
- A weekday next to an explicit date ("Tuesday 12 May") only labels that date.
- Several parts of day ("morning and evening") give the span from the first start to
  the last end.
- "that morning/evening/night" refers to the day the question names; with no named
  day it falls back to the question date at a confidence below the threshold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from memory.search.plan import TimeWindow

# The paper's vague-time ranges (ends made inclusive to the last second of the minute).
PARTS_OF_DAY: dict[str, tuple[time, time]] = {
    "pre-dawn": (time(0, 0), time(5, 59, 59)),
    "early morning": (time(6, 0), time(9, 59, 59)),
    "morning": (time(5, 0), time(11, 59, 59)),
    "noon": (time(11, 0), time(13, 59, 59)),
    "afternoon": (time(13, 0), time(17, 59, 59)),
    "dusk": (time(17, 0), time(19, 59, 59)),
    "evening": (time(18, 0), time(23, 59, 59)),
}
SLEEP_WINDOW: tuple[time, time] = (time(0, 0), time(11, 59, 59))
WHOLE_DAY: tuple[time, time] = (time(0, 0), time(23, 59, 59))

CONFIDENT = 0.85  # an unambiguous bounded span
EXPLICIT_DATE = 0.9  # a calendar date or an explicit relative day ("yesterday")
UNSURE = 0.45  # a guess: carried in the plan, never applied (threshold 0.6)

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4,
    "april": 4, "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8,
    "sep": 9, "sept": 9, "september": 9, "oct": 10, "october": 10, "nov": 11,
    "november": 11, "dec": 12, "december": 12,
}
_MONTH_RE = "|".join(sorted(MONTHS, key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"

_I = re.IGNORECASE
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_MONTH_DAY = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}}){_ORD}\b(?:,?\s+(\d{{4}}))?", _I)
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?({_MONTH_RE})\b(?:,?\s+(\d{{4}}))?", _I
)
_DAYS_AGO = re.compile(r"\b(\d+|one|two|three|four|five|six)\s+days?\s+ago\b", _I)
_WEEKDAY_RE = "|".join(WEEKDAYS)
_WEEKDAY = re.compile(rf"\b(last\s+|this\s+(?:past\s+)?)?({_WEEKDAY_RE})\b")
_CLOCK = re.compile(
    r"\b(?:at|around|about|near|by)\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?(?!\d)",
    _I,
)
_CLOCK_RANGE = re.compile(
    r"\bbetween\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s+and\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b",
    _I,
)
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}

# Spans that cover several days: no single window fits them.
_BROAD = re.compile(
    r"\b(this|past|last|previous|whole|entire|that)\s+(week|weekend|month)\b"
    r"|\b(over|during|across|throughout|within)\s+(the|this|that)\s+(week|weekend|month)\b"
    r"|\b(lately|recently|these\s+days|nowadays|so\s+far|over\s+time|eventually)\b"
    r"|\b(each|every|per)\s+(day|morning|evening|night|afternoon)\b|\bdaily\b|\bweekly\b"
    r"|\b(past|last|previous|next)\s+(few|several|\d+|two|three)\s+days\b"
    r"|\b(mornings|evenings|nights|afternoons)\b"
    r"|\bfrom\s+\w+\s+(to|until|through)\s+\w+day\b|\bsince\s+(last\s+)?\w+day\b"
    rf"|\bsince\s+(\d{{1,2}}\s+({_MONTH_RE})|({_MONTH_RE})\s+\d{{1,2}})\b"
    rf"|\b({_WEEKDAY_RE})s\b|\b(each|every)\s+({_WEEKDAY_RE})\b"
    r"|\b(the\s+)?(next|following)\s+(day|morning|evening|night)\b|\bthrough\s+to\b"
)
# Plans for a later day are recorded before it: a window on that day would miss them.
_FUTURE = re.compile(rf"\b(tomorrow|next\s+({_WEEKDAY_RE}|week|weekend|month))\b")
_SLEEP = re.compile(r"\b(sleep|slept|sleeps|asleep|woke|wake\s+up|waking|insomnia)\b")
# Parts of day that a sleep question may name without leaving the wake-up window.
_SLEEP_PARTS = {"evening", "morning", "pre-dawn", "early morning"}
_NAMED_NIGHT = re.compile(r"\bnight\b")
_PART_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("pre-dawn", re.compile(r"\b(pre-?dawn|before\s+dawn|early\s+hours|small\s+hours)\b")),
    ("early morning", re.compile(r"\b(early\s+(in\s+the\s+)?morning|at\s+dawn|daybreak)\b")),
    ("morning", re.compile(r"\bmorning\b")),
    ("noon", re.compile(r"\b(noon|midday|mid-day)\b")),
    ("afternoon", re.compile(r"\bafternoon\b")),
    ("dusk", re.compile(r"\b(dusk|sunset|twilight)\b")),
    ("evening", re.compile(r"\b(evening|night|tonight)\b")),
]


@dataclass(frozen=True)
class TimeResolution:
    """What the question's time words resolve to, and why (the reason reads well in a trace)."""

    window: TimeWindow
    dates: tuple[date, ...] = ()
    parts: tuple[str, ...] = ()
    broad: bool = False
    sleep: bool = False
    reason: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def confident(self) -> bool:
        return self.window.enabled and self.window.confidence >= 0.6


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


def _explicit_dates(text: str, today: date) -> list[date]:
    found: list[date] = []
    for y, m, d in _ISO_DATE.findall(text):
        try:
            found.append(date(int(y), int(m), int(d)))
        except ValueError:
            continue
    for mon, d, y in _MONTH_DAY.findall(text):
        found.extend(_dated(MONTHS[mon], int(d), y, today))
    for d, mon, y in _DAY_MONTH.findall(text):
        found.extend(_dated(MONTHS[mon], int(d), y, today))
    return found


def _dated(month: int, day: int, year: str, today: date) -> list[date]:
    if year:
        try:
            return [date(int(year), month, day)]
        except ValueError:
            return []
    resolved = nearest_dated(month, day, today)
    return [resolved] if resolved else []


def _relative_dates(
    text: str, today: date, sleep: bool, labelled: tuple[date, ...] = ()
) -> tuple[list[date], list[str]]:
    """Dates from relative words, plus the parts of day those words imply.

    A weekday that names one of the `labelled` explicit dates ("Tuesday 12 May") is a
    label of that date, not a second date.
    """
    label_days = {d.weekday() for d in labelled}
    found: list[date] = []
    parts: list[str] = []
    if re.search(r"\bday\s+before\s+yesterday\b", text):
        found.append(today - timedelta(days=2))
        text = re.sub(r"\bday\s+before\s+yesterday\b", " ", text)
    if re.search(r"\byesterday\b", text):
        found.append(today - timedelta(days=1))
    if re.search(r"\blast\s+night\b", text):
        # Sleep from last night is summarised on this morning's records.
        found.append(today if sleep else today - timedelta(days=1))
        parts.append("evening")
    if re.search(r"\b(today|tonight|this\s+(morning|afternoon|evening))\b", text):
        found.append(today)
    for amount in _DAYS_AGO.findall(text):
        n = _NUMBER_WORDS.get(amount) or int(amount)
        found.append(today - timedelta(days=n))
    for last, name in _WEEKDAY.findall(text):
        if WEEKDAYS.index(name) in label_days:
            continue
        strictly = bool(last) and last.strip().startswith("last")
        found.append(most_recent_weekday(WEEKDAYS.index(name), today, strictly_before=strictly))
    return found, parts


def parts_of_day(text: str) -> list[str]:
    """Named parts of day, most specific first ("early morning" is not also "morning")."""
    found: list[str] = []
    remaining = text
    for name, pattern in _PART_PATTERNS:
        if pattern.search(remaining):
            found.append(name)
            remaining = pattern.sub(" ", remaining)
    return found


def _clock_span(text: str) -> tuple[time, time] | None:
    """An explicit clock time ("at 7 pm" → 18:00–20:00) or range ("between 2 and 4 pm")."""
    match = _CLOCK_RANGE.search(text)
    if match:
        h1, m1, ap1, h2, m2, ap2 = match.groups()
        start = _to_time(int(h1), int(m1 or 0), ap1 or ap2)
        end = _to_time(int(h2), int(m2 or 0), ap2)
        if start and end and start <= end:
            return start, end
    for hour, minute, ampm in _CLOCK.findall(text):
        if not ampm and not minute:
            continue  # "at 7" alone could be a count; only read clock-shaped numbers
        moment = _to_time(int(hour), int(minute or 0), ampm)
        if moment is None:
            continue
        anchor = datetime.combine(date(2000, 1, 2), moment)
        start = max(anchor - timedelta(hours=1), datetime.combine(anchor.date(), time(0, 0)))
        end = min(anchor + timedelta(hours=1), datetime.combine(anchor.date(), time(23, 59, 59)))
        return start.time(), end.time()
    return None


def _to_time(hour: int, minute: int, ampm: str | None) -> time | None:
    if ampm:
        if not 1 <= hour <= 12:
            return None
        pm = ampm.startswith("p")
        hour = (hour % 12) + (12 if pm else 0)
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return time(hour, minute)


def _disabled(reason: str, **kwargs: object) -> TimeResolution:
    return TimeResolution(window=TimeWindow(enabled=False, confidence=0.0), reason=reason, **kwargs)


def resolve_time(question: str, question_time: datetime) -> TimeResolution:
    """One bounded window for the question, or a disabled one with the reason why."""
    text = " ".join(question.lower().split())
    today = question_time.date()
    sleep = bool(_SLEEP.search(text))
    if _BROAD.search(text):
        return _disabled("broad span over several days", broad=True, sleep=sleep)
    if _FUTURE.search(text):
        return _disabled("a later day: its plans are recorded before it", sleep=sleep)

    explicit = _explicit_dates(text, today)
    relative, implied_parts = _relative_dates(text, today, sleep, tuple(explicit))
    dates = tuple(dict.fromkeys([*explicit, *relative]))
    if len(dates) > 1:
        return _disabled("several distinct dates", dates=dates, broad=True, sleep=sleep)

    parts = tuple(dict.fromkeys([*implied_parts, *parts_of_day(text)]))
    clock = _clock_span(text)
    if not dates and not parts and clock is None:
        return _disabled("no time reference", sleep=sleep)

    if dates:
        day = dates[0]
        confidence = EXPLICIT_DATE if explicit or not _WEEKDAY.search(text) else CONFIDENT
    else:
        # A part of day or clock time with no day: most likely today, but only a guess.
        day, confidence = today, UNSURE

    if clock is not None:
        start, end = clock
        reason = "explicit clock time"
    elif sleep and set(parts) <= _SLEEP_PARTS:
        start, end = SLEEP_WINDOW
        reason = "sleep question: wake-up summaries of that morning"
        if dates and _NAMED_NIGHT.search(text) and not re.search(r"\blast\s+night\b", text):
            # "Friday night" was slept through into Saturday: its summary is Saturday's.
            day = day + timedelta(days=1)
            reason = "sleep question: wake-up summaries of the morning after that night"
    elif parts:
        start = min(PARTS_OF_DAY[p][0] for p in parts)
        end = max(PARTS_OF_DAY[p][1] for p in parts)
        reason = f"part of day: {', '.join(parts)}"
    else:
        start, end = WHOLE_DAY
        reason = "a named day alone: the whole day"

    if re.search(r"\bthat\s+(morning|afternoon|evening|night|day)\b", text) and not dates:
        reason += " (\"that …\" with no named day)"
    window = TimeWindow(
        enabled=True, date=day, start_time=start, end_time=end, confidence=confidence
    )
    return TimeResolution(
        window=window, dates=dates, parts=parts, sleep=sleep, reason=reason
    )


def strip_time_expressions(text: str) -> str:
    """The question without its dates and clock times, so "May 12" yields no keywords."""
    stripped = text
    for pattern in (_CLOCK_RANGE, _ISO_DATE, _MONTH_DAY, _DAY_MONTH, _DAYS_AGO):
        stripped = pattern.sub(" ", stripped)
    return " ".join(_clock_words(stripped).split())


def _clock_words(text: str) -> str:
    """Drop clock-shaped times ("at 7 pm", "around 7:30") but keep bare counts ("at 7")."""

    def replace(match: re.Match[str]) -> str:
        _, minute, ampm = match.groups()
        return " " if (minute or ampm) else match.group(0)

    return _CLOCK.sub(replace, text)


def window_is_full_day(window: TimeWindow) -> bool:
    """True when an enabled window spans the whole named day (affects the seed quota)."""
    return (window.start_time or WHOLE_DAY[0]) <= WHOLE_DAY[0] and (
        window.end_time or WHOLE_DAY[1]
    ) >= time(23, 59)
