"""Stage 6: topical distractors that must not change any answer, then final ids.

For each question, 1-3 near-miss observations are written on its topic but about the
wrong person (same day), the wrong day (same person), or as talk and browsing that
mention the topic without stating a fact. They never assert a value for a slot a
question relies on (a night's sleep, a day's steps, an arrival time), so they cannot
become evidence or contradict it. Afterwards all events are time-ordered, given
scenario-qualified ids, every reference is remapped, and a check proves the gold
evidence (by description) and answers are unchanged.
"""

from __future__ import annotations

import random
from datetime import datetime

from eval.synth.emit import Emitter
from eval.synth.errors import SynthesisError
from eval.synth.personas import Household
from eval.synth.tables import load_table
from eval.synth.timewords import DAYS, at
from eval.synth.world import Obs, Question

TABLE = load_table("adversarial")

# (who, device, modality, clause variants); who = "p" (the subject, on another day) or
# "o" (someone else, on an evidence day). Devices: kind[:p|:o] resolved in the household.
Decoy = tuple[str, str, str, list[str]]

DECOYS: dict[str, list[Decoy]] = TABLE["DECOYS"]

TOPIC_FAMILY = TABLE["TOPIC_FAMILY"]


def _device(hh: Household, spec: str, p: str, o: str) -> str | None:
    """`kind` is a shared device type; `kind:p` / `kind:o` the subject's / the other person's
    own device, found by the `Household` method of that name (watch, phone, laptop, car)."""
    kind, _, who = spec.partition(":")
    if not who:
        return hh.shared(kind)
    return getattr(hh, kind)(p if who == "p" else o)


def inject(
    hh: Household, questions: list[Question], obs: dict[str, Obs], rng: random.Random
) -> list[Obs]:
    """1-3 distractors per question; returns the new observations (source `adversarial`)."""
    em = Emitter(hh, rng, "adversarial", f"{hh.scenario_id}_A")
    taken = {(o.device, o.ts) for o in obs.values()}
    people = hh.people
    for q in questions:
        family = DECOYS[TOPIC_FAMILY.get(q.topic, "social")]
        subject = q.subject if q.subject in {p.name for p in people} else rng.choice(people).name
        others = [p.name for p in people if p.name != subject] or [subject]
        ev_idx = sorted({(obs[k].ts.date() - DAYS[0]).days for k in q.evidence})
        free_days = [d for d in range(7) if d not in ev_idx]
        made = 0
        wanted = rng.choice([1, 2, 2, 3, 3, 3])
        attempts = rng.sample(family, len(family)) + rng.sample(family, len(family))
        for who, spec, modality, clauses in attempts:
            if made >= wanted:
                break
            o = rng.choice(others)
            device = _device(hh, spec, subject, o)
            if device is None:
                continue
            if who == "p" and not free_days:
                continue  # the subject on an evidence day would not be a near miss
            if who != "p" and o == subject:
                continue
            person, days = (subject, free_days) if who == "p" else (o, ev_idx)
            day = rng.choice(days)
            pr = hh.person(person).pron  # {he}, {him}, {his}
            texts = [c.format(p=subject, o=o, **pr) for c in clauses]
            ts = _free_time(day, device, taken, rng, q.time)
            if ts is None:
                continue
            made_obs = em.emit(ts, device, modality, texts, people=[person])
            if made_obs is None:
                continue
            made_obs.target_question = q.qid
            taken.add((device, made_obs.ts))
            made += 1
    return em.items


def _free_time(
    day: int, device: str, taken: set, rng: random.Random, before: datetime
) -> datetime | None:
    """A waking-hours minute on `day`, free on `device`, and before the question is asked."""
    for _ in range(20):
        ts = at(day, rng.randint(7, 20), rng.randint(0, 59))
        if (device, ts) not in taken and ts < before:
            return ts
    return None


def finalize_ids(scenario_id: str, stream: list[Obs], questions: list[Question]) -> dict[str, str]:
    """Reorder by time, assign `<scenario>_E<nnnn>` ids, remap every reference, and prove the
    gold evidence and answers survived unchanged. Returns the old->new id map."""

    def fail(problem: str) -> None:
        raise SynthesisError("adversarial", scenario_id, problem)

    def gold(q: Question, by_key: dict[str, Obs]) -> tuple:
        """What must survive: the evidence (in any order), the answer, each item's evidence."""
        evidence = sorted(_content(by_key[k]) for k in q.evidence)
        return evidence, q.answer, [[_content(by_key[k]) for k in keys] for _, keys in q.checklist]

    old = stream_by_key(stream)
    before = {q.qid: gold(q, old) for q in questions}
    stream.sort(key=lambda o: (o.ts, o.device, o.key))
    mapping = {o.key: f"{scenario_id}_E{n:04d}" for n, o in enumerate(stream, start=1)}
    for o in stream:
        o.key = mapping[o.key]
    for q in questions:
        q.evidence = sorted(mapping[k] for k in q.evidence)
        q.checklist = [(item, [mapping[k] for k in keys]) for item, keys in q.checklist]
    by_key = stream_by_key(stream)
    qids = {q.qid for q in questions}
    for q in questions:
        ev, answer, items = before[q.qid]
        now_ev, now_answer, now_items = gold(q, by_key)
        if now_ev != ev or now_answer != answer:
            fail(f"{q.qid}: gold evidence changed by remapping")
        if now_items != items:
            fail(f"{q.qid}: checklist evidence changed")
        if any(by_key[k].source == "adversarial" for k in q.evidence):
            fail(f"{q.qid}: a distractor became evidence")
    for o in stream:
        if o.source == "adversarial" and o.target_question not in qids:
            fail(f"{o.key} targets unknown {o.target_question}")
    return mapping


def _content(o: Obs) -> tuple:
    return (o.ts, o.device, o.modality, o.description)


def stream_by_key(stream: list[Obs]) -> dict[str, Obs]:
    return {o.key: o for o in stream}
