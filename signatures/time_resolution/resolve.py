"""One window per question: the named span, looked back or forward as the question asks,
never past the question time (the rules are in the package docstring)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, datetime, time
from typing import Any, Literal

from memory.search.plan import TimeWindow
from signatures.time_resolution.mentions import _Scan, _Span
from signatures.time_resolution.scan import _normalise, _scan, _time_mentions
from signatures.time_resolution.spans import (
    _apply_shifts,
    _attach_parts,
    _combine,
    _day_spans,
    _label_dates,
    _place_weekdays,
    _unanchored,
)
from signatures.time_resolution.vocabulary import (
    _CAUSAL,
    _CONSEQUENCE,
    LOOK_BACK,
    LOOK_FORWARD,
    WHOLE_DAY,
)

Direction = Literal["within", "back", "forward"]


@dataclass(frozen=True)
class TimeResolution:
    """What the question's time words resolve to, and why (the reason reads well in a trace)."""

    window: TimeWindow
    direction: Direction = "within"
    dates: tuple[date, ...] = ()
    parts: tuple[str, ...] = ()
    broad: bool = False
    reason: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def confident(self) -> bool:
        return self.window.enabled and self.window.confidence >= 0.6


def question_direction(question: str) -> Direction:
    """ "back" for a causal question, "forward" for a consequence question, else "within"."""
    _, text = _normalise(question)
    if _CAUSAL.search(text):
        return "back"
    if _CONSEQUENCE.search(text):
        return "forward"
    return "within"


def _disabled(reason: str, direction: Direction = "within", **kwargs: Any) -> TimeResolution:
    disabled = TimeResolution(
        window=TimeWindow(enabled=False, confidence=0.0), direction=direction, reason=reason
    )
    return replace(disabled, **kwargs)


def resolve_time(question: str, question_time: datetime) -> TimeResolution:
    """One window for the question, or a disabled one with the reason why (see module doc)."""
    now = question_time.replace(microsecond=0)
    scan = _scan(question, now)
    direction = question_direction(question)
    notes: list[str] = []
    _label_dates(scan, notes)
    if not _apply_shifts(scan):
        return _disabled("relative to an event: only memory can date it", direction, notes=notes)
    loose = _attach_parts(scan)
    _place_weekdays(scan, now)
    spans, open_ended = _day_spans(scan, now)
    spans += [_Span(*p.span, p.confidence, p.label) for p in scan.periods if p.span]
    if loose and not scan.days and not scan.periods:
        spans.append(_unanchored(loose, now))
    past = [s for s in spans if s.start <= now]
    if not past:
        return _disabled(_no_window_reason(scan, spans, open_ended), direction, notes=notes)
    named = _combine(past)
    later = [s.label for s in spans if s.start > now]
    if later:
        notes.append(f"after the question time, dropped: {', '.join(later)}")
    return _resolved(scan, named, direction, notes, now)


def _no_window_reason(scan: _Scan, spans: list[_Span], open_ended: list[str]) -> str:
    if spans:
        return "after the question time: a plan, recorded before it"
    if open_ended:
        return f"open-ended span around {', '.join(open_ended)}"
    if scan.vague:
        return f"vague span ({', '.join(scan.vague)}): no window"
    return "no time reference"


def _resolved(
    scan: _Scan, named: _Span, direction: Direction, notes: list[str], now: datetime
) -> TimeResolution:
    """Turn the named span into the window, looking back or forward as the question asks."""
    start, end = named.start, named.end
    reason = named.label
    if direction == "back":
        start -= LOOK_BACK
        reason += f"; causal: looks back {LOOK_BACK.days} days"
        if _CONSEQUENCE.search(scan.text):
            end += LOOK_FORWARD
            reason += f" and forward {LOOK_FORWARD.days} days"
    elif direction == "forward":
        end += LOOK_FORWARD
        reason += f"; consequence: looks forward {LOOK_FORWARD.days} days"
    if end > now:
        end = now
        reason += "; clipped at the question time"
    window = TimeWindow.spanning(start, end, named.confidence)
    return TimeResolution(
        window=window,
        direction=direction,
        dates=tuple(dict.fromkeys(d.day for d in scan.days)),
        parts=tuple(dict.fromkeys(p.name for p in scan.parts)),
        broad=window.end_date is not None,
        reason=reason,
        notes=notes,
    )


def strip_time_expressions(text: str) -> str:
    """The question without its time words, so "May 12" yields no keywords (meals stay)."""
    original, _ = _normalise(text)
    scan = _scan(original, datetime(2000, 1, 3, 12, 0))
    kept = list(original)
    for start, end in _time_mentions(scan):
        kept[start:end] = [" "] * (end - start)
    return " ".join("".join(kept).split())


def window_is_full_day(window: TimeWindow) -> bool:
    """True when an enabled window spans whole days (affects the seed quota)."""
    return (window.start_time or WHOLE_DAY[0]) <= WHOLE_DAY[0] and (
        window.end_time or WHOLE_DAY[1]
    ) >= time(23, 59)
