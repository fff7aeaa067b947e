"""The offline planner's time resolution, against hand-resolved windows.

Question time for most rows: Wednesday 2026-05-13 15:00 (so Tuesday = 05-12, Monday =
05-11, Sunday = 05-10, Saturday = 05-09, Thursday = 05-07, last Wednesday = 05-06).
"""

from __future__ import annotations

from datetime import date, datetime, time

import pytest

from signatures.time_resolution import (
    calendar_reference,
    most_recent_weekday,
    nearest_dated,
    resolve_time,
    window_is_full_day,
)

WED = datetime(2026, 5, 13, 15, 0)  # a Wednesday afternoon
MON = datetime(2026, 5, 11, 9, 30)  # a Monday morning
NEXT_TUE = datetime(2026, 5, 19, 10, 0)  # the Tuesday after
DAY = (time(0, 0), time(23, 59, 59))
SLEEP = (time(0, 0), time(11, 59, 59))
MORNING = (time(5, 0), time(11, 59, 59))
EVENING = (time(18, 0), time(23, 59, 59))

CASES = [
    # weekdays: the most recent such day at or before the question time
    ("What did I do on Monday?", MON, date(2026, 5, 11), DAY),
    ("What did I do on Monday?", WED, date(2026, 5, 11), DAY),
    ("What happened on Tuesday?", WED, date(2026, 5, 12), DAY),
    ("What happened on Wednesday?", WED, date(2026, 5, 13), DAY),
    ("What did Emma do on Thursday?", WED, date(2026, 5, 7), DAY),
    ("What happened last Wednesday?", WED, date(2026, 5, 6), DAY),
    ("What did Lily do this past Sunday?", WED, date(2026, 5, 10), DAY),
    # relative days and parts of day
    ("What did David eat yesterday evening?", WED, date(2026, 5, 12), EVENING),
    ("What happened last night?", WED, date(2026, 5, 12), EVENING),
    ("What did I do this morning?", WED, date(2026, 5, 13), MORNING),
    ("Who is coming over tonight?", WED, date(2026, 5, 13), EVENING),
    ("What happened today?", WED, date(2026, 5, 13), DAY),
    ("What happened yesterday?", WED, date(2026, 5, 12), DAY),
    ("What happened the day before yesterday?", WED, date(2026, 5, 11), DAY),
    ("What did Lily watch two days ago?", WED, date(2026, 5, 11), DAY),
    ("What did the doorbell see on Tuesday afternoon?", WED, date(2026, 5, 12),
     (time(13, 0), time(17, 59, 59))),
    ("What happened on Monday at noon?", WED, date(2026, 5, 11), (time(11, 0), time(13, 59, 59))),
    ("Was anyone home on Sunday at dusk?", WED, date(2026, 5, 10), (time(17, 0), time(19, 59, 59))),
    ("What did the sensor log on Tuesday pre-dawn?", WED, date(2026, 5, 12),
     (time(0, 0), time(5, 59, 59))),
    ("What did David do early morning yesterday?", WED, date(2026, 5, 12),
     (time(6, 0), time(9, 59, 59))),
    ("What happened on Saturday night?", WED, date(2026, 5, 9), EVENING),
    ("What did David do Tuesday morning and evening?", WED, date(2026, 5, 12),
     (time(5, 0), time(23, 59, 59))),
    # explicit dates
    ("What did Emma buy on May 12?", WED, date(2026, 5, 12), DAY),
    ("What did Emma buy on 2026-05-10?", WED, date(2026, 5, 10), DAY),
    ("What happened on 12 May?", WED, date(2026, 5, 12), DAY),
    ("What happened on the 9th of May in the evening?", WED, date(2026, 5, 9), EVENING),
    ("What happened on December 30?", datetime(2027, 1, 2, 10, 0), date(2026, 12, 30), DAY),
    # a weekday next to a date only labels it, even when asked a week later
    ("What happened on Tuesday 12 May?", NEXT_TUE, date(2026, 5, 12), DAY),
    ("What did Emma do on the night of Tuesday 12 May?", NEXT_TUE, date(2026, 5, 12), EVENING),
    ("What happened on 12 May in the late evening?", NEXT_TUE, date(2026, 5, 12), EVENING),
    # clock times
    ("What happened at 7 pm yesterday?", WED, date(2026, 5, 12), (time(18, 0), time(20, 0))),
    ("What did I do between 2 and 4 pm on Monday?", WED, date(2026, 5, 11),
     (time(14, 0), time(16, 0))),
    # sleep: the wake-up summaries of that morning
    ("How did I sleep on Tuesday?", WED, date(2026, 5, 12), SLEEP),
    ("How did I sleep last night?", WED, date(2026, 5, 13), SLEEP),
    ("What was my sleep score on May 11?", WED, date(2026, 5, 11), SLEEP),
    ("What time did I wake up on Tuesday?", WED, date(2026, 5, 12), SLEEP),
    ("How well did Emma sleep on Sunday night?", WED, date(2026, 5, 11), SLEEP),
    ("How long did Raj actually sleep Friday night?", NEXT_TUE, date(2026, 5, 16), SLEEP),
    ("How did Mei sleep on the night of Tuesday 12 May?", NEXT_TUE, date(2026, 5, 13), SLEEP),
]

