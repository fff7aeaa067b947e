"""Helpers shared by the question builders: routine facts by person, and the draft itself."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from eval.synth.personas import Household
from eval.synth.tables import Words
from eval.synth.timewords import DAYS, day_label, weekday
from eval.synth.world import CheckDraft, Obs, QuestionDraft

W = Words("questions")

Item = tuple[str, list[Obs], list[str]]


def _facts(stream: list[Obs], topic: str) -> dict[str, list[Obs]]:
    by_person: dict[str, list[Obs]] = defaultdict(list)
    for o in stream:
        if o.facts.get("topic") == topic and o.source != "adversarial":
            by_person[o.facts.get("person", "")].append(o)
    for obs in by_person.values():
        obs.sort(key=lambda o: (o.ts, o.key))
    return by_person


def _enough(stream: list[Obs], topic: str, least: int) -> list[tuple[str, list[Obs]]]:
    """`_facts` of the people with at least `least` records on `topic`."""
    return [(person, obs) for person, obs in _facts(stream, topic).items() if len(obs) >= least]


def _workouts(stream: list[Obs]) -> dict[str, list[Obs]]:
    """Every record of each workout session (the watch's and the others'), by session."""
    groups: dict[str, list[Obs]] = defaultdict(list)
    for o in stream:
        if o.facts.get("topic") == "workout":
            groups[o.facts["group"]].append(o)
    return groups


def _weekdays(obs: list[Obs]) -> str:
    """The records' day names: "Monday, Wednesday"."""
    return ", ".join(weekday(o.ts) for o in obs)


def _value(o: Obs) -> Any:
    return o.facts["value"]


def _mean(obs: list[Obs]) -> int:
    """The records' mean value, rounded half up to a whole number (what a careful reader
    computing it by hand would write)."""
    total, n = sum(map(_value, obs)), len(obs)
    return int((2 * total + n) // (2 * n))


def _extreme(obs: list[Obs], pick: Any = max, key: Any = _value) -> Obs | None:
    """The one record with the largest value (`pick=min`: the smallest), or None when two or
    more share it: "which night was the longest" then has no single answer, so the question
    is not asked."""
    best = pick(obs, key=key)
    return best if sum(1 for o in obs if key(o) == key(best)) == 1 else None


def _each(say: Words, key: str, obs: list[Obs]) -> list[Any]:
    """Template `key` filled once per record `o`, with its day's name `weekday` and the
    figure its text `shown`."""
    return [say(key, o=o, weekday=weekday(o.ts), shown=_shown(o)) for o in obs]


def _shown(o: Obs) -> str:
    return str(o.facts.get("shown") or (o.anchors[0] if o.anchors else o.facts.get("value")))


def _night(o: Obs) -> str:
    """The night a sleep record covers, by the day it began (-1: the night before the week)."""
    day = o.facts["day"]
    if day < 0:
        return W("night.before_week")
    return W("night.of", day=day_label(DAYS[0] + timedelta(days=day)))


def _asked(
    category: str,
    asker: str,
    say: Words,
    key: str,
    topic: str,
    person: str,
    ns: Mapping[str, Any],
    items: Sequence[Item] = (),
    moments: dict | None = None,
    delay: tuple[float, float] = (2.0, 30.0),
    **slots: Any,
) -> QuestionDraft:
    """Draft `key` about `person`, worded by `say(key, ns, **slots)`; `items` (one per
    record) come before the table's checklist."""
    words = say(key, ns, **slots)
    words["checklist"] = [*items, *words.get("checklist", [])]
    words.update(topic=topic, subject=person, origin=key, moments=moments, delay=delay)
    return _draft(category, asker, **words)


def _draft(
    category: str,
    asker: str,
    texts: list[str],
    answer: str,
    checklist: list[Item],
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
    """Someone at home other than `person` who might ask about them."""
    kinds = ("adult", "elder", "carer", "teen")
    pool = [p.name for p in hh.people if p.name != person and p.kind in kinds]
    return rng.choice(pool or [person])
