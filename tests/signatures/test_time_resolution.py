"""The offline planner's time resolution, against hand-resolved windows.

Question time for most rows: Wednesday 2026-05-13 15:00 (so Tuesday = 05-12, Monday =
05-11, Sunday = 05-10, Saturday = 05-09, Thursday = 05-07, last Wednesday = 05-06).
The wider table of phrasings lives in test_question_table.py; this file pins each rule.
"""

from __future__ import annotations

from datetime import date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.search.plan import TimeWindow
from signatures.time_resolution import (
    calendar_reference,
    most_recent_weekday,
    nearest_dated,
    nearest_day_of_month,
    next_weekday,
    question_direction,
    resolve_time,
    strip_time_expressions,
    window_is_full_day,
)
from signatures.time_resolution.scan import _normalise

WED = datetime(2026, 5, 13, 15, 0)  # a Wednesday afternoon
MON = datetime(2026, 5, 11, 9, 30)  # a Monday morning
NEXT_TUE = datetime(2026, 5, 19, 10, 0)  # the Tuesday after


def at(day: int, hour: int = 0, minute: int = 0, second: int = 0, month: int = 5) -> datetime:
    return datetime(2026, month, day, hour, minute, second)


def whole(day: int, month: int = 5) -> tuple[datetime, datetime]:
    return at(day, month=month), at(day, 23, 59, 59, month=month)


