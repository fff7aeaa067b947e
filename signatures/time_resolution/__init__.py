"""Resolving a question's time words against the frozen question time (pure functions).

The offline planner turns "on Tuesday evening" or "from Thursday to Saturday" into one
bounded span. A window is a *soft prior* in the search (extra seeds and a small bonus,
never a filter), so a window a little too wide is cheap, while a window on the wrong day
or one invented from nothing misleads the search. The rules therefore follow general
English usage and give up (no window) whenever the words do not name a time.

What the words mean (confidence in brackets; the search applies a window at ≥ 0.6):

- No time words, no window: "When did Maria start her pottery class?", a question about
  two people chatting, or one asked in the first person, has no window unless it states
  a time. Vague spans ("lately", "recently", "these days", "every morning", "each day",
  "on Mondays") name no span either.
- References to events instead of times ("the day before the plumber came", "after the
  party", "since the repair") give no window: only memory can date the event.
- An explicit date (ISO 2026-05-12, "May 12", "12th of May", "the 23rd") is that whole
  day [0.9]. A date without a year is its occurrence nearest to the question time (ties
  to the past); "the 23rd" is the 23rd of the question's month or of an adjacent month,
  whichever is nearest.
- Relative days: today, yesterday, the day before yesterday, N days ago, this
  morning/afternoon/evening, tonight, last night [0.9].
- A weekday is the most recent such day at or before the question date ("last Tuesday":
  strictly before) [0.85]. Next to a date ("Saturday the 23rd", "Tuesday 12 May") the
  weekday only labels it; a label that disagrees with its date leaves a guess [0.45].
- Parts of day: morning 05:00–11:59:59, noon/midday 11:00–13:59:59, afternoon
  12:00–17:59:59, evening 17:00–23:59:59, night 18:00 of the named day to 09:59:59 of the
  next ("Thursday night", and "last night" = yesterday 18:00 → today 09:59:59), early
  hours 00:00–05:59:59. Meals: breakfast 05:00–10:59:59, lunch 11:00–14:59:59,
  dinner/supper 17:00–22:59:59 ("during Friday's dinner"). A part or meal with no named
  day is a guess [0.45] on its most recent occurrence that had begun by the question
  time (the question date, or the day before when that part is still to come).
  "after lunch" runs from lunch to the end of the day, "before 9 am" from midnight to 9.
- A clock time ("at 16:45", "around 4 pm", "at 7:30") is ±1 hour around it on the named
  day; a bare "at 7" (no am/pm, no minutes) is not a clock time. "between 2 and 4 pm" is
  that range.
- Ranges ("from Thursday to Saturday", "between Monday and Wednesday", "Thursday through
  Saturday") are one multi-day window, first day 00:00 to last day 23:59:59 [0.8];
  "since Tuesday" runs from Tuesday to the question time [0.8]. "this week" is Monday
  00:00 to the question time; "last week" the previous Monday–Sunday; "this weekend" /
  "last weekend" / "the weekend" Saturday 00:00–Sunday 23:59:59; "the past 3 days",
  "this month", "in April" their spans [0.7].
- Several distinct dates not given as a range ("on Tuesday and Thursday") make one
  window from the first to the last [0.7].
- Never past the question time: every window ends at the question time at the latest,
  and a named span that starts after it (a plan: "tomorrow", "next week", "on Saturday
  the 23rd" asked on the 16th) is dropped, even under "why" (when the plan was made is
  unknown). A bare weekday whose part of day is still to come ("Wednesday evening" asked
  on Wednesday afternoon) is the previous week's; in the future tense ("will", "going
  to") a bare weekday looks forward instead and so gives no window.
- Direction: a causal question (why, what caused/made/led to, reason, how come) looks
  back from its effect: the window starts 3 days before the named span and ends with
  it. A consequence question ("what happened after…", "afterwards", "as a result",
  "what happened next", "since then") looks forward: from the named span's start to 2
  days after its end. Otherwise the window is the named span. A question that is both
  looks both ways and is recorded as "back".

Smaller choices, fixed here:

- "the day before Friday" is Thursday and "the morning after Thursday" Friday morning;
  "the next day" follows the day named before it, and with no day named it refers to an
  event (no window). "before Friday" / "after Friday" alone are open-ended: no window.
- On a named night, a small-hours clock time belongs to the next morning ("at 3 am last
  night" is today 02:00–04:00).
- "this weekend" is the current one on Saturday or Sunday, the one just gone on Monday,
  and the coming one (a plan: no window) from Tuesday to Friday.
- "a week ago" is the three days around the day seven days back [0.7]; "May 14-16" is a
  range like "from May 14 to May 16".

Modules, in the order a question passes through them: `vocabulary` (tables, patterns,
confidence levels), `calendar` (date arithmetic), `mentions` (what a scan finds),
`scan` and `periods` (finding the mentions), `spans` (mentions to spans), `resolve` (one
window with its direction; `resolve_time` is the entry point).
"""

from __future__ import annotations

from signatures.time_resolution.calendar import (
    calendar_reference,
    most_recent_weekday,
    nearest_dated,
    nearest_day_of_month,
    next_weekday,
)
from signatures.time_resolution.resolve import (
    Direction,
    TimeResolution,
    question_direction,
    resolve_time,
    strip_time_expressions,
    window_is_full_day,
)
from signatures.time_resolution.vocabulary import (
    CLOCK_MARGIN,
    CONFIDENT,
    EXPLICIT_DATE,
    LOOK_BACK,
    LOOK_FORWARD,
    MEALS,
    MONTHS,
    PARTS_OF_DAY,
    PERIOD,
    RANGE,
    UNSURE,
    WEEKDAYS,
    WHOLE_DAY,
)

__all__ = [
    "CLOCK_MARGIN",
    "CONFIDENT",
    "EXPLICIT_DATE",
    "LOOK_BACK",
    "LOOK_FORWARD",
    "MEALS",
    "MONTHS",
    "PARTS_OF_DAY",
    "PERIOD",
    "RANGE",
    "UNSURE",
    "WEEKDAYS",
    "WHOLE_DAY",
    "Direction",
    "TimeResolution",
    "calendar_reference",
    "most_recent_weekday",
    "nearest_dated",
    "nearest_day_of_month",
    "next_weekday",
    "question_direction",
    "resolve_time",
    "strip_time_expressions",
    "window_is_full_day",
]
