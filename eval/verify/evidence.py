"""Do the gold evidence and the question's time words fit the answer? (e) cited events the
answer makes no use of; (g) a time the question names that none of its evidence falls on.

(e) applies to questions citing several events (a checklist of evidence): an event shares no
content word, figure or clock time with the answer is evidence the answer does not use. (g)
resolves the question's dates, weekdays and today/yesterday words against the asking time; when
none of the cited events lies on a named day, the question points at another part of the
scenario (its reason names the storylines that day holds, when the file labels them).
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from eval.verify.findings import Finding, finding_for
from eval.verify.view import VerifyScenario
from eval.verify.words import anchored_days, clocks, numbers, words
from memory.formats.memfusebench import BenchEvent, Question
from memory.text import stem

CLOCK_TOLERANCE_MIN = 5
CLOCK_WINDOW = timedelta(hours=2)  # a clock the question names, against its evidence times
_WORD = re.compile(r"[a-z][a-z'-]{3,}")


def unused_evidence(scenario: VerifyScenario, question: Question) -> list[Finding]:
    """(e) Cited events none of whose content the answer reflects."""
    cited = [scenario.events[i] for i in question.evidence_event_ids if i in scenario.events]
    if len(cited) < 2:
        return []
    people = {name.lower() for name in scenario.names()}
    answer_words = _content(question.answer, people)
    answer_numbers = set(numbers(question.answer))
    answer_clocks = clocks(question.answer)
    used = {
        event.event_id
        for event in cited
        if _reflected(event, answer_words, answer_numbers, answer_clocks, people)
    }
    series = {(e.device, e.modality) for e in cited if e.event_id in used}
    # a cited event of the same device and modality as a used one is part of that series (an
    # aggregation answer gives the extremes or the total, not every reading)
    unused = [
        e.event_id for e in cited if e.event_id not in used and (e.device, e.modality) not in series
    ]
    if not unused or len(unused) == len(cited):
        return []  # an answer that uses none of them is (a)'s or (f)'s business
    reason = f"the answer uses nothing of cited event(s) {', '.join(unused)}"
    return [
        finding_for(scenario.scenario_id, question.question_id, "unused_evidence", reason, unused)
    ]


def time_anchor_mismatch(scenario: VerifyScenario, question: Question) -> list[Finding]:
    """(g) The question names a day (or a clock time) its evidence does not lie on."""
    cited = [scenario.events[i] for i in question.evidence_event_ids if i in scenario.events]
    if not cited or not scenario.events:
        return []
    stamps = [e.timestamp.date() for e in scenario.events.values()]
    span = (min(stamps), max(stamps))
    named = anchored_days(question.question, question.question_time, span)
    if not named:
        return []
    on_day = [e for e in cited if e.timestamp.date() in named]
    reason = None
    if not on_day:
        lies = sorted({e.timestamp.date() for e in cited})
        reason = (
            f"the question names {_days(named)}, but its evidence lies on {_days(set(lies))}"
            f"{_what_that_day_holds(scenario, named)}"
        )
    elif len(named) == 1 and (times := clocks(question.question)):
        (day,) = named
        moments = [e.timestamp for e in on_day]
        for minutes in times:
            when = _at(day, minutes)
            if all(abs(m - when) > CLOCK_WINDOW for m in moments):
                reason = f"the question names {when:%a %d %b %H:%M}, but no cited event is near it"
                break
    if reason is None:
        return []
    return [finding_for(scenario.scenario_id, question.question_id, "time_anchor_mismatch", reason)]


def _content(text: str, people: set[str]) -> set[str]:
    stop = set(words("stop_content")) | people
    return {
        stem(w)
        for w in _WORD.findall(text.lower())
        if w not in stop and w.rstrip("'s") not in people
    }


def _reflected(
    event: BenchEvent, answer_words: set[str], answer_numbers: set[float], answer_clocks: list[int],
    people: set[str],
) -> bool:  # fmt: skip
    if _content(event.description, people) & answer_words:
        return True
    if set(numbers(event.description)) & answer_numbers:
        return True
    minute = event.timestamp.hour * 60 + event.timestamp.minute
    moments = clocks(event.description) + [minute]
    return any(abs(a - m) <= CLOCK_TOLERANCE_MIN for a in answer_clocks for m in moments)


def _what_that_day_holds(scenario: VerifyScenario, days: set[date]) -> str:
    titles = []
    for event in scenario.events.values():
        episode = scenario.episode_of.get(event.event_id)
        if event.timestamp.date() in days and episode in scenario.storyline_episodes:
            title = scenario.episode_titles.get(episode or "", "") or episode
            if title and title not in titles:
                titles.append(title)
    return f" (that day holds: {'; '.join(titles)})" if titles else ""


def _days(days: set[date]) -> str:
    return ", ".join(f"{d:%a %d %b}" for d in sorted(days))


def _at(day: date, minutes: int):  # type: ignore[no-untyped-def]
    from datetime import datetime, time

    return datetime.combine(day, time(minutes // 60, minutes % 60))