CASES = [
    # weekdays: the most recent such day at or before the question time
    ("What did I do on Monday?", MON, (at(11), MON)),
    ("What did I do on Monday?", WED, whole(11)),
    ("What happened on Tuesday?", WED, whole(12)),
    ("What happened on Wednesday?", WED, (at(13), WED)),
    ("What did Emma do on Thursday?", WED, whole(7)),
    ("What happened last Wednesday?", WED, whole(6)),
    ("What did Lily do this past Sunday?", WED, whole(10)),
    # relative days
    ("What happened today?", WED, (at(13), WED)),
    ("What happened yesterday?", WED, whole(12)),
    ("What happened the day before yesterday?", WED, whole(11)),
    ("What did Lily watch two days ago?", WED, whole(11)),
    ("What did Lily watch 3 days ago?", WED, whole(10)),
    # parts of day and meals (general English)
    ("What did David eat yesterday evening?", WED, (at(12, 17), at(12, 23, 59, 59))),
    ("What did I do this morning?", WED, (at(13, 5), at(13, 11, 59, 59))),
    ("What did the doorbell see on Tuesday afternoon?", WED, (at(12, 12), at(12, 17, 59, 59))),
    ("What happened on Monday at noon?", WED, (at(11, 11), at(11, 13, 59, 59))),
    ("What happened on Monday around midday?", WED, (at(11, 11), at(11, 13, 59, 59))),
    ("What did Emma cook for breakfast on Sunday?", WED, (at(10, 5), at(10, 10, 59, 59))),
    ("Who was at lunch on Monday?", WED, (at(11, 11), at(11, 14, 59, 59))),
    ("What did we argue about during Friday's dinner?", NEXT_TUE, (at(15, 17), at(15, 22, 59, 59))),
    ("What was on the table at supper yesterday?", WED, (at(12, 17), at(12, 22, 59, 59))),
    ("What did David do Tuesday morning and evening?", WED, (at(12, 5), at(12, 23, 59, 59))),
    # the night crosses midnight
    ("What happened on Saturday night?", WED, (at(9, 18), at(10, 9, 59, 59))),
    ("What happened last night?", WED, (at(12, 18), at(13, 9, 59, 59))),
    ("How did I sleep last night?", datetime(2026, 5, 13, 8, 0), (at(12, 18), at(13, 8))),
    ("How long did Raj actually sleep Friday night?", NEXT_TUE, (at(15, 18), at(16, 9, 59, 59))),
    ("What did Emma do on the night of Tuesday 12 May?", NEXT_TUE, (at(12, 18), at(13, 9, 59, 59))),
    # explicit dates
    ("What did Emma buy on May 12?", WED, whole(12)),
    ("What did Emma buy on 2026-05-10?", WED, whole(10)),
    ("What happened on 12 May?", WED, whole(12)),
    ("What happened on the 12th of May?", WED, whole(12)),
    ("What happened on the 9th?", WED, whole(9)),
    ("What happened on the 9th of May in the evening?", WED, (at(9, 17), at(9, 23, 59, 59))),
    (
        "What happened on December 30?",
        datetime(2027, 1, 2, 10, 0),
        (datetime(2026, 12, 30), datetime(2026, 12, 30, 23, 59, 59)),
    ),
    # a weekday next to a date only labels it, even when asked a week later
    ("What happened on Tuesday 12 May?", NEXT_TUE, whole(12)),
    ("What happened on Saturday the 9th?", WED, whole(9)),
    # clock times: ±1 hour on the named day
    ("What happened at 7 pm yesterday?", WED, (at(12, 18), at(12, 20))),
    ("Where was everyone at 16:45 on Tuesday?", WED, (at(12, 15, 45), at(12, 17, 45))),
    ("What was the thermostat at around 4 pm on Monday?", WED, (at(11, 15), at(11, 17))),
    ("What happened at 7:30 on Monday?", WED, (at(11, 6, 30), at(11, 8, 30))),
    ("What happened at 7:30 in the evening on Monday?", WED, (at(11, 18, 30), at(11, 20, 30))),
    ("What did I do between 2 and 4 pm on Monday?", WED, (at(11, 14), at(11, 16))),
    ("What happened at 23:30 on Tuesday?", WED, (at(12, 22, 30), at(13, 0, 30))),
    # ranges and named periods
    ("How many steps from Thursday to Saturday?", WED, (at(7), at(9, 23, 59, 59))),
    ("What happened between Monday and Wednesday?", WED, (at(11), WED)),
    ("What did the fridge log Thursday through Saturday?", WED, (at(7), at(9, 23, 59, 59))),
    ("What did David do between May 10 and May 12?", WED, (at(10), at(12, 23, 59, 59))),
    ("What did David do since Monday?", WED, (at(11), WED)),
    ("What happened since 11 May?", WED, (at(11), WED)),
    ("What did we cook this week?", WED, (at(11), WED)),
    ("What did we do last week?", WED, (at(4), at(10, 23, 59, 59))),
    ("What did we do last weekend?", WED, (at(9), at(10, 23, 59, 59))),
    ("What happened over the weekend?", WED, (at(9), at(10, 23, 59, 59))),
    ("Compare my last three nights of sleep.", WED, (at(10), WED)),
    ("Trace Oliver's illness yesterday morning through to the next day.", WED, (at(12, 5), WED)),
    # several dates: one window from the first to the last
    ("What happened on Monday and on Wednesday?", WED, (at(11), WED)),
    ("What did Lily do on Tuesday and Thursday?", WED, (at(7), at(12, 23, 59, 59))),
    # a day named relative to another day
    ("What happened the day before Friday?", WED, whole(7)),
    ("What did Leo do on Thursday and the day after?", WED, (at(7), at(8, 23, 59, 59))),
]


@pytest.mark.parametrize(("question", "asked", "bounds"), CASES)
def test_bounded_windows(question: str, asked: datetime, bounds: tuple) -> None:
    resolution = resolve_time(question, asked)
    assert resolution.window.enabled, resolution.reason
    assert resolution.window.bounds() == bounds, resolution.reason
    assert resolution.confident
    assert resolution.direction == "within"


@pytest.mark.parametrize(
    ("question", "confidence"),
    [
        ("What happened on May 12?", 0.9),
        ("What happened yesterday?", 0.9),
        ("What happened this morning?", 0.9),
        ("What happened on Tuesday?", 0.85),
        ("What happened on Tuesday evening?", 0.85),
        ("What happened from Monday to Tuesday?", 0.8),
        ("What happened since Monday?", 0.8),
        ("What did we cook this week?", 0.7),
        ("What did we do last weekend?", 0.7),
        ("What happened on Monday and Tuesday?", 0.7),
        ("What happened this morning and this afternoon?", 0.9),
    ],
)
def test_confidence_follows_how_precise_the_words_are(question: str, confidence: float) -> None:
    assert resolve_time(question, WED).window.confidence == confidence


