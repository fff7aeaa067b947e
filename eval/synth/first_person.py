"""Stage 4, user_query questions: the asker's own devices answer."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from eval.synth.drafts import _asked, _each, _enough, _facts, _mean, _shown, _value, _workouts
from eval.synth.episodes import WorldState
from eval.synth.personas import Household
from eval.synth.phrasing import hours_minutes
from eval.synth.tables import Words
from eval.synth.timewords import DAYS
from eval.synth.world import Obs, QuestionDraft

W = Words("questions")

# Hours between the last record a question rests on and its asking, where not (2, 30).
DELAYS = {
    "fp_workout": (1.0, 20.0),
    "fp_day": (2.0, 40.0),
    "fp_sleep": (4.0, 30.0),
    "fp_screen": (2.0, 20.0),
}


def first_person_drafts(
    hh: Household, stream: list[Obs], world: WorldState, rng: random.Random
) -> list[QuestionDraft]:
    """user_query: the asker's own devices answer, so the same words mean different evidence
    for different askers."""
    say = W.at("first_person_drafts")
    out: list[QuestionDraft] = []

    def ask(key: str, topic: str, person: str, ns: Mapping[str, Any], **slots: Any) -> None:
        """Draft `key`, asked by `person` about `person`."""
        delay = DELAYS.get(key, (2.0, 30.0))
        out.append(_asked("user_query", person, say, key, topic, person, ns, delay=delay, **slots))

    def listing(
        key: str, topic: str, person: str, obs: list[Obs], ns: Mapping | None = None, **slots: Any
    ) -> None:
        """An answer listing the records, each worded by `<key>_each` (`join`, `item`, `anchor`)."""
        each = _each(say, f"{key}_each", obs)
        items = [(e["item"], [o], [e["anchor"]]) for e, o in zip(each, obs)]
        joined = "; ".join(e["join"] for e in each)
        ask(key, topic, person, ns or {}, items=items, joined=joined, **slots)

    by_kind: dict[tuple[str, str], list[list[Obs]]] = defaultdict(list)
    for group in _workouts(stream).values():
        prim = next((o for o in group if o.facts.get("primary")), None)
        if prim:
            by_kind[(prim.facts["person"], prim.facts["kind"])].append(
                sorted(group, key=lambda o: o.ts)
            )
    for (person, kind), sessions in sorted(by_kind.items()):
        if len(sessions) < 2 or hh.phone(person) is None:
            continue  # the heart rates the answer compares come from the phone's fitness app
        a, b = sessions[-2], sessions[-1]
        pa, pb = (next(o for o in s if o.facts.get("primary")) for s in (a, b))
        noun = pa.facts["noun"]
        moments = {"a": pa.ts, "b": pb.ts}
        ask("fp_workout", "workout", person, locals(), moments=moments, refs=[a, b])
    days: dict[tuple[str, int], list[Obs]] = defaultdict(list)
    for o in stream:
        if o.facts.get("topic") in ("departure", "arrival", "day_out"):
            days[(o.facts["person"], o.facts["day"])].append(o)
    candidates = [
        (k, v)
        for k, v in sorted(days.items())
        if len(v) >= 4
        and any(o.facts["topic"] == "departure" for o in v)
        and any(o.facts["topic"] == "arrival" for o in v)
    ]
    rng.shuffle(candidates)
    per_person = 2 if len(hh.residents) <= 2 else 1
    seen_people: dict[str, int] = defaultdict(int)
    for (person, day), obs in candidates:
        if seen_people[person] >= per_person:
            continue
        seen_people[person] += 1
        obs.sort(key=lambda o: o.ts)
        dep = next(o for o in obs if o.facts["topic"] == "departure")
        arr = next(o for o in obs if o.facts["topic"] == "arrival")
        joined = ", then ".join(o.facts["what"] for o in obs if o.facts["topic"] == "day_out")
        out_by, back_by = dep.ts + timedelta(minutes=2), arr.ts - timedelta(minutes=5)
        refs = [
            [dep] + [o for o in obs if o.ts <= out_by and o is not dep],
            [o for o in obs if out_by < o.ts < back_by],
            [arr] + [o for o in obs if o.ts >= back_by and o is not arr],
        ]
        ask("fp_day", "day_out", person, locals(), moments={"d": dep.ts}, refs=refs)
    for person, obs in _enough(stream, "resting_hr", 3):
        listing("fp_resting_hr", "resting_hr", person, obs)
    for person, obs in _enough(stream, "laptop_work", 3):
        total = sum(map(_value, obs))
        listing("fp_laptop", "laptop_work", person, obs, locals())
    for person, obs in _enough(stream, "medication", 6):
        mornings = [o for o in obs if _value(o) == "morning"]
        evenings = [o for o in obs if _value(o) == "evening"]
        every = len(mornings) == len(evenings) == len(DAYS)
        verdict = say("fp_medication_verdict")["all" if every else "some"]
        ask("fp_medication", "medication", person, locals(), refs=[mornings, evenings])
    for person, obs in _enough(stream, "homework", 2):
        listing("fp_homework", "homework", person, obs)
    for person, obs in _facts(stream, "sleep").items():
        weekend = [o for o in obs if o.facts["day"] in (4, 5)]
        weekdays = [o for o in obs if o.facts["day"] not in (4, 5)]
        if len(weekend) == 2 and len(weekdays) >= 3:
            wk, we = _mean(weekdays), _mean(weekend)
            joined = ", ".join(hours_minutes(_value(o)) for o in weekend)
            shown, shown2 = map(_shown, weekend)
            ask("fp_sleep", "sleep", person, locals(), refs=[weekend, weekdays])
    for person, obs in _enough(stream, "weight", 2):
        listing("fp_weight", "weight", person, obs)
    for person, obs in _facts(stream, "screen_time").items():
        weekend = [o for o in obs if o.facts["day"] in (5, 6)]
        weekdays = [o for o in obs if o.facts["day"] < 5]
        if len(weekend) == 2 and len(weekdays) >= 3:
            wk, we = _mean(weekdays), _mean(weekend)
            verdict = say("fp_screen_verdict")["more" if we > wk else "less" if we < wk else "same"]
            listing("fp_screen", "screen_time", person, weekend, locals(), refs=[weekdays])
    return out
