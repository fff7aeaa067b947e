"""Pairing the two realisms' output of one household-week, for the tests that compare them."""

from __future__ import annotations

from datetime import datetime

from memory.formats.memfusebench import Question, Scenario


def own_events(scenario: Scenario) -> dict[tuple[str, datetime], str]:
    """The household's own events (no distractors) by device and time, with their text:
    what stays put between realisms, whose event ids move with the distractors."""
    return {
        (e.device, e.timestamp): e.description
        for e in scenario.all_events()
        if not e.is_adversarial
    }


def paired_questions(legacy: Scenario, real: Scenario) -> list[tuple[Question, Question]]:
    """The questions both realisms kept, paired by who asks what on which day (category,
    asker, checklist items, asking day); realistic evidence is thinner, so the filter may keep
    others too, and a question may be asked a little earlier."""

    def key(q: Question) -> tuple[object, ...]:
        day = q.question_time.date() if q.question_time else None
        return q.category, q.question_user, tuple(item.item for item in q.checklist), day

    by_key = {key(q): q for q in legacy.questions}
    return [(by_key[key(q)], q) for q in real.questions if key(q) in by_key]
