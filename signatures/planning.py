"""Planning one retrieval round: the `PlanRetrievalRound` decision and its thin DSPy module.

The rules below restate the paper's round-planning prompt in our own words. They are
also reused by the evidence judge, which must emit its next plan under the same rules.
The offline twin with the same inputs and outputs lives in `planning_offline.py`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import dspy

from memory.search.plan import RoundPlan
from signatures.time_resolution import calendar_reference

PLANNING_RULES = """\
You plan one round of memory retrieval; you never answer the question. The memory holds
short, time-stamped observations from many devices (watches, phones, cameras, speakers,
sensors, apps) about several people. Produce exactly one executable plan.

Queries
- `focus`: one standalone query that keeps every constraint of the question (people,
  devices, places, dates, parts of day, the kind of answer wanted). Replace I/me/my with
  the requester's name.
- `semantic_queries`: at most 3, each at most 80 characters. The first stays close to the
  question's own wording, only compressed. The others reach complementary evidence: what
  each participant did, what each device recorded, changes of place/object/state, what came
  before or after, or one source's viewpoint. Never near-duplicates; never a drafted answer.
- Keep the answer shape: a question about a sequence, a process or "what happened" keeps
  that reconstruction intent; write cause-seeking rewrites only when the question asks why,
  for a reason, or how something came about.
- Keep the details that decide credit: colours, counts, durations, readings, scores, rounds,
  emotions, conflicts, objects. When two records disagree, name every competing value and
  source (manual entry versus automatic device, timestamps, units).
- `bm25_query`: close to the question, keeping exact names, device ids, objects and numbers.
- `keywords`: short literal terms from the question (people, places, devices, objects,
  actions, numbers, colours, readings, states); no sentences, no generic words.
- `entities`: the people, places, devices and objects the question names (never empty when
  there are some); use the known device ids and names given.

Time window (a soft prior, never a filter: its records become extra seeds with a small
bonus, nothing outside it is dropped; a wrong or invented window only misleads)
- Set a window only when the question states a time. None for a question without time
  words, for vague or repeated spans ("lately", "recently", "these days", "every morning",
  "on Mondays"), or for a time given only by an event ("the day before the plumber came",
  "after the party", "since the repair"): only memory can date an event.
- Read the words against the question time and the calendar line: a weekday is the
  most recent such day at or before the question date ("last Tuesday": strictly before); a
  date without a year is its occurrence nearest the question time; yesterday, this morning,
  tonight and last night count from the question time.
- Fields: from `date` `start_time` to `end_date` `end_time`; leave `end_date` null when the
  window ends on its start day. An enabled window always has both times. A named day alone
  is 00:00:00-23:59:59; a part of day narrows it: early hours 00:00-05:59:59, morning
  05:00-11:59:59, noon 11:00-13:59:59, afternoon 12:00-17:59:59, evening 17:00-23:59:59,
  night 18:00 of the named day to 09:59:59 of the next (an `end_date`; "last night" is
  yesterday 18:00 to today 09:59:59). Meals: breakfast 05:00-10:59:59, lunch
  11:00-14:59:59, dinner/supper 17:00-22:59:59. A clock time is one hour either side of it.
  Sleep gets no special window: "on Tuesday" is that day, "Tuesday night" the night.
- Several days are one window through `end_date`, first day 00:00 to last day 23:59:59:
  ranges ("from Thursday to Saturday"), "since Tuesday" (to the question time), "this
  week", "last weekend", "in April", or several dates named together.
- Direction: a causal question (why, what caused or led to, the reason, how come) starts the
  window 3 days before the effect's span and ends it with that span; a consequence question
  ("what happened after", "as a result", "since then") runs from the span's start to 2 days
  after its end. Otherwise the window is the named span.
- Never past the question time: the window ends at the question time at the latest, and a
  span that starts after it (a plan: "tomorrow", "next week") gets no window.
