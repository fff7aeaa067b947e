"""The time mentions a scan finds in a question, and the spans they become."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from signatures.time_resolution.vocabulary import _LAST_SECOND, CLOCK_MARGIN, PERIOD, _at


@dataclass
class _Part:
    """A part of day, meal or clock time; it is placed on a named day later."""

    start: int
    end: int
    name: str
    span: tuple[timedelta, timedelta]
    moment: timedelta | None = None  # a clock time
    meridiem: bool = True  # False: a clock time without am/pm ("at 7:30")
    modifier: str = ""  # "after" or "before" ("after lunch", "before 9 am")
    meal: bool = False

    def offsets(self, pm: bool, night: bool = False) -> tuple[timedelta, timedelta]:
        """The span on its day, read in the light of the day's other parts.

        A clock time without am/pm is in the afternoon when the day names one ("at 7:30 in
        the evening"); on a named night, a small-hours time belongs to the next morning
        ("at 3 am last night").
        """
        low, high = self.span
        moment = self.moment
        if moment is not None and moment < _at(12):
            shift = timedelta(0)
            if night and (self.meridiem or moment < _at(10)):
                shift = _at(24)
            elif pm and not self.meridiem:
                shift = _at(12)
            moment += shift
            low, high = moment - CLOCK_MARGIN, moment + CLOCK_MARGIN
        if self.modifier == "after":
            return (moment if moment is not None else low), max(high, _LAST_SECOND)
        if self.modifier == "before":
            return _at(0), (moment if moment is not None else high)
        return low, high


@dataclass
class _Day:
    """A mention of one calendar day ("Tuesday", "May 12", "yesterday")."""

    start: int
    end: int
    day: date
    confidence: float
    label: str
    kind: str  # "date", "relative" or "weekday"
    weekday: int | None = None
    modifier: str = ""
    possessive: bool = False
    parts: list[_Part] = field(default_factory=list)


@dataclass
class _Period:
    """A span named as a whole ("this week", "last weekend"); None when it cannot be placed."""

    start: int
    end: int
    label: str
    span: tuple[datetime, datetime] | None
    confidence: float = PERIOD


@dataclass
class _Shift:
    """ "the day before …", "the next morning": a day relative to another mention."""

    start: int
    end: int
    offset: int
    part: str | None
    anchored_after: bool  # True: relative to what follows ("the day before Friday")


@dataclass
class _Scan:
    """Every time mention in the question, by kind, with the text they were read from."""

    text: str
    days: list[_Day] = field(default_factory=list)
    parts: list[_Part] = field(default_factory=list)
    periods: list[_Period] = field(default_factory=list)
    shifts: list[_Shift] = field(default_factory=list)
    vague: list[str] = field(default_factory=list)
    claimed: list[tuple[int, int]] = field(default_factory=list)

    def free(self, match: re.Match[str], group: int = 0) -> bool:
        start, end = match.span(group)
        return all(end <= a or start >= b for a, b in self.claimed)

    def claim(self, match: re.Match[str], group: int = 0) -> tuple[int, int]:
        span = match.span(group)
        self.claimed.append(span)
        return span


@dataclass(frozen=True)
class _Span:
    start: datetime
    end: datetime
    confidence: float
    label: str
