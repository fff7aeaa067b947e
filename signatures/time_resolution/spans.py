"""From mentions to spans: labels, shifts, parts placed on days, ranges and "since" joined."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from signatures.time_resolution.calendar import _midnight, most_recent_weekday, next_weekday
from signatures.time_resolution.mentions import _Day, _Part, _Scan, _Span
from signatures.time_resolution.vocabulary import (
    _BETWEEN_BEFORE,
    _DAY,
    _FILLER,
    _FUTURE_TENSE,
    _LABEL_GAP,
    _LAST_SECOND,
    _OPEN_BEFORE,
    _PM_PARTS,
    _RANGE_GAP,
    _SINCE_BEFORE,
    _UNTIL_NOW,
    PARTS_OF_DAY,
    PERIOD,
    RANGE,
    UNSURE,
    _at,
)


def _label_dates(scan: _Scan, notes: list[str]) -> None:
    """A weekday right next to a date ("Saturday the 23rd") labels it instead of adding a day."""
    labels: list[_Day] = []
    for first, second in zip(scan.days, scan.days[1:], strict=False):
        pair = {first.kind, second.kind}
        if pair != {"weekday", "date"} or not _LABEL_GAP.match(scan.text[first.end : second.start]):
            continue
        weekday, dated = (first, second) if first.kind == "weekday" else (second, first)
        if weekday.weekday != dated.day.weekday():
            dated.confidence = UNSURE
            notes.append(f"'{weekday.label}' does not fall on {dated.day:%A %Y-%m-%d}")
        labels.append(weekday)
    scan.days = [d for d in scan.days if not any(d is label for label in labels)]


def _apply_shifts(scan: _Scan) -> bool:
    """Turn "the day before Friday" / "the next morning" into days; False for event-relative."""
    for shift in sorted(scan.shifts, key=lambda s: s.start):
        anchor: _Day | None
        if shift.anchored_after:
            anchor = _following_day(scan, shift.end)
            if anchor is not None:
                anchor.day += timedelta(days=shift.offset)
                anchor.label = scan.text[shift.start : anchor.end]
                anchor.start = shift.start
                if shift.part:
                    scan.parts.append(
                        _Part(shift.start, shift.end, shift.part, PARTS_OF_DAY[shift.part])
                    )
                continue
            if not re.match(r"\s*(?:[?.!,;]|and\b|or\b|$)", scan.text[shift.end :]):
                return False  # "the day before the plumber came"
        anchor = _preceding_day(scan, shift.start)
        if anchor is None:
            return False  # "the next morning" after an event
        day = _Day(
            shift.start,
            shift.end,
            anchor.day + timedelta(days=shift.offset),
            anchor.confidence,
            scan.text[shift.start : shift.end],
            "relative",
        )
        scan.days.append(day)
        if shift.part:
            scan.parts.append(_Part(shift.start, shift.end, shift.part, PARTS_OF_DAY[shift.part]))
    scan.days.sort(key=lambda d: d.start)
    return True


def _following_day(scan: _Scan, position: int) -> _Day | None:
    for day in scan.days:
        if day.start >= position:
            gap = scan.text[position : day.start]
            return day if re.fullmatch(rf"\s*{_FILLER}", gap) else None
    return None


def _preceding_day(scan: _Scan, position: int) -> _Day | None:
    earlier = [d for d in scan.days if d.end <= position]
    return earlier[-1] if earlier else None


def _attach_parts(scan: _Scan) -> list[_Part]:
    """Each part goes to the nearest named day; the parts with no day are returned."""
    if not scan.days:
        return list(scan.parts)
    for part in scan.parts:
        nearest = min(scan.days, key=lambda d: (_distance(d, part), d.start > part.start))
        nearest.parts.append(part)
    return []


def _distance(day: _Day, part: _Part) -> int:
    return max(0, part.start - day.end, day.start - part.end)


def _offsets(parts: list[_Part]) -> tuple[timedelta, timedelta]:
    """One day's span from its parts: a clock time is more precise than a part of day."""
    if not parts:
        return _at(0), _LAST_SECOND
    clocks = [p for p in parts if p.moment is not None or p.name == "clock range"]
    pm = any(p.name in _PM_PARTS for p in parts)
    night = any(p.name in ("night", "midnight") for p in parts)
    chosen = clocks or parts
    spans = [p.offsets(pm, night) for p in chosen]
    return min(s for s, _ in spans), max(e for _, e in spans)


