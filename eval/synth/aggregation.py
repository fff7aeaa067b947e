"""Stage 4, user_aggregation questions: one person's (or the household's) records over the week."""

from __future__ import annotations

import random
from collections import defaultdict

from eval.synth.drafts import _draft, _facts, _night, _other, _shown
from eval.synth.episodes import WorldState
from eval.synth.personas import Household
from eval.synth.phrasing import hours_minutes
from eval.synth.tables import Words
from eval.synth.timewords import day_label
from eval.synth.world import Obs, QuestionDraft

W = Words("questions")


def aggregation_drafts(
    hh: Household, stream: list[Obs], world: WorldState, rng: random.Random
) -> list[QuestionDraft]:
    """user_aggregation: one person's (or the household's) records aggregated over days."""
    # Conflicted slots stay in: the facts hold the better-supported value, and the rival
    # record in the stream only makes the aggregation harder.
    say = W.at("aggregation_drafts")
    out: list[QuestionDraft] = []

    for person, obs in _facts(stream, "sleep").items():
        if len(obs) < 5:
            continue
        lo = min(obs, key=lambda o: o.facts["value"])
        hi = max(obs, key=lambda o: o.facts["value"])
        avg = sum(o.facts["value"] for o in obs) // len(obs)
        out.append(
            _draft(
                "user_aggregation",
                _other(hh, rng, person),
                **say(
                    "agg_sleep",
                    locals(),
                    night=_night(lo),
                    night2=_night(hi),
                    shown=_shown(lo),
                    shown2=_shown(hi),
                    refs=[[lo], [hi], obs],
                ),
                topic="sleep",
                subject=person,
                origin="agg_sleep",
            )
        )
    for person, obs in _facts(stream, "steps").items():
        if len(obs) < 5:
            continue
        over = [o for o in obs if o.facts["value"] >= 10000]
        top = max(obs, key=lambda o: o.facts["value"])
        days = ", ".join(day_label(o.ts).split()[0] for o in over) or "none"
        out.append(
            _draft(
                "user_aggregation",
                _other(hh, rng, person),
                **say("agg_steps", locals(), refs=[over or obs, [top], obs]),
                topic="steps",
                subject=person,
                origin="agg_steps",
            )
        )
    workouts = [o for o in stream if o.facts.get("topic") == "workout" and o.facts.get("primary")]
    by_person: dict[str, list[Obs]] = defaultdict(list)
    for o in workouts:
        by_person[o.facts["person"]].append(o)
    groups: dict[str, list[Obs]] = defaultdict(list)
    for o in stream:
        if o.facts.get("topic") == "workout":
            groups[o.facts["group"]].append(o)
    for person, prim in sorted(by_person.items()):
        if len(prim) < 2:
            continue
        prim.sort(key=lambda o: o.ts)
        longest = max(prim, key=lambda o: o.facts["value"])
        listing = "; ".join(f"{day_label(o.ts)}: {o.facts['summary']}" for o in prim)
        items = [
            (say("items", o=o), groups[o.facts["group"]], [str(o.facts["value"])]) for o in prim
        ]
        items.append((say("append", locals()), [longest], []))
        out.append(
            _draft(
                "user_aggregation",
                _other(hh, rng, person),
                **say("agg_workout", locals()),
                checklist=items,
                topic="workout",
                subject=person,
                origin="agg_workout",
            )
        )
    for person, obs in _facts(stream, "screen_time").items():
        if len(obs) < 5:
            continue
        top = max(obs, key=lambda o: o.facts["value"])
        total = sum(o.facts["value"] for o in obs)
        out.append(
            _draft(
                "user_aggregation",
                _other(hh, rng, person),
                **say("agg_screen", locals(), shown=_shown(top), refs=[[top], [top], obs]),
                topic="screen_time",
                subject=person,
                origin="agg_screen",
            )
        )
    for person, obs in _facts(stream, "gaming").items():
        if len(obs) < 2:
            continue
        latest = max(obs, key=lambda o: o.facts["end"])
        out.append(
            _draft(
                "user_aggregation",
                _other(hh, rng, person),
                **say(
                    "agg_gaming",
                    locals(),
                    joined=", ".join(
                        day_label(o.ts).split()[0] + ": " + o.facts["game"] for o in obs
                    ),
                    refs=[obs, [latest]],
                ),
                topic="gaming",
                subject=person,
                origin="agg_gaming",
            )
        )
    tv = _facts(stream, "tv").get("household", [])
    if len(tv) >= 4:
        longest = max(tv, key=lambda o: o.facts["value"])
        total = sum(o.facts["value"] for o in tv)
        out.append(
            _draft(
                "user_aggregation",
                rng.choice([p.name for p in hh.adults()] or [hh.people[0].name]),
                **say("agg_tv", locals(), refs=[tv, [longest]]),
                topic="tv",
                subject="household",
                origin="agg_tv",
            )
        )
    seen_home: dict[tuple[str, int], list[Obs]] = defaultdict(list)
    for o in stream:
        if o.facts.get("topic") == "day_out" and o.facts["what"].startswith("came home"):
            seen_home[(o.facts["person"], o.facts["day"])].append(o)
    for person, obs in _facts(stream, "arrival").items():
        if len(obs) < 3:
            continue
        cams = [c for o in obs for c in seen_home.get((person, o.facts["day"]), [])]
        late = [o for o in obs if o.facts["value"] >= "18:00"]
        last = max(obs, key=lambda o: o.facts["value"])
        out.append(
            _draft(
                "user_aggregation",
                _other(hh, rng, person),
                **say(
                    "agg_arrival",
                    locals(),
                    v=", ".join(day_label(o.ts).split()[0] for o in late) or "none",
                    refs=[late or obs, [last], obs + cams],
                ),
                topic="arrival",
                subject=person,
                origin="agg_arrival",
            )
        )
    for topic in ("weight", "laptop_work", "tablet", "carer_visit"):
        for person, obs in _facts(stream, topic).items():
            if len(obs) < 3:
                continue
            if topic == "weight":
                first, last = obs[0], obs[-1]
                answer = say(
                    "answer",
                    locals(),
                    joined=", ".join(f"{o.facts['value']:.1f} kg ({day_label(o.ts)})" for o in obs),
                    facts_minus=last.facts["value"] - first.facts["value"],
                )
                texts = say("texts", locals())
                items = [(say("items_2", o=o), [o], [f"{o.facts['value']:.1f}"]) for o in obs]
            elif topic == "laptop_work":
                total = sum(o.facts["value"] for o in obs)
                most = max(obs, key=lambda o: o.facts["value"])
                answer = say("answer_2", locals())
                texts = say("texts_2", locals())
                items = [
                    (say("items_3", locals()), obs, []),
                    (say("items_4", locals()), [most], [hours_minutes(most.facts["value"])]),
                ]
            elif topic == "tablet":
                most = max(obs, key=lambda o: o.facts["value"])
                answer = say(
                    "answer_3",
                    locals(),
                    joined="; ".join(
                        f"{day_label(o.ts).split()[0]} {o.facts['what']} ({o.facts['value']} min)"
                        for o in obs
                    ),
                )
                texts = say("texts_3", locals())
                items = [
                    (say("items_5"), obs, []),
                    (say("items_6", locals()), [most], [str(most.facts["value"])]),
                ]
            else:
                earliest = min(obs, key=lambda o: o.facts["value"])
                answer = say(
                    "answer_4", locals(), joined=", ".join(day_label(o.ts).split()[0] for o in obs)
                )
                texts = say("texts_4", locals())
                items = [
                    (say("items_7", locals()), obs, []),
                    (say("items_8", locals()), [earliest], [earliest.facts["value"]]),
                ]
            out.append(
                _draft(
                    "user_aggregation",
                    _other(hh, rng, person),
                    texts,
                    answer,
                    items,
                    topic,
                    person,
                    f"agg_{topic}",
                )
            )
    locks = _facts(stream, "night_lock").get("household", [])
    if len(locks) >= 5:
        late = max(locks, key=lambda o: o.facts["value"])
        early = min(locks, key=lambda o: o.facts["value"])
        out.append(
            _draft(
                "user_aggregation",
                rng.choice([p.name for p in hh.adults()] or [hh.people[0].name]),
                **say(
                    "agg_night_lock",
                    locals(),
                    joined="; ".join(
                        f"{day_label(o.ts).split()[0]} {o.facts['value']}" for o in locks
                    ),
                    refs=[[late], [early], locks],
                ),
                topic="night_lock",
                subject="household",
                origin="agg_night_lock",
            )
        )
    for person, obs in _facts(stream, "medication").items():
        if len(obs) < 6:
            continue
        mornings = [o for o in obs if o.facts["value"] == "morning"]
        evenings = [o for o in obs if o.facts["value"] == "evening"]
        out.append(
            _draft(
                "user_aggregation",
                _other(hh, rng, person),
                **say("agg_medication", locals(), refs=[mornings, evenings]),
                topic="medication",
                subject=person,
                origin="agg_medication",
            )
        )
    for person, obs in _facts(stream, "homework").items():
        if len(obs) < 3:
            continue
        most = max(obs, key=lambda o: o.facts["value"])
        total = sum(o.facts["value"] for o in obs)
        out.append(
            _draft(
                "user_aggregation",
                _other(hh, rng, person),
                **say("agg_homework", locals(), refs=[obs, [most]]),
                topic="homework",
                subject=person,
                origin="agg_homework",
            )
        )
    for person, obs in _facts(stream, "resting_hr").items():
        if len(obs) < 3 or any(o.source == "storyline" for o in obs):
            continue
        lo = min(obs, key=lambda o: o.facts["value"])
        hi = max(obs, key=lambda o: o.facts["value"])
        out.append(
            _draft(
                "user_aggregation",
                _other(hh, rng, person),
                **say("agg_resting_hr", locals(), refs=[[lo], [hi], obs]),
                topic="resting_hr",
                subject=person,
                origin="agg_resting_hr",
            )
        )
    return out
