"""Stage 4: questions in the six categories, with answers, evidence and checklists.

Episode templates and conflict builders already proposed drafts that point at views and
observations; this stage adds aggregation and first-person questions computed from the
routine facts, then resolves every draft: evidence = the union of its checklist's
observations, question time = some hours after the latest evidence (at a waking hour),
and relative time phrases worded from that question time.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from datetime import datetime, timedelta

from eval.synth.episodes import WorldState
from eval.synth.errors import SynthesisError
from eval.synth.personas import Household
from eval.synth.phrasing import hours_minutes, polish
from eval.synth.timewords import DAYS, day_label, on_day, over_week, when
from eval.synth.world import CheckDraft, Obs, Question, QuestionDraft, StoryEvent, View
from memory.formats.memfusebench import CATEGORIES

PLACEHOLDER = re.compile(r"\{(when|day):(\w+)\}|\{week\}")


def _facts(stream: list[Obs], topic: str) -> dict[str, list[Obs]]:
    by_person: dict[str, list[Obs]] = defaultdict(list)
    for o in stream:
        if o.facts.get("topic") == topic and o.source != "adversarial":
            by_person[o.facts.get("person", "")].append(o)
    for obs in by_person.values():
        obs.sort(key=lambda o: (o.ts, o.key))
    return by_person


def _shown(o: Obs) -> str:
    return str(o.facts.get("shown") or (o.anchors[0] if o.anchors else o.facts.get("value")))


def _night(o: Obs) -> str:
    return (
        "the night of " + day_label(DAYS[0] + timedelta(days=o.facts["day"]))
        if o.facts["day"] >= 0
        else "the night before Monday 11 May"
    )


def _draft(
    category: str,
    asker: str,
    texts: list[str],
    answer: str,
    checklist: list[tuple[str, list[Obs], list[str]]],
    topic: str,
    subject: str,
    origin: str,
    moments: dict | None = None,
    delay=(2.0, 30.0),
) -> QuestionDraft:
    return QuestionDraft(
        category=category,
        asker=asker,
        texts=texts,
        answer=answer,
        checklist=[CheckDraft(i, list(r), list(a)) for i, r, a in checklist if r],
        topic=topic,
        subject=subject,
        moments=moments or {},
        delay_hours=delay,
        origin=origin,
    )


def _other(hh: Household, rng: random.Random, person: str) -> str:
    pool = [
        p.name
        for p in hh.people
        if p.name != person and p.kind in ("adult", "elder", "carer", "teen")
    ]
    return rng.choice(pool or [person])


def aggregation_drafts(
    hh: Household, stream: list[Obs], world: WorldState, rng: random.Random
) -> list[QuestionDraft]:
    """user_aggregation: one person's (or the household's) records aggregated over days."""
    # Conflicted slots stay in: the facts hold the better-supported value, and the rival
    # record in the stream only makes the aggregation harder.
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
                [
                    (
                        f"Which night {{week}} did {person} get the least sleep, and which night "
                        "the most?"
                    ),
                    (
                        f"Over the week, what were {person}'s shortest and longest nights in bed "
                        "asleep?"
                    ),
                ],
                f"Shortest: {_night(lo)} with {hours_minutes(lo.facts['value'])}; longest: "
                f"{_night(hi)} with "
                f"{hours_minutes(hi.facts['value'])}. Across the {len(obs)} recorded nights "
                f"{person} averaged "
                f"about {hours_minutes(avg)}.",
                [
                    (
                        f"Shortest night: {_night(lo)}, {hours_minutes(lo.facts['value'])}",
                        [lo],
                        [_shown(lo)],
                    ),
                    (
                        f"Longest night: {_night(hi)}, {hours_minutes(hi.facts['value'])}",
                        [hi],
                        [_shown(hi)],
                    ),
                    (f"Average about {hours_minutes(avg)} over {len(obs)} nights", obs, []),
                ],
                "sleep",
                person,
                "agg_sleep",
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
                [
                    (
                        f"On how many days {{week}} did {person} reach 10,000 steps, and what was "
                        "the busiest day?"
                    ),
                    (
                        f"How often did {person} hit the ten-thousand-step mark {{week}}, and "
                        "when was "
                        f"{person} most on the move?"
                    ),
                ],
                f"{len(over)} of {len(obs)} days ({days}); the most active day was "
                f"{day_label(top.ts)} with "
                f"{top.facts['value']:,} steps.",
                [
                    (f"{len(over)} days at or above 10,000 ({days})", over or obs, []),
                    (
                        f"Busiest: {day_label(top.ts)}, {top.facts['value']:,} steps",
                        [top],
                        [f"{top.facts['value']:,}"],
                    ),
                    (f"Counted over {len(obs)} days", obs, []),
                ],
                "steps",
                person,
                "agg_steps",
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
            (
                f"{day_label(o.ts)}: {o.facts['noun']} of {o.facts['value']} min",
                groups[o.facts["group"]],
                [str(o.facts["value"])],
            )
            for o in prim[:4]
        ]
        items.append(
            (f"Longest: {longest.facts['noun']} on {day_label(longest.ts)}", [longest], [])
        )
        out.append(
            _draft(
                "user_aggregation",
                _other(hh, rng, person),
                [
                    f"What exercise did {person} do {{week}}, and which session lasted longest?",
                    f"List {person}'s workouts {{week}} — and which one was the longest?",
                ],
                f"{len(prim)} sessions — {listing}. The longest was the {longest.facts['noun']} on "
                f"{day_label(longest.ts)} ({longest.facts['value']} min).",
                items[:5],
                "workout",
                person,
                "agg_workout",
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
                [
                    (
                        f"Which day {{week}} was {person} glued to the phone the most, and what "
                        "was "
                        "eating the time?"
                    ),
                    (
                        f"When was {person}'s heaviest phone day {{week}}, and roughly how much in "
                        "total over the week?"
                    ),
                ],
                f"{day_label(top.ts)}: {hours_minutes(top.facts['value'])}, mostly "
                f"{top.facts['top']}. Over "
                f"the {len(obs)} days the total was about {hours_minutes(total)}.",
                [
                    (
                        f"Heaviest day {day_label(top.ts)} ({hours_minutes(top.facts['value'])})",
                        [top],
                        [_shown(top)],
                    ),
                    (f"Mostly {top.facts['top']}", [top], [top.facts["top"]]),
                    (f"Weekly total about {hours_minutes(total)}", obs, []),
                ],
                "screen_time",
                person,
                "agg_screen",
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
                [
                    (
                        f"How many times did {person} play on the console {{week}}, and which "
                        "session went on latest?"
                    ),
                    f"Count {person}'s console sessions {{week}}; when did the latest one finish?",
                ],
                f"{len(obs)} sessions "
                f"({', '.join(day_label(o.ts).split()[0] + ': ' + o.facts['game'] for o in obs)}); "
                f"the latest ended at {latest.facts['end']} on {day_label(latest.ts)}.",
                [
                    (f"{len(obs)} sessions", obs, []),
                    (f"Latest ended {latest.facts['end']}", [latest], [latest.facts["end"]]),
                ],
                "gaming",
                person,
                "agg_gaming",
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
                [
                    (
                        "How much television did the household get through {week}, and which "
                        "evening was the longest?"
                    ),
                    (
                        "Roughly how many hours was the TV on in the evenings {week}, and when was "
                        "the biggest session?"
                    ),
                ],
                f"About {hours_minutes(total)} across {len(tv)} evenings; the longest was "
                f"{day_label(longest.ts)} "
                f"({hours_minutes(longest.facts['value'])} of {longest.facts['show']}).",
                [
                    (f"Total about {hours_minutes(total)} over {len(tv)} sessions", tv, []),
                    (
                        f"Longest: {day_label(longest.ts)}",
                        [longest],
                        [hours_minutes(longest.facts["value"])],
                    ),
                ],
                "tv",
                "household",
                "agg_tv",
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
                [
                    (
                        f"On which workdays {{week}} did {person} get in after six, and what was "
                        "the latest homecoming?"
                    ),
                    (
                        f"How many evenings {{week}} was {person} home after 6 pm, and when was "
                        "the "
                        "latest?"
                    ),
                ],
                f"{len(late)} of {len(obs)} workdays "
                f"({', '.join(day_label(o.ts).split()[0] for o in late) or 'none'}); "
                f"the latest was {last.facts['value']} on {day_label(last.ts)}.",
                [
                    (f"{len(late)} late arrivals", late or obs, []),
                    (f"Latest {last.facts['value']}", [last], [last.facts["value"]]),
                    ("Arrival times across the week (lock and doorbell camera)", obs + cams, []),
                ],
                "arrival",
                person,
                "agg_arrival",
            )
        )
    for topic, label, unit in (
        ("weight", "weight", "kg"),
        ("laptop_work", "laptop work time", ""),
        ("tablet", "tablet use", ""),
        ("carer_visit", "visits", ""),
    ):
        for person, obs in _facts(stream, topic).items():
            if len(obs) < 3:
                continue
            if topic == "weight":
                first, last = obs[0], obs[-1]
                answer = (
                    f"{len(obs)} weigh-ins: "
                    + ", ".join(f"{o.facts['value']:.1f} kg ({day_label(o.ts)})" for o in obs)
                    + f"; a change of {last.facts['value'] - first.facts['value']:+.1f} kg."
                )
                texts = [
                    f"How did {person}'s weight move across the weigh-ins {{week}}?",
                    f"What did the scale say each time {person} stepped on it {{week}}?",
                ]
                items = [
                    (
                        f"{o.facts['value']:.1f} kg on {day_label(o.ts)}",
                        [o],
                        [f"{o.facts['value']:.1f}"],
                    )
                    for o in obs[:5]
                ]
            elif topic == "laptop_work":
                total = sum(o.facts["value"] for o in obs)
                most = max(obs, key=lambda o: o.facts["value"])
                answer = (
                    f"About {hours_minutes(total)} over {len(obs)} home-working days; the "
                    "longest was "
                    f"{day_label(most.ts)} ({hours_minutes(most.facts['value'])})."
                )
                texts = [
                    (
                        f"How many hours did {person} put in on the laptop on home-working days "
                        f"{{week}}?"
                    ),
                    (
                        f"Add up {person}'s working time at the laptop {{week}} — which day was "
                        "longest?"
                    ),
                ]
                items = [
                    (f"Total {hours_minutes(total)}", obs, []),
                    (f"Longest {day_label(most.ts)}", [most], [hours_minutes(most.facts["value"])]),
                ]
            elif topic == "tablet":
                most = max(obs, key=lambda o: o.facts["value"])
                answer = (
                    f"{len(obs)} sessions: "
                    + "; ".join(
                        f"{day_label(o.ts).split()[0]} {o.facts['what']} ({o.facts['value']} min)"
                        for o in obs
                    )
                    + f". Longest on {day_label(most.ts)}."
                )
                texts = [
                    (
                        f"What has {person} been doing on the tablet {{week}}, and which day the "
                        "longest?"
                    ),
                    f"Summarise {person}'s tablet time {{week}}.",
                ]
                items = [
                    ("The sessions and what was used", obs, []),
                    (
                        f"Longest {day_label(most.ts)} ({most.facts['value']} min)",
                        [most],
                        [str(most.facts["value"])],
                    ),
                ]
            else:
                earliest = min(obs, key=lambda o: o.facts["value"])
                answer = (
                    f"{len(obs)} visits ({', '.join(day_label(o.ts).split()[0] for o in obs)}); "
                    "the "
                    f"earliest arrival was {earliest.facts['value']} on {day_label(earliest.ts)}."
                )
                texts = [
                    f"Which days did {person} come in {{week}}, and when was the earliest start?",
                    (
                        f"How many mornings was {person} here {{week}}, and on which did {person} "
                        "arrive first thing?"
                    ),
                ]
                items = [
                    (f"{len(obs)} visits", obs, []),
                    (f"Earliest {earliest.facts['value']}", [earliest], [earliest.facts["value"]]),
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
                [
                    (
                        "When was the front door locked up for the night each evening {week}, and "
                        "which night was latest?"
                    ),
                    (
                        "What were the night-time lock-up times {week}? Which was the earliest and "
                        "which the latest?"
                    ),
                ],
                "; ".join(f"{day_label(o.ts).split()[0]} {o.facts['value']}" for o in locks)
                + f". Latest: {late.facts['value']} on {day_label(late.ts)}; earliest: "
                f"{early.facts['value']} on "
                f"{day_label(early.ts)}.",
                [
                    (f"Latest {late.facts['value']}", [late], [late.facts["value"]]),
                    (f"Earliest {early.facts['value']}", [early], [early.facts["value"]]),
                    ("Every night's lock-up", locks, []),
                ],
                "night_lock",
                "household",
                "agg_night_lock",
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
                [
                    (
                        f"How many times {{week}} did {person} confirm taking tablets after a "
                        "reminder?"
                    ),
                    (
                        f"Count {person}'s acknowledged medication reminders {{week}}, morning and "
                        "evening."
                    ),
                ],
                f"{len(obs)} confirmations: {len(mornings)} morning and {len(evenings)} evening.",
                [
                    (f"{len(mornings)} morning confirmations", mornings, []),
                    (f"{len(evenings)} evening confirmations", evenings, []),
                ],
                "medication",
                person,
                "agg_medication",
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
                [
                    (
                        f"How much homework did {person} do on the laptop {{week}}, and which day "
                        "was the biggest?"
                    ),
                    f"Add up {person}'s homework sessions {{week}} — which day took longest?",
                ],
                f"{len(obs)} sessions, about {hours_minutes(total)} in total; the longest was "
                f"{day_label(most.ts)} "
                f"({most.facts['value']} minutes).",
                [
                    (f"Total about {hours_minutes(total)}", obs, []),
                    (f"Longest {day_label(most.ts)}", [most], [str(most.facts["value"])]),
                ],
                "homework",
                person,
                "agg_homework",
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
                [
                    (
                        f"What range did {person}'s resting heart rate cover on the mornings it "
                        "was "
                        f"measured {{week}}?"
                    ),
                    f"Lowest and highest morning resting pulse for {person} {{week}}?",
                ],
                f"{len(obs)} readings between {lo.facts['value']} bpm ({day_label(lo.ts)}) and "
                f"{hi.facts['value']} "
                f"bpm ({day_label(hi.ts)}).",
                [
                    (f"Lowest {lo.facts['value']} bpm", [lo], [str(lo.facts["value"])]),
                    (f"Highest {hi.facts['value']} bpm", [hi], [str(hi.facts["value"])]),
                    ("All readings", obs, []),
                ],
                "resting_hr",
                person,
                "agg_resting_hr",
            )
        )
    return out


def first_person_drafts(
    hh: Household, stream: list[Obs], world: WorldState, rng: random.Random
) -> list[QuestionDraft]:
    """user_query: the asker's own devices answer, so the same words mean different evidence
    for different askers."""
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
        if len(sessions) < 2:
            continue
        a, b = sessions[-2], sessions[-1]
        pa = next(o for o in a if o.facts.get("primary"))
        pb = next(o for o in b if o.facts.get("primary"))
        noun = pa.facts["noun"]
        out.append(
            _draft(
                "user_query",
                person,
                [
                    f"How did my last two {noun}s compare — length and heart rate?",
                    f"Compare my {noun} {{when:a}} with the one {{when:b}} for me.",
                ],
                f"{day_label(pa.ts)}: {pa.facts['summary']}, average heart rate "
                f"{pa.facts['avg']} bpm (peak "
                f"{pa.facts['peak']}); {day_label(pb.ts)}: {pb.facts['summary']}, average "
                f"{pb.facts['avg']} bpm "
                f"(peak {pb.facts['peak']}).",
                [
                    (
                        f"{day_label(pa.ts)}: {pa.facts['value']} min, avg {pa.facts['avg']} bpm",
                        a,
                        [str(pa.facts["value"])],
                    ),
                    (
                        f"{day_label(pb.ts)}: {pb.facts['value']} min, avg {pb.facts['avg']} bpm",
                        b,
                        [str(pb.facts["value"])],
                    ),
                ],
                "workout",
                person,
                "fp_workout",
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
                [
                    "What time did I leave the house {day:d} and when did I get back?",
                    "Walk me through my comings and goings {day:d}: out when, back when?",
                ],
                f"You left at {dep.facts['value']} and got back at {arr.facts['value']}; along "
                "the way the "
                f"devices show you {', then '.join(steps)}.",
                [
                    (
                        f"Left at {dep.facts['value']}",
                        [dep]
                        + [
                            o for o in obs if o.ts <= dep.ts + timedelta(minutes=2) and o is not dep
                        ],
                        [dep.facts["value"]],
                    ),
                    (
                        "The day out (drive / arrival at work)",
                        [
                            o
                            for o in obs
                            if dep.ts + timedelta(minutes=2) < o.ts < arr.ts - timedelta(minutes=5)
                        ],
                        [],
                    ),
                    (
                        f"Back at {arr.facts['value']}",
                        [arr]
                        + [
                            o for o in obs if o.ts >= arr.ts - timedelta(minutes=5) and o is not arr
                        ],
                        [arr.facts["value"]],
                    ),
                ],
                "day_out",
                person,
                "fp_day",
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
                    [
                        (
                            "What has my resting heart rate been on the mornings my watch measured "
                            "it {week}?"
                        ),
                        "Read me my morning resting pulse readings {week}.",
                    ],
                    "; ".join(f"{day_label(o.ts)}: {o.facts['value']} bpm" for o in obs) + ".",
                    [
                        (f"{day_label(o.ts)}: {o.facts['value']} bpm", [o], [str(o.facts["value"])])
                        for o in obs[:5]
                    ],
                    "resting_hr",
                    person,
                    "fp_resting_hr",
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
                    [
                        "How many hours did I work from home on the laptop {week}?",
                        "Add up my home-working hours {week}, please.",
                    ],
                    f"About {hours_minutes(total)} over {len(obs)} days: "
                    + "; ".join(
                        f"{day_label(o.ts).split()[0]} {hours_minutes(o.facts['value'])}"
                        for o in obs
                    )
                    + ".",
                    [
                        (
                            f"{day_label(o.ts)}: {hours_minutes(o.facts['value'])}",
                            [o],
                            [hours_minutes(o.facts["value"])],
                        )
                        for o in obs[:5]
                    ],
                    "laptop_work",
                    person,
                    "fp_laptop",
                    delay=(2.0, 30.0),
                )
            )
    for person, obs in _facts(stream, "medication").items():
        if len(obs) >= 6:
            out.append(
                _draft(
                    "user_query",
                    person,
                    [
                        "Did I confirm all my tablets this week, morning and evening?",
                        "How many of my medication reminders did I answer this week?",
                    ],
                    f"You confirmed {len(obs)} times: "
                    + f"{sum(o.facts['value'] == 'morning' for o in obs)} mornings and "
                    + f"{sum(o.facts['value'] == 'evening' for o in obs)} evenings.",
                    [
                        (
                            "Morning confirmations",
                            [o for o in obs if o.facts["value"] == "morning"],
                            [],
                        ),
                        (
                            "Evening confirmations",
                            [o for o in obs if o.facts["value"] == "evening"],
                            [],
                        ),
                    ],
                    "medication",
                    person,
                    "fp_medication",
                    delay=(2.0, 30.0),
                )
            )
    for person, obs in _facts(stream, "homework").items():
        if len(obs) >= 2:
            out.append(
                _draft(
                    "user_query",
                    person,
                    [
                        "How long did I spend on homework each school day?",
                        "What did my homework time look like this week, day by day?",
                    ],
                    "; ".join(f"{day_label(o.ts)}: {o.facts['value']} minutes" for o in obs) + ".",
                    [
                        (f"{day_label(o.ts)}: {o.facts['value']} min", [o], [str(o.facts["value"])])
                        for o in obs[:5]
                    ],
                    "homework",
                    person,
                    "fp_homework",
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
                    [
                        "Did I sleep more at the weekend than on school or work nights this week?",
                        (
                            "Compare my Friday and Saturday nights with the rest of the week, "
                            "sleep-wise."
                        ),
                    ],
                    f"Friday and Saturday nights averaged {hours_minutes(we)} ("
                    + ", ".join(hours_minutes(o.facts["value"]) for o in weekend)
                    + f") against {hours_minutes(wk)} on the other {len(weekdays)} nights.",
                    [
                        ("Friday and Saturday nights", weekend, [_shown(o) for o in weekend]),
                        (f"The other nights, about {hours_minutes(wk)}", weekdays, []),
                    ],
                    "sleep",
                    person,
                    "fp_sleep",
                    delay=(4.0, 30.0),
                )
            )
    for person, obs in _facts(stream, "weight").items():
        if len(obs) >= 2:
            out.append(
                _draft(
                    "user_query",
                    person,
                    [
                        "What did the scale say each time I weighed myself {week}?",
                        "List my weigh-ins {week}, please.",
                    ],
                    "; ".join(f"{day_label(o.ts)}: {o.facts['value']:.1f} kg" for o in obs) + ".",
                    [
                        (
                            f"{day_label(o.ts)}: {o.facts['value']:.1f} kg",
                            [o],
                            [f"{o.facts['value']:.1f}"],
                        )
                        for o in obs[:5]
                    ],
                    "weight",
                    person,
                    "fp_weight",
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
                    [
                        (
                            "Was I on my phone more at the weekend than on weekdays, and what ate "
                            "the weekend time?"
                        ),
                        (
                            "My phone time on Saturday and Sunday versus the rest of the week — "
                            "how "
                            "did it compare?"
                        ),
                    ],
                    "; ".join(
                        (
                            f"{day_label(o.ts)}: {hours_minutes(o.facts['value'])}, mostly "
                            f"{o.facts['top']}"
                        )
                        for o in weekend
                    )
                    + f"; weekdays averaged {hours_minutes(wk)}.",
                    [
                        (f"{day_label(o.ts)}: {hours_minutes(o.facts['value'])}", [o], [_shown(o)])
                        for o in weekend
                    ]
                    + [(f"Weekdays about {hours_minutes(wk)} a day", weekdays, [])],
                    "screen_time",
                    person,
                    "fp_screen",
                    delay=(2.0, 20.0),
                )
            )
    return out


# ---------------------------------------------------------------- resolution


# How far a checklist item's reference to one view reaches: for causal, fusion and
# first-person questions the observations of that happening the template named (devices that
# sensed it in passing do not carry the item); perspective items are one device each, so
# just the view.
WIDEN = {"causal": "named", "fusion": "named", "user_query": "named"}
# Categories whose overall evidence is every observation (ambient ones included) of every
# happening the checklist touches: to piece a happening together or explain it, all of its
# traces are relevant, while each checklist item still names the observations it rests on.
WHOLE_EVENT_EVIDENCE = ("causal", "fusion")


def _keys(
    ref: View | StoryEvent | Obs, stories: dict[str, StoryEvent], widen: str | None
) -> list[str]:
    if isinstance(ref, Obs):
        return [ref.key]
    if isinstance(ref, View):
        story = stories.get(ref.story_id)
        if story is None or widen is None:
            return [ref.obs_key] if ref.obs_key else []
        views = [v for v in story.views if widen == "all" or not v.ambient or v is ref]
        return [v.obs_key for v in views if v.obs_key]
    return [v.obs_key for v in ref.views if v.obs_key]


def _chain(draft: QuestionDraft, stories: dict[str, StoryEvent]) -> list[str]:
    """Named observations of every story event on the causal path the question asks about:
    the ancestors of its latest referenced event that are not older than its earliest one."""
    ids = {r.story_id for item in draft.checklist for r in item.refs if isinstance(r, View)}
    ids |= {r.story_id for item in draft.checklist for r in item.refs if isinstance(r, StoryEvent)}
    ids &= set(stories)
    if not ids:
        return []
    target = max(ids, key=lambda i: (stories[i].ts, i))
    start = min(stories[i].ts for i in ids)
    chain, todo = set(), [target]
    while todo:
        sid = todo.pop()
        if sid in chain or sid not in stories or stories[sid].ts < start:
            continue
        chain.add(sid)
        todo += stories[sid].causes
    ordered = sorted(chain, key=lambda i: stories[i].ts)
    return [v.obs_key for sid in ordered for v in stories[sid].views if v.obs_key]


def _waking(ts: datetime, rng: random.Random) -> datetime:
    if ts.hour < 7:
        return ts.replace(hour=7, minute=rng.randint(0, 50))
    if ts.hour >= 22:
        return (ts + timedelta(days=1)).replace(hour=8, minute=rng.randint(0, 50))
    return ts


def resolve(
    hh: Household,
    drafts: list[QuestionDraft],
    obs_by_key: dict[str, Obs],
    rng: random.Random,
    stories: dict[str, StoryEvent],
) -> list[Question]:
    """Concrete questions (provisional ids `C<n>`), in draft order."""
    out: list[Question] = []
    for n, draft in enumerate(drafts, start=1):
        checklist: list[tuple[str, list[str]]] = []
        anchors: list[list[str]] = []
        widen = WIDEN.get(draft.category)
        for item in draft.checklist:
            keys = list(
                dict.fromkeys(
                    k for ref in item.refs for k in _keys(ref, stories, widen) if k in obs_by_key
                )
            )
            checklist.append((item.item, keys))
            anchors.append(list(item.anchors))
        evidence = list(dict.fromkeys(k for _, keys in checklist for k in keys))
        if draft.category == "causal":
            evidence += [k for k in _chain(draft, stories) if k in obs_by_key and k not in evidence]
        if draft.category in WHOLE_EVENT_EVIDENCE:
            touched = {
                r.story_id
                for item in draft.checklist
                for r in item.refs
                if isinstance(r, (View, StoryEvent))
            }
            evidence += [
                v.obs_key
                for sid in sorted(touched)
                if sid in stories
                for v in stories[sid].views
                if v.obs_key in obs_by_key and v.obs_key not in evidence
            ]
        evidence.sort(key=lambda k: (obs_by_key[k].ts, k))
        if not evidence:
            latest = max(draft.moments.values(), default=datetime(2026, 5, 17, 12))
        else:
            latest = max([obs_by_key[k].ts for k in evidence] + list(draft.moments.values()))
        lo, hi = draft.delay_hours
        qtime = _waking(latest + timedelta(minutes=int(rng.uniform(lo, hi) * 60)), rng)
        text = _fill(rng.choice(draft.texts), draft.moments, qtime, rng)
        device = hh.phone(draft.asker) if draft.asker in {p.name for p in hh.people} else None
        device = (
            device
            or hh.shared("smart_speaker")
            or hh.shared("smart_display")
            or hh.devices[0].device_id
        )
        out.append(
            Question(
                qid=f"C{n:03d}",
                category=draft.category,
                question=text,
                answer=polish(draft.answer),
                evidence=evidence,
                checklist=checklist,
                anchors=anchors,
                asker=draft.asker,
                time=qtime,
                device=device,
                topic=draft.topic,
                subject=draft.subject,
                origin=draft.origin,
            )
        )
    return out


def _fill(text: str, moments: dict[str, datetime], qtime: datetime, rng: random.Random) -> str:
    def sub(match: re.Match[str]) -> str:
        if match.group(0) == "{week}":
            return over_week(qtime, rng)
        kind, key = match.group(1), match.group(2)
        ts = moments[key]
        return when(ts, qtime, rng) if kind == "when" else on_day(ts, qtime, rng)

    filled = PLACEHOLDER.sub(sub, text)
    return polish(filled)


def check_questions(hh: Household, questions: list[Question], obs_by_key: dict[str, Obs]) -> None:
    """Stage-4 invariants: known category, resolvable evidence, no dangling placeholder, asked
    by a household member, asked after its latest evidence."""
    names = {p.name for p in hh.people}
    for q in questions:

        def fail(problem: str, q: Question = q) -> None:
            raise SynthesisError("questions", hh.scenario_id, f"{q.qid} ({q.origin}): {problem}")

        if q.category not in CATEGORIES:
            fail(f"unknown category {q.category}")
        if "{" in q.question or "}" in q.question:
            fail(f"unresolved placeholder in {q.question!r}")
        if q.asker not in names:
            fail(f"asked by {q.asker!r}, not a household member")
        for key in q.evidence:
            if key not in obs_by_key:
                fail(f"evidence {key} does not exist")
        if q.evidence and q.time < max(obs_by_key[k].ts for k in q.evidence):
            fail("question time precedes its evidence")