NO_WINDOW = [
    ("When did Maria start her pottery class?", "no time"),
    ("What is David's favourite food?", "no time"),
    ("What did the fridge order at 7?", "no time"),  # a bare number is not a clock time
    ("What did Leo do for the 3rd time?", "no time"),  # an ordinal count is not a date
    ("How did my sleep change over the week?", "no time"),
    ("Have I been stressed lately?", "vague"),
    ("How many steps did I walk each day?", "vague"),
    ("What did the kids do on Mondays?", "vague"),
    ("What does Emma usually eat in the mornings?", "vague"),
    ("What happened the day before the plumber came?", "event"),
    ("What happened the night before the match on Saturday?", "event"),
    ("Was Lily better the next morning?", "event"),
    ("What did David do before Friday?", "open-ended"),
    ("Is anything planned for next Monday?", "after the question time"),
    ("What did the fridge order for tomorrow?", "after the question time"),
    ("Who is coming over tonight?", "after the question time"),
    ("What is planned for next week?", "after the question time"),
    ("Why is Grandpa coming on Saturday the 16th?", "after the question time"),
    ("What will we do on Friday?", "after the question time"),
]


@pytest.mark.parametrize(("question", "why"), NO_WINDOW)
def test_no_window(question: str, why: str) -> None:
    resolution = resolve_time(question, WED)
    assert not resolution.window.enabled
    assert resolution.window.bounds() is None
    assert why in resolution.reason


@pytest.mark.parametrize(
    ("question", "bounds"),
    [
        ("What happened in the evening?", (at(12, 17), at(12, 23, 59, 59))),  # still to come
        ("What happened that afternoon?", (at(13, 12), WED)),
        ("What did the doorbell see after lunch?", (at(13, 11), WED)),
        ("What woke the baby in the night?", (at(12, 18), at(13, 9, 59, 59))),
        ("Where was everyone around 14:00?", (at(13, 13), WED)),
    ],
)
def test_a_part_of_day_with_no_day_is_a_guess_below_the_threshold(question: str, bounds) -> None:
    resolution = resolve_time(question, WED)
    assert resolution.window.bounds() == bounds
    assert resolution.window.confidence < 0.6
    assert not resolution.confident


def test_a_weekday_label_that_disagrees_with_its_date_leaves_a_guess() -> None:
    resolution = resolve_time("What happened on Wednesday 12 May?", WED)
    assert resolution.window.bounds() == whole(12)
    assert not resolution.confident
    assert resolution.notes


def test_a_bare_weekday_whose_part_is_still_to_come_is_last_weeks() -> None:
    assert resolve_time("What happened on Wednesday evening?", WED).window.bounds() == (
        at(6, 17),
        at(6, 23, 59, 59),
    )


def test_windows_never_run_past_the_question_time() -> None:
    asked = datetime(2026, 5, 13, 21, 30)
    assert resolve_time("What happened tonight?", asked).window.bounds() == (at(13, 18), asked)
    later = resolve_time("What happened yesterday and what is planned for tomorrow?", WED)
    assert later.window.bounds() == whole(12)
    assert later.notes


def test_sleep_words_set_no_window_of_their_own() -> None:
    assert not resolve_time("How well did Emma sleep?", WED).window.enabled
    assert resolve_time("How did I sleep on Tuesday?", WED).window.bounds() == whole(12)
    assert resolve_time("What time did I wake up on Tuesday?", WED).window.bounds() == whole(12)


@pytest.mark.parametrize(
    ("question", "direction", "bounds"),
    [
        ("Why did Lily cry on Sunday?", "back", (at(7), at(10, 23, 59, 59))),
        ("What caused the alarm at 3 am on Tuesday?", "back", (at(9, 2), at(12, 4))),
        (
            "How come the fridge was warm yesterday evening?",
            "back",
            (at(9, 17), at(12, 23, 59, 59)),
        ),
        ("What happened after the storm on Sunday?", "forward", (at(10), at(12, 23, 59, 59))),
        (
            "What happened on Friday, and what happened next?",
            "forward",
            (at(8), at(10, 23, 59, 59)),
        ),
        (
            "Leo fell on Monday morning. What happened as a result?",
            "forward",
            (at(11, 5), at(13, 11, 59, 59)),
        ),
        ("What happened after lunch yesterday, and since then?", "forward", (at(12, 11), WED)),
        (
            "Why did Lily cry on Sunday, and what happened afterwards?",
            "back",
            (at(7), at(12, 23, 59, 59)),
        ),
    ],
)
def test_causal_questions_look_back_and_consequences_forward(question, direction, bounds) -> None:
    resolution = resolve_time(question, WED)
    assert resolution.direction == direction
    assert resolution.window.bounds() == bounds, resolution.reason
    assert direction in ("back", "forward") and (
        "causal" in resolution.reason or "consequence" in resolution.reason
    )


