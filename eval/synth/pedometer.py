"""One step count per device and day: every reading of a day's running step total agrees.

A watch states the day's steps in several places: the day's total (a routine record, or a
storyline's or conflict's reading, whose `facts` hold the value), a midday check, and the
"steps so far" a scene sentence mentions in passing. Drawn apart, they contradict each other
(9,082 steps at 07:23, then 1,164 at 09:50). Here the recorded total is the truth and every
other reading of that device's day is read off one curve that rises from the owner's waking
time to that total and stays there: a day's count never goes backwards, and one event states
one count. A day with no recorded total keeps its largest reading as the total.

Only the figures change, never the words around them; the curve is a pure function of the
total, its time and the waking time, so running this twice changes nothing.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import date, datetime

from eval.synth.daily import on_day
from eval.synth.personas import Household
from eval.synth.timewords import DAYS, at
from eval.synth.world import Obs

# "<n> steps" (not "<n> steps per minute", a cadence, nor "<n> steps a day", a goal), and
# "step count for the day: <n>"
_FIGURE = r"(\d{1,3}(?:,\d{3})+|\d+)"
STEP_COUNTS = (
    re.compile(rf"\b{_FIGURE}(?=\s+steps\b(?!\s+(?:per|a|an)\b))"),
    re.compile(rf"(?<=\bstep count)(?:[^.:;\d]*?:\s*){_FIGURE}"),
)
AT_WAKING = 0.04  # share of the day's steps already counted on waking (the night, the bathroom)


def day_counts(obs: Obs) -> list[int]:
    """The running step counts an observation states, in order."""
    found = [m for pattern in STEP_COUNTS for m in pattern.finditer(obs.description)]
    return [int(m.group(1).replace(",", "")) for m in sorted(found, key=lambda m: m.start(1))]


def settle_step_counts(hh: Household, stream: list[Obs]) -> list[Obs]:
    """Rewrite every day-step figure in `stream` onto its device's day curve (in place)."""
    series: dict[tuple[str, date], list[Obs]] = defaultdict(list)
    for obs in stream:
        if day_counts(obs):
            series[obs.device, obs.ts.date()].append(obs)
    for (device, day), readings in series.items():
        total, total_at = _total(readings)
        woke = _waking(hh, device, day)
        for obs in readings:
            count = _on_curve(total, total_at, woke, obs.ts)
            obs.description = _restated(obs.description, count)
    return stream


def _restated(text: str, count: int) -> str:
    """`text` with every day-step figure replaced by `count`."""
    for pattern in STEP_COUNTS:
        text = pattern.sub(lambda m: m.group(0)[: m.start(1) - m.start()] + f"{count:,}", text)
    return text


def _total(readings: list[Obs]) -> tuple[int, datetime]:
    """The day's recorded total and when it was read: the latest reading whose facts hold the
    day's steps, else the largest figure stated."""
    recorded = [o for o in readings if o.facts.get("topic") == "steps" and "value" in o.facts]
    if recorded:
        last = max(recorded, key=lambda o: (o.ts, o.key))
        return int(last.facts["value"]), last.ts
    value, when = max((max(day_counts(o)), o.ts) for o in readings)
    return value, when


def _waking(hh: Household, device: str, day: date) -> datetime:
    owner = hh.device(device).owner
    person = next((p for p in hh.people if p.name == owner), None)
    index = (day - DAYS[0]).days
    minutes = on_day(person.wake, index) if person is not None else 7 * 60
    return at(index, 0, minutes)


def _on_curve(total: int, total_at: datetime, woke: datetime, ts: datetime) -> int:
    if ts >= total_at:
        return total
    span = (total_at - woke).total_seconds()
    done = 0.0 if span <= 0 else min(1.0, max(0.0, (ts - woke).total_seconds() / span))
    return round(total * (AT_WAKING + (1 - AT_WAKING) * done))
