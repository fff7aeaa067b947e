"""(d) Recurring records that contradict each other: a device's running count for the day
(steps, floors, active minutes) can only grow through the day, so two readings of one device on
one day that disagree (in one event, or a later one lower than an earlier one) cannot both be
true; nor can an answer that gives a day a lower count than the device had already logged.

A question is flagged when it cites a reading caught in such a contradiction, or when its answer
states a day's count below what the cited device logged that day. Readings are found by shape
(a number next to a counter unit in a sentence that says it is the day's count), so any file's
wearables are read the same way.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime

from eval.verify.findings import Finding, finding_for
from eval.verify.view import VerifyScenario
from eval.verify.words import anchored_days, has_phrase, sentences, table, words
from memory.formats.memfusebench import BenchEvent, Question

DAILY_WORDS = ["today", "for the day", "daily", "so far", "day's", "day total", "by lunchtime"]


@dataclass(frozen=True)
class Reading:
    """One running count a device logged: whose device, which day, which unit, how much."""

    event_id: str
    device: str
    day: date
    at: datetime
    unit: str
    value: float


def readings(event: BenchEvent) -> list[Reading]:
    """The day-count readings an event states."""
    found = []
    units: dict[str, str] = table()["counter_units"]
    alternatives = "|".join(sorted((re.escape(u) for u in units), key=len, reverse=True))
    after = re.compile(rf"(\d[\d,]*)\s+({alternatives})\b", re.IGNORECASE)
    before = re.compile(r"\b(step|floor)\s+count\b[^.:;]*?:\s*(\d[\d,]*)", re.IGNORECASE)
    for sentence in sentences(event.description):
        if not has_phrase(sentence, DAILY_WORDS):
            continue
        values: list[tuple[str, float]] = []
        for match in after.finditer(sentence):
            if not _excluded(sentence[: match.start()]):
                values.append((units[match.group(2).lower()], _value(match.group(1))))
        for match in before.finditer(sentence):
            unit = units.get(match.group(1).lower() + "s", match.group(1).lower() + "s")
            values.append((unit, _value(match.group(2))))
        for unit, value in values:
            found.append(
                Reading(
                    event.event_id,
                    event.device,
                    event.timestamp.date(),
                    event.timestamp,
                    unit,
                    value,
                )
            )
    return found


def conflicts(scenario: VerifyScenario) -> dict[str, list[tuple[str, str]]]:
    """Event id -> (unit, why) for each reading of it another of the same device and day
    contradicts."""
    series: dict[tuple[str, date, str], list[Reading]] = defaultdict(list)
    for event in scenario.events.values():
        for reading in readings(event):
            series[reading.device, reading.day, reading.unit].append(reading)
    found: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for (device, day, unit), rows in series.items():
        rows.sort(key=lambda r: (r.at, r.event_id))
        for index, later in enumerate(rows):
            for earlier in rows[:index]:
                same_event = earlier.event_id == later.event_id
                if (same_event and earlier.value != later.value) or later.value < earlier.value:
                    why = (
                        f"{device} on {day}: {earlier.event_id} logged {earlier.value:,.0f} {unit} "
                        f"at {earlier.at:%H:%M}, {later.event_id} {later.value:,.0f} "
                        f"at {later.at:%H:%M}"
                    )
                    for event_id in {earlier.event_id, later.event_id}:
                        found[event_id].append((unit, why))
    return found


def record_conflict(
    scenario: VerifyScenario,
    question: Question,
    found: dict[str, list[tuple[str, str]]] | None = None,
) -> list[Finding]:
    """(d) The question cites a contradicted reading, or its answer undercounts a cited day."""
    found = conflicts(scenario) if found is None else found
    reasons: dict[str, list[str]] = {}
    asked = f"{question.question} {question.answer}".lower()
    for event_id in question.evidence_event_ids:
        for unit, why in found.get(event_id, []):
            if unit.rstrip("s").split()[0] not in asked:
                continue  # the question is not about that count: the contradiction is incidental
            reasons.setdefault(f"cites a contradicted day count ({why})", []).append(event_id)
    for why, ids in _undercounts(scenario, question).items():
        reasons.setdefault(why, []).extend(ids)
    return [
        finding_for(scenario.scenario_id, question.question_id, "record_conflict", why, ids)
        for why, ids in reasons.items()
    ]


def _undercounts(scenario: VerifyScenario, question: Question) -> dict[str, list[str]]:
    cited = [scenario.events[i] for i in question.evidence_event_ids if i in scenario.events]
    devices = {e.device for e in cited if readings(e)}
    if not devices or not scenario.events:
        return {}
    stamps = [e.timestamp.date() for e in scenario.events.values()]
    span = (min(stamps), max(stamps))
    by_day: dict[tuple[date, str], list[Reading]] = defaultdict(list)
    for event in scenario.events.values():
        if event.device in devices:
            for reading in readings(event):
                by_day[reading.day, reading.unit].append(reading)
    units: dict[str, str] = table()["counter_units"]
    result: dict[str, list[str]] = {}
    for clause in re.split(r"[;]|\s[—–]\s", question.answer):
        days = anchored_days(clause, question.question_time, span)
        if not days or len(days) != 1:
            continue
        (day,) = days
        for match in re.finditer(r"(\d[\d,]*)\s+(steps|floors|active minutes)\b", clause):
            stated, unit = _value(match.group(1)), units[match.group(2).lower()]
            logged = by_day.get((day, unit), [])
            top = max(logged, key=lambda r: r.value, default=None)
            if top is not None and stated < top.value:
                why = (
                    f"the answer gives {day} {stated:,.0f} {unit}, but {top.device} had logged "
                    f"{top.value:,.0f} by {top.at:%H:%M} ({top.event_id})"
                )
                result[why] = [top.event_id]
    return result


def _excluded(before: str) -> bool:
    last = re.findall(r"[a-z]+", before.lower())[-2:]
    return any(word in words("counter_excluded_before") for word in last)


def _value(text: str) -> float:
    return float(text.replace(",", ""))
