"""Stage 3, paired conflicts: two sources disagree about one fact, a third settles it.

Each builder emits the two disagreeing observations (source `conflict`) plus ordinary
corroborating observations (source `routine`) that make one side better supported, claims
the routine slot it replaces, and proposes the conflict question whose reference answer
states both claims and which one the rest of the evidence backs. The builders are in
`conflicts_body` (a person's own readings) and `conflicts_house` (the house).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

from eval.synth.conflict_ctx import Ctx
from eval.synth.conflicts_body import medication, sleep_apps, steps, weight, workout_length
from eval.synth.conflicts_house import arrival, back_door, fridge_stock, temperature, tv_time
from eval.synth.episodes import WorldState
from eval.synth.personas import Household, Person
from eval.synth.world import Obs, QuestionDraft

Builder = Callable[["Ctx", Person], "QuestionDraft | None"]


BUILDERS: list[tuple[str, Builder]] = [
    ("sleep", sleep_apps),
    ("steps", steps),
    ("food", fridge_stock),
    ("arrival", arrival),
    ("tv", tv_time),
    ("weight", weight),
    ("door", back_door),
    ("medication", medication),
    ("workout", workout_length),
    ("temperature", temperature),
]


def paired_conflicts(
    hh: Household, world: WorldState, rng: random.Random, target: int = 8
) -> tuple[list[Obs], list[QuestionDraft]]:
    """Up to `target` conflicts, at most one per (kind, person), spread over kinds and people."""
    ctx = Ctx(hh, world, rng)
    drafts: list[QuestionDraft] = []
    attempts = [(kind, fn, p) for kind, fn in BUILDERS for p in hh.residents]
    rng.shuffle(attempts)
    used_kinds: Counter[str] = Counter()
    used_people: Counter[str] = Counter()
    repeatable = {"sleep", "steps"}  # person-specific enough to appear twice in one household
    while attempts and len(drafts) < target:
        attempts.sort(key=lambda a: (used_kinds[a[0]], used_people[a[2].name]))
        kind, fn, person = attempts.pop(0)
        if used_kinds[kind] >= (2 if kind in repeatable else 1):
            continue
        draft = fn(ctx, person)
        if draft is None:
            continue
        used_kinds[kind] += 1
        used_people[person.name] += 1
        drafts.append(draft)
    return ctx.conflict.items + ctx.support.items, drafts