def _day_span(day: _Day) -> tuple[datetime, datetime]:
    low, high = _offsets(day.parts)
    return _midnight(day.day) + low, _midnight(day.day) + high


def _place_weekdays(scan: _Scan, now: datetime) -> None:
    """Bare weekdays: forward in the future tense; a week back when their part is to come."""
    future = bool(_FUTURE_TENSE.search(scan.text))
    for day in scan.days:
        if day.kind != "weekday" or day.modifier:
            continue
        if future:
            day.day = next_weekday(day.weekday or 0, now.date())
        elif _day_span(day)[0] > now:
            day.day -= timedelta(days=7)


def _day_spans(scan: _Scan, now: datetime) -> tuple[list[_Span], list[str]]:
    """Named days as spans, ranges and "since" joined; also the days left open-ended."""
    spans: list[_Span] = []
    open_ended: list[str] = []
    used: set[int] = set()
    days = scan.days
    for index, day in enumerate(days):
        if index in used:
            continue
        following = days[index + 1] if index + 1 < len(days) else None
        before = scan.text[: day.start]
        if following is not None and _is_range(scan, day, following):
            first = _range_start(day, following)
            spans.append(
                _Span(
                    _day_span(first)[0],
                    _day_span(following)[1],
                    RANGE,
                    f"range {day.label} – {following.label}",
                )
            )
            used |= {index, index + 1}
        elif _SINCE_BEFORE.search(before) or _UNTIL_NOW.match(scan.text[day.end :]):
            spans.append(_Span(_day_span(day)[0], now, RANGE, f"since {day.label}"))
        elif _OPEN_BEFORE.search(before) and not day.parts and not day.possessive:
            open_ended.append(day.label)
        else:
            start, end = _day_span(day)
            spans.append(_Span(start, end, day.confidence, _describe(day)))
    return spans, open_ended


def _is_range(scan: _Scan, first: _Day, second: _Day) -> bool:
    """Two days joined by "to/through/until/–", or by "and" after "between"."""
    gap = list(scan.text[first.end : second.start])
    for part in first.parts + second.parts:
        for i in range(max(part.start, first.end), min(part.end, second.start)):
            gap[i - first.end] = " "
    joined = "".join(gap)
    if not _RANGE_GAP.match(joined):
        return False
    if re.search(r"\band\b", joined):
        return bool(_BETWEEN_BEFORE.search(scan.text[: first.start]))
    return True


def _range_start(first: _Day, last: _Day) -> _Day:
    """A range's first weekday is the latest such day at or before its last day."""
    if first.kind == "weekday" and first.day > last.day and first.weekday is not None:
        first.day = most_recent_weekday(first.weekday, last.day)
    return first


def _describe(day: _Day) -> str:
    parts = ", ".join(dict.fromkeys(p.name for p in day.parts))
    return f"{day.label} ({parts})" if parts else f"{day.label} (whole day)"


def _unanchored(parts: list[_Part], now: datetime) -> _Span:
    """Parts with no named day: their most recent occurrence that had begun by ``now``."""
    low, high = _offsets(parts)
    day = now.date()
    if _midnight(day) + low > now:
        day -= _DAY
    names = ", ".join(dict.fromkeys(p.name for p in parts))
    return _Span(_midnight(day) + low, _midnight(day) + high, UNSURE, f"{names} with no named day")


def _combine(spans: list[_Span]) -> _Span:
    """One span over all: several distinct days lower the confidence to PERIOD."""
    unique = list(dict.fromkeys(spans))
    start = min(s.start for s in unique)
    end = max(s.end for s in unique)
    confidence = min(s.confidence for s in unique)
    if (
        len(unique) > 1
        and len({s.start.date() for s in unique} | {s.end.date() for s in unique}) > 1
    ):
        confidence = min(confidence, PERIOD)
    return _Span(start, end, confidence, " + ".join(s.label for s in unique))
