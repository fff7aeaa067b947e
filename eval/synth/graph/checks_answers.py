"""Does a reference answer state only facts its evidence holds? A conservative, deterministic test.

A gold answer that names a number or a name found in none of its labelled events cannot be
reached from that evidence, which is the paper's "evidence sufficiency" criterion for the QA
filtering stage. Only what a program can be sure of is tested: numbers (by value), clock
times and capitalised names. Everything legitimately derived is let through, because a false
alarm sends a good question to the corrector:

- dates, weekdays, months and clock times may come from the evidence timestamps, and a clock
  time within a few minutes of one is the latent moment the devices observed (stage 3
  projects each storyline moment onto devices a few minutes apart); "5 pm" is 17:00 and a
  round hour ("by four") is supported by its hour;
- durations compare by length ("5 h 50 min" is "350 minutes");
- computed figures are not tested: any non-clock number of an aggregation answer, a figure
  the answer announces as computed ("averaged", "in total", "38 minutes apart"), and a bare
  whole number no larger than the count of cited events (it may count them);
- a capitalised word opening a sentence is only a name when it is a character's, two-letter
  capitals (GP, TV) are common abbreviations, and an acronym whose letters begin consecutive
  evidence words ("VOC") is supported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory.formats.memfusebench import BenchEvent, Question
from memory.text import STOPWORDS, stem, tokenize

CLOCK_TOLERANCE = timedelta(minutes=5)
MAX_ADDENDS = 12  # figures a stated total is searched over (the search is exponential)
DERIVED_NUMBER_CATEGORIES = frozenset({"user_aggregation"})

_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
_CLOCK_24H = re.compile(r"(?<![\d.:])(\d{1,2}):(\d{2})(?!\d|:\d)")
_CLOCK_12H = re.compile(r"(?<![\d.:])(\d{1,2})(?:[:.](\d{2}))?\s?([ap])\.?m\b\.?", re.IGNORECASE)
_UNIT = re.compile(
    r"\s?(°\s?[CF]|%|(?:bpm|kg|km/h|km|mph|ppm|hPa|dB|kWh|kcal|mmHg|ml|cm|mm|steps?|hours?"
    r"|h|minutes?|mins?|min|seconds?|s)\b)"
)
_DURATION = re.compile(
    r"(?<![\d.:])(?:(\d+)\s?h(?:ours?|rs?)?\s?(\d{1,2})(?:\s?min(?:utes?|s)?\b)?"
    r"|(\d+)[\s-]?min(?:utes?|s)?\b|(\d+)[\s-]?(?:hours?|hrs?|h)\b(?!\s?\d))"
)
_DERIVED_BEFORE = re.compile(
    r"\b(averaged|averaging|on average|in total|total (?:was|of)|totall?ed|altogether"
    r"|combined|difference)\b[^.;!?]*$",
    re.IGNORECASE,
)
_DERIVED_AFTER = re.compile(r"^\S*\s?\S*\s(apart|in total|on average|altogether)\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_SENTENCE_START = re.compile(r"(^|[.!?])[\s\"'“‘(\[]*$")
_HOUR_WORDS = (
    "twelve", "one", "two", "three", "four", "five", "six",
    "seven", "eight", "nine", "ten", "eleven",
)  # fmt: skip


@dataclass
class Support:
    """What the answer may draw on: the evidence and question, pre-digested."""

    numbers: set[str] = field(default_factory=set)
    clocks: set[int] = field(default_factory=set)  # minutes after midnight
    durations: set[int] = field(default_factory=set)  # in minutes
    events: int = 0  # how many events are cited
    moments: list[datetime] = field(default_factory=list)
    words: set[str] = field(default_factory=set)
    initials: list[str] = field(default_factory=list)


def unsupported_facts(question: Question, cited: list[BenchEvent], names: set[str]) -> list[str]:
    """The numbers, clock times and names of the answer that nothing cited supports."""
    support = _support(question, cited)
    answer = question.answer
    clocks, spans = _clocks(answer)
    missing = [shown for minutes, shown in clocks if not _clock_supported(minutes, support)]
    if question.category not in DERIVED_NUMBER_CATEGORIES:
        missing += _unsupported_numbers(answer, spans, support)
    for word in _names(answer, names):
        if not _word_supported(word, support):
            missing.append(word)
    return list(dict.fromkeys(missing))


def _support(question: Question, cited: list[BenchEvent]) -> Support:
    texts = [question.question, question.question_user or ""]
    support = Support(moments=[e.timestamp for e in cited], events=len(cited))
    if question.question_time is not None:
        support.moments.append(question.question_time)
    for event in cited:
        texts += [event.description, event.location, event.device, *event.characters]
    for text in texts:
        lowered = re.findall(r"[a-z0-9]+", text.lower())
        support.words.update(lowered)
        support.initials.append("".join(w[0] for w in lowered))
        support.numbers.update(_canonical(m.group()) for m in _NUMBER.finditer(text))
        clocks, spans = _clocks(text)
        support.clocks.update(minutes for minutes, _ in clocks)
        support.durations.update(minutes for minutes, _ in _durations(text, spans))
    for moment in support.moments:
        hour12 = moment.hour % 12 or 12
        parts = (moment.year, moment.month, moment.day, moment.hour, hour12)
        support.numbers.update(str(part) for part in parts)
        for fmt in ("%A", "%a", "%B", "%b"):
            support.words.add(moment.strftime(fmt).lower())
    support.words |= {stem(w) for w in support.words} | set(tokenize(" ".join(texts)))
    return support


def _canonical(token: str) -> str:
    """One spelling per value: no thousands commas, no leading zeros, no trailing decimal 0s."""
    token = token.replace(",", "")
    whole, _, fraction = token.partition(".")
    fraction = fraction.rstrip("0")
    return f"{int(whole)}.{fraction}" if fraction else str(int(whole))


def _clocks(text: str) -> tuple[list[tuple[int, str]], list[tuple[int, int]]]:
    """Clock times ("06:38", "5 pm", "5.30pm") as minutes after midnight, and their spans."""
    found: list[tuple[int, str]] = []
    spans: list[tuple[int, int]] = []
    for match in _CLOCK_12H.finditer(text):
        hour, minute = int(match.group(1)) % 12, int(match.group(2) or 0)
        if match.group(3).lower() == "p":
            hour += 12
        if hour < 24 and minute < 60:
            found.append((hour * 60 + minute, match.group().strip()))
            spans.append(match.span())
    for match in _CLOCK_24H.finditer(text):
        hour, minute = int(match.group(1)), int(match.group(2))
        if hour < 24 and minute < 60 and not _inside(match.start(), spans):
            found.append((hour * 60 + minute, match.group()))
            spans.append(match.span())
    return found, spans


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def _clock_supported(minutes: int, support: Support) -> bool:
    if minutes in support.clocks:
        return True
    tolerance = CLOCK_TOLERANCE.total_seconds() / 60
    if any(abs(m.hour * 60 + m.minute - minutes) <= tolerance for m in support.moments):
        return True
    hour, minute = divmod(minutes, 60)
    spoken = _HOUR_WORDS[hour % 12]
    on_the_hour = {str(hour), str(hour % 12 or 12)} & support.numbers or spoken in support.words
    return minute == 0 and bool(on_the_hour)


def _durations(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, tuple[int, int]]]:
    """Durations ("5 h 35 min", "5h35", "428 minutes", "47-minute", "6 hours") in minutes,
    with their spans; `taken` (clock times) is skipped, and the spans are added to it."""
    found = []
    for match in _DURATION.finditer(text):
        if _inside(match.start(), taken):
            continue
        hours, minutes, only_minutes, only_hours = match.groups()
        if only_minutes is not None:
            length = int(only_minutes)
        elif only_hours is not None:
            length = int(only_hours) * 60
        else:
            length = int(hours) * 60 + int(minutes)
        found.append((length, match.span()))
        taken.append(match.span())
    return found


def _unsupported_numbers(answer: str, spans: list[tuple[int, int]], support: Support) -> list[str]:
    """Durations and numbers (outside clock times) that the support neither holds nor could
    have computed; each shown as written, with its unit."""
    durations = _durations(answer, spans)
    numbers = [m for m in _NUMBER.finditer(answer) if not _inside(m.start(), spans)]
    units = [_UNIT.match(answer, m.end()) for m in numbers]
    kinds = [unit.group().replace(" ", "") if unit else "" for unit in units]
    values = [float(m.group().replace(",", "")) for m in numbers]
    bare = [v for v, kind in zip(values, kinds, strict=True) if not kind]
    lengths = [float(length) for length, _ in durations]
    missing = []
    for n, (length, (start, end)) in enumerate(durations):
        parts = [_canonical(m.group()) for m in _NUMBER.finditer(answer, start, end)]
        held = length in support.durations or all(p in support.numbers for p in parts)
        total = _stated_total(length, lengths[:n] + lengths[n + 1 :] + bare)
        if not (held or total or _derived(answer, start, end)):
            missing.append(answer[start:end].strip())
    for n, (match, unit) in enumerate(zip(numbers, units, strict=True)):
        value = _canonical(match.group())
        counted = value.isdigit() and unit is None and int(value) <= support.events
        alike = [v for i, v in enumerate(values) if i != n and kinds[i] == kinds[n]]
        total = _stated_total(values[n], alike)
        if not (value in support.numbers or counted or total or _derived(answer, *match.span())):
            missing.append(match.group() + (unit.group() if unit else ""))
    return missing


def _stated_total(value: float, others: Sequence[float]) -> bool:
    """Whether `value` is the sum of two or more of the other figures (of the same unit) the
    answer states: an answer showing its working ("110 + 65 + 40 = 215 minutes")."""
    sums: dict[float, int] = {0.0: 0}  # reachable sum -> most figures giving it
    for other in others[:MAX_ADDENDS]:
        for reached, count in list(sums.items()):
            key = round(reached + other, 6)
            sums[key] = max(sums.get(key, 0), count + 1)
    return sums.get(round(value, 6), 0) >= 2


def _derived(text: str, start: int, end: int) -> bool:
    """Whether the text announces the figure at text[start:end] as computed."""
    return bool(_DERIVED_BEFORE.search(text[:start]) or _DERIVED_AFTER.match(text[end:]))


def _names(answer: str, names: set[str]) -> list[str]:
    """Capitalised words that must be names: not a stop word, a lone letter or a two-letter
    abbreviation (GP, TV), and not opening a sentence unless they are a character's name."""
    found = []
    for match in _WORD.finditer(answer):
        word = match.group()
        if not word[0].isupper() or word.lower() in STOPWORDS:
            continue
        if len(word) == 1 or (len(word) == 2 and word.isupper()):  # A, GP, TV: not names
            continue
        if _SENTENCE_START.search(answer[: match.start()]) and word not in names:
            continue
        found.append(word)
    return found


def _word_supported(word: str, support: Support) -> bool:
    lower = word.lower()
    if lower in support.words or stem(lower) in support.words:
        return True
    acronym = word.isupper() and word.isalpha()
    return acronym and any(lower in initials for initials in support.initials)