NO_WINDOW = [
    ("What did we cook this week?", "broad"),
    ("How did my sleep change over the week?", "broad"),
    ("What did Emma do during the week?", "broad"),
    ("Have I been stressed lately?", "broad"),
    ("How many steps did I walk each day?", "broad"),
    ("What did the kids do on Mondays?", "broad"),
    ("What did David do since Monday?", "broad"),
    ("What happened since 11 May?", "broad"),
    ("Trace Oliver's illness yesterday morning through to the next day.", "broad"),
    ("Compare my last three nights of sleep.", "broad"),
    ("What happened on Monday and on Wednesday?", "several"),
    ("What happened on Wednesday 12 May?", "several"),  # the labels disagree
    ("What did David do between May 10 and May 12?", "several"),
    ("Is anything planned for next Monday?", "later"),
    ("What did the fridge order tomorrow?", "later"),
    ("What is David's favourite food?", "no time"),
]


@pytest.mark.parametrize(("question", "asked", "day", "span"), CASES)
def test_bounded_windows(question: str, asked: datetime, day: date, span: tuple) -> None:
    resolution = resolve_time(question, asked)
    window = resolution.window
    assert window.enabled, resolution.reason
    assert (window.date, window.start_time, window.end_time) == (day, *span), resolution.reason
    assert window.confidence >= 0.6
    assert resolution.confident


@pytest.mark.parametrize(("question", "why"), NO_WINDOW)
def test_no_window(question: str, why: str) -> None:
    resolution = resolve_time(question, WED)
    assert not resolution.window.enabled
    assert resolution.window.bounds() is None
    assert why in resolution.reason


@pytest.mark.parametrize("question", ["What happened in the evening?", "What happened that evening?"])
def test_part_of_day_without_a_day_is_a_guess_below_the_threshold(question: str) -> None:
    window = resolve_time(question, WED).window
    assert window.enabled and window.date == date(2026, 5, 13)
    assert (window.start_time, window.end_time) == EVENING
    assert window.confidence < 0.6


def test_most_recent_weekday_and_strictly_before() -> None:
    wednesday = date(2026, 5, 13)
    assert most_recent_weekday(2, wednesday) == wednesday
    assert most_recent_weekday(2, wednesday, strictly_before=True) == date(2026, 5, 6)
    assert most_recent_weekday(6, wednesday) == date(2026, 5, 10)


def test_nearest_dated_prefers_the_nearest_year_and_skips_impossible_dates() -> None:
    assert nearest_dated(12, 30, date(2027, 1, 2)) == date(2026, 12, 30)
    assert nearest_dated(1, 3, date(2026, 12, 30)) == date(2027, 1, 3)
    assert nearest_dated(2, 30, date(2026, 5, 1)) is None


def test_calendar_reference_names_the_previous_days() -> None:
    text = calendar_reference(WED)
    assert "Wednesday 2026-05-13 15:00:00" in text
    assert "Tuesday = 2026-05-12" in text and "Thursday = 2026-05-07" in text


def test_full_day_detection() -> None:
    assert window_is_full_day(resolve_time("What happened on Tuesday?", WED).window)
    assert not window_is_full_day(resolve_time("What happened last night?", WED).window)
