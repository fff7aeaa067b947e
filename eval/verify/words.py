"""The verifiers' shared reading of English: word tables (from `data/words.json`), names in a
text, sentences, numbers and the days a question's time words point at.

Everything here is general English keyed on a file's structure (its people, timestamps and
asking time), never on one generator's phrasing.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

WORDS_FILE = Path(__file__).with_name("data") / "words.json"
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip

_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\s+[—–]\s+")
_CLOCK = re.compile(
    r"(?<![\d.:])(\d{1,2})[:.](\d{2})(?!\d)|\b(\d{1,2})\s?([ap])\.?m\b", re.IGNORECASE
)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?")
_DATE_DM = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + "|".join(MONTHS) + r")\b", re.IGNORECASE)
_DATE_MD = re.compile(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


@cache
def table() -> dict[str, Any]:
    """The word tables, read once."""
    data: dict[str, Any] = json.loads(WORDS_FILE.read_text(encoding="utf-8"))
    return data


def words(name: str) -> list[str]:
    found: list[str] = table()[name]
    return found


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s.strip()]


def has_phrase(text: str, phrases: list[str]) -> str | None:
    """The first phrase found in `text` as whole words (case-insensitive), else None."""
    lowered = text.lower()
    for phrase in phrases:
        if re.search(r"(?<![\w-])" + re.escape(phrase.lower()) + r"(?![\w-])", lowered):
            return phrase
    return None


def mentions(text: str, name: str) -> bool:
    """`name` appears as a word (possessive too) in `text`."""
    return re.search(r"\b" + re.escape(name) + r"(?:'s|’s)?\b", text) is not None


def numbers(text: str) -> list[float]:
    """The figures of a text, clock times left out (15:03 is no 3)."""
    text = _CLOCK.sub(" ", text)
    return [float(m.group().replace(",", "")) for m in _NUMBER.finditer(text)]


def has_number(text: str) -> bool:
    if _NUMBER.search(text):
        return True
    return (
        has_phrase(text, list(table()["number_words"]) + ["a couple", "once", "twice"]) is not None
    )


def clocks(text: str) -> list[int]:
    """Clock times in `text`, as minutes after midnight."""
    found = []
    for match in _CLOCK.finditer(text):
        if match.group(1) is not None:
            hour, minute = int(match.group(1)), int(match.group(2))
        else:
            hour, minute = int(match.group(3)) % 12, 0
            if match.group(4).lower() == "p":
                hour += 12
        if hour < 24 and minute < 60:
            found.append(hour * 60 + minute)
    return found


def has_time(text: str) -> bool:
    """Does `text` say when: a clock time, a date, a weekday, a month or a time word?"""
    if clocks(text) or _ISO_DATE.search(text) or _DATE_DM.search(text) or _DATE_MD.search(text):
        return True
    lowered = text.lower()
    if any(re.search(rf"\b{day}\b", lowered) for day in WEEKDAYS + MONTHS):
        return True
    return has_phrase(text, words("time_words")) is not None


def anchored_days(text: str, asked: datetime | None, span: tuple[date, date]) -> set[date] | None:
    """The days a text's time words point at (None: it names no day).

    A date names itself; a weekday every such day of the scenario's span up to the asking
    time (a week-long file has one); today / yesterday / last night count from the asking time
    (last night also covers the asking day's small hours)."""
    days: set[date] = set()
    first, last = span
    if asked is not None:
        last = min(last, asked.date())
    for match in _ISO_DATE.finditer(text):
        days.add(date(int(match.group(1)), int(match.group(2)), int(match.group(3))))
    for day, month in [(m.group(1), m.group(2)) for m in _DATE_DM.finditer(text)] + [
        (m.group(2), m.group(1)) for m in _DATE_MD.finditer(text)
    ]:
        try:
            days.add(date(first.year, MONTHS.index(month.lower()) + 1, int(day)))
        except ValueError:
            continue
    lowered = text.lower()
    if not days:
        for index, name in enumerate(WEEKDAYS):
            if re.search(rf"\b{name}\b", lowered):
                day = first
                while day <= last:
                    if day.weekday() == index:
                        days.add(day)
                    day += timedelta(days=1)
    days |= _widened(lowered, days, last)
    if not days and asked is not None:
        relative: dict[str, int] = table()["relative_days"]
        for phrase, offset in relative.items():
            if has_phrase(text, [phrase]):
                days.add(asked.date() + timedelta(days=offset))
                if phrase == "last night":
                    days.add(asked.date())
    return days or None


def _widened(lowered: str, days: set[date], last: date) -> set[date]:
    """What a named day stretches to: "<day> night" reaches into the next morning (a night's
    record is logged on waking), "since <day>" runs to the asking day, "week of <day>" 7 days."""
    extra: set[date] = set()
    for day in days:
        names = (WEEKDAYS[day.weekday()], f"{day.day} {MONTHS[day.month - 1]}")
        if any(f"{name} night" in lowered for name in names):
            extra.add(day + timedelta(days=1))
        if any(f"since {name}" in lowered or f"from {name}" in lowered for name in names):
            extra |= {day + timedelta(days=n) for n in range(1, max(1, (last - day).days + 1))}
        if any(f"week of {name}" in lowered for name in names):
            extra |= {day + timedelta(days=n) for n in range(1, 7)}
    return extra
