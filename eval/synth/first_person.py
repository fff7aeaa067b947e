"""Stage 4, user_query questions: the asker's own devices answer."""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import timedelta

from eval.synth.aggregation import aggregation_drafts  # noqa: F401  (re-exported)
from eval.synth.drafts import _draft, _facts, _shown
from eval.synth.episodes import WorldState
from eval.synth.personas import Household
from eval.synth.phrasing import hours_minutes
from eval.synth.tables import Words
from eval.synth.timewords import day_label
from eval.synth.world import Obs, QuestionDraft

W = Words("questions")


def first_person_drafts(
    hh: Household, stream: list[Obs], world: WorldState, rng: random.Random
) -> list[QuestionDraft]:
    """user_query: the asker's own devices answer, so the same words mean different evidence
    for different askers."""
    say = W.at("first_person_drafts")
    out: list[QuestionDraft] = []
    groups: dict[str, list[Obs]] = defaultdict(list)
    for o in stream:
        if o.facts.get("topic") == "workout":
            groups[o.facts["group"]].append(o)
    by_kind: dict[tuple[str, str], list[list[Obs]]] = defaultdict(list)
    for group in groups.values():
        prim = next((o for o in group if o.facts.get("primary")), None)
        if prim:
            by_kind[(prim.facts["person"], prim.facts["kind"])].append(
                sorted(group, key=lambda o: o.ts)
            )
    for (person, kind), sessions in sorted(by_kind.items()):
        if len(sessions) < 2 or hh.phone(person) is None:
            continue  # the heart rates the answer compares come from the phone's fitness app
        a, b = sessions[-2], sessions[-1]
        pa = next(o for o in a if o.facts.get("primary"))
        pb = next(o for o in b if o.facts.get("primary"))
        noun = pa.facts["noun"]
        out.append(
            _draft(
                "user_query",
                person,
                **say("fp_workout", locals(), refs=[a, b]),
                topic="workout",
                subject=person,
                origin="fp_workout",
                moments={"a": pa.ts, "b": pb.ts},
                delay=(1.0, 20.0),
            )
        )
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
        steps = [o.facts["what"] for o in obs if o.facts["topic"] == "day_out"]
        out.append(
            _draft(
                "user_query",
                person,
                **say(
                    "fp_day",
                    locals(),
                    joined=", then ".join(steps),
                    refs=[
                        [dep]
                        + [
                            o for o in obs if o.ts <= dep.ts + timedelta(minutes=2) and o is not dep
                        ],
                        [
                            o
                            for o in obs
                            if dep.ts + timedelta(minutes=2) < o.ts < arr.ts - timedelta(minutes=5)
                        ],
                        [arr]
                        + [
                            o for o in obs if o.ts >= arr.ts - timedelta(minutes=5) and o is not arr
                        ],
                    ],
                ),
                topic="day_out",
                subject=person,
                origin="fp_day",
                moments={"d": dep.ts},
                delay=(2.0, 40.0),
            )
        )
    for person, obs in _facts(stream, "resting_hr").items():
        if len(obs) >= 3:
            out.append(
                _draft(
                    "user_query",
                    person,
                    **say("fp_resting_hr", joined="; ".join(say("join", o=o) for o in obs)),
                    checklist=[(say("draft", o=o), [o], [str(o.facts["value"])]) for o in obs],
                    topic="resting_hr",
                    subject=person,
                    origin="fp_resting_hr",
                    delay=(2.0, 30.0),
                )
            )
    for person, obs in _facts(stream, "laptop_work").items():
        if len(obs) >= 3:
            total = sum(o.facts["value"] for o in obs)
            out.append(
                _draft(
                    "user_query",
                    person,
                    **say(
                        "fp_laptop",
                        locals(),
                        joined="; ".join(
                            f"{day_label(o.ts).split()[0]} {hours_minutes(o.facts['value'])}"
                            for o in obs
                        ),
                    ),
                    checklist=[
                        (
                            f"{day_label(o.ts)}: {hours_minutes(o.facts['value'])}",
                            [o],
                            [hours_minutes(o.facts["value"])],
                        )
                        for o in obs
                    ],
                    topic="laptop_work",
                    subject=person,
                    origin="fp_laptop",
                    delay=(2.0, 30.0),
                )
            )
    for person, obs in _facts(stream, "medication").items():
        if len(obs) >= 6:
            out.append(
                _draft(
                    "user_query",
                    person,
                    **say(
                        "fp_medication",
                        locals(),
                        sum2=sum(o.facts["value"] == "morning" for o in obs),
                        sum3=sum(o.facts["value"] == "evening" for o in obs),
                        refs=[
                            [o for o in obs if o.facts["value"] == "morning"],
                            [o for o in obs if o.facts["value"] == "evening"],
                        ],
                    ),
                    topic="medication",
                    subject=person,
                    origin="fp_medication",
                    delay=(2.0, 30.0),
                )
            )
    for person, obs in _facts(stream, "homework").items():
        if len(obs) >= 2:
            out.append(
                _draft(
                    "user_query",
                    person,
                    **say("fp_homework", joined="; ".join(say("join_2", o=o) for o in obs)),
                    checklist=[(say("draft_2", o=o), [o], [str(o.facts["value"])]) for o in obs],
                    topic="homework",
                    subject=person,
                    origin="fp_homework",
                    delay=(2.0, 30.0),
                )
            )
    for person, obs in _facts(stream, "sleep").items():
        weekend = [o for o in obs if o.facts["day"] in (4, 5)]
        weekdays = [o for o in obs if o.facts["day"] not in (4, 5)]
        if len(weekend) == 2 and len(weekdays) >= 3:
            wk = sum(o.facts["value"] for o in weekdays) // len(weekdays)
            we = sum(o.facts["value"] for o in weekend) // 2
            out.append(
                _draft(
                    "user_query",
                    person,
                    **say(
                        "fp_sleep",
                        locals(),
                        joined=", ".join(hours_minutes(o.facts["value"]) for o in weekend),
                    ),
                    checklist=[
                        (say("draft_3"), weekend, [_shown(o) for o in weekend]),
                        (say("draft_4", locals()), weekdays, []),
                    ],
                    topic="sleep",
                    subject=person,
                    origin="fp_sleep",
                    delay=(4.0, 30.0),
                )
            )
    for person, obs in _facts(stream, "weight").items():
        if len(obs) >= 2:
            out.append(
                _draft(
                    "user_query",
                    person,
                    **say("fp_weight", joined="; ".join(say("join_3", o=o) for o in obs)),
                    checklist=[
                        (say("draft_5", o=o), [o], [f"{o.facts['value']:.1f}"]) for o in obs
                    ],
                    topic="weight",
                    subject=person,
                    origin="fp_weight",
                    delay=(2.0, 30.0),
                )
            )
    for person, obs in _facts(stream, "screen_time").items():
        weekend = [o for o in obs if o.facts["day"] in (5, 6)]
        weekdays = [o for o in obs if o.facts["day"] < 5]
        if len(weekend) == 2 and len(weekdays) >= 3:
            wk = sum(o.facts["value"] for o in weekdays) // len(weekdays)
            out.append(
                _draft(
                    "user_query",
                    person,
                    **say(
                        "fp_screen", locals(), joined="; ".join(say("join_4", o=o) for o in weekend)
                    ),
                    checklist=[
                        (f"{day_label(o.ts)}: {hours_minutes(o.facts['value'])}", [o], [_shown(o)])
                        for o in weekend
                    ]
                    + [(say("draft_6", locals()), weekdays, [])],
                    topic="screen_time",
                    subject=person,
                    origin="fp_screen",
                    delay=(2.0, 20.0),
                )
            )
    return out