- Confidence: a date or relative day 0.9, a weekday 0.85, a range 0.8, a week, weekend,
  month or several dates 0.7. A guess (a part of day or meal with no day named, a weekday
  that does not fall on the date beside it) stays below 0.6, which the search ignores.

Constraints (each with a confidence: clear decision 0.7-1.0, ambiguous 0.4-0.5)
- `coverage_diversification` (dimensions user and/or device): when the answer needs every
  person, device, source or viewpoint (comparisons, "each", "who", "both", what each source
  saw). Not for one subject's fact or cause.
- `timeline_mode`: when the answer is an ordered set of steps (a sequence, an itinerary, a
  reconstruction of a morning, repeated attempts, before-to-after). Not for one fact.
- `temporal_neighbors` (radius 1-3, default 3): when adjacent snippets around the hits are
  needed (a full sequence, each occurrence, a continuous period, a conversation followed by
  actions). Not merely because a question asks why.
- `causal_links.direction`: `back` for a causal question (follow the stored cause → effect
  links from what is found back to its causes), `forward` for a consequence question (on to
  the effects), `none` for any other question (a causal link leads to another moment than the
  one asked about), `both` when unsure.
- `seed.time_window_quota`: 15 by default; 20 with coverage and no timeline; 25 for a
  timeline inside a window shorter than a day, for checking a claim at a given time, or for
  what happened during a session; for a whole-day window 10-12 when the question is about one
  subject or object, 15 for a whole-day reconstruction or several people/devices.
  `seed.temporal_neighbor_keep`: leave null unless adjacent snippets matter more than recall.

Never repeat a plan that was already executed (see the previous plans and searched queries):
change the queries toward evidence not yet found.
"""

PLAN_INSTRUCTIONS = (
    "Plan the next retrieval round for a question over a multi-source personal memory.\n\n"
    + PLANNING_RULES
)


class PlanRetrievalRound(dspy.Signature):
    __doc__ = PLAN_INSTRUCTIONS

    question: str = dspy.InputField(desc="The user's question, verbatim.")
    question_time: str = dspy.InputField(desc="Frozen question time, ISO 8601 (local clock).")
    calendar: str = dspy.InputField(desc="Weekday and recent dates relative to the question time.")
    requester: str = dspy.InputField(desc="Who asks; I/me/my refer to this person ('' = unknown).")
    known_people: list[str] = dspy.InputField(desc="Names the memory knows.")
    known_devices: list[str] = dspy.InputField(desc="Device ids the memory knows.")
    previous_plans: list[RoundPlan] = dspy.InputField(desc="Plans already executed, oldest first.")
    searched_queries: list[str] = dspy.InputField(desc="Queries already searched.")
    plan: RoundPlan = dspy.OutputField(desc="One executable round plan (JSON).")


def planner_inputs(
    question: str,
    question_time: datetime,
    requester: str | None,
    known_people: list[str],
    known_devices: list[str],
    previous_plans: list[RoundPlan],
    searched_queries: list[str],
) -> dict[str, Any]:
    """The keyword arguments both planners take, built in one place so they cannot drift."""
    return {
        "question": question,
        "question_time": question_time.isoformat(timespec="seconds"),
        "calendar": calendar_reference(question_time),
        "requester": requester or "",
        "known_people": sorted(known_people),
        "known_devices": sorted(known_devices),
        "previous_plans": list(previous_plans),
        "searched_queries": list(searched_queries),
    }


class RoundPlanner(dspy.Module):
    """The LLM planner: one prediction of `PlanRetrievalRound`."""

    def __init__(self) -> None:
        super().__init__()
        self.plan_round = dspy.Predict(PlanRetrievalRound)

    def forward(self, **inputs: Any) -> dspy.Prediction:
        result = self.plan_round(**inputs)
        plan = result.plan
        if not isinstance(plan, RoundPlan):
            plan = RoundPlan.model_validate(plan)
        return dspy.Prediction(plan=plan)
