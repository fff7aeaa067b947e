"""Stage 4, user_aggregation questions: one person's (or the household's) records over the week."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from eval.synth.drafts import (
    _asked,
    _each,
    _enough,
    _extreme,
    _facts,
    _mean,
    _night,
    _other,
    _shown,
    _value,
    _weekdays,
    _workouts,
)
from eval.synth.episodes import WorldState
from eval.synth.personas import Household
from eval.synth.tables import Words
from eval.synth.world import Obs, QuestionDraft

W = Words("questions")


def aggregation_drafts(
    hh: Household, stream: list[Obs], world: WorldState, rng: random.Random
) -> list[QuestionDraft]:
    """user_aggregation: one person's (or the household's) records aggregated over days."""
    # Conflicted slots stay in: the facts hold the better-supported value, and the rival
    # record in the stream only makes the aggregation harder.
    say = W.at("aggregation_drafts")
    adults = [p.name for p in hh.adults()] or [hh.people[0].name]
    out: list[QuestionDraft] = []

    def ask(
        key: str, topic: str, person: str, ns: Mapping[str, Any], asker: str = "", **slots: Any
    ) -> None:
        """Draft `key` about `person`, asked by `asker` or else by someone else at home."""
        asker = asker or _other(hh, rng, person)
        out.append(_asked("user_aggregation", asker, say, key, topic, person, ns, **slots))

    for person, obs in _enough(stream, "sleep", 5):
        lo, hi = _extreme(obs, min), _extreme(obs)
        if lo is None or hi is None:
            continue
        avg = _mean(obs)
        night, night2, shown, shown2 = _night(lo), _night(hi), _shown(lo), _shown(hi)
        ask("agg_sleep", "sleep", person, locals(), refs=[[lo], [hi], obs])
    for person, obs in _enough(stream, "steps", 5):
        over = [o for o in obs if _value(o) >= 10000]
        if (top := _extreme(obs)) is None:
            continue
        days = _weekdays(over) or "none"
        ask("agg_steps", "steps", person, locals(), refs=[over or obs, [top], obs])
    groups = _workouts(stream)
    sessions: dict[str, list[Obs]] = defaultdict(list)
    for o in stream:
        if o.facts.get("topic") == "workout" and o.facts.get("primary"):
            sessions[o.facts["person"]].append(o)
    for person, prim in sorted(sessions.items()):
        longest = _extreme(prim) if len(prim) >= 2 else None
        if longest is not None:
            prim.sort(key=lambda o: o.ts)
            each = _each(say, "agg_workout_each", prim)
            listing = "; ".join(e["join"] for e in each)
            items = [
                (e["item"], groups[o.facts["group"]], [e["anchor"]]) for e, o in zip(each, prim)
            ]
            ask("agg_workout", "workout", person, locals(), items=items, refs=[[longest]])
    for person, obs in _enough(stream, "screen_time", 5):
        if (top := _extreme(obs)) is None:
            continue
        total = sum(map(_value, obs))
        shown = _shown(top)
        ask("agg_screen", "screen_time", person, locals(), refs=[[top], [top], obs])
    for person, obs in _enough(stream, "gaming", 2):
        latest = max(obs, key=lambda o: o.facts["end"])
        joined = ", ".join(_each(say, "agg_gaming_each", obs))
        ask("agg_gaming", "gaming", person, locals(), refs=[obs, [latest]])
    tv = _facts(stream, "tv").get("household", [])
    if len(tv) >= 4 and (longest := _extreme(tv)) is not None:
        total = sum(map(_value, tv))
        ask("agg_tv", "tv", "household", locals(), rng.choice(adults), refs=[tv, [longest]])
    seen_home: dict[tuple[str, int], list[Obs]] = defaultdict(list)
    for o in stream:
        if o.facts.get("topic") == "day_out" and o.facts["what"].startswith("came home"):
            seen_home[(o.facts["person"], o.facts["day"])].append(o)
    for person, obs in _enough(stream, "arrival", 3):
        cams = [c for o in obs for c in seen_home.get((person, o.facts["day"]), [])]
        late = [o for o in obs if _value(o) >= "18:00"]
        if (last := _extreme(obs)) is None:
            continue
        days = _weekdays(late) or "none"
        ask("agg_arrival", "arrival", person, locals(), refs=[late or obs, [last], obs + cams])
    for person, obs in _enough(stream, "weight", 3):
        each = _each(say, "agg_weight_each", obs)
        joined = ", ".join(e["join"] for e in each)
        change = _value(obs[-1]) - _value(obs[0])
        items = [(e["item"], [o], [e["anchor"]]) for e, o in zip(each, obs)]
        ask("agg_weight", "weight", person, locals(), items=items)
    for person, obs in _enough(stream, "laptop_work", 3):
        total = sum(map(_value, obs))
        if (most := _extreme(obs)) is None:
            continue
        ask("agg_laptop_work", "laptop_work", person, locals(), refs=[obs, [most]])
    for person, obs in _enough(stream, "tablet", 3):
        if (most := _extreme(obs)) is None:
            continue
        joined = "; ".join(_each(say, "agg_tablet_each", obs))
        ask("agg_tablet", "tablet", person, locals(), refs=[obs, [most]])
    for person, obs in _enough(stream, "carer_visit", 3):
        if (earliest := _extreme(obs, min)) is None:
            continue
        joined = _weekdays(obs)
        ask("agg_carer_visit", "carer_visit", person, locals(), refs=[obs, [earliest]])
    locks = _facts(stream, "night_lock").get("household", [])
    late, early = (_extreme(locks), _extreme(locks, min)) if len(locks) >= 5 else (None, None)
    if late is not None and early is not None:
        joined = "; ".join(_each(say, "agg_night_lock_each", locks))
        refs = [[late], [early], locks]
        ask("agg_night_lock", "night_lock", "household", locals(), rng.choice(adults), refs=refs)
    for person, obs in _enough(stream, "medication", 6):
        mornings = [o for o in obs if _value(o) == "morning"]
        evenings = [o for o in obs if _value(o) == "evening"]
        ask("agg_medication", "medication", person, locals(), refs=[mornings, evenings])
    for person, obs in _enough(stream, "homework", 3):
        if (most := _extreme(obs)) is None:
            continue
        total = sum(map(_value, obs))
        ask("agg_homework", "homework", person, locals(), refs=[obs, [most]])
    for person, obs in _enough(stream, "resting_hr", 3):
        lo, hi = _extreme(obs, min), _extreme(obs)
        if lo is not None and hi is not None and not any(o.source == "storyline" for o in obs):
            ask("agg_resting_hr", "resting_hr", person, locals(), refs=[[lo], [hi], obs])
    return out