def test_direction_without_a_time_still_gives_no_window() -> None:
    resolution = resolve_time("Why did the fridge warm up?", WED)
    assert resolution.direction == "back"
    assert not resolution.window.enabled
    assert question_direction("What happened after the party?") == "forward"
    assert question_direction("What did Emma cook?") == "within"


def test_multi_day_windows_use_end_date() -> None:
    window = resolve_time("What happened on Saturday night?", WED).window
    assert (window.date, window.end_date) == (date(2026, 5, 9), date(2026, 5, 10))
    assert window == TimeWindow.spanning(at(9, 18), at(10, 9, 59, 59), 0.85)
    same_day = resolve_time("What happened on Tuesday?", WED).window
    assert same_day.end_date is None


def test_most_recent_weekday_and_strictly_before() -> None:
    wednesday = date(2026, 5, 13)
    assert most_recent_weekday(2, wednesday) == wednesday
    assert most_recent_weekday(2, wednesday, strictly_before=True) == date(2026, 5, 6)
    assert most_recent_weekday(6, wednesday) == date(2026, 5, 10)
    assert next_weekday(2, wednesday) == wednesday
    assert next_weekday(2, wednesday, strictly_after=True) == date(2026, 5, 20)


def test_nearest_dated_prefers_the_nearest_year_and_skips_impossible_dates() -> None:
    assert nearest_dated(12, 30, date(2027, 1, 2)) == date(2026, 12, 30)
    assert nearest_dated(1, 3, date(2026, 12, 30)) == date(2027, 1, 3)
    assert nearest_dated(2, 30, date(2026, 5, 1)) is None


def test_a_day_of_month_is_the_nearest_such_day() -> None:
    assert nearest_day_of_month(23, date(2026, 5, 16)) == date(2026, 5, 23)
    assert nearest_day_of_month(30, date(2026, 6, 2)) == date(2026, 5, 30)
    assert nearest_day_of_month(31, date(2026, 6, 15)) == date(2026, 5, 31)


def test_calendar_reference_names_the_previous_days() -> None:
    text = calendar_reference(WED)
    assert "Wednesday 2026-05-13 15:00:00" in text
    assert "Tuesday = 2026-05-12" in text and "Thursday = 2026-05-07" in text


def test_full_day_detection() -> None:
    assert window_is_full_day(resolve_time("What happened on Tuesday?", WED).window)
    assert window_is_full_day(resolve_time("From Monday to Tuesday?", WED).window)
    assert not window_is_full_day(resolve_time("What happened last night?", WED).window)


@pytest.mark.parametrize(
    ("question", "stripped"),
    [
        ("What did Emma buy at Costco on May 12 at 7 pm?", "What did Emma buy at Costco on ?"),
        ("What did I eat for dinner on Friday?", "What did I eat for dinner on ?"),
        ("How many steps from Thursday to Saturday?", "How many steps from to ?"),
        ("What did the fridge order at 7?", "What did the fridge order at 7?"),
    ],
)
def test_strip_time_expressions_keeps_meals_and_counts(question: str, stripped: str) -> None:
    assert strip_time_expressions(question) == stripped


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("aZ 7:'\u2019\u0130\u03a3\u00dfStMay-T")))
def test_the_scanned_lowercase_keeps_every_offset(text: str) -> None:
    """The lowercase copy the scan matches against is as long as the text it reports offsets
    into, character for character, ASCII or not (`İ` lowercases to two characters, `Σ` to a
    different one at a word's end when the whole string is lowered)."""
    original, lower = _normalise(text)
    assert len(lower) == len(original)
    assert lower == "".join(c.lower() if len(c.lower()) == 1 else c for c in original)
