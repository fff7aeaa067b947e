"""What every paired-conflict builder shares: the emitters, free days, askers, the draft."""

from __future__ import annotations

import random
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from eval.synth.emit import Emitter
from eval.synth.episodes import WorldState
from eval.synth.episodes.base import canonical_label
from eval.synth.personas import Household
from eval.synth.world import CheckDraft, Obs, QuestionDraft


def later(t: datetime, minutes: int) -> datetime:
    """`minutes` after `t` (before it when negative)."""
    return t + timedelta(minutes=minutes)


class Ctx:
    def __init__(self, hh: Household, world: WorldState, rng: random.Random):
        self.hh, self.world, self.r = hh, world, rng
        self.conflict = Emitter(hh, rng, "conflict", f"{hh.scenario_id}_C")
        self.support = Emitter(hh, rng, "routine", f"{hh.scenario_id}_S")

    def label(self, device: str) -> str:
        return canonical_label(self.hh.device(device))

    def take_day(self, topic: str, person: str, days: Iterable[int], ready: Any) -> int | None:
        """A day of `days` whose `topic` slot is free, claimed for the conflict; None unless
        the builder is `ready` (truthy). The day is drawn either way."""
        free = [d for d in days if not self.world.is_claimed(topic, person, d)]
        day = self.r.choice(free) if free else None
        if not ready or day is None:
            return None
        self.world.claim(topic, person, day)
        return day

    def asker(self, *exclude: str) -> str:
        kinds = ("adult", "elder", "carer", "teen")
        pool = [p.name for p in self.hh.people if p.kind in kinds and p.name not in exclude]
        return self.r.choice(pool or [self.hh.people[0].name])


def _draft(
    ctx: Ctx,
    topic: str,
    person: str,
    texts: list[str],
    answer: str,
    checklist: list[tuple[str, list[Obs | None], list[str]]],
    moments: dict,
    asker: str | None = None,
) -> QuestionDraft | None:
    """The two rival claims (one observation each), then the verdict and its support."""
    a, b, verdict = checklist
    if a[1][0] is None or b[1][0] is None:
        return None
    support = [o for o in verdict[1] if o is not None]
    if not support:
        return None
    ctx.world.conflicted.add((topic, person))
    claims = [CheckDraft(item, list(refs), list(anchors)) for item, refs, anchors in (a, b)]
    return QuestionDraft(
        category="conflict",
        asker=asker or ctx.asker(person),
        texts=texts,
        answer=answer,
        checklist=[*claims, CheckDraft(verdict[0], support, [])],
        topic=topic,
        subject=person,
        moments=moments,
        origin="conflict",
    )
