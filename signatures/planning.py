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

Time window (only when one bounded span helps)
- Resolve relative words against the question time and the calendar line: a weekday is the
  most recent such day at or before the question time (the same day when the weekdays
  match); yesterday, this morning, tonight, last night are relative to the question time.
- No window for spans over several days ("this week", "lately", "each day", "eventually",
  "from X to Y"), for questions naming several dates, or for a later outcome of an earlier
  date. A calendar word alone is not a reason for a window.
- An enabled window always has both start_time and end_time. A date alone means
  00:00:00-23:59:59. A part of day is narrower and wins over the bare date: pre-dawn
  00:00-05:59, early morning 06:00-09:59, morning 05:00-11:59, noon 11:00-13:59, afternoon
  13:00-17:59, dusk 17:00-19:59, evening/night 18:00-23:59. A meal or session label alone
  (dinner, movie night, yoga) does not set clock times.
- Sleep questions (sleep quality, sleep score, "that night") are answered by records made
  around waking: use a morning window (00:00-11:59), not the daytime: the named day's morning,
  or the morning after a named night ("last night", "Friday night"). Keep sleep scores,
  durations and device names as lexical anchors. Other questions about a weekday night stay
  on that weekday's evening.
- When unsure of the date, keep the window's confidence below 0.6.

Constraints (each with a confidence: clear decision 0.7-1.0, ambiguous 0.4-0.5)
- `coverage_diversification` (dimensions user and/or device): when the answer needs every
  person, device, source or viewpoint (comparisons, "each", "who", "both", what each source
  saw). Not for one subject's fact or cause.
- `timeline_mode`: when the answer is an ordered set of steps (a sequence, an itinerary, a
  reconstruction of a morning, repeated attempts, before-to-after). Not for one fact.
- `temporal_neighbors` (radius 1-3, default 3): when adjacent snippets around the hits are
  needed (a full sequence, each occurrence, a continuous period, a conversation followed by
  actions). Not merely because a question asks why.
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
